"""Training loop for tinylm on a synthetic "count upwards" token stream."""
import argparse
import logging
import os
import time

import torch

from . import utils
from .device import get_device, sync
from .model import TinyLM, TinyLMConfig
from .utils import log_step, set_seed

logger = logging.getLogger(__name__)


def synthetic_tokens(batch_size, seq_len, vocab_size, generator):
    """Sequences where the next token is always (token + 1) % vocab_size."""
    start = torch.randint(0, vocab_size, (batch_size, 1), generator=generator)
    seq = (start + torch.arange(seq_len + 1)) % vocab_size
    return seq[:, :-1], seq[:, 1:]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Train tinylm on synthetic data")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seq-len", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--log-every", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1234)
    return parser


def train(args):
    """Run args.steps optimizer steps; return (final loss, meter summary)."""

    set_seed(args.seed)
    device = get_device()
    cfg = TinyLMConfig(max_seq_len=args.seq_len)
    model = TinyLM(cfg).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    gen = torch.Generator().manual_seed(args.seed)

    rank = int(os.environ.get("RANK", 0))
    logger.info("rank %d: %.3fM parameters on %s", rank, model.num_parameters() / 1e6, device)

    model.train()
    loss = None
    for step in range(1, args.steps + 1):
        t0 = time.perf_counter()
        inputs, targets = synthetic_tokens(args.batch_size, args.seq_len, cfg.vocab_size, gen)
        inputs, targets = inputs.to(device), targets.to(device)

        _, loss = model(inputs, targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()

        if step % args.log_every == 0:
            log_step(step, loss.item(), inputs.numel(), time.perf_counter() - t0)

    sync()
    return loss.item(), utils.xm.summary()
