#!/usr/bin/env bash
# Splits a CoNLL corpus into "yesterday" (its first P% of sentences) and
# "today" (all of it), for the warm-start measurements of warm.sh.
#
#   split.sh CORPUS.txt.gz PERCENT OUTDIR [RELABEL]
#
# writes OUTDIR/old.txt (the first PERCENT% of the sentences) and
# OUTDIR/new.txt (every sentence). With RELABEL = X, the chunk type X is
# renamed X2 in the added sentences only (B-X → B-X2, I-X → I-X2): today's
# corpus has labels yesterday's had not.
set -euo pipefail
corpus=$1 pct=$2 out=$3 relabel=${4:-}
mkdir -p "$out"
n=$(gzip -dc "$corpus" | awk 'BEGIN{RS=""} END{print NR}')
keep=$(( n * pct / 100 ))
gzip -dc "$corpus" | awk -v keep="$keep" -v rl="$relabel" -v old="$out/old.txt" -v new="$out/new.txt" '
BEGIN { RS = ""; ORS = "\n\n" }
{
	if (NR <= keep) { print > old; print > new; next }
	if (rl != "") {
		m = split($0, lines, "\n"); s = ""
		for (i = 1; i <= m; i++) {
			k = split(lines[i], f, " ")
			if (f[k] == "B-" rl || f[k] == "I-" rl) { sub(/-.*/, "", f[k]); f[k] = f[k] "-" rl "2" }
			line = f[1]; for (j = 2; j <= k; j++) line = line " " f[j]
			s = s (i > 1 ? "\n" : "") line
		}
		print s > new
	} else print > new
}'
echo "$n sentences: $keep in old.txt, all in new.txt${relabel:+ (chunk type $relabel renamed ${relabel}2 in the added ones)}"
