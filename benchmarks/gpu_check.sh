#!/usr/bin/env bash
# Confirm slmbench's CUDA paths on a GPU machine (torch, hf:, llamacpp: with n_gpu_layers).
# Writes benchmarks/results/gpu_check-<host>.json; see benchmarks/gpu_check.py for each check.
#   benchmarks/gpu_check.sh [--hf SPEC] [--gguf NAME_OR_PATH] [--out FILE]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
else
    echo "nvidia-smi not found: the CUDA checks will record why they could not run" >&2
fi
exec "${PYTHON:-python}" "$here/gpu_check.py" "$@"
