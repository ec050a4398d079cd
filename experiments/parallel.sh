#!/usr/bin/env bash
# The parallel SDCA side by side (docs/figures.md, "Workers"): the sequential SDCA (--workers 1), the rounds on
# two workers and by default, and the asynchronous steps (atomic, wild), each to a certified gap, alternated
# ROUNDS times; with BASE, an earlier binary's one and two workers too. Every run is timed by /usr/bin/time
# with everything included (loading, initialisation, certificates, writing the model).
#
#   experiments/parallel.sh SET TOL [ROUNDS [BASE]]     SET: conll (CoNLL-2000 chunking features),
#                                                       ewt (UD English EWT XPOS), cs (CRFsuite's attribute
#                                                       file and objective); defaults: 3 rounds, no BASE
#
# Needs DUALCRF_DATA (default ../shared/data). Before each alternation it waits (at most LOAD_WAIT seconds,
# default 1200) for the 1-minute load to fall below LOAD_MAX (default 6): a busy machine gives a process of two
# threads twice the share of one, which flatters the parallel runs. Prints one row per run: set, tolerance,
# run, round, load before it, wall, user and system seconds, CPU% (of one core), peak RSS in KB, the training
# seconds the run reports (without loading and writing), epochs,
# certified gap, the model's SHA-256 (12 hex digits) and the workers' busy share the run reports. Work files
# go to a temporary directory, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.." # the repository's root: the command is built from it
data="${DUALCRF_DATA:-../shared/data}"
set_="${1:-}" tol="${2:-}" rounds="${3:-3}" base="${4:-}"
[[ "$set_" =~ ^(conll|ewt|cs)$ && -n "$tol" && "$rounds" =~ ^[1-9][0-9]*$ ]] ||
	{ echo "usage: experiments/parallel.sh conll|ewt|cs TOL [ROUNDS [BASE]]" >&2; exit 2; }
work="$(mktemp -d -t parallel.XXXXXX)"
trap 'rm -rf "$work"' EXIT
go build -o "$work/dualcrf" ./cmd/dualcrf
bin="$work/dualcrf"
extra=()
case "$set_" in
conll) "$bin" featurize --template chunking --min-count 3 --progress none -o "$work/t.arrow" "$data/conll2000/train.txt.gz" ;;
ewt) "$bin" featurize --input-format conllu --xpos --template pos --progress none -o "$work/t.arrow" "$data/ud_english_ewt/en_ewt-ud-train.conllu.gz" ;;
cs)
	go -C experiments build -o "$work/crfsuite-chunking" ./crfsuite-chunking
	gzip -dc "$data/conll2000/train.txt.gz" | awk 'NF { $1 = tolower($1) } { print }' > "$work/train.lc.txt"
	"$work/crfsuite-chunking" -o "$work/train.cs.txt" "$work/train.lc.txt"
	"$bin" featurize --input-format crfsuite --progress none -o "$work/t.arrow" "$work/train.cs.txt"
	extra=(--feature-space observed --transitions observed --no-bias --lambda 2/n)
	;;
esac
runs=("seq|$bin|--workers 1" "w2|$bin|--workers 2" "default|$bin|"
	"atomic|$bin|--workers 2 --nondeterministic-async atomic" "wild|$bin|--workers 2 --nondeterministic-async wild")
[ -n "$base" ] && runs+=("base1|$base|--workers 1" "base2|$base|--workers 2")
printf 'set\ttol\trun\tround\tload\twall\tuser\tsys\tcpu\trss_kb\ttrain\tepochs\tgap\tmodel\tbusy\n'
for r in $(seq 1 "$rounds"); do
	waited=0
	while ! awk -v l="$(cut -d' ' -f1 /proc/loadavg)" -v m="${LOAD_MAX:-6}" 'BEGIN { exit !(l < m) }' &&
		[ "$waited" -lt "${LOAD_WAIT:-1200}" ]; do
		sleep 30
		waited=$((waited + 30))
	done
	for run in "${runs[@]}"; do
		IFS='|' read -r name b args <<<"$run"
		load=$(cut -d' ' -f1 /proc/loadavg)
		# shellcheck disable=SC2086 # args are words
		/usr/bin/time -f '%e %U %S %P %M' -o "$work/time" "$b" train ${extra[@]+"${extra[@]}"} --gap-tol "$tol" $args \
			-o "$work/m.arrow" "$work/t.arrow" 2>"$work/err"
		read -r wall user sys cpu rss <"$work/time"
		# A sequential run reports no busy share (grep finds nothing: not an error).
		epochs=$(grep -o 'after [0-9]* epochs' "$work/err" | tail -1 | cut -d' ' -f2 || true)
		gap=$(grep -o 'certified gap [0-9.e+-]*' "$work/err" | tail -1 | cut -d' ' -f3 || true)
		train=$(grep -o 'epochs, [0-9.]*s training' "$work/err" | tail -1 | cut -d' ' -f2 || true)
		busy=$(grep -o 'busy [0-9]*%' "$work/err" | tail -1 | cut -d' ' -f2 || true)
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$set_" "$tol" "$name" "$r" "$load" "$wall" "$user" "$sys" \
			"$cpu" "$rss" "${train%s}" "$epochs" "$gap" "$(sha256sum <"$work/m.arrow" | cut -c1-12)" "${busy:--}"
	done
done
