from torch_xla.core.xla_model import *  # noqa: F403  xla_device, is_master_ordinal, ...


def log(message):
    if is_master_ordinal():  # noqa: F405
        print(message, flush=True)


def checksum(model):
    return sum(p.detach().cpu().sum().item() for p in model.parameters())
