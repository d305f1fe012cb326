#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What the sealed copy of the runtime costs (util/sealed_exe.c), with and
# without the launcher (launcher/launcher.c):
#
#   bench/sealed_exe.sh [N] [ROUNDS]     (default 30 runs, 3 rounds; as root)
#
# `exec` of a container that does not exist runs from a sealed memfd copy
# of the runtime before it finds out; `state` of one runs the runtime's
# file. Both stripped (make install-strip), interleaved: `alone` is the
# runtime installed as agentrun by itself (it copies itself and executes
# the copy: two starts), `launched` the launcher with the runtime beside it
# (the launcher copies: one start of the runtime). Prints per round the
# median (min-max) of each in milliseconds, and exec - state for both.
set -euo pipefail

N=${1:-30}
ROUNDS=${2:-3}
TOP=$(cd "$(dirname "$0")/.." && pwd)
AGENTRUN=${AGENTRUN:-$TOP/agentrun}
[ "$(id -u)" -eq 0 ] || { echo "bench/sealed_exe.sh: run as root (only root's runs copy)" >&2; exit 1; }
RUNTIME_PROGRAM=$(dirname "$(readlink -f "$AGENTRUN")")/agentrun-runtime
[ -x "$RUNTIME_PROGRAM" ] && [ ! -L "$AGENTRUN" ] || { echo "bench/sealed_exe.sh: build agentrun with its launcher first (no $RUNTIME_PROGRAM)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/agentrun-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir "$WORK/root" "$WORK/alone" "$WORK/launched"
strip -o "$WORK/alone/agentrun" "$RUNTIME_PROGRAM"
strip -o "$WORK/launched/agentrun" "$AGENTRUN"
strip -o "$WORK/launched/agentrun-runtime" "$RUNTIME_PROGRAM"

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
echo "# runtime $(stat -c %s "$WORK/alone/agentrun") bytes, launcher $(stat -c %s "$WORK/launched/agentrun") bytes (stripped)"
echo "# round  alone:exec  alone:state  launched:exec  launched:state  (ms, median (min-max))  exec-state alone / launched"
for round in $(seq "$ROUNDS"); do
	rm -f "$WORK"/*.ms
	for i in $(seq "$N"); do
		for how in alone launched; do
			time_ms "$WORK/$how/agentrun" --root "$WORK/root" exec missing true >>"$WORK/$how-exec.ms"
			time_ms "$WORK/$how/agentrun" --root "$WORK/root" state missing >>"$WORK/$how-state.ms"
		done
	done
	gap() { echo "scale=2; $(median <"$WORK/$1-exec.ms") - $(median <"$WORK/$1-state.ms")" | bc; }
	echo "$round  $(spread "$WORK/alone-exec.ms")  $(spread "$WORK/alone-state.ms")  $(spread "$WORK/launched-exec.ms")  $(spread "$WORK/launched-state.ms")  $(gap alone) / $(gap launched)"
done
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
