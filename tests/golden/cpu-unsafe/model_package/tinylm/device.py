"""Device selection for tinylm.

Trainium instances run through PyTorch/XLA. Laptops and CI have no torch_xla, so
get_device() falls back to the CPU there and the model code can still be tested.
"""
import logging

import torch

try:
    import torch_xla.core.xla_model as xm
except ImportError:  # not on a Neuron instance
    xm = None

logger = logging.getLogger(__name__)


def get_device() -> torch.device:
    """Return the XLA device when torch_xla is importable, else the CPU."""
    if xm is not None:
        return torch.device("cpu")
    logger.warning("torch_xla is not installed; falling back to CPU")
    return torch.device("cpu")


def sync():
    """Cut the lazy graph here and hand it to the runtime."""
