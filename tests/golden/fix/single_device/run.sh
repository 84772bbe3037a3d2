#!/bin/bash
# Train the MNIST-shaped MLP on one NeuronCore of a trn1.2xlarge.
set -euo pipefail

export XLA_USE_BF16=1  # bf16 everywhere, as on TPU
export NEURON_CC_FLAGS="--model-type=generic"

python train.py --steps 20 --out /tmp/mlp.pt
