#!/usr/bin/env bash
# Featurize throughput from a Parquet token table against CoNLL text, and peak RSS at 1× and 20× CoNLL-2000
# (the 20× table made by repetition): the figures of docs/lake.md.
#
#   interop/measure.sh [WORKDIR]     (default: a temporary directory, removed after; ~100 MB of files)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
data="${DUALCRF_DATA:-$root/data}/conll2000/train.txt.gz"
w="${1:-}"
if [[ -z "$w" ]]; then w="$(mktemp -d "${TMPDIR:-/tmp}/dualcrf-measure-XXXXXX")"; trap 'rm -rf "$w"' EXIT; fi
mkdir -p "$w"
go build -C "$root" -o "$w/dualcrf" ./cmd/dualcrf
zcat "$data" > "$w/train1.txt"
for _ in $(seq 20); do cat "$w/train1.txt"; done > "$w/train20.txt"
(cd "$here" && go run ./cmd/tokens -o "$w/train1.parquet" "$data" && go run ./cmd/tokens -repeat 20 -o "$w/train20.parquet" "$data")
uptime
printf '%-16s %10s %9s %12s %10s\n' input tokens seconds tokens/s "peak RSS"
for f in train1.txt train1.parquet train20.txt train20.parquet; do
  /usr/bin/time -f '%e %M' -o "$w/time" "$w/dualcrf" featurize --template chunking -o /dev/null "$w/$f" 2> "$w/err"
  read -r secs kb < "$w/time"
  tokens=$(sed -n 's/.* sentences, \([0-9]*\) tokens,.*/\1/p' "$w/err")
  printf '%-16s %10d %9.2f %12.0f %7d MiB\n' "$f" "$tokens" "$secs" "$(echo "$tokens / $secs" | bc -l)" $((kb / 1024))
done
