#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What a name in --allow-net costs a real client against a real registry,
# as root:
#
#   bench/npm_install.sh A B [N] [ROUNDS]     (default 10, 3 rounds)
#
# A and B are `agentrun` programs. Per round, N times each, taking turns
# at going first: `agentrun sandbox --allow-net registry.npmjs.org` runs
# `npm install is-number` in a directory of its own with a fresh cache,
# timed from the call to its end (a failed install fails the bench).
# Prints per round the medians (min-max) in ms and B/A. Needs npm on the
# host (the sandbox's root is the host's) and the npm registry.
set -euo pipefail

A=${1:?usage: bench/npm_install.sh A B [N] [ROUNDS]}
B=${2:?usage: bench/npm_install.sh A B [N] [ROUNDS]}
N=${3:-10}
ROUNDS=${4:-3}
[ "$(id -u)" = 0 ] || { echo "bench/npm_install.sh: run as root" >&2; exit 1; }
command -v npm >/dev/null || { echo "bench/npm_install.sh: npm is not installed" >&2; exit 1; }
WORK=$(mktemp -d /tmp/agentrun-bench-npm.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
chmod 0755 "$WORK"

# one BIN: ms for one install in a sandbox of BIN.
one() {
	local dir start end
	dir=$(mktemp -d "$WORK/p.XXXXXX")
	chmod 0777 "$dir"
	start=$(date +%s%N)
	(cd "$dir" && "$1" --root "$WORK/root" sandbox --no-tty --allow-net registry.npmjs.org -- \
		sh -c "HOME=$dir npm install --no-audit --no-fund --cache $dir/cache is-number >/dev/null 2>&1 \
			&& test -f node_modules/is-number/package.json" </dev/null) \
		|| { echo "bench/npm_install.sh: the install failed under $1" >&2; exit 1; }
	end=$(date +%s%N)
	echo $(((end - start) / 1000000))
	rm -rf "$dir"
}

stats() { # FILE: median (min-max)
	sort -n "$1" | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.0f %d %d\n", m, v[1], v[NR] }'
}

echo "# $(date -u +%F) $(uname -r), $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg); $N installs each a round, $ROUNDS rounds"
echo "# A $A"
echo "# B $B"
for round in $(seq 1 "$ROUNDS"); do
	: >"$WORK/a"
	: >"$WORK/b"
	for i in $(seq 1 "$N"); do
		if [ $((i % 2)) = 1 ]; then
			one "$A" >>"$WORK/a"; one "$B" >>"$WORK/b"
		else
			one "$B" >>"$WORK/b"; one "$A" >>"$WORK/a"
		fi
	done
	read -r ma ma_lo ma_hi < <(stats "$WORK/a")
	read -r mb mb_lo mb_hi < <(stats "$WORK/b")
	awk -v r="$round" -v a="$ma" -v al="$ma_lo" -v ah="$ma_hi" -v b="$mb" -v bl="$mb_lo" -v bh="$mb_hi" \
		'BEGIN { printf "%d npm install  A %d (%d-%d)  B %d (%d-%d) ms  B/A %.2f\n", r, a, al, ah, b, bl, bh, b / a }'
done
