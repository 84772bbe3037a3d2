"""A small training package: environment, data, model and the loop in their own modules."""

from .engine import fit

__all__ = ["fit"]
