#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What the program gate (programs.ask) costs an exec it is not asked
# about, as root:
#
#   bench/gate.sh [N] [ROUNDS] [EXECS]   (default 30 runs, 3 rounds, 1000 execs)
#
# Two sandboxes on the host's root, interleaved, each running EXECS times
# `/bin/true` from a shell loop: `plain` without the gate, `gated` with an
# approver and two --ask-program rules that name none of them (the gate
# holds and looks at every exec, and lets each go). Timed from fork to
# exit with bash's clock. Prints the machine and its load, then per round
# each one's median and min-max in milliseconds, and the difference per
# exec in microseconds.
set -euo pipefail

N=${1:-30}
ROUNDS=${2:-3}
EXECS=${3:-1000}
TOP=$(cd "$(dirname "$0")/.." && pwd)
AGENTRUN=${AGENTRUN:-$TOP/agentrun}
WORK=$(mktemp -d /tmp/agentrun-bench.XXXXXX)
# shellcheck source=bench/lib.bash
. "$TOP/bench/lib.bash"
APPROVER=""
cleanup() {
	[ -z "$APPROVER" ] || kill "$APPROVER" 2>/dev/null || true
	bench_cleanup
}
trap cleanup EXIT
[ "$(id -u)" -eq 0 ] || { echo "gate.sh: run as root" >&2; exit 1; }
ROOT=$WORK/root-agentrun
: >"$WORK/rules"
"$AGENTRUN" approve --socket "$WORK/approve.sock" --rules "$WORK/rules" >"$WORK/approve.log" 2>&1 &
APPROVER=$!
for _ in $(seq 100); do [ -S "$WORK/approve.sock" ] && break; sleep 0.05; done
LOOP="i=0; while [ \$i -lt $EXECS ]; do /bin/true; i=\$((i + 1)); done"
ar() { "$AGENTRUN" --root "$ROOT" "$@"; }

echo "machine: $(nproc) cpus, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); $N runs x $ROUNDS rounds, $EXECS execs a run"
for round in $(seq "$ROUNDS"); do
	rm -f "$WORK"/t-*
	for _ in $(seq "$N"); do
		time_ms ar sandbox -- sh -c "$LOOP" >>"$WORK/t-plain"
		time_ms ar sandbox --approver "$WORK/approve.sock" --ask-program 'git push' \
			--ask-program 'curl' -- sh -c "$LOOP" >>"$WORK/t-gated"
	done
	plain=$(median <"$WORK/t-plain")
	gated=$(median <"$WORK/t-gated")
	printf 'round %d: plain %s, gated %s ms; %.1f us an exec\n' "$round" \
		"$(spread "$WORK/t-plain")" "$(spread "$WORK/t-gated")" \
		"$(echo "scale=3; ($gated - $plain) * 1000 / $EXECS" | bc)"
done
[ ! -s "$WORK/approve.log" ] || echo "approver said: $(head -3 "$WORK/approve.log")"
