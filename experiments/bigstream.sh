#!/usr/bin/env bash
# The 110,000-sentence streamed run of docs/bench-stream.md (duals 39.85 GiB: needs ~41 GB free in BIGDIR):
# dd's direct-I/O bandwidth, then one epoch and two certificates with /proc/PID/io and VmHWM sampled every 5 s.
#
#   DUALCRF=./dualcrf BIGDIR=$HOME/bigstream experiments/bigstream.sh   (BIGDIR defaults to a directory under /tmp)
set -euo pipefail
dir=${BIGDIR:-/tmp/bigstream}
bin=$(command -v "${DUALCRF:-dualcrf}")
mkdir -p "$dir" && cd "$dir"
[[ -f synth110k.arrow ]] || "$bin" synth -n 110000 --noise 0.3 -o synth110k.arrow
uptime > big.uptime
dd if=/dev/zero of=dd.test bs=16M count=256 oflag=direct 2> dd.out
dd if=dd.test of=/dev/null bs=16M iflag=direct 2>> dd.out
rm -f dd.test
"$bin" train --duals "stream:$dir/big.stream" --memory-budget 6GiB --max-epochs 1 --gap-every 1 --gap-tol 1e-9 \
  --log big.log -o big.model synth110k.arrow > big.out 2>&1 &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
  { date -u +%T; grep -E 'read_bytes|^write_bytes' "/proc/$pid/io"; grep -E 'VmHWM|VmRSS' "/proc/$pid/status"
    grep -E 'Dirty|^Cached' /proc/meminfo; cat /proc/loadavg; } 2>/dev/null | tr '\n' ' ' >> big.samples
  echo >> big.samples
  sleep 5
done
status=0; wait "$pid" || status=$?
uptime >> big.uptime
rm -f big.stream
cat dd.out big.out; tail -1 big.samples
exit "$status"
