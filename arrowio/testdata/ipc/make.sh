#!/usr/bin/env bash
# Regenerates the fuzz seeds of FuzzOpenRecordReader: small files of every
# kind dualcrf writes, made by the tool itself from 2 sentences of
# cmd/dualcrf/testdata/test50.txt with one template (so the model is small).
#   arrowio/testdata/ipc/make.sh   (from the repository root)
set -euo pipefail
cd "$(dirname "$0")"
root=../../..
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/dualcrf" "$root/cmd/dualcrf"
d="$tmp/dualcrf"
awk 'BEGIN{n=0} {print} /^$/{if(++n==2) exit}' "$root/cmd/dualcrf/testdata/test50.txt" > "$tmp/six.txt"
printf 'lower(w[0])\npos[0]\n' > "$tmp/tpl.txt"
"$d" featurize --template "$tmp/tpl.txt" -o feature.arrow "$tmp/six.txt"
"$d" featurize --template "$tmp/tpl.txt" --ipc file --compression zstd -o feature.zstd.feather "$tmp/six.txt"
"$d" featurize --template "$tmp/tpl.txt" --compression lz4 -o feature.lz4.arrows "$tmp/six.txt"
"$d" train -q --max-epochs 3 --log log.arrow -o model.arrow feature.arrow
"$d" decode -m model.arrow --marginals -o pred.arrow feature.arrow
"$d" eval --arrow scores.arrow pred.arrow > /dev/null
ls -l
