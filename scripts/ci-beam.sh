#!/usr/bin/env bash
# The beam module's CI: vet, build and test — the CI slice's equality with the single-machine stages, the command,
# and the seeds of FuzzReadPredictionFile. Fuzzing proper is left out: its instrumented build of Beam's ≈ 300 modules
# takes longer than the whole CI budget (run it by hand: cd beam && go test ./dualcrfbeam -fuzz FuzzReadPredictionFile).
set -euo pipefail
cd "$(dirname "$0")/../beam" && go vet ./... && go test -count=1 ./...
