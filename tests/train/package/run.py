"""Entry point: torchrun --nproc_per_node=2 run.py"""

from trainer import fit

if __name__ == "__main__":
    fit()
