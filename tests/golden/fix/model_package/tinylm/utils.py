"""Small helpers shared by the training code: seeding, step metrics, logging.

Nothing here touches the accelerator. Note that ``xm`` below is our experiment
metrics meter, not torch_xla's xla_model.
"""
import logging
import random
import time

import torch

logger = logging.getLogger(__name__)


def set_seed(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


class StepMeter:
    """Running loss / throughput statistics over training steps."""

    def __init__(self):
        self.steps = 0
        self.tokens = 0
        self.loss_sum = 0.0
        self.last_loss = float("nan")
        self._t0 = time.perf_counter()

    def mark_step(self, loss_value: float, tokens: int) -> None:
        """Record one finished step."""
        self.steps += 1
        self.tokens += tokens
        self.loss_sum += loss_value
        self.last_loss = loss_value

    def reset(self) -> None:
        self.__init__()

    def summary(self) -> dict:
        elapsed = max(time.perf_counter() - self._t0, 1e-9)
        return {
            "steps": self.steps,
            "mean_loss": self.loss_sum / max(self.steps, 1),
            "tokens_per_s": self.tokens / elapsed,
        }


# "xm" = experiment metrics; one meter per process
xm = StepMeter()


def log_step(step: int, loss_value: float, tokens: int, step_time: float) -> None:
    xm.mark_step(loss_value, tokens)
    logger.info(
        "step %d loss %.4f %.0f tok/s (early steps include xla graph compilation)",
        step, loss_value, tokens / max(step_time, 1e-9),
    )
