#!/usr/bin/env bash
# Reads every table dualcrf writes with an independent reader from npm (nodejs-polars), installed into a
# scratch directory (never committed): what .ci/run calls after the DuckDB tests.
#
#   interop/node/check.sh
#
# Without node it says so and exits 0 (CI installs node first: see docs/lake.md).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "interop/node/check.sh: SKIPPED: node and npm are not installed (apt-get install nodejs npm)" >&2
  exit 0
fi
scratch="$(mktemp -d "${TMPDIR:-/tmp}/dualcrf-node-XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
polars=0.26.1
( cd "$scratch" && npm init -y >/dev/null &&
  npm install --no-audit --no-fund --silent "nodejs-polars@$polars" &&
  # npm leaves out the platform binary when optional dependencies are omitted: ask for it by name.
  { node -e 'require("nodejs-polars")' 2>/dev/null ||
    npm install --no-audit --no-fund --silent --include=optional "nodejs-polars-$(node -p 'process.platform+"-"+process.arch')-gnu@$polars"; } )
go build -C "$root" -o "$scratch/dualcrf" ./cmd/dualcrf
d="$scratch/tables"; mkdir "$d"; cd "$d"
td="$root/cmd/dualcrf/testdata"
x() { "$scratch/dualcrf" "$@" 2>/dev/null; }
for f in train.arrows train.feather train.parquet; do x featurize --template chunking -o "$f" "$td/train150.txt"; done
x train -q --gap-tol 1e-2 -o model.arrow --log log.arrow train.arrows
x train -q --gap-tol 1e-2 -o model.parquet --log log.parquet train.parquet
for f in sparse.arrow sparse.parquet; do x train -q --gap-tol 1e-2 --l1 1/n -o "$f" train.arrows; done
x featurize --model model.arrow -o test.arrows "$td/test50.txt"
for f in pred.arrows pred.feather pred.parquet; do x decode -m model.arrow -o "$f" test.arrows; done
x eval --scores scores.arrow pred.arrows >/dev/null
x eval --scores scores.parquet pred.arrows >/dev/null
NODE_MODULES_DIR="$scratch/node_modules" node "$here/check.mjs" "$d"
