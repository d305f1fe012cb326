#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# agentrun against crun and runc, side by side in one run:
#
#   bench/run.sh [N]        (N runs of each, interleaved; default 21)
#   BENCH_CGROUP_DRIVER=systemd bench/run.sh [N]   (all with --systemd-cgroup)
#   BENCH_HOLD_CPUSET=1 bench/run.sh [N]   (a v1 cpuset cgroup held, as a host
#                                           with Docker has: bench/lib.bash)
#   BENCH_STATE_TMPFS=1 bench/run.sh [N]   (each --root on a tmpfs, as /run is
#                                           under systemd: bench/lib.bash)
#
#   run      `RUNTIME run` of a busybox `true` bundle made by `crun spec`
#   floor    `unshare -mpuin -f true` between those runs: the namespaces
#            alone, what no runtime can go below; each run over it
#   start    `RUNTIME start ID` of a created container of the `true` bundle
#            (its create and its delete are not timed)
#   exec     `RUNTIME exec ID true` into a running container of each runtime
#   sandbox  `agentrun sandbox -- true` (agent profile: overlay, secrets
#            tmpfs, seccomp, limits, new netns) against crun's plain run
#   rss      the peak resident memory of one `run` (GNU time's %M: the
#            largest of the runtime and the processes it waited for), in KB
#
# Prints the machine and its load, then for each the median of every
# runtime (milliseconds) with its min-max, and agentrun's ratio to crun.
# crun and runc refuse cgroups on this machine's hybrid layout unless
# hugetlb is mounted as a v1 hierarchy: the script mounts it for the run
# when it is missing, and unmounts it again.
set -euo pipefail

N=${1:-21}
TOP=$(cd "$(dirname "$0")/.." && pwd)
AGENTRUN=${AGENTRUN:-$TOP/agentrun}
WORK=$(mktemp -d /tmp/agentrun-bench.XXXXXX)
# shellcheck source=bench/lib.bash
. "$TOP/bench/lib.bash"
trap bench_cleanup EXIT

bench_run() {
	local i rt
	for i in $(seq "$N"); do
		for rt in "${RUNTIMES[@]}"; do
			time_ms runtime_bin "$rt" --root "$WORK/root-$rt" run -b "$WORK/bundle" "$rt-r$i" >>"$WORK/run-$rt"
		done
		# The kernel's floor for the same namespaces, no runtime at all.
		time_ms unshare -mpuin -f true >>"$WORK/run-floor"
	done
}

# floor: `unshare -mpuin -f true` timed between the runs, and each
# runtime's run over it.
report_floor() {
	local f rt ratios=""
	f=$(median <"$WORK/run-floor")
	for rt in "${RUNTIMES[@]}"; do
		ratios+="   $rt/floor $(echo "scale=2; $(median <"$WORK/run-$rt") / $f" | bc)"
	done
	printf '%-8s unshare -mpuin -f true %s ms%s\n' floor "$(spread "$WORK/run-floor")" "$ratios"
}

bench_start() {
	local i rt
	for i in $(seq "$N"); do
		for rt in "${RUNTIMES[@]}"; do
			runtime_bin "$rt" --root "$WORK/root-$rt" create -b "$WORK/bundle" "$rt-st$i" >/dev/null 2>&1 </dev/null \
				|| { echo "bench/run.sh: $rt create failed" >&2; exit 1; }
			time_ms runtime_bin "$rt" --root "$WORK/root-$rt" start "$rt-st$i" >>"$WORK/start-$rt"
			runtime_bin "$rt" --root "$WORK/root-$rt" delete --force "$rt-st$i" >/dev/null 2>&1 </dev/null || true
		done
	done
}

bench_exec() {
	local i rt
	jq '.process.args = ["sleep", "600"]' "$WORK/bundle/config.json" >"$WORK/bundle/sleep.json"
	cp -a "$WORK/bundle" "$WORK/bundle-sleep"
	mv "$WORK/bundle-sleep/sleep.json" "$WORK/bundle-sleep/config.json"
	for rt in "${RUNTIMES[@]}"; do
		runtime_bin "$rt" --root "$WORK/root-$rt" run -d -b "$WORK/bundle-sleep" "sleeper-$rt" >/dev/null
	done
	for i in $(seq "$N"); do
		for rt in "${RUNTIMES[@]}"; do
			time_ms runtime_bin "$rt" --root "$WORK/root-$rt" exec "sleeper-$rt" true >>"$WORK/exec-$rt"
		done
	done
	for rt in "${RUNTIMES[@]}"; do
		runtime_bin "$rt" --root "$WORK/root-$rt" delete --force "sleeper-$rt" >/dev/null
	done
}

# The sandbox on a busybox rootfs against crun's plain `run` of it, and
# on the host's root (what users call) against bubblewrap's sandbox of the
# host's root, where bwrap is installed.
bench_sandbox() {
	local i
	mkdir -p "$WORK/ws"
	for i in $(seq "$N"); do
		time_ms runtime_bin agentrun --root "$WORK/root-agentrun" sandbox --no-tty --rootfs "$WORK/bundle/rootfs" \
			--workspace "$WORK/ws" -- true >>"$WORK/sandbox-agentrun"
		time_ms runtime_bin crun --root "$WORK/root-crun" run -b "$WORK/bundle" "crun-s$i" >>"$WORK/sandbox-crun"
		time_ms runtime_bin agentrun --root "$WORK/root-agentrun" sandbox --no-tty \
			--workspace "$WORK/ws" -- true >>"$WORK/host-agentrun"
		! command -v bwrap >/dev/null || time_ms bwrap --unshare-all --die-with-parent \
			--ro-bind / / --proc /proc --dev /dev --tmpfs /tmp true >>"$WORK/host-bwrap"
	done
}

report_host() {
	[ -s "$WORK/host-bwrap" ] || { printf 'host     agentrun %s ms   (no bwrap)\n' "$(spread "$WORK/host-agentrun")"; return 0; }
	printf 'host     agentrun %s ms   bwrap %s ms   agentrun/bwrap %.2f\n' \
		"$(spread "$WORK/host-agentrun")" "$(spread "$WORK/host-bwrap")" \
		"$(echo "scale=3; $(median <"$WORK/host-agentrun") / $(median <"$WORK/host-bwrap")" | bc)"
}

# Peak RSS of `run`, 5 times each: the median in KB with its min-max.
bench_rss() {
	local i rt
	[ -x /usr/bin/time ] || { echo "rss      (no /usr/bin/time: apt-get install time)"; return 0; }
	for i in 1 2 3 4 5; do
		for rt in "${RUNTIMES[@]}"; do
			/usr/bin/time -f %M -o "$WORK/rss.one" \
				"$(if [ "$rt" = agentrun ]; then echo "$AGENTRUN"; else command -v "$rt"; fi)" \
				"${RT_GLOBAL[@]}" --root "$WORK/root-$rt" run -b "$WORK/bundle" "$rt-m$i" >/dev/null 2>&1 </dev/null
			tail -1 "$WORK/rss.one" >>"$WORK/rss-$rt"
		done
	done
	printf 'rss      agentrun %s KB   crun %s KB   runc %s KB\n' \
		"$(spread "$WORK/rss-agentrun")" "$(spread "$WORK/rss-crun")" "$(spread "$WORK/rss-runc")"
}

report() {
	local what=$1 a c
	a=$(median <"$WORK/$what-agentrun")
	c=$(median <"$WORK/$what-crun")
	printf '%-8s agentrun %s ms   crun %s ms   runc %s ms   agentrun/crun %.2f\n' \
		"$what" "$(spread "$WORK/$what-agentrun")" "$(spread "$WORK/$what-crun")" \
		"$(spread "$WORK/$what-runc")" "$(echo "scale=3; $a / $c" | bc)"
}

main() {
	bench_prepare bench/run.sh
	echo "$(date -u +%F) median (min-max) of $N interleaved runs each; cgroup driver ${BENCH_CGROUP_DRIVER:-cgroupfs}; $(uname -r); $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); $(crun --version | head -1); $(runc --version 2>/dev/null | head -1 || echo no runc)"
	bench_run
	report run
	report_floor
	bench_start
	report start
	bench_exec
	report exec
	bench_sandbox
	report sandbox
	report_host
	bench_rss
	echo "load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
}

main "$@"
