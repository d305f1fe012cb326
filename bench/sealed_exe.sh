#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What the sealed copy of the runtime binary costs (util/sealed_exe.c):
#
#   bench/sealed_exe.sh [N] [ROUNDS]     (default 30 runs, 3 rounds; as root)
#
# `exec` of a container that does not exist copies the binary into a
# sealed memfd and re-executes it before it finds out; `state` of one does
# neither. Their difference is the copy and the second exec, for the build
# as it is (symbols and debug information) and stripped (make
# install-strip), interleaved. Prints per round the median (min-max) of
# each in milliseconds, and the copy's cost for both binaries.
set -euo pipefail

N=${1:-30}
ROUNDS=${2:-3}
TOP=$(cd "$(dirname "$0")/.." && pwd)
AGENTRUN=${AGENTRUN:-$TOP/agentrun}
[ "$(id -u)" -eq 0 ] || { echo "bench/sealed_exe.sh: run as root (only root's runs copy)" >&2; exit 1; }
[ -x "$AGENTRUN" ] || { echo "bench/sealed_exe.sh: build agentrun first ($AGENTRUN)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/agentrun-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir "$WORK/root"
cp "$AGENTRUN" "$WORK/full"
strip -o "$WORK/stripped" "$AGENTRUN"

# Milliseconds one command takes, from bash's own clock; it must fail (the
# container is missing), anything else is a fault of the bench.
time_ms() {
	local t0=$EPOCHREALTIME t1
	if "$@" >/dev/null 2>&1 </dev/null; then
		echo "bench/sealed_exe.sh: $* succeeded" >&2
		exit 1
	fi
	t1=$EPOCHREALTIME
	echo "scale=3; (${t1/./} - ${t0/./}) / 1000" | bc
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
spread() { printf '%.2f (%.2f-%.2f)' "$(median <"$1")" "$(sort -n "$1" | head -1)" "$(sort -n "$1" | tail -1)"; }

echo "# $(date -u +%F) $(uname -r), $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg); $N runs each, interleaved, $ROUNDS rounds"
echo "# binaries: full $(stat -c %s "$WORK/full") bytes, stripped $(stat -c %s "$WORK/stripped") bytes"
echo "# round  full:exec  full:state  stripped:exec  stripped:state  (ms, median (min-max))  copy full / stripped"
for round in $(seq "$ROUNDS"); do
	rm -f "$WORK"/*.ms
	for i in $(seq "$N"); do
		for bin in full stripped; do
			time_ms "$WORK/$bin" --root "$WORK/root" exec missing true >>"$WORK/$bin-exec.ms"
			time_ms "$WORK/$bin" --root "$WORK/root" state missing >>"$WORK/$bin-state.ms"
		done
	done
	copy() { echo "scale=2; $(median <"$WORK/$1-exec.ms") - $(median <"$WORK/$1-state.ms")" | bc; }
	echo "$round  $(spread "$WORK/full-exec.ms")  $(spread "$WORK/full-state.ms")  $(spread "$WORK/stripped-exec.ms")  $(spread "$WORK/stripped-state.ms")  $(copy full) / $(copy stripped)"
done
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
