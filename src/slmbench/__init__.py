"""slmbench: can a small local language model be trusted as an agent?

The public API is re-exported here; modules whose names start with an
underscore are private.
"""

from slmbench.core.errors import SlmbenchError
from slmbench.core.version import VERSION
from slmbench.models.base import CandidateScore, Completion, Message, Model, load_model

__version__ = VERSION

__all__ = [
    "CandidateScore",
    "Completion",
    "Message",
    "Model",
    "SlmbenchError",
    "__version__",
    "load_model",
]
