#!/bin/bash
# 32 workers on one trn1.32xlarge: run.py spawns them itself (xmp.spawn).
set -euo pipefail
python run.py --nprocs 32 "$@"
