#!/usr/bin/env bash
# Kill test: train with checkpoints, kill -9 at random moments (some during a
# checkpoint write), resume, and check that every run ends at a certified gap
# within the tolerance, with the uninterrupted run's model bytes, and that no
# corrupt snapshot is loaded.
#
#   scripts/killtest.sh [RUNS] [FEATURES]
#
# FEATURES defaults to a feature table made from the embedded CoNLL-2000 slice.
# KILLTEST_TRAIN_ARGS adds train flags to every run, the reference's too, e.g.
# KILLTEST_TRAIN_ARGS="--duals stream --memory-budget 80MiB" for streamed duals;
# KILLTEST_TOL replaces the gap tolerance 1e-4 (streamed runs converge in more epochs).
set -euo pipefail
runs=${1:-5}
cd "$(dirname "$0")/.."
. scripts/testbed.sh "${2:-}"
tol=${KILLTEST_TOL:-1e-4}
extra=(${KILLTEST_TRAIN_ARGS:-})
"$bin" train -q --gap-tol $tol ${extra[@]+"${extra[@]}"} -o "$work/ref.arrow" "$features" 2>"$work/ref.log"
echo "reference: $(tail -1 "$work/ref.log")"
pass=0
for run in $(seq 1 "$runs"); do
  ck=$work/ck$run
  kills=0
  midwrite=0
  # Kill up to three times at random moments, then let the run finish.
  while :; do
    args=(train -q --gap-tol $tol ${extra[@]+"${extra[@]}"} --checkpoint "$ck" --checkpoint-every 1 -o "$work/m$run.arrow")
    # Snapshots (a kill may leave one renamed into place before CURRENT names it): resume them; a
    # fresh run on them is refused.
    if [ -e "$ck/CURRENT" ] || compgen -G "$ck/ckpt-*" >/dev/null; then args+=(--resume "$ck"); fi
    "$bin" "${args[@]}" "$features" 2>"$work/run$run.log" &
    pid=$!
    if [ $kills -lt 3 ]; then
      sleep "0.$((RANDOM % 10))$((RANDOM % 10))"; sleep $((RANDOM % 3))
      if kill -0 $pid 2>/dev/null; then
        kill -9 $pid 2>/dev/null || true
        wait $pid 2>/dev/null || true
        kills=$((kills + 1))
        # A temporary snapshot directory left behind means the kill hit a checkpoint write.
        if compgen -G "$ck/.ckpt-*" >/dev/null; then midwrite=$((midwrite + 1)); fi
        continue
      fi
    fi
    wait $pid
    break
  done
  refused=$(grep -c "refusing snapshot" "$work/run$run.log" || true)
  last=$(grep 'certified gap' "$work/run$run.log" | tail -1 || true)   # the run's summary, before "removed the snapshots"
  gap=$(sed -n 's/.*certified gap \([0-9.e+-]*\).*/\1/p' <<<"$last")
  ok=$(awk -v g="$gap" -v t=$tol 'BEGIN{print (g != "" && g <= t) ? "yes" : "no"}')
  bytes=identical
  cmp -s "$work/ref.arrow" "$work/m$run.arrow" || { bytes=DIFFERENT; ok=no; }
  echo "run $run: $kills kill(s), $midwrite during a checkpoint write, $refused snapshot(s) refused; $last -> gap within tolerance and model $bytes: $ok"
  [ "$ok" = yes ] && pass=$((pass + 1))
done
echo "$pass/$runs runs resumed and reached a certified gap <= $tol with the uninterrupted model's bytes"
[ $pass -eq "$runs" ]
