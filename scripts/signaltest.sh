#!/usr/bin/env bash
# Signal test: send SIGINT and SIGTERM to training at random moments, resume
# each run with --resume, and compare every final model with the
# uninterrupted run's byte for byte. Each interrupted run says which phase the
# signal hit (inside an epoch, in a certificate pass, during a checkpoint
# write) and where it stopped; the tally at the end shows every kind occurred.
#
#   scripts/signaltest.sh [RUNS_PER_SIGNAL] [FEATURES]
#
# RUNS_PER_SIGNAL defaults to 20 (20 SIGINT + 20 SIGTERM); FEATURES to a
# feature table of the embedded CoNLL-2000 slice (1,000 sentences).
set -euo pipefail
runs=${1:-20}
cd "$(dirname "$0")/.."
. scripts/testbed.sh "${2:-}"
# Certificates every second epoch, so snapshots also hold uncertified epochs.
args=(train -q --max-epochs 4 --gap-every 2 --gap-tol 1e-9 --checkpoint-every 1)
t0=$(date +%s%N)
"$bin" "${args[@]}" -o "$work/ref.arrow" "$features" 2>"$work/ref.log"
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
echo "reference: $(tail -1 "$work/ref.log") (${ms} ms)"
declare -A kinds=()
same=0 total=0
for sig in INT TERM; do
  want=130; [ $sig = TERM ] && want=143
  for run in $(seq 1 "$runs"); do
    ck=$work/ck-$sig-$run
    # A random moment over the run (with a checkpoint after every epoch it
    # takes longer than the reference): retried earlier if the run finished first.
    span=$(( ms * 3 / 2 ))
    while :; do
      delay=$(( 50 + (RANDOM * 32768 + RANDOM) % (span > 1 ? span : 1) ))
      rm -rf "$ck"
      "$bin" "${args[@]}" --checkpoint "$ck" -o "$work/m.arrow" "$features" 2>"$work/int.log" &
      pid=$!
      sleep "$(awk -v d=$delay 'BEGIN{printf "%.3f", d/1000}')"
      kill -s $sig $pid 2>/dev/null || true
      code=0; wait $pid || code=$?
      [ $code -ne 0 ] && break
      span=$(( span * 2 / 3 )) # finished before the signal: try earlier
      rm -f "$work/m.arrow"
    done
    msg=$(grep -o 'interrupted .*' "$work/int.log" | head -1 || true)
    case "$msg" in
      *"in epoch"*"after step"*) kind="inside an epoch (between steps)" ;;
      *"in epoch"*) kind="inside an epoch (at its start)" ;;
      *"certificate pass"*) kind="inside a certificate pass" ;;
      *"checkpoint write"*) kind="during a checkpoint write" ;;
      *"setup"*) kind="during setup" ;;
      *) kind="other" ;;
    esac
    kinds[$kind]=$(( ${kinds[$kind]:-0} + 1 ))
    resume=()
    if [ -e "$ck/CURRENT" ] || compgen -G "$ck/ckpt-*" >/dev/null; then resume=(--resume "$ck"); fi
    "$bin" "${args[@]}" --checkpoint "$ck" "${resume[@]}" -o "$work/m.arrow" "$features" 2>"$work/res.log" || {
      echo "SIG$sig run $run: resume failed:"; cat "$work/res.log"; }
    verdict=DIFFERENT
    cmp -s "$work/ref.arrow" "$work/m.arrow" && verdict=identical
    status=ok
    [ $code -ne $want ] && status="WRONG, want $want"
    [ $verdict = identical ] && [ $status = ok ] && same=$((same + 1))
    total=$((total + 1))
    echo "SIG$sig run $run after ${delay} ms: exit $code ($status), $kind: ${msg#interrupted } -> $verdict"
    rm -f "$work/m.arrow"
  done
done
echo "phases hit:"
for k in "${!kinds[@]}"; do echo "  $k: ${kinds[$k]}"; done
echo "$same/$total interrupted runs exited with the signal's status and resumed to the uninterrupted model's bytes"
[ $same -eq $total ]
