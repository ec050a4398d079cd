#!/usr/bin/env bash
# Side-by-side benchmark of SDCA-GAP, SDCA-uniform and L-BFGS (bench/main.go).
# Runs from experiments/ (this script's directory), so a relative -out or -data
# is relative to it (the default -out is experiments/bench-out); flags pass
# through, e.g.  experiments/bench.sh -sets conll2000 -max-epochs 3
set -euo pipefail
cd "$(dirname "$0")"
exec go run ./bench "$@"
