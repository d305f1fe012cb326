#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A pooled sandbox against a fresh one, as root:
#
#   bench/pool.sh [N] [ROUNDS] [SIZE]   (default 100 takes, 3 rounds,
#                                        a pool of 4)
#
#   pooled  `agentrun sandbox --pool P -- ./first` (P made by `agentrun pool
#           create P --size SIZE` with the agent profile's defaults)
#   fresh   `agentrun sandbox -- ./first`, the same sandbox made on the call
#
# `first` is a static program whose first instruction reads the clock
# (date(1) where there is no compiler):
# "first" is the time from the shell's fork of agentrun to that read, the
# issue's "the command's first instruction runs"; "total" is the whole
# call, fork to exit (the sandbox's delete included). The two alternate,
# call by call; the pool refills in the background while the next ones
# run, as it would under a fleet. Prints the machine and load, then per
# round the p50 and p99 (and max) in milliseconds of each.
set -euo pipefail

N=${1:-100}
ROUNDS=${2:-3}
SIZE=${3:-4}
TOP=$(cd "$(dirname "$0")/.." && pwd)
AGENTRUN=${AGENTRUN:-$TOP/agentrun}
WORK=$(mktemp -d /tmp/agentrun-bench-pool.XXXXXX)
POOL=bench-$$
cleanup() {
	"$AGENTRUN" --root "$WORK/root" pool rm "$POOL" >/dev/null 2>&1 || true
	rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/ws"

cat >"$WORK/first.c" <<'EOF'
#include <stdio.h>
#include <time.h>
int
main (void)
{
  struct timespec t;
  clock_gettime (CLOCK_REALTIME, &t);
  printf ("%lld%06ld\n", (long long) t.tv_sec, t.tv_nsec / 1000);
  return 0;
}
EOF
# Without a compiler (the test VM), date(1) reads the clock instead: its
# own start is then counted too.
FIRST=(./first)
if command -v cc >/dev/null; then
	cc -O2 -static -o "$WORK/ws/first" "$WORK/first.c"
else
	FIRST=(date +%s%6N)
	echo "# no cc: the clock is read by date(1), whose start is counted"
fi

cd "$WORK/ws"
"$AGENTRUN" --root "$WORK/root" pool create "$POOL" --size "$SIZE"

# One call: "FIRST_US TOTAL_US" (microseconds from the fork).
call() {
	local t0 t1 first
	t0=$EPOCHREALTIME
	first=$("$@" </dev/null 2>/dev/null) || { echo "bench/pool: failed: $*" >&2; exit 1; }
	t1=$EPOCHREALTIME
	echo "$((first - ${t0/./})) $((${t1/./} - ${t0/./}))"
}

# stats COLUMN <file: p50 p99 max, in ms
stats() {
	cut -d' ' -f"$1" | sort -n | awk '{ v[NR] = $1 }
		END { p50 = v[int((NR + 1) / 2)]; p99 = v[int(NR * 0.99 + 0.999)];
		      printf "%.2f %.2f %.2f", p50 / 1000, p99 / 1000, v[NR] / 1000 }'
}

echo "# $(date -u +%F) $(uname -r), $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg); $N calls of each per round, interleaved, $ROUNDS rounds, pool of $SIZE"
echo "# round  pooled_first p50/p99/max  fresh_first p50/p99/max  pooled_total p50/p99/max  fresh_total p50/p99/max (ms)"
for r in $(seq 1 "$ROUNDS"); do
	: >"$WORK/pooled"
	: >"$WORK/fresh"
	for i in $(seq 1 "$N"); do
		call "$AGENTRUN" --root "$WORK/root" sandbox --pool "$POOL" --no-tty -- "${FIRST[@]}" >>"$WORK/pooled"
		call "$AGENTRUN" --root "$WORK/root" sandbox --no-tty -- "${FIRST[@]}" >>"$WORK/fresh"
	done
	echo "$r  $(stats 1 <"$WORK/pooled")  $(stats 1 <"$WORK/fresh")  $(stats 2 <"$WORK/pooled")  $(stats 2 <"$WORK/fresh")"
done
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
