"""Model layer: one small protocol, one module per backend; ``ray`` runs any of them as
replicas on a Ray cluster (docs/scale-out.md)."""

from slmbench.models.base import Model, StopRule
from slmbench.models.factory import load_model
from slmbench.models.placement import RayModelOptions
from slmbench.models.ray import RayCluster, RayModel
from slmbench.models.records import CandidateScore, Completion, Message, ToolCall
from slmbench.models.spec import ModelSpec, parse_spec

__all__ = [
    "CandidateScore",
    "Completion",
    "Message",
    "Model",
    "ModelSpec",
    "RayCluster",
    "RayModel",
    "RayModelOptions",
    "StopRule",
    "ToolCall",
    "load_model",
    "parse_spec",
]
