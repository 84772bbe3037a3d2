"""tinylm: a toy causal language model used to exercise our Trainium training stack."""
from .model import TinyLM, TinyLMConfig

__all__ = ["TinyLM", "TinyLMConfig"]
__version__ = "0.3.1"
