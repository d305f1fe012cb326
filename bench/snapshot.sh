#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What snapshots, rollbacks and forks cost, as root:
#
#   bench/snapshot.sh [N] [ROUNDS] [FILES]   (default 30 runs, 3 rounds, 10 files)
#
# An agent container (the agent profile, a busybox bundle made by `crun
# spec`, `sleep` as its init) changes FILES small files and one of 1 MiB
# per run (not timed), then, timed from fork to exit with bash's clock:
#
#   snapshot  `agentrun snapshot ID sN` (freeze, copy the upper layer, thaw)
#   rollback  `agentrun rollback ID sN` (kill, restore the layer, a new init)
#   fork      `agentrun sandbox --from ID:sN -- true`, interleaved with
#   fresh     `agentrun sandbox --rootfs ROOTFS -- true` on the same rootfs
#
# Prints the machine and its load, then per round each one's median and
# min-max in milliseconds, and fork/fresh. The snapshots stay in the
# container's overlay until the end (their copies grow with what changed).
set -euo pipefail

N=${1:-30}
ROUNDS=${2:-3}
FILES=${3:-10}
TOP=$(cd "$(dirname "$0")/.." && pwd)
AGENTRUN=${AGENTRUN:-$TOP/agentrun}
WORK=$(mktemp -d /tmp/agentrun-bench.XXXXXX)
# shellcheck source=bench/lib.bash
. "$TOP/bench/lib.bash"
trap bench_cleanup EXIT
[ "$(id -u)" -eq 0 ] || { echo "snapshot.sh: run as root" >&2; exit 1; }
make_bundle
ROOT=$WORK/root-agentrun
ID=bench-snap
ar() { "$AGENTRUN" --root "$ROOT" --profile agent "$@"; }

echo "machine: $(nproc) cpus, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); $N runs x $ROUNDS rounds, $FILES files changed per run"
jq '.process.args = ["sleep", "100000"]' "$WORK/bundle/config.json" >"$WORK/c" && mv "$WORK/c" "$WORK/bundle/config.json"
ar run --detach --bundle "$WORK/bundle" "$ID" >/dev/null 2>&1 </dev/null
for round in $(seq "$ROUNDS"); do
	rm -f "$WORK"/t-*
	for i in $(seq "$N"); do
		s=r$round-$i
		ar exec "$ID" sh -c "mkdir -p /work; for f in \$(seq $FILES); do echo $s-\$f >/work/f\$f; done
			dd if=/dev/urandom of=/work/big bs=64k count=16 2>/dev/null" </dev/null
		time_ms ar snapshot "$ID" "$s" >>"$WORK/t-snapshot"
		time_ms ar sandbox --from "$ID:$s" -- true >>"$WORK/t-fork"
		time_ms ar sandbox --rootfs "$WORK/bundle/rootfs" -- true >>"$WORK/t-fresh"
		time_ms ar rollback "$ID" "$s" >>"$WORK/t-rollback"
	done
	printf 'round %d: snapshot %s, rollback %s, fork %s, fresh sandbox %s ms; fork/fresh %.2f\n' "$round" \
		"$(spread "$WORK/t-snapshot")" "$(spread "$WORK/t-rollback")" "$(spread "$WORK/t-fork")" \
		"$(spread "$WORK/t-fresh")" "$(echo "scale=3; $(median <"$WORK/t-fork") / $(median <"$WORK/t-fresh")" | bc)"
done
echo "snapshots kept: $(ar snapshot ls --format json "$ID" | jq length), overlay tmpfs used: $(df -k --output=used "$ROOT/$ID/overlay" | tail -1) KiB"
