#!/usr/bin/env bash
# Fuzzes every reader of untrusted bytes briefly, one target after another: what .ci/run and `task fuzz` run.
#
#   scripts/fuzz.sh [SCALE]     SCALE multiplies every budget (default 1: about five seconds per target here)
#
# Budgets are execution counts (-fuzztime Nx), not durations: with a duration, Go's fuzzing coordinator can race
# its own deadline on a loaded machine and fail with a bare "context deadline exceeded" and no failing input
# (golang/go#75804); a count has no deadline to race. Minimisation is bounded (whole-table seeds are slow to
# minimise) or off for the readers of the tool's own files, where it would take the whole budget. For long runs
# of one target use go test directly, e.g. go test ./train -run '^$' -fuzz '^FuzzDecodeState$' -fuzztime 10m.
set -euo pipefail
cd "$(dirname "$0")/.."
scale="${1:-1}"
[[ "$scale" =~ ^[1-9][0-9]*$ ]] || { echo "scripts/fuzz.sh: SCALE must be a positive integer, not '$scale'" >&2; exit 2; }

fuzz() { # package target executions minimise-time
  go test "./$1" -run '^$' -fuzz "^$2\$" -fuzztime "$(($3 * scale))x" -fuzzminimizetime "$4"
}
# Corpus readers and templates.
fuzz featurize FuzzConll 15000 10s
fuzz featurize FuzzConllu 8000 10s
fuzz featurize FuzzTreebankPOS 8000 10s
fuzz featurize FuzzTreebankMRG 8000 10s
fuzz featurize FuzzCRFsuite 15000 10s
fuzz featurize FuzzOCR 8000 10s
fuzz featurize FuzzParseTemplates 10000 10s
fuzz job FuzzParse 5000 10s
fuzz featurize FuzzOpen 4000 10s
fuzz featurize FuzzTreebankZip 10000 0s
fuzz featurize FuzzTableReader 4000 2s
fuzz featurize FuzzParquetTokenTable 3000 2s
fuzz decode FuzzEvaluator 6000 10s
# The readers of the tool's own files and their metadata.
fuzz arrowio FuzzOpenRecordReader 3000 2s
fuzz arrowio FuzzOpenParquet 3000 2s
fuzz arrowio FuzzParquetFooter 5000 2s
fuzz tables FuzzReadFeatureTable 15000 0s
fuzz tables FuzzReadModel 4000 0s
fuzz tables FuzzReadLog 4000 0s
fuzz tables FuzzReadWeights 4000 0s
fuzz decode FuzzEvaluateReader 1500 0s
fuzz plots FuzzReadRun 1500 0s
fuzz featurize FuzzParseInputOptions 30000 0s
fuzz schemas FuzzParseLabels 100000 0s
fuzz schemas FuzzParseTrainingFacts 100000 0s
# Checkpoint snapshots.
fuzz train FuzzDecodeState 8000 10s
fuzz train FuzzDecodeWeights 30000 10s
fuzz duals FuzzDualsHeader 25000 10s
fuzz duals FuzzStreamFile 3000 0s
fuzz duals FuzzReadKept 8000 0s
fuzz duals FuzzFloat32Decode 20000 10s
