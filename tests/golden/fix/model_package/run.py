#!/usr/bin/env python3
"""Entry point for tinylm training.

    python run.py --steps 5
"""
import logging
import os
import sys

# the Neuron PJRT plugin must be selected before torch_xla is first imported

from tinylm.train import build_parser, train  # noqa: E402


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    final_loss, summary = train(args)
    logging.getLogger("run").info("summary: %s", summary)
    print(f"done: steps={args.steps} loss={final_loss:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
