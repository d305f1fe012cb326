#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The runtimes as Docker users meet them: a whole `docker run --rm` of the
# busybox `true` image, agentrun against crun and runc, as root:
#
#   bench/engine.sh [N] [ROUNDS]      (default 30 runs of each, 3 rounds)
#
#   agentrun        --runtime=agentrun (plain OCI, as contrib/docker sets it)
#   agentrun-agent  --runtime=agentrun-agent (the agent profile: overlay,
#                   secrets tmpfs, seccomp, limits; contrib/docker's
#                   daemon-agent-profile.json)
#   crun, runc      --runtime=crun (registered here), --runtime=runc
#                   (Docker's own)
#
# A dockerd of the bench's own (its network namespace, data root, exec
# root, containerd and socket under a temp dir two levels below /tmp, as
# the engine suites start it: tests/engines/eng.bash), the project's
# busybox rootfs imported as its image; every `docker run` with
# --network=none, so what differs between the lines is the runtime and
# the work the shim does with it (create, start, state, delete), not the
# bridge. Per round the runtimes take turns run by run, in an order that
# turns round by round. Prints the machine and its load, then per round
# and runtime the median in milliseconds with its min-max, and each one's
# ratio to crun's median. The daemon and all it made are stopped and
# removed at exit, by pid and by the temp dir's name.
set -euo pipefail

N=${1:-30}
ROUNDS=${2:-3}
TOP=$(cd "$(dirname "$0")/.." && pwd)
AGENTRUN=${AGENTRUN:-$TOP/agentrun}
# shellcheck source=tests/engines/eng.bash
. "$TOP/tests/engines/eng.bash"
ENG_T=$(eng_make_dir bench-engine)
WORK=$ENG_T
# shellcheck source=bench/lib.bash
. "$TOP/bench/lib.bash"
RUNTIMES=(agentrun agentrun-agent crun runc)
IMAGE=agentrun-bench-busybox:latest

dk() {
	docker -H "unix://$ENG_T/docker.sock" "$@"
}

cleanup() {
	if [ -S "$ENG_T/docker.sock" ]; then
		local ids
		mapfile -t ids < <(dk ps -aq 2>/dev/null)
		[ ${#ids[@]} -eq 0 ] || dk rm -f "${ids[@]}" >/dev/null 2>&1 || true
	fi
	[ ! -f "$ENG_T/pids" ] || eng_cleanup_dir
	bench_cleanup
	eng_remove_parent
}
trap cleanup EXIT

start_dockerd() {
	jq -n --arg bin "$ENG_AGENTRUN" --arg ns "$ENG_NS" --arg cg "/$ENG_CG" '{
		runtimes: {
			agentrun: {path: $bin},
			"agentrun-agent": {path: $bin, runtimeArgs: ["--profile=agent"]},
			crun: {path: "crun"}
		},
		"containerd-namespace": $ns,
		"cgroup-parent": $cg
	}' >"$ENG_T/daemon.json"
	eng_note_host_paths /run/docker/plugins /run/docker /run/containerd/s /run/containerd
	eng_start_daemon dockerd unshare --net dockerd \
		--data-root "$ENG_T/data" --exec-root "$ENG_T/exec" \
		--pidfile "$ENG_T/docker.pid" -H "unix://$ENG_T/docker.sock" \
		--config-file "$ENG_T/daemon.json"
	eng_wait_ready dockerd "$ENG_DAEMON_PID" dk version
	dk import -c 'CMD ["/bin/sh"]' "$ENG_T/rootfs.tar" "$IMAGE" >/dev/null
}

main() {
	[ "$(id -u)" -eq 0 ] || { echo "bench/engine.sh: run as root" >&2; exit 1; }
	[ -x "$AGENTRUN" ] || { echo "bench/engine.sh: build agentrun first ($AGENTRUN)" >&2; exit 1; }
	if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null; then
		echo "bench/engine.sh: needs dockerd and docker (contrib/install-deps.sh)" >&2
		exit 1
	fi
	need_hugetlb_v1
	eng_prepare_dir "$AGENTRUN"
	start_dockerd
	local rt
	# One untimed run each: the image's layers and each runtime's first
	# start (page cache, the shim's binary) are not in the figures.
	for rt in "${RUNTIMES[@]}"; do
		dk run --rm --runtime="$rt" --network=none "$IMAGE" true >/dev/null
	done
	echo "# $(date -u +%F) docker $(dk version -f '{{.Server.Version}}'); $(uname -r), $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg); $(crun --version | head -1); $(runc --version | head -1); $N runs of each, $ROUNDS rounds"
	echo "# round runtime         median_ms (min-max)  /crun"
	local r order
	for r in $(seq 1 "$ROUNDS"); do
		order=("${RUNTIMES[@]}")
		for _ in $(seq 2 "$r"); do order=("${order[@]:1}" "${order[0]}"); done
		for _ in $(seq 1 "$N"); do
			for rt in "${order[@]}"; do
				time_ms dk run --rm --runtime="$rt" --network=none "$IMAGE" true >>"$WORK/r$r-$rt"
			done
		done
		local c
		c=$(median <"$WORK/r$r-crun")
		for rt in "${RUNTIMES[@]}"; do
			printf '%s %-15s %-22s %s\n' "$r" "$rt" "$(spread "$WORK/r$r-$rt")" \
				"$(echo "scale=2; $(median <"$WORK/r$r-$rt") / $c" | bc)"
		done
	done
	echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
}

main "$@"
