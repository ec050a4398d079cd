#!/usr/bin/env bash
# dualcrf-beam against dualcrf on CoNLL-2000 or a synthetic corpus REPEAT times its size: equality of the outputs
# (featurize: vocabulary, labels, rows; decode --text: predictions; eval: the report, byte for byte) by the beam
# module's TestScaleEqualsCLI, then wall times of the CLI and of Beam on Prism with 1 and 2 workers, and Beam's
# fixed cost per job (a one-sentence job).
#
#   experiments/beam-scale.sh [REPEAT [SHARDS]]   REPEAT copies of CoNLL-2000's training file (default 20; 1: the
#                                             file itself), copies after the first with perturbed words; SHARDS
#                                             shards (default 8)
#
# Reads the corpora from DUALCRF_DATA (default data/, where go run ./scripts/getdata -o data puts them). Work files go to a temporary directory, removed at the end
# (REPEAT 20: about 1.5 GB at the peak).
set -euo pipefail
cd "$(dirname "$0")/.." # the repository's root: the command and beam/ are built from it
data="${DUALCRF_DATA:-data}"
rep="${1:-20}"
shards="${2:-8}"
[[ "$rep" =~ ^[1-9][0-9]*$ && "$shards" =~ ^[1-9][0-9]*$ ]] || { echo "usage: experiments/beam-scale.sh [REPEAT [SHARDS]]" >&2; exit 2; }
work="$(mktemp -d /tmp/beam-scale.XXXXXX)"
trap 'rm -rf "$work"' EXIT

# The corpus: copy k > 0 appends ~k to the word of every fifth token (by position), so every copy adds words,
# and so attributes, of its own.
zcat "$data/conll2000/train.txt.gz" | awk -v R="$rep" '{ l[NR] = $0 } END {
  for (k = 0; k < R; k++) for (i = 1; i <= NR; i++) {
    s = l[i]
    if (k > 0 && s != "" && (i + k) % 5 == 0) { sub(/ /, "~" k " ", s) }
    print s
  } }' >"$work/corpus.txt"
echo "corpus: $(grep -c . "$work/corpus.txt") tokens, $(grep -c '^$' "$work/corpus.txt") sentences, $rep × CoNLL-2000 train"

go build -o "$work/dualcrf" ./cmd/dualcrf
(cd beam && go build -o "$work/dualcrf-beam" ./cmd/dualcrf-beam)

echo "== equality (beam/dualcrfbeam TestScaleEqualsCLI, $shards shards)"
(cd beam && go test ./dualcrfbeam -run '^TestScaleEqualsCLI$' -count=1 -timeout 60m -v \
  -beam.scale "$work/corpus.txt" -beam.shards "$shards" -beam.dir "$work/eq") | grep -v 'level=' | grep -E '^(---|ok|FAIL|\s+equal)'
rm -rf "$work/eq"

# The same shards for the timings: sentence i to shard i·SHARDS/sentences.
mkdir -p "$work/shards"
n="$(grep -c '^$' "$work/corpus.txt")"
awk -v S="$shards" -v N="$n" -v D="$work/shards" 'BEGIN { s = 0 }
  { printf "%s\n", $0 > sprintf("%s/s%03d.txt", D, int(s * S / N)) } /^$/ { s++ }' "$work/corpus.txt"

t() { # label command...: wall seconds and peak RSS
  local label="$1"; shift
  /usr/bin/time -f "$label: %e s wall, %U s user, %M KB peak RSS" "$@" >/dev/null 2>"$work/time.err" || { cat "$work/time.err" >&2; exit 1; }
  tail -1 "$work/time.err"
}
cd "$work"
./dualcrf featurize -o slice.arrow "$OLDPWD/cmd/dualcrf/testdata/train150.txt" 2>/dev/null
./dualcrf train -o model.arrow slice.arrow 2>/dev/null
echo "== wall times (uptime: $(uptime | sed 's/.*load/load/'))"
t "cli featurize" ./dualcrf featurize --min-count 2 -o cli.arrow corpus.txt
for w in 1 2; do
  t "beam featurize --workers $w" ./dualcrf-beam featurize --workers "$w" --min-count 2 -o "feats$w" 'shards/s*.txt'
done
t "cli decode --text" ./dualcrf decode -m model.arrow --text corpus.txt -o cli-pred.arrow
for w in 1 2; do
  t "beam decode --text --workers $w" ./dualcrf-beam decode --workers "$w" -m model.arrow --text -o "pred$w" 'shards/s*.txt'
done
t "cli eval" ./dualcrf eval cli-pred.arrow
for w in 1 2; do
  t "beam eval --workers $w" ./dualcrf-beam eval --workers "$w" "pred$w/part-*.parquet"
done
./dualcrf eval cli-pred.arrow >cli-report.txt
./dualcrf-beam eval 'pred2/part-*.parquet' >beam-report.txt
cmp cli-report.txt beam-report.txt && echo "eval reports identical"
echo "== fixed cost per job (one sentence)"
awk '{ print } /^$/ { exit }' corpus.txt >one.txt
t "cli featurize, one sentence" ./dualcrf featurize -o one.arrow one.txt
t "beam featurize, one sentence" ./dualcrf-beam featurize -o one-feats one.txt
./dualcrf decode -m model.arrow --text one.txt --format parquet -o one.parquet 2>/dev/null
./dualcrf decode -m model.arrow --text one.txt -o one-pred.arrow 2>/dev/null
t "cli eval, one sentence" ./dualcrf eval one-pred.arrow
t "beam eval, one sentence" ./dualcrf-beam eval one.parquet
