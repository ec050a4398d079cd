#!/usr/bin/env bash
# The interop checks, for .ci/run: every table dualcrf writes opened in DuckDB (duckdb-go, cgo) and in
# nodejs-polars, and the lake round trip on CoNLL-2000 slices with the README's SQL. Installs what a fresh
# Debian machine lacks (a C compiler for cgo, node and npm) with apt-get when run as root.
#
#   interop/ci.sh
set -euo pipefail
cd "$(dirname "$0")"
need=()
command -v gcc >/dev/null || need+=(gcc libc6-dev)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
if ((${#need[@]})); then
  if [[ $(id -u) != 0 ]]; then
    echo "interop/ci.sh: missing ${need[*]}: install them (apt-get install ${need[*]}) or run as root" >&2
    exit 1
  fi
  apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi
test -z "$(gofmt -l .)" || { gofmt -l .; echo "interop/ci.sh: gofmt" >&2; exit 1; }
go vet -tags duckdb_arrow ./...
go test -tags duckdb_arrow -count=1 ./...
node/check.sh
