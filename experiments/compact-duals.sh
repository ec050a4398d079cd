#!/usr/bin/env bash
# The duals' precisions (docs/long-runs.md, "Compact duals"): SDCA-GAP with float64 duals, the float32 Markov
# form and 16-bit forms of the conditionals (bf16, bf16all, f16, u16: a test-only store), certified every epoch, on
# CoNLL-2000 (min-count 3) and on the first SENTENCES sentences of UD English EWT with XPOS labels.
#
#   experiments/compact-duals.sh [EPOCHS [SENTENCES [MODES]]]   (defaults 40, 2000 and float64,float32,bf16,bf16all,f16,u16)
#
# Reads the corpora from DUALCRF_DATA (default data/, where go run ./scripts/getdata -o data puts them). Prints one
# line per store and epoch (gap, P, D, the identity's residual, wall); each run holds one copy of the duals per mode
# (about 1.6 GB for each task at the defaults). Work files go to a temporary directory, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.." # the repository's root: the command and the train package are built from it
data="${DUALCRF_DATA:-data}"
epochs="${1:-40}"
sents="${2:-2000}"
modes="${3:-float64,float32,bf16,bf16all,f16,u16}"
[[ "$epochs" =~ ^[1-9][0-9]*$ && "$sents" =~ ^[1-9][0-9]*$ ]] || { echo "usage: experiments/compact-duals.sh [EPOCHS [SENTENCES [MODES]]]" >&2; exit 2; }
work="$(mktemp -d -t compact-duals.XXXXXX)"
trap 'rm -rf "$work"' EXIT
go build -o "$work/dualcrf" ./cmd/dualcrf
go test -c -tags measure -o "$work/train.test" ./train
"$work/dualcrf" featurize --template chunking --min-count 3 --progress none -o "$work/conll.arrow" "$data/conll2000/train.txt.gz"
gzip -dc "$data/ud_english_ewt/en_ewt-ud-train.conllu.gz" | awk -v n="$sents" 'BEGIN{RS="";ORS="\n\n"} NR<=n' > "$work/ewt.conllu"
"$work/dualcrf" featurize -f conllu --xpos --min-count 3 --progress none -o "$work/ewt.arrow" "$work/ewt.conllu"
for task in conll ewt; do
	echo "# $task: $(uptime)"
	DUALCRF_COMPACT_TABLE="$work/$task.arrow" DUALCRF_COMPACT_EPOCHS="$epochs" DUALCRF_COMPACT_MODES="$modes" \
		"$work/train.test" -test.run '^TestCompactDualsMeasure$' -test.v -test.timeout 0
	echo "# $task done: $(uptime)"
done
