#!/usr/bin/env bash
# Builds CRFsuite 0.12.2 (with liblbfgs 1.10) from the peer sources once into a cache directory and prints its
# crfsuite binary's path, for the tests that have CRFsuite tag with a model `dualcrf export --format crfsuite` wrote
# (TestExportCRFsuiteTagsAsDecode, TestExportDefaultModel, TestExportEscapes, which read the path from
# $DUALCRF_CRFSUITE). .ci/run sets that variable from
# this script's output before the tests run. The sources and their build script are in $DUALCRF_PEERS (default:
# ../shared/peers beside the repository); the build (about a minute on 2 cores) is kept in
# $DUALCRF_CACHE/crfsuite-0.12.2 (default cache: $XDG_CACHE_HOME/dualcrf, else ~/.cache/dualcrf), so later runs
# reuse it. The build script installs a C compiler, make and the autotools with apt-get when they are missing.
#
#   DUALCRF_CRFSUITE=$(scripts/ci-crfsuite.sh) go test ./cmd/dualcrf -run TestExport
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
peers=${DUALCRF_PEERS:-$(cd "$root/.." && pwd)/shared/peers}
cache=${DUALCRF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dualcrf}
if [ ! -f "$peers/build.sh" ]; then
  echo "scripts/ci-crfsuite.sh: no CRFsuite sources: $peers/build.sh is missing (set DUALCRF_PEERS)" >&2
  exit 1
fi
mkdir -p "$cache"
# The build script's own messages go to standard error; its last line is the binary's path.
bin=$(bash "$peers/build.sh" "$cache/crfsuite-0.12.2" | tee /dev/stderr | tail -n 1)
if [ ! -x "$bin" ]; then
  echo "scripts/ci-crfsuite.sh: the build printed no crfsuite binary ($bin)" >&2
  exit 1
fi
echo "$bin"
