#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What a create pays for the containers already in its state root, as on
# a host that runs many (a Kubernetes node, an agent platform's sandbox
# host), agentrun against crun (and runc where installed), as root:
#
#   bench/busy_root.sh [K] [N] [ROUNDS]   (default 100 live, 30 runs, 3 rounds)
#
# Each runtime gets K containers running `sleep` in its state root, each
# started as a foreground `run` left in the background (agentrun's then
# have a supervisor that deletes them when they end, the ones its reap of
# abandoned containers looks at). Then, interleaved, N `run` of the
# busybox `true` bundle (bench/lib.bash) in that root and N in an empty
# one. Prints per round and runtime the median (min-max) of each in
# milliseconds and busy - empty.
set -euo pipefail

K=${1:-100}
N=${2:-30}
ROUNDS=${3:-3}
TOP=$(cd "$(dirname "$0")/.." && pwd)
AGENTRUN=${AGENTRUN:-$TOP/agentrun}
WORK=$(mktemp -d /tmp/agentrun-bench-busy.XXXXXX)
# shellcheck source=bench/lib.bash
. "$TOP/bench/lib.bash"
SLEEPERS=()

stop_sleepers() {
	local pid
	for pid in "${SLEEPERS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${SLEEPERS[@]}"; do wait "$pid" 2>/dev/null || true; done
	SLEEPERS=()
}
trap 'stop_sleepers; bench_cleanup' EXIT
bench_prepare bench/busy_root.sh

# The sleepers' bundle: the same rootfs, `sleep`.
mkdir -p "$WORK/sleeper"
jq --arg root "$WORK/bundle/rootfs" '.root.path = $root | .process.args = ["sleep", "3600"]' \
	"$WORK/bundle/config.json" >"$WORK/sleeper/config.json"

fill_roots() {
	local rt i
	for rt in "${RUNTIMES[@]}"; do
		for i in $(seq "$K"); do
			runtime_bin "$rt" --root "$WORK/root-$rt" run -b "$WORK/sleeper" "$rt-s$i" \
				</dev/null >/dev/null 2>&1 &
			SLEEPERS+=($!)
		done
	done
	# Until every one runs (each root lists K running).
	for rt in "${RUNTIMES[@]}"; do
		for i in $(seq 300); do
			[ "$(runtime_bin "$rt" --root "$WORK/root-$rt" list -q 2>/dev/null | wc -l)" -ge "$K" ] && break
			sleep 0.1
		done
	done
}

echo "# $(date -u +%F) $(uname -r), $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg); $K running in the busy root; $N runs of each per round, interleaved"
printf '%-6s %-8s %-24s %-24s %s\n' round runtime "busy root (ms)" "empty root (ms)" "busy - empty"
fill_roots
for r in $(seq "$ROUNDS"); do
	for i in $(seq "$N"); do
		for rt in "${RUNTIMES[@]}"; do
			time_ms runtime_bin "$rt" --root "$WORK/root-$rt" run -b "$WORK/bundle" "$rt-b$r-$i" >>"$WORK/busy-$r-$rt"
			time_ms runtime_bin "$rt" --root "$WORK/empty-$rt" run -b "$WORK/bundle" "$rt-e$r-$i" >>"$WORK/empty-$r-$rt"
		done
	done
	for rt in "${RUNTIMES[@]}"; do
		printf '%-6s %-8s %-24s %-24s %.2f\n' "$r" "$rt" "$(spread "$WORK/busy-$r-$rt")" \
			"$(spread "$WORK/empty-$r-$rt")" \
			"$(echo "$(median <"$WORK/busy-$r-$rt") - $(median <"$WORK/empty-$r-$rt")" | bc)"
	done
done
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
