#!/usr/bin/env bash
# Trains dualcrf, CRFsuite, CRF++ and Wapiti on CoNLL-2000 chunking with the same 19 feature templates and the
# same L2 regularisation, and measures what docs/compare.md reports: wall time of everything a user waits for
# to get a model (reading, feature extraction, training, writing the model), the training time the tool itself
# reports, peak RSS and CPU time (/usr/bin/time -v), model size on disk, and chunk F1 on the test set, every
# tool's predictions scored by the same evaluator (dualcrf eval's, through experiments/conllscore).
#
# Usage, from a clone root: experiments/compare.sh [OUTDIR]      (default OUTDIR: compare-out)
# (it builds its tools from the checkout it sits in, so it runs from any directory; OUTDIR and DATA are
# relative to the working directory)
# Environment:
#   DATA      corpora directory holding conll2000/{train,test}.txt.gz (default: $DUALCRF_DATA, else data)
#   ROUNDS    runs of each tool (default 2; the report takes the minimum wall time)
#   TOOLS     tools to run, space-separated (default: "dualcrf crfsuite crfpp wapiti")
#   DUALCRF   the dualcrf binary (default: dualcrf on PATH, else built from this checkout into OUTDIR)
#   CRFSUITE_C2 (default 0.5), CRFPP_C (default 1), WAPITI_RHO1 (default 0), WAPITI_RHO2 (default 1):
#             the peers' penalties; the defaults match dualcrf's λ = 1/n (docs/compare.md says why)
#   CRFSUITE_MIN_COUNT  drop attributes seen fewer times in the training file (default 3, as featurize
#             --min-count 3 and crf_learn -f 3; 0 keeps them all, as CRFsuite's example chunking.py does)
# The peers are taken from PATH (crfsuite; crf_learn and crf_test; wapiti — the CRF toolkit, not Debian's web
# scanner of the same name). This script never downloads or builds them, except that when crfsuite is missing and
# PEERS_BUILD names CRFsuite's build script (it builds CRFsuite 0.12.2 from tarballs beside it), that script is run.
# A missing tool is skipped with a message saying so.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd) # experiments/, the module of conllscore and crfsuite-chunking
ROOT=$(dirname "$HERE")             # the repository's root, for ./cmd/dualcrf

OUT=${1:-compare-out}
DATA=${DATA:-${DUALCRF_DATA:-data}}
ROUNDS=${ROUNDS:-2}
TOOLS=${TOOLS:-dualcrf crfsuite crfpp wapiti}
CRFSUITE_C2=${CRFSUITE_C2:-0.5}
CRFPP_C=${CRFPP_C:-1}
WAPITI_RHO1=${WAPITI_RHO1:-0}
WAPITI_RHO2=${WAPITI_RHO2:-1}
CRFSUITE_MIN_COUNT=${CRFSUITE_MIN_COUNT:-3}
TRAIN=$DATA/conll2000/train.txt.gz
TEST=$DATA/conll2000/test.txt.gz

for f in "$TRAIN" "$TEST"; do
  [ -r "$f" ] || { echo "compare.sh: cannot read $f (set DATA or DUALCRF_DATA)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "compare.sh: /usr/bin/time is missing (Debian: apt-get install time)" >&2; exit 1; }
mkdir -p "$OUT/bin"
OUT=$(cd "$OUT" && pwd)
RES=$OUT/results.tsv
printf 'tool\tround\twall_s\tcpu_s\ttrain_s\tpeak_rss_mib\tmodel_bytes\tweights\tf1\tnote\n' >"$RES"

go -C "$HERE" build -o "$OUT/bin/conllscore" ./conllscore
if [ -z "${DUALCRF:-}" ]; then
  if command -v dualcrf >/dev/null; then DUALCRF=$(command -v dualcrf); else
    go -C "$ROOT" build -o "$OUT/bin/dualcrf" ./cmd/dualcrf && DUALCRF=$OUT/bin/dualcrf
  fi
fi

# timed NAME CMD...: runs CMD under /usr/bin/time -v, keeping its report in $OUT/NAME.time.
timed() {
  local name=$1; shift
  /usr/bin/time -v -o "$OUT/$name.time" "$@"
}
# wall_s, cpu_s, rss_kib FILE...: the sums of the steps' wall and CPU seconds, and the largest peak RSS.
wall_s() {
  awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]; t += s }
    END { printf "%.2f", t }' "$@"
}
cpu_s() { awk -F': ' '/(User|System) time \(seconds\)/ { t += $2 } END { printf "%.2f", t }' "$@"; }
rss_mib() { awk -F': ' '/Maximum resident set size/ { if ($2 > m) m = $2 } END { printf "%.0f", m / 1024 }' "$@"; }
f1_of() { "$OUT/bin/conllscore" "$1" | awk '/^accuracy:/ { print $NF }'; }
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$RES"; }

# The peers read the corpus with the word column lower-cased, as dualcrf's templates lower-case it themselves
# (lower(w[…])); CoNLL-2000 is ASCII, so awk's tolower is the same function. Its time is counted in each
# peer's wall time.
LOWER='gzip -dc "$1" | awk '"'"'{ if (NF) $1 = tolower($1); print }'"'"' >"$2"'
lowercase() { bash -c "$LOWER" lowercase "$1" "$2"; }
timed_lowercase() { timed "$1" bash -c "$LOWER" lowercase "$2" "$3"; }

# cut MIN IN OUT: IN's attribute lines keeping only the attributes that occur at least MIN times in IN.
CUT='awk -F"\t" -v m="$1" '"'"'NR == FNR { for (i = 2; i <= NF; i++) c[$i]++; next }
  NF == 0 { print; next } { s = $1; for (i = 2; i <= NF; i++) if (c[$i] >= m) s = s "\t" $i; print s }'"'"' "$2" "$2" >"$3"'

# The 19 templates of dualcrf's builtin "chunking" set, as CRF++ templates (column 0 the lower-cased word,
# column 1 the POS tag) plus the label bigram; Wapiti reads the same file, its patterns being CRF++'s with
# the type letter in either case.
cat >"$OUT/chunking.tmpl" <<'EOF'
# dualcrf's builtin "chunking" templates: lower-cased words at -2..+2 (the input's word column is lower-cased)
U01:%x[-2,0]
U02:%x[-1,0]
U03:%x[0,0]
U04:%x[1,0]
U05:%x[2,0]
# lower-cased word bigrams
U06:%x[-1,0]/%x[0,0]
U07:%x[0,0]/%x[1,0]
# POS at -2..+2
U08:%x[-2,1]
U09:%x[-1,1]
U10:%x[0,1]
U11:%x[1,1]
U12:%x[2,1]
# POS bigrams
U13:%x[-2,1]/%x[-1,1]
U14:%x[-1,1]/%x[0,1]
U15:%x[0,1]/%x[1,1]
U16:%x[1,1]/%x[2,1]
# POS trigrams
U17:%x[-2,1]/%x[-1,1]/%x[0,1]
U18:%x[-1,1]/%x[0,1]/%x[1,1]
U19:%x[0,1]/%x[1,1]/%x[2,1]
# label bigram (transitions)
B
EOF

echo "compare.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/env.txt"

run_dualcrf() {
  local r=$1 w=$OUT/dualcrf.$1
  echo "dualcrf: $("$DUALCRF" --version)" >>"$OUT/env.txt"
  timed dualcrf.$r.featurize "$DUALCRF" featurize --template chunking --min-count 3 -o "$w.train.arrow" "$TRAIN"
  timed dualcrf.$r.train "$DUALCRF" train -o "$w.model.arrow" "$w.train.arrow" 2>"$w.train.err"
  "$DUALCRF" featurize --model "$w.model.arrow" "$TEST" | "$DUALCRF" decode -m "$w.model.arrow" >"$w.pred.arrow"
  "$DUALCRF" eval "$w.pred.arrow" >"$w.eval.txt"
  "$DUALCRF" decode -m "$w.model.arrow" --text "$TEST" --format conll >"$w.pred.txt"
  local f1 f1b
  f1=$(awk '/^accuracy:/ { print $NF }' "$w.eval.txt")
  f1b=$(f1_of "$w.pred.txt")
  [ "$f1" = "$f1b" ] || echo "compare.sh: dualcrf eval says F1 $f1, conllscore on its CoNLL output $f1b" >&2
  local train_s gap
  train_s=$(grep -o '[0-9.]*s training' "$w.train.err" | tail -1 | tr -dc '0-9.')
  gap=$(grep -o 'certified gap [0-9.e+-]*' "$w.train.err" | tail -1 | cut -d' ' -f3)
  row dualcrf "$r" "$(wall_s "$OUT"/dualcrf.$r.*.time)" "$(cpu_s "$OUT"/dualcrf.$r.*.time)" "$train_s" \
    "$(rss_mib "$OUT"/dualcrf.$r.*.time)" "$(stat -c %s "$w.model.arrow")" \
    "$(grep -o 'd = [0-9]*' "$w.train.err" | head -1 | cut -d' ' -f3)" "$f1" "certified gap $gap"
}

run_crfsuite() {
  local r=$1 w=$OUT/crfsuite.$1
  "$CRFSUITE" learn -H 2>&1 | head -1 | sed 's/^/crfsuite: /' >>"$OUT/env.txt" || true
  timed_lowercase crfsuite.$r.lower "$TRAIN" "$w.train.lc.txt"
  timed crfsuite.$r.attrs "$OUT/bin/crfsuite-chunking" -o "$w.train.cs.txt" "$w.train.lc.txt"
  if [ "$CRFSUITE_MIN_COUNT" -gt 1 ]; then
    timed crfsuite.$r.cutoff bash -c "$CUT" cut "$CRFSUITE_MIN_COUNT" "$w.train.cs.txt" "$w.train.cut.txt"
    mv "$w.train.cut.txt" "$w.train.cs.txt"
  fi
  timed crfsuite.$r.learn "$CRFSUITE" learn -p c2="$CRFSUITE_C2" -m "$w.model" "$w.train.cs.txt" >"$w.learn.out"
  lowercase "$TEST" "$w.test.lc.txt"
  "$OUT/bin/crfsuite-chunking" -o "$w.test.cs.txt" "$w.test.lc.txt"
  "$CRFSUITE" tag -r -m "$w.model" "$w.test.cs.txt" >"$w.pred.txt"
  local its
  its=$(grep -c '^\*\*\*\*\* Iteration' "$w.learn.out" || true)
  row crfsuite "$r" "$(wall_s "$OUT"/crfsuite.$r.*.time)" "$(cpu_s "$OUT"/crfsuite.$r.*.time)" \
    "$(awk '/Total seconds required for training/ { print $NF }' "$w.learn.out")" \
    "$(rss_mib "$OUT"/crfsuite.$r.*.time)" "$(stat -c %s "$w.model")" \
    "$(awk '/^Number of features:/ { print $NF; exit }' "$w.learn.out")" "$(f1_of "$w.pred.txt")" \
    "L-BFGS, $its iterations, c2=$CRFSUITE_C2, attribute min count $CRFSUITE_MIN_COUNT"
}

run_crfpp() {
  local r=$1 w=$OUT/crfpp.$1
  crf_learn --version 2>&1 | head -1 | sed 's/^/crfpp: /' >>"$OUT/env.txt" || true
  timed_lowercase crfpp.$r.lower "$TRAIN" "$w.train.lc.txt"
  timed crfpp.$r.learn crf_learn -p 1 -f 3 -c "$CRFPP_C" "$OUT/chunking.tmpl" "$w.train.lc.txt" "$w.model" >"$w.learn.out"
  lowercase "$TEST" "$w.test.lc.txt"
  crf_test -m "$w.model" "$w.test.lc.txt" >"$w.pred.txt"
  local its
  its=$(grep -c '^iter=' "$w.learn.out" || true)
  row crfpp "$r" "$(wall_s "$OUT"/crfpp.$r.*.time)" "$(cpu_s "$OUT"/crfpp.$r.*.time)" \
    "$(grep -o 'Done![0-9.]* s' "$w.learn.out" | tail -1 | tr -dc '0-9.')" \
    "$(rss_mib "$OUT"/crfpp.$r.*.time)" "$(stat -c %s "$w.model")" \
    "$(awk '/^Number of features:/ { print $NF; exit }' "$w.learn.out")" "$(f1_of "$w.pred.txt")" \
    "L-BFGS, $its iterations, -f 3 -c $CRFPP_C, 1 thread"
}

run_wapiti() {
  local r=$1 w=$OUT/wapiti.$1
  wapiti --version 2>&1 | head -1 | sed 's/^/wapiti: /' >>"$OUT/env.txt" || true
  timed_lowercase wapiti.$r.lower "$TRAIN" "$w.train.lc.txt"
  timed wapiti.$r.train wapiti train -p "$OUT/chunking.tmpl" -1 "$WAPITI_RHO1" -2 "$WAPITI_RHO2" \
    "$w.train.lc.txt" "$w.model" 2>"$w.train.err"
  lowercase "$TEST" "$w.test.lc.txt"
  wapiti label -c -m "$w.model" "$w.test.lc.txt" "$w.pred.txt" 2>"$w.label.err"
  local its train_s
  its=$(grep -c '^  \[ *[0-9]*\]' "$w.train.err" || true)
  train_s=$(grep -o 'time=[0-9.]*s/[0-9.]*' "$w.train.err" | tail -1 | cut -d/ -f2)
  row wapiti "$r" "$(wall_s "$OUT"/wapiti.$r.*.time)" "$(cpu_s "$OUT"/wapiti.$r.*.time)" "$train_s" \
    "$(rss_mib "$OUT"/wapiti.$r.*.time)" "$(stat -c %s "$w.model")" \
    "$(awk '/nb features:/ { print $NF; exit }' "$w.train.err")" "$(f1_of "$w.pred.txt")" \
    "L-BFGS, $its iterations, rho1=$WAPITI_RHO1 rho2=$WAPITI_RHO2"
}

have() {
  case $1 in
    dualcrf) return 0 ;;
    crfsuite)
      CRFSUITE=$(command -v crfsuite || true)
      if [ -z "$CRFSUITE" ] && [ -n "${PEERS_BUILD:-}" ] && [ -x "$PEERS_BUILD" ]; then
        CRFSUITE=$("$PEERS_BUILD" "$OUT/crfsuite-build" | tail -1)
        export LD_LIBRARY_PATH=$OUT/crfsuite-build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
      fi
      [ -n "$CRFSUITE" ] || { echo "compare.sh: skipping CRFsuite: no crfsuite on PATH (and PEERS_BUILD not set)" >&2; return 1; }
      go -C "$HERE" build -o "$OUT/bin/crfsuite-chunking" ./crfsuite-chunking ;;
    crfpp)
      command -v crf_learn >/dev/null && command -v crf_test >/dev/null ||
        { echo "compare.sh: skipping CRF++: crf_learn and crf_test are not both on PATH" >&2; return 1; } ;;
    wapiti)
      command -v wapiti >/dev/null || { echo "compare.sh: skipping Wapiti: no wapiti on PATH" >&2; return 1; }
      # Debian's package "wapiti" is a web-application scanner; the CRF toolkit answers "Wapiti v1.x".
      wapiti --version 2>&1 | grep -q '^Wapiti v1' ||
        { echo "compare.sh: skipping Wapiti: $(command -v wapiti) is not the Wapiti CRF toolkit (wapiti --version)" >&2; return 1; } ;;
    *) echo "compare.sh: unknown tool $1 (known: dualcrf crfsuite crfpp wapiti)" >&2; return 1 ;;
  esac
}

ran=()
for t in $TOOLS; do have "$t" && ran+=("$t"); done
# Rounds alternate the tools, so that a burst of load on a shared machine does not fall on one tool only.
for r in $(seq 1 "$ROUNDS"); do
  for t in "${ran[@]}"; do
    echo "compare.sh: round $r: $t (load $(cut -d' ' -f1-3 /proc/loadavg))" | tee -a "$OUT/env.txt"
    "run_$t" "$r"
  done
done
echo "compare.sh: done $(date -u '+%H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/env.txt"
column -t -s $'\t' "$RES"
