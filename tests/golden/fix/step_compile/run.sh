#!/bin/bash
# Pre-compile the graphs, then train on all 32 NeuronCores of a trn1.32xlarge.
set -euo pipefail

export NEURON_RT_NUM_CORES=32

neuron_parallel_compile python train.py --steps 5
XLA_USE_BF16=1 python train.py --steps 100 --dynamo
