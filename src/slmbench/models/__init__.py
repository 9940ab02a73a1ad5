"""Model layer: one small protocol, one module per backend; ``ray`` runs any of them as
replicas on a Ray cluster (docs/scale-out.md)."""

from slmbench.models.base import (
    CandidateScore,
    Completion,
    Message,
    Model,
    ModelSpec,
    ToolCall,
    load_model,
    parse_spec,
)
from slmbench.models.ray import RayCluster, RayModel, RayModelOptions

__all__ = [
    "CandidateScore",
    "Completion",
    "Message",
    "Model",
    "ModelSpec",
    "RayCluster",
    "RayModel",
    "RayModelOptions",
    "ToolCall",
    "load_model",
    "parse_spec",
]
