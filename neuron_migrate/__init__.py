"""neuron-migrate: move PyTorch/XLA code on AWS Trainium to TorchNeuron, the native PyTorch backend."""

__version__ = "0.1.0"
