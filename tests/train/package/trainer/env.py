"""Where the code runs: the XLA device when torch_xla is there, else the CPU."""

import logging

import torch
import torch.distributed as dist

logger = logging.getLogger(__name__)


def get_device():
    try:
        import torch_xla.core.xla_model as xm

        device = xm.xla_device()
    except ImportError:
        logger.warning("torch_xla not available, using CPU")
        device = torch.device("cpu")
    return device


def init_distributed():
    import torch_xla.distributed.xla_backend  # noqa: F401

    if not dist.is_initialized():
        dist.init_process_group(backend="xla")
    return dist.get_rank(), dist.get_world_size()
