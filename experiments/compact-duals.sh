#!/usr/bin/env bash
# Compact (float32) duals, measured by simulation (docs/long-runs.md, "Compact (float32) duals"): SDCA-GAP with
# float64 duals and with duals rounded after every step through three float32 representations, certified every
# epoch, on CoNLL-2000 (min-count 3) and on the first SENTENCES sentences of UD English EWT with XPOS labels.
#
#   experiments/compact-duals.sh [EPOCHS [SENTENCES]]   (defaults 60 and 2000)
#
# Reads the corpora from DUALCRF_DATA (default data/, where go run ./scripts/getdata -o data puts them). Prints one line per store and epoch (gap, P, D, the identity's
# residual, the kept weights' distance from ŵ(μ), wall); each run holds four copies of the duals (about 3 GB for
# each task at the defaults). Work files go to a temporary directory, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.." # the repository's root: the command and the train package are built from it
data="${DUALCRF_DATA:-data}"
epochs="${1:-60}"
sents="${2:-2000}"
[[ "$epochs" =~ ^[1-9][0-9]*$ && "$sents" =~ ^[1-9][0-9]*$ ]] || { echo "usage: experiments/compact-duals.sh [EPOCHS [SENTENCES]]" >&2; exit 2; }
work="$(mktemp -d -t compact-duals.XXXXXX)"
trap 'rm -rf "$work"' EXIT
go build -o "$work/dualcrf" ./cmd/dualcrf
go test -c -o "$work/train.test" ./train
"$work/dualcrf" featurize --template chunking --min-count 3 --progress none -o "$work/conll.arrow" "$data/conll2000/train.txt.gz"
gzip -dc "$data/ud_english_ewt/en_ewt-ud-train.conllu.gz" | awk -v n="$sents" 'BEGIN{RS="";ORS="\n\n"} NR<=n' > "$work/ewt.conllu"
"$work/dualcrf" featurize -f conllu --xpos --min-count 3 --progress none -o "$work/ewt.arrow" "$work/ewt.conllu"
for task in conll ewt; do
	echo "# $task: $(uptime)"
	DUALCRF_COMPACT_TABLE="$work/$task.arrow" DUALCRF_COMPACT_EPOCHS="$epochs" \
		"$work/train.test" -test.run '^TestCompactDualsMeasure$' -test.v -test.timeout 0
	echo "# $task done: $(uptime)"
done
