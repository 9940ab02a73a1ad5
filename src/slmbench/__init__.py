"""slmbench: can a small local language model be trusted as an agent?

The public API is re-exported here; modules whose names start with an
underscore are private.
"""

from slmbench.core.errors import SlmbenchError
from slmbench.core.version import VERSION
from slmbench.models.base import Model
from slmbench.models.factory import load_model
from slmbench.models.records import CandidateScore, Completion, Message

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
