#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The runtimes as engine users meet them: a whole `docker run --rm` (or
# `podman run --rm`) of the busybox `true` image, agentrun against crun
# and runc, as root:
#
#   bench/engine.sh [N] [ROUNDS]      (default 30 runs of each, 3 rounds)
#   BENCH_ENGINE=podman bench/engine.sh [N] [ROUNDS]
#   BENCH_ENGINE=podman-rootless bench/engine.sh [N] [ROUNDS]
#
#   agentrun        plain OCI (contrib/docker's and contrib/podman's
#                   `agentrun` runtime)
#   agentrun-agent  the agent profile (overlay, secrets tmpfs, seccomp,
#                   limits): Docker's `agentrun-agent` runtime of
#                   contrib/docker/daemon-agent-profile.json, Podman's
#                   --runtime .../agentrun-agent (the link make install makes)
#   crun, runc      the same engine with crun and with runc
#
# Docker: a dockerd of the bench's own, as the engine suites start it
# (tests/engines/eng.bash): its network namespace, data root, exec root,
# containerd and socket under a temp dir two levels below /tmp. Podman
# (rootful, no daemon): --root, --runroot and --tmpdir there, the cgroupfs
# manager, the file events backend, contrib/podman's default_ulimits line
# (this machine's root cannot raise a hard limit); each runtime keeps its
# state in its own default root, as under a real Podman. The project's
# busybox rootfs imported as the image; every run with --network=none, so
# what differs between the lines is the runtime and the work the engine
# does with it (create, start, state, delete), not the bridge. Per round
# the runtimes take turns run by run, in an order that turns round by
# round. Prints the machine and its load, then per round and runtime the
# median in milliseconds with its min-max, and each one's ratio to crun's
# median. Everything the engine made is stopped and removed at exit, by
# pid and by the temp dir's name.
#
# podman-rootless: the same Podman run by an ordinary user with
# subordinate ids, as tests/engines/podman_rootless.bats picks or makes
# one (eng_rootless_pick_user; one it made is removed at exit): vfs
# storage, XDG_RUNTIME_DIR in the temp dir (so every runtime's state is
# there), the cgroupfs manager; the agent profile with
# --runtime-flag rootless-limits=ignore where no cgroup is delegated (on
# this machine: cgroup v1, no systemd).
set -euo pipefail

N=${1:-30}
ROUNDS=${2:-3}
TOP=$(cd "$(dirname "$0")/.." && pwd)
AGENTRUN=${AGENTRUN:-$TOP/agentrun}
[ "$(id -u)" -eq 0 ] || { echo "bench/engine.sh: run as root" >&2; exit 1; }
# shellcheck source=tests/engines/eng.bash
. "$TOP/tests/engines/eng.bash"
ENG_T=$(eng_make_dir bench)
WORK=$ENG_T
# shellcheck source=bench/lib.bash
. "$TOP/bench/lib.bash"
RUNTIMES=(agentrun agentrun-agent crun runc)
IMAGE=localhost/agentrun-bench-busybox:latest
ENGINE=${BENCH_ENGINE:-docker}
case $ENGINE in docker | podman | podman-rootless) ;; *) echo "BENCH_ENGINE: docker, podman or podman-rootless, not $ENGINE" >&2; exit 2 ;; esac
PM_USER=""

dk() {
	docker -H "unix://$ENG_T/docker.sock" "$@"
}

pm() {
	local p=$ENG_T/p as=()
	[ -z "$PM_USER" ] || as=(runuser -u "$PM_USER" -- env -C "$ENG_T" HOME="$ENG_T/home" XDG_RUNTIME_DIR="$ENG_T/xdg")
	"${as[@]}" env CONTAINERS_CONF="$p/containers.conf" CONTAINERS_STORAGE_CONF="$p/storage.conf" \
		CONTAINERS_REGISTRIES_CONF="$p/registries.conf" \
		podman --root "$p/root" --runroot "$p/runroot" --tmpdir "$p/tmp" \
		--cgroup-manager cgroupfs --events-backend file "$@"
}

cleanup() {
	if [ -S "$ENG_T/docker.sock" ]; then
		local ids
		mapfile -t ids < <(dk ps -aq 2>/dev/null)
		[ ${#ids[@]} -eq 0 ] || dk rm -f "${ids[@]}" >/dev/null 2>&1 || true
	fi
	[ ! -f "$ENG_T/p/containers.conf" ] || pm rm -a -f -t 0 >/dev/null 2>&1 || true
	# Rootless Podman's pause process (it keeps the user namespace).
	[ ! -f "$ENG_T/p/tmp/pause.pid" ] || eng_stop_pid "$(cat "$ENG_T/p/tmp/pause.pid")"
	[ ! -f "$ENG_T/pids" ] || eng_cleanup_dir
	eng_rootless_remove_user
	bench_cleanup
	eng_remove_parent
}
trap cleanup EXIT

start_docker() {
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

# As tests/engines/podman.bats configures it, with private paths.
start_podman() {
	local p=$ENG_T/p
	mkdir -p "$p"
	eng_note_host_paths /var/lib/containers/cache/blob-info-cache-v1.boltdb \
		/var/lib/containers/cache /var/lib/containers /run/containers/networks /run/containers \
		/run/agentrun /run/crun /run/runc
	{
		echo '[containers]'
		sed -n 's/^#\(default_ulimits = .*\)$/\1/p' "$TOP/contrib/podman/containers.conf"
		echo '[engine]'
		echo "volume_path = \"$p/volumes\""
		echo "network_config_dir = \"$p/networks\""
		echo "events_logfile_path = \"$p/events.log\""
	} >"$p/containers.conf"
	local driver=overlay
	[ -z "$PM_USER" ] || driver=vfs
	printf '[storage]\ndriver = "%s"\ngraphroot = "%s"\nrunroot = "%s"\n' \
		"$driver" "$p/root" "$p/runroot" >"$p/storage.conf"
	: >"$p/registries.conf"
	pm import --change 'CMD ["/bin/sh"]' "$ENG_T/rootfs.tar" "$IMAGE" >"$ENG_T/import.log" 2>&1 \
		|| { cat "$ENG_T/import.log" >&2; exit 1; }
}

# As podman_rootless.bats: every level the user's, or searchable by it.
start_podman-rootless() {
	PM_USER=$(eng_rootless_pick_user)
	chmod 0711 "$ENG_T"
	chmod 0644 "$ENG_T/rootfs.tar"
	mkdir -p "$ENG_T/p" "$ENG_T/home"
	install -d -m 0700 -o "$PM_USER" -g "$PM_USER" "$ENG_T/xdg"
	chown "$PM_USER:" "$ENG_T/p" "$ENG_T/home"
	start_podman
}

# One `ENGINE run --rm` of `true` with runtime RT.
engine_run() {
	local rt=$1
	if [ "$ENGINE" = docker ]; then
		dk run --rm --runtime="$rt" --network=none "$IMAGE" true
		return
	fi
	local path=$rt flags=() parent=(--cgroup-parent "/$ENG_CG")
	case $rt in agentrun*) path=$ENG_T/bin/$rt ;; esac
	if [ -n "$PM_USER" ]; then
		parent=()
		[ "$rt" != agentrun-agent ] || flags=(--runtime-flag rootless-limits=ignore)
	fi
	pm --runtime "$path" "${flags[@]}" run --rm --network=none "${parent[@]}" "$IMAGE" true
}

main() {
	[ -x "$AGENTRUN" ] || { echo "bench/engine.sh: build agentrun first ($AGENTRUN)" >&2; exit 1; }
	local need=(dockerd docker) c
	[ "$ENGINE" = docker ] || need=(podman conmon)
	[ "$ENGINE" != podman-rootless ] || need+=(runuser newuidmap)
	for c in "${need[@]}"; do
		command -v "$c" >/dev/null || { echo "bench/engine.sh: needs $c (contrib/install-deps.sh)" >&2; exit 1; }
	done
	need_hugetlb_v1
	eng_prepare_dir "$AGENTRUN"
	"start_$ENGINE"
	local rt
	# One untimed run each: the image's layers and each runtime's first
	# start (page cache, the shim's binary) are not in the figures.
	for rt in "${RUNTIMES[@]}"; do
		engine_run "$rt" >/dev/null
	done
	local version
	if [ "$ENGINE" = docker ]; then version="docker $(dk version -f '{{.Server.Version}}')"; else version=$(pm --version); fi
	echo "# $(date -u +%F) $version; $(uname -r), $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg); $(crun --version | head -1); $(runc --version | head -1); $N runs of each, $ROUNDS rounds"
	echo "# round runtime         median_ms (min-max)  /crun"
	local r order
	for r in $(seq 1 "$ROUNDS"); do
		order=("${RUNTIMES[@]}")
		for _ in $(seq 2 "$r"); do order=("${order[@]:1}" "${order[0]}"); done
		for _ in $(seq 1 "$N"); do
			for rt in "${order[@]}"; do
				time_ms engine_run "$rt" >>"$WORK/r$r-$rt"
			done
		done
		local crun_ms
		crun_ms=$(median <"$WORK/r$r-crun")
		for rt in "${RUNTIMES[@]}"; do
			printf '%s %-15s %-22s %s\n' "$r" "$rt" "$(spread "$WORK/r$r-$rt")" \
				"$(echo "scale=2; $(median <"$WORK/r$r-$rt") / $crun_ms" | bc)"
		done
	done
	echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
}

main "$@"
