#!/usr/bin/env bash
# Side-by-side benchmark of SDCA-GAP, SDCA-uniform and L-BFGS (scripts/bench/main.go).
# Runs from the repository root, so a relative -out or -data is relative to it;
# flags pass through, e.g.  scripts/bench.sh -sets conll2000 -max-epochs 3
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./scripts/bench "$@"
