#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Two builds of agentrun against each other, interleaved:
#
#   bench/ab.sh A B [N] [ROUNDS]     (as root; default 30 runs, 3 rounds)
#
# A and B are `agentrun` programs (each with its agentrun-runtime beside
# it, as `make install-strip DESTDIR=...` puts them, or a runtime alone).
# Per round and for each: `run` of the busybox `true` bundle, `start` of a
# created container of it (create and delete untimed),
# `sandbox --rootfs ... -- true` (the agent profile) and `sandbox -- true`
# on the host's root (what users call, "host"); A and B take turns,
# the one that goes first alternating. Prints the medians in milliseconds
# with their min-max, and B/A. BENCH_AUDIT_LINES=K: each sandbox also
# appends to an audit log (`--audit`, one per build, in a state root kept
# for all rounds) that starts K lines long, as a fleet's shared log
# grows (a thousand sandboxes a day write about 7000 lines).
set -euo pipefail

A=${1:?usage: bench/ab.sh A B [N] [ROUNDS]}
B=${2:?usage: bench/ab.sh A B [N] [ROUNDS]}
N=${3:-30}
ROUNDS=${4:-3}
TOP=$(cd "$(dirname "$0")/.." && pwd)
AGENTRUN=$A
WORK=$(mktemp -d /tmp/agentrun-bench.XXXXXX)
# shellcheck source=lib.bash
source "$TOP/bench/lib.bash"
# Anything a failed round left in A's or B's state root, then the rest.
ab_cleanup() {
	local which bin dir
	for which in a b; do
		bin=$A && [ "$which" = a ] || bin=$B
		for dir in "$WORK/root-$which"/*/; do
			[ -d "$dir" ] || continue
			dir=${dir%/}
			"$bin" --root "$WORK/root-$which" delete --force "${dir##*/}" >/dev/null 2>&1 || true
		done
	done
	bench_cleanup
}
trap ab_cleanup EXIT
bench_prepare bench/ab.sh
[ -x "$B" ] || { echo "bench/ab.sh: $B is not executable" >&2; exit 1; }
mkdir "$WORK/ws"
AUDIT_FLAGS=()
if [ -n "${BENCH_AUDIT_LINES:-}" ]; then
	# Lines as long as a sandbox's (their content is not checked here).
	awk -v n="$BENCH_AUDIT_LINES" 'BEGIN { l = sprintf("{\"time\":\"2026-11-29T00:00:00.000000000Z\",\"id\":\"sandbox-000000000000\",\"event\":\"start\",\"prev\":\"%064d\"}", 0)
		for (i = 0; i < n; i++) print l }' >"$WORK/audit-a.log"
	cp "$WORK/audit-a.log" "$WORK/audit-b.log"
fi

# one WHICH BIN I: one run, start and sandbox of BIN, times appended.
one() {
	local which=$1 bin=$2 i=$3 root=$WORK/root-$1
	time_ms "$bin" --root "$root" run -b "$WORK/bundle" "r$i" >>"$WORK/$which.run"
	"$bin" --root "$root" create -b "$WORK/bundle" "s$i" >/dev/null 2>&1 </dev/null
	time_ms "$bin" --root "$root" start "s$i" >>"$WORK/$which.start"
	"$bin" --root "$root" delete --force "s$i" >/dev/null 2>&1 </dev/null
	[ -z "${BENCH_AUDIT_LINES:-}" ] || AUDIT_FLAGS=(--audit "$WORK/audit-$which.log")
	time_ms "$bin" --root "$root" sandbox --no-tty --rootfs "$WORK/bundle/rootfs" \
		--workspace "$WORK/ws" "${AUDIT_FLAGS[@]}" -- true >>"$WORK/$which.sandbox"
	time_ms "$bin" --root "$root" sandbox --no-tty --workspace "$WORK/ws" \
		"${AUDIT_FLAGS[@]}" -- true >>"$WORK/$which.host"
}

ratio() { echo "scale=2; $(median <"$WORK/b.$1") / $(median <"$WORK/a.$1")" | bc; }

echo "# $(date -u +%F) $(uname -r), $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg); $N each, interleaved, $ROUNDS rounds"
echo "# A $A"
echo "# B $B"
[ -z "${BENCH_AUDIT_LINES:-}" ] || echo "# sandbox with --audit, the log $BENCH_AUDIT_LINES lines at the start"
for round in $(seq "$ROUNDS"); do
	rm -f "$WORK"/a.* "$WORK"/b.*
	for i in $(seq "$N"); do
		if ((i % 2)); then
			one a "$A" "$i"
			one b "$B" "$i"
		else
			one b "$B" "$i"
			one a "$A" "$i"
		fi
	done
	for what in run start sandbox host; do
		printf '%s %-8s A %s  B %s  B/A %s\n' "$round" "$what" "$(spread "$WORK/a.$what")" \
			"$(spread "$WORK/b.$what")" "$(ratio "$what")"
	done
done
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
