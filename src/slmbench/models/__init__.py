"""Model layer: one small protocol, one module per backend."""

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

__all__ = [
    "CandidateScore",
    "Completion",
    "Message",
    "Model",
    "ModelSpec",
    "ToolCall",
    "load_model",
    "parse_spec",
]
