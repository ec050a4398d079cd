#!/usr/bin/env bash
# The elastic net (train --l1) against CRFsuite's OWL-QN, and the sparsity it buys: what docs/training.md's
# "Elastic net" section reports.
#
#   experiments/elastic-net.sh [OUTDIR]          (default OUTDIR: elastic-out)
#
# 1. CoNLL-2002 Dutch NER with the features of sklearn-crfsuite's tutorial written as a CRFsuite attribute file
#    (experiments/crfsuite-ner), c1 = c2 = 0.1: CRFsuite 0.12 (`crfsuite learn -a lbfgs -p c1=0.1 -p c2=0.1
#    -p feature.possible_transitions=1`, the tutorial's all_possible_transitions) against dualcrf on the same
#    file (`featurize --input-format crfsuite`, then `train --l1 0.1/n --lambda 0.2/n --feature-space observed
#    --no-bias`: CRFsuite's objective divided by n, its feature space, no bias/start/end weights), ROUNDS rounds
#    alternating the two; dualcrf's own OWL-QN (`--solver lbfgs`) once. CRFsuite's final objective is also
#    evaluated by dualcrf's formula at CRFsuite's weights (experiments/crfsuite-objective), which checks that
#    the two objectives are one. Test F1 on ned.testb, every prediction scored by dualcrf's evaluator.
# 2. CoNLL-2000 chunking (`featurize --template chunking --min-count 3`, λ = 1/n) over λ₁ ∈ {0, 0.01, 0.1, 1}/n:
#    epochs to a certified 1e-3, non-zero weights, the model file's size, test F1.
#
# Environment: DATA (corpora: conll2002/ned.{train,testb}.gz, conll2000/{train,test}.txt.gz; default
# $DUALCRF_DATA, else data), ROUNDS (default 2), CRFSUITE (the crfsuite binary; default crfsuite on PATH; part 1
# is skipped without it), DUALCRF (default: built from this checkout), PARTS (default "ner chunking").
# Writes OUTDIR/ner.tsv and OUTDIR/chunking.tsv, every step's /usr/bin/time -v report and the load average
# before each run (OUTDIR/*.load).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OUT=${1:-elastic-out}
DATA=${DATA:-${DUALCRF_DATA:-data}}
ROUNDS=${ROUNDS:-2}
PARTS=${PARTS:-ner chunking}
CRFSUITE=${CRFSUITE:-$(command -v crfsuite || true)}
[ -x /usr/bin/time ] || { echo "elastic-net.sh: /usr/bin/time is missing (Debian: apt-get install time)" >&2; exit 1; }
mkdir -p "$OUT/bin"
OUT=$(cd "$OUT" && pwd)
for tool in crfsuite-ner crfsuite-objective conllscore; do go -C "$HERE" build -o "$OUT/bin/$tool" "./$tool"; done
if [ -z "${DUALCRF:-}" ]; then go -C "$ROOT" build -o "$OUT/bin/dualcrf" ./cmd/dualcrf; DUALCRF=$OUT/bin/dualcrf; fi

timed() { local name=$1; shift; cut -d' ' -f1-3 /proc/loadavg >"$OUT/$name.load"; /usr/bin/time -v -o "$OUT/$name.time" "$@"; }
wall_s() {
  awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]; t += s }
    END { printf "%.2f", t }' "$@"
}
cpu_s() { awk -F': ' '/(User|System) time \(seconds\)/ { t += $2 } END { printf "%.2f", t }' "$@"; }
f1_of() { "$OUT/bin/conllscore" "$1" | awk '/^accuracy:/ { print $NF }'; }
eval_f1() { "$DUALCRF" eval "$1" | awk '/^accuracy:/ { print $NF }'; }
fact() { "$DUALCRF" inspect "$1" | awk -v k="$2" '$1 == k { print $2 }'; }
nonzero() { "$DUALCRF" inspect "$1" | awk '$1 == "non-zero" { sub(":", "", $2); print $2 }'; }

echo "elastic-net.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/env.txt"

ner() {
  [ -n "$CRFSUITE" ] || { echo "elastic-net.sh: no crfsuite (set CRFSUITE): skipping the NER comparison" >&2; return; }
  local res=$OUT/ner.tsv
  printf 'tool\tround\twall_s\tcpu_s\tload\tobjective_nP\tdual_nP\tnonzero\ttest_f1\tnote\n' >"$res"
  "$OUT/bin/crfsuite-ner" -o "$OUT/ner.train.txt" "$DATA/conll2002/ned.train.gz"
  "$OUT/bin/crfsuite-ner" -o "$OUT/ner.testb.txt" "$DATA/conll2002/ned.testb.gz"
  "$DUALCRF" featurize --input-format crfsuite -o "$OUT/ner.testb.arrow" "$OUT/ner.testb.txt" 2>/dev/null
  local n; n=$(grep -c '^$' "$OUT/ner.train.txt")
  local r
  for r in $(seq 1 "$ROUNDS"); do
    # dualcrf: the attribute file read, then trained to a certified gap of 1e-3.
    local d=$OUT/ner.dualcrf.$r
    timed ner.dualcrf.$r.featurize "$DUALCRF" featurize --input-format crfsuite -o "$d.train.arrow" "$OUT/ner.train.txt" 2>/dev/null
    timed ner.dualcrf.$r.train "$DUALCRF" train --l1 0.1/n --lambda 0.2/n --feature-space observed --no-bias \
      -o "$d.model.arrow" "$d.train.arrow" 2>"$d.train.err"
    "$DUALCRF" decode -m "$d.model.arrow" -o "$d.pred.arrow" "$OUT/ner.testb.arrow"
    local p dl gap ep
    p=$(fact "$d.model.arrow" primal); dl=$(fact "$d.model.arrow" dual); ep=$(fact "$d.model.arrow" epochs)
    gap=$(fact "$d.model.arrow" gap)
    printf 'dualcrf\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" \
      "$(wall_s "$OUT"/ner.dualcrf.$r.*.time)" \
      "$(cpu_s "$OUT"/ner.dualcrf.$r.*.time)" "$(cat "$OUT/ner.dualcrf.$r.train.load")" \
      "$(awk -v p="$p" -v n="$n" 'BEGIN { printf "%.4f", p * n }')" "$(awk -v p="$dl" -v n="$n" 'BEGIN { printf "%.4f", p * n }')" \
      "$(nonzero "$d.model.arrow")" "$(eval_f1 "$d.pred.arrow")" "SDCA, $ep epochs, certified gap $gap" >>"$res"
    # CRFsuite 0.12's OWL-QN on the same file, to its own stopping rule.
    local c=$OUT/ner.crfsuite.$r
    timed ner.crfsuite.$r "$CRFSUITE" learn -a lbfgs -p c1=0.1 -p c2=0.1 -p feature.possible_transitions=1 \
      -m "$c.model" "$OUT/ner.train.txt" >"$c.log"
    "$CRFSUITE" tag -r -m "$c.model" "$OUT/ner.testb.txt" >"$c.pred.txt"
    "$CRFSUITE" dump "$c.model" >"$c.dump"
    "$OUT/bin/crfsuite-objective" -lambda 0.2/n -l1 0.1/n "$d.train.arrow" "$c.dump" >"$c.objective"
    printf 'crfsuite\t%s\t%s\t%s\t%s\t%s\t\t%s\t%s\t%s\n' "$r" "$(wall_s "$OUT/ner.crfsuite.$r.time")" \
      "$(cpu_s "$OUT/ner.crfsuite.$r.time")" "$(cat "$OUT/ner.crfsuite.$r.load")" \
      "$(awk '/^Loss:/ { l = $2 } END { print l }' "$c.log")" "$(awk '/^Active features:/ { a = $3 } END { print a }' "$c.log")" \
      "$(f1_of "$c.pred.txt")" "OWL-QN, $(grep -c '^\*\*\*\*\* Iteration' "$c.log") iterations; dualcrf's objective at its weights (six decimals): nP $(awk '$1 == "nP" { print $2 }' "$c.objective"), unknown features $(awk '$1 == "unknown" { print $2 }' "$c.objective")" >>"$res"
  done
  # dualcrf's own OWL-QN on the same objective and table.
  local o=$OUT/ner.owlqn
  timed ner.owlqn "$DUALCRF" train --solver lbfgs --max-epochs 2000 --l1 0.1/n --lambda 0.2/n --feature-space observed --no-bias \
    -o "$o.model.arrow" "$OUT/ner.dualcrf.1.train.arrow" 2>"$o.train.err"
  "$DUALCRF" decode -m "$o.model.arrow" -o "$o.pred.arrow" "$OUT/ner.testb.arrow"
  printf 'dualcrf-owlqn\t1\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(wall_s "$o.time")" "$(cpu_s "$o.time")" "$(cat "$o.load")" \
    "$(awk -v p="$(fact "$o.model.arrow" primal)" -v n="$n" 'BEGIN { printf "%.4f", p * n }')" \
    "$(awk -v p="$(fact "$o.model.arrow" dual)" -v n="$n" 'BEGIN { printf "%.4f", p * n }')" \
    "$(nonzero "$o.model.arrow")" "$(eval_f1 "$o.pred.arrow")" \
    "OWL-QN, $(fact "$o.model.arrow" epochs) iterations, certified gap $(fact "$o.model.arrow" gap), stopped $(fact "$o.model.arrow" stopped)" >>"$res"
  column -t -s $'\t' "$res"
}

chunking() {
  local res=$OUT/chunking.tsv
  printf 'l1\tepochs\tgap\tnonzero\tweights\tmodel_bytes\ttest_f1\ttrain_s\tload\n' >"$res"
  "$DUALCRF" featurize --template chunking --min-count 3 -o "$OUT/chunk.train.arrow" "$DATA/conll2000/train.txt.gz" 2>/dev/null
  local c
  for c in 0 0.01 0.1 1; do
    local m=$OUT/chunk.l1-$c
    timed chunk.l1-$c "$DUALCRF" train --l1 "$c/n" -o "$m.model.arrow" "$OUT/chunk.train.arrow" 2>"$m.train.err"
    "$DUALCRF" featurize --model "$m.model.arrow" "$DATA/conll2000/test.txt.gz" 2>/dev/null |
      "$DUALCRF" decode -m "$m.model.arrow" -o "$m.pred.arrow"
    printf '%s/n\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$(fact "$m.model.arrow" epochs)" "$(fact "$m.model.arrow" gap)" \
      "$(nonzero "$m.model.arrow")" "$("$DUALCRF" inspect "$m.model.arrow" | awk '$1 == "weights" { print $2 }')" \
      "$(stat -c %s "$m.model.arrow")" "$(eval_f1 "$m.pred.arrow")" \
      "$(grep -o '[0-9.]*s training' "$m.train.err" | tail -1 | tr -dc '0-9.')" "$(cat "$OUT/chunk.l1-$c.load")" >>"$res"
  done
  column -t -s $'\t' "$res"
}

for part in $PARTS; do "$part"; done
