#!/usr/bin/env bash
# Warm start against cold start on a grown corpus: yesterday's run keeps its
# duals; today's corpus is trained from scratch and from them, alternated.
#
#   warm.sh DUALCRF CONLL2000_TRAIN.txt.gz OUTDIR [SCENARIO...]
#
# SCENARIO is PERCENT (yesterday holds the first PERCENT% of the sentences,
# today all of them) or PERCENT:TYPE (chunk type TYPE renamed in the added
# sentences: today has new labels); default: 90 50 90:ADVP. Prints, per
# scenario, the last log lines of each run and the load; the figures are in
# OUTDIR/SCENARIO/{cold,warm}.err.
set -euo pipefail
bin=$1 corpus=$2 out=$3
shift 3
scenarios=${*:-90 50 90:ADVP}
here=$(cd "$(dirname "$0")" && pwd)
tol=${GAP_TOL:-1e-3}
for sc in $scenarios; do
	pct=${sc%%:*} relabel=
	[[ $sc == *:* ]] && relabel=${sc#*:}
	d=$out/${sc/:/-}
	mkdir -p "$d"
	"$here/split.sh" "$corpus" "$pct" "$d" $relabel
	for day in old new; do
		"$bin" featurize --template chunking --min-count 3 -o "$d/$day.arrow" "$d/$day.txt" 2>"$d/$day.featurize.err"
	done
	echo "== $sc: yesterday (cold, keeps its duals)  load: $(uptime | sed 's/.*average: //')"
	"$bin" train --gap-tol "$tol" --keep-duals "$d/old.duals" -o "$d/old.model" "$d/old.arrow" 2>"$d/old.err"
	tail -n 2 "$d/old.err"
	for run in cold warm; do
		flags=()
		[[ $run == warm ]] && flags=(--warm-start "$d/old.duals")
		echo "== $sc: today $run  load: $(uptime | sed 's/.*average: //')"
		/usr/bin/time -f "wall %e s, CPU %U s user + %S s system, max RSS %M KiB" "$bin" train --gap-tol "$tol" "${flags[@]}" -o "$d/$run.model" "$d/new.arrow" 2>"$d/$run.err"
		grep -E '^train: (warm start|warning: starting cold)' "$d/$run.err" || true
		grep -E '^epoch +0 ' "$d/$run.err"
		tail -n 2 "$d/$run.err"
	done
	rm -f "$d/old.duals"
done
