#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Podman (Debian's podman, rootful) driving agentrun, both by path
# (`podman --runtime /path/agentrun`) and by the name contrib/podman's
# containers.conf registers (`podman --runtime agentrun`).
#
# Podman has no daemon: every call gets --root/--runroot/--tmpdir under the
# suite's temp dir, the cgroupfs manager and the file events backend.
# agentrun keeps its state in its default root (/run/agentrun) as it would
# under a real Podman: Podman passes the runtime no --root, and its
# --runtime-flag root=... does not reach the `delete` that its cleanup
# process runs (state is left behind with runc too). The default network is "none": rootful Podman's
# bridge would program the host's netns (bridge, iptables). The one test of
# the bridge runs Podman inside a network namespace of its own.

load lib

I=localhost/$ENG_IMAGE_TAG

pm() {
	eng_run podman "${ENG_PODMAN_ARGS[@]}" "$@"
}

# The suite's containers.conf: contrib/podman/containers.conf with the
# runtime path pointed at the binary under test and its default_ulimits
# line uncommented, plus what only the test needs (private paths).
write_containers_conf() {
	local p=$ENG_T/podman ulimits
	# Podman's default nofile/nproc (1048576) exceed what a host without
	# CAP_SYS_RESOURCE lets even root set: the line contrib offers for
	# such hosts, as a user would uncomment it.
	ulimits=$(sed -n 's/^#\(default_ulimits = .*\)$/\1/p' "$ENG_TOP/contrib/podman/containers.conf")
	[ -n "$ulimits" ] || { echo "no #default_ulimits line in contrib/podman/containers.conf" >&2; return 1; }
	{
		echo '[containers]'
		echo "$ulimits"
		echo 'netns = "none"'
		echo 'init_path = "/usr/bin/tini-static"'
		sed -e "s|^\(\[engine\]\)$|\1\nvolume_path = \"$p/volumes\"\nnetwork_config_dir = \"$p/networks\"\nevents_logfile_path = \"$p/events.log\"|" \
			-e "s|\"/usr/local/s\?bin/agentrun\"|\"$ENG_AGENTRUN\"|" \
			"$ENG_TOP/contrib/podman/containers.conf"
	} >"$p/containers.conf"
	printf '[storage]\ndriver = "overlay"\ngraphroot = "%s"\nrunroot = "%s"\n' \
		"$p/root" "$p/runroot" >"$p/storage.conf"
	: >"$p/registries.conf"
}

setup_file() {
	eng_require podman conmon script || return 0
	eng_setup_dir podman || return 0
	mkdir -p "$ENG_T/podman"
	# Podman writes these whatever it is told (blob cache, netavark state).
	eng_note_host_paths /var/lib/containers/cache/blob-info-cache-v1.boltdb \
		/var/lib/containers/cache /var/lib/containers /run/containers/networks /run/containers
	write_containers_conf
	export CONTAINERS_CONF=$ENG_T/podman/containers.conf
	export CONTAINERS_STORAGE_CONF=$ENG_T/podman/storage.conf
	export CONTAINERS_REGISTRIES_CONF=$ENG_T/podman/registries.conf
	podman_args
	pm import --change 'CMD ["/bin/sh"]' "$ENG_T/rootfs.tar" "$I" >/dev/null
	eng_seccomp_profile "$ENG_T/seccomp.json"
}

# Arrays do not cross from setup_file to the tests: rebuilt in each.
podman_args() {
	local p=$ENG_T/podman
	local manager=cgroupfs
	ENG_PM_PARENT=(--cgroup-parent "/$ENG_CG")
	# A systemd host: Podman's default manager, and its own slice.
	if eng_systemd_host; then
		manager=systemd
		ENG_PM_PARENT=()
	fi
	ENG_PODMAN_ARGS=(--root "$p/root" --runroot "$p/runroot" --tmpdir "$p/tmp"
		--cgroup-manager "$manager" --events-backend file
		--runtime "$ENG_AGENTRUN")
}

setup() {
	eng_skip_if_file_skipped
	podman_args
}

teardown_file() {
	if [ -n "${ENG_T:-}" ] && [ -d "$ENG_T/podman" ]; then
		podman_args
		pm rm -a -f -t 0 >/dev/null 2>&1 || true
	fi
	eng_teardown_dir
}

# Containers under a cgroup parent of this suite only (with cgroupfs,
# Podman's default is /libpod_parent).
run_p() {
	pm run "${ENG_PM_PARENT[@]}" --rm "$@"
}

start_sleeper() {
	pm run "${ENG_PM_PARENT[@]}" -d --name "$1" "${@:2}" "$I" \
		sh -c "$ENG_SLEEPER"
}

state_of() {
	pm inspect -f '{{.State.Status}}' "$1"
}

state_is() {
	[ "$(state_of "$1")" = "$2" ]
}

@test "podman --runtime /path/agentrun run: output and exit codes" {
	run run_p "$I" echo hello from agentrun
	assert_success
	[ "$output" = "hello from agentrun" ] || fail "wrong output"
	run run_p "$I" sh -c 'exit 9'
	assert_status 9
	run -127 run_p "$I" /no/such/binary
	assert_status 127
	# agentrun's own state knows the container: it really ran it.
	start_sleeper p-which >/dev/null
	id=$(pm inspect -f '{{.Id}}' p-which)
	run "$ENG_AGENTRUN" state "$id"
	assert_success
	assert_contains '"status": "running"'
	pm rm -f -t 0 p-which >/dev/null
}

@test "podman --runtime agentrun: the name containers.conf registers" {
	local args=("${ENG_PODMAN_ARGS[@]}")
	args[${#args[@]} - 1]=agentrun # the value after --runtime
	run eng_run podman "${args[@]}" run "${ENG_PM_PARENT[@]}" --rm "$I" echo by-name
	assert_success
	assert_contains by-name
	run eng_run podman "${args[@]}" run "${ENG_PM_PARENT[@]}" -d --name p-name "$I" sleep 30
	run pm inspect -f '{{.OCIRuntime}}' p-name
	[ "$output" = agentrun ] || fail "not run by the registered name"
	pm rm -f -t 0 p-name >/dev/null
}

@test "podman run -e -w -u, -v binds, --read-only --tmpfs" {
	run run_p -e FOO=bar -w /tmp -u 1000:1000 "$I" sh -c 'echo "$FOO|$(pwd)|$(id -u):$(id -g)"'
	[ "$output" = "bar|/tmp|1000:1000" ] || fail "env/cwd/user"
	mkdir -p "$ENG_T/bind"
	echo host-data >"$ENG_T/bind/in"
	run run_p -v "$ENG_T/bind:/data" "$I" sh -c 'cat /data/in; echo out >/data/out'
	assert_contains host-data
	[ "$(cat "$ENG_T/bind/out")" = out ] || fail "bind write"
	run run_p -v "$ENG_T/bind:/data:ro" "$I" touch /data/ro
	assert_failure
	run run_p --read-only --tmpfs /scratch "$I" sh -c 'touch /scratch/a && echo tmpfs-ok; touch /nope'
	assert_failure
	assert_contains tmpfs-ok
	assert_contains 'Read-only file system'
}

@test "podman run --uidmap: root inside is a host range; a -v bind with :idmap shows host root's files as root's" {
	mkdir -p "$ENG_T/idmap"
	echo host-owned >"$ENG_T/idmap/f"
	local maps=(--uidmap 0:300000:65536 --gidmap 0:300000:65536)
	run run_p "${maps[@]}" "$I" sh -c 'cat /proc/self/uid_map; id -u'
	assert_success
	[ "$(echo "${lines[0]}" | tr -s ' ' | sed 's/^ //')" = "0 300000 65536" ] || fail "uid_map: $output"
	[ "${lines[1]}" = 0 ] || fail "id: $output"
	# Podman passes the bind's idmap option to the runtime (runtime-spec
	# 1.1 idmapped mounts): the container's own maps, applied to the bind.
	run run_p "${maps[@]}" -v "$ENG_T/idmap:/data:idmap" "$I" sh -c 'stat -c "%u:%g" /data/f; echo more >>/data/f && echo wrote'
	assert_success
	assert_contains "0:0"
	assert_contains wrote
	[ "$(stat -c %u:%g "$ENG_T/idmap/f")" = 0:0 ] || fail "owner changed on the host"
	run run_p "${maps[@]}" -v "$ENG_T/idmap:/data" "$I" stat -c "%u:%g" /data/f
	assert_success
	assert_contains "65534:65534"
}

@test "podman agent profile: root inside is a host range of agentrun's; the image and a volume are its root's" {
	run pm --runtime-flag profile=agent run "${ENG_PM_PARENT[@]}" --rm --network none \
		-v "p-agent-data:/data" "$I" sh -c '
		cat /proc/self/uid_map | tr -s " " | sed "s/^ //"; stat -c "image %u" /bin/busybox
		echo x >/data/made && echo wrote-volume'
	pm volume rm -f p-agent-data >/dev/null 2>&1 || true
	assert_success
	local host
	host=$(echo "${lines[0]}" | cut -d' ' -f2)
	[ "${lines[0]%% *}" = 0 ] && [ "$host" -ge 2147483648 ] || fail "uid_map: $output"
	assert_contains "image 0"
	assert_contains wrote-volume
}

@test "podman run --memory --cpus --pids-limit" {
	run run_p --memory 64m --cpus 0.5 --pids-limit 30 "$I" sh -c "$ENG_CG_LIMITS"
	assert_success
	[ "$output" = "$(printf '67108864\n50000\n100000\n30')" ] || fail "limits"
}

@test "podman run --cap-drop/--cap-add, no-new-privileges, seccomp profile" {
	run run_p --cap-drop all --cap-add NET_RAW "$I" grep CapEff /proc/self/status
	assert_contains 0000000000002000
	run run_p --security-opt no-new-privileges "$I" grep NoNewPrivs /proc/self/status
	assert_contains 1
	run run_p --security-opt "seccomp=$ENG_T/seccomp.json" "$I" mkdir /tmp/x
	assert_failure
	assert_contains 'Operation not permitted'
}

@test "podman run --network none and host, --init, --ulimit" {
	run run_p --network none "$I" ls /sys/class/net
	[ "$output" = lo ] || fail "none"
	run run_p --network host "$I" readlink /proc/self/ns/net
	[ "$output" = "$(readlink /proc/self/ns/net)" ] || fail "host"
	[ -x /usr/bin/tini-static ] || skip "--init: no catatonit or tini-static installed"
	run run_p --init "$I" sh -c 'tr "\0" " " </proc/1/cmdline'
	assert_contains podman-init
	# Any --ulimit replaces the configured defaults, and Podman's own nproc
	# default is above this host's hard limit: give nproc as well.
	run run_p --ulimit nofile=256:512 --ulimit nproc=100:200 "$I" sh -c 'ulimit -n; ulimit -Hn; ulimit -u'
	[ "$output" = "$(printf '256\n512\n100')" ] || fail "ulimit"
}

@test "podman run -it: a terminal, and the exit code" {
	# The pause lets conmon read the pty before the container exits: with an
	# immediate exit its attach sometimes loses the output (seen 1 in 5).
	run eng_tty podman "${ENG_PODMAN_ARGS[@]}" run "${ENG_PM_PARENT[@]}" --rm -it "$I" sh -c 'tty; sleep 0.5; exit 4'
	assert_status 4
	assert_contains /dev/pts/0
}

@test "podman run -d, logs, exec (with and without -it), top" {
	start_sleeper p-exec >/dev/null
	run pm exec p-exec sh -c 'echo in-exec; exit 5'
	assert_status 5
	assert_contains in-exec
	run pm exec -u 1000 -e X=1 -w /tmp p-exec sh -c 'echo "$(id -u) $X $(pwd)"'
	[ "$output" = "1000 1 /tmp" ] || fail "exec -u -e -w"
	run eng_tty podman "${ENG_PODMAN_ARGS[@]}" exec -it p-exec sh -c 'tty; exit 6'
	assert_status 6
	assert_contains /dev/pts/
	run pm top p-exec
	assert_success
	assert_contains 'while :'
	run pm logs p-exec
	assert_contains started
	pm rm -f -t 0 p-exec >/dev/null
}

@test "podman stop, kill, pause/unpause" {
	start_sleeper p-life >/dev/null
	run pm pause p-life
	assert_success
	[ "$(state_of p-life)" = paused ] || fail "pause"
	run pm unpause p-life
	[ "$(state_of p-life)" = running ] || fail "unpause"
	run pm stop -t 10 p-life
	assert_success
	run pm inspect -f '{{.State.ExitCode}}' p-life
	[ "$output" = 3 ] || fail "stop: the TERM handler's exit code"
	run pm start p-life
	assert_success
	run pm kill p-life
	assert_success
	eng_wait 50 state_is p-life exited
	run pm inspect -f '{{.State.ExitCode}}' p-life
	[ "$output" = 137 ] || fail "kill: 137 expected"
	id=$(pm inspect -f '{{.Id}}' p-life)
	pm rm p-life >/dev/null
	run "$ENG_AGENTRUN" state "$id"
	assert_failure
	assert_contains 'does not exist'

}

# Podman's default network (rootful: a CNI bridge, cni-podman0, gateway
# 10.88.0.1) programs the network namespace Podman runs in: here one the
# test makes, so the bridge, its iptables rules and the gateway's web
# server vanish with it. The bridge gateway stands for the host.
@test "podman load: agent-image.sh's archive is named localhost/latest:latest; tagged as docs/engines.md says, it runs" {
	command -v umoci >/dev/null || skip "umoci is not installed (contrib/install-deps.sh installs it)"
	eng_umoci_archive "$ENG_T/rootfs.tar" "$ENG_T/agent-oci.tar" \
		--config.cmd /bin/sh --config.workingdir /workspace
	run pm load -i "$ENG_T/agent-oci.tar"
	assert_success
	assert_contains 'Loaded image: localhost/latest:latest'
	run pm tag localhost/latest:latest agent-doc
	assert_success
	# rmi of one of the image's two names only drops that name.
	run pm rmi localhost/latest:latest
	assert_success
	assert_contains 'Untagged: localhost/latest:latest'
	run pm images --format '{{.Names}}' --filter reference=localhost/agent-doc
	assert_success
	[ "$output" = "[localhost/agent-doc:latest]" ] || fail "the image's names after tag and rmi"
	run run_p agent-doc sh -c 'pwd; echo hello from the loaded image'
	assert_success
	[ "$output" = "$(printf '/workspace\nhello from the loaded image')" ] || fail "wrong output"
	pm rmi localhost/agent-doc:latest >/dev/null
}

@test "podman agent profile, default network: the bridge's gateway is refused" {
	unshare -n sh -c 'echo $$ >"$1"; exec sleep 600' sh "$ENG_T/bridge-ns.pid" 3>&- &
	eng_track_pid $!
	eng_wait 50 test -s "$ENG_T/bridge-ns.pid"
	local ns
	ns=$(cat "$ENG_T/bridge-ns.pid")
	# CNI's host-local IPAM and its result cache live here.
	eng_note_host_trees /var/lib/cni
	pb() { eng_run nsenter -t "$ns" -n podman "${ENG_PODMAN_ARGS[@]}" "$@"; }
	pb run "${ENG_PM_PARENT[@]}" -d --network bridge --name p-bridge "$I" sleep 60 >/dev/null
	eng_listen "$ns" 10.88.0.1
	eng_wait 50 nsenter -t "$ns" -n sh -c 'ss -Hltn sport = 8080 | grep -q LISTEN'
	run pb run "${ENG_PM_PARENT[@]}" --rm --network bridge "$I" sh -c "$ENG_GET 10.88.0.1"
	[ "$output" = reached ] || { pb rm -f -t 0 p-bridge >/dev/null; fail "without the agent profile the gateway should answer"; }
	# Podman passes the netns it wired by path: five runs, each filtered.
	local i outcomes=""
	for i in 1 2 3 4 5; do
		outcomes+=$(pb --runtime-flag profile=agent run "${ENG_PM_PARENT[@]}" --rm --network bridge "$I" \
			sh -c "ip -4 -o addr show eth0 | grep -o 'inet 10.88'; $ENG_GET 10.88.0.1" 2>&1)
		outcomes+=" "
	done
	pb rm -f -t 0 p-bridge >/dev/null
	want="$(printf 'inet 10.88\nrefused') "
	[ "$outcomes" = "$want$want$want$want$want" ] || fail "agent profile on the bridge: $outcomes"
}

# Podman's checkpoint and restore call the runtime's verbs with CRIU
# (runc's flags: --image-path, --work-path, --leave-running,
# --tcp-established, --file-locks; restore --detach --pid-file through
# conmon): the container comes back with its memory, its counter going
# on. Needs a host where CRIU works (the test VM).
@test "podman container checkpoint/restore: --leave-running, --tcp-established, --file-locks, --export/--import" {
	command -v criu >/dev/null && criu check >/dev/null 2>&1 || skip "CRIU does not work on this host"
	pm run "${ENG_PM_PARENT[@]}" -d --name p-cr "$I" \
		sh -c 'i=0; while :; do i=$((i + 1)); echo "$i" >/tmp/n.new; mv /tmp/n.new /tmp/n; sleep 0.2; done' >/dev/null
	eng_wait 50 pm exec p-cr test -s /tmp/n
	run pm container checkpoint p-cr
	assert_success
	state_is p-cr exited || fail "checkpoint: $(state_of p-cr), not exited"
	run pm container restore p-cr
	assert_success
	state_is p-cr running || fail "restore: $(state_of p-cr), not running"
	local n1 n2
	n1=$(pm exec p-cr cat /tmp/n)
	sleep 1
	n2=$(pm exec p-cr cat /tmp/n)
	[ "$n2" -gt "$n1" ] || fail "the restored counter stands at $n1"
	[ "$n1" -gt 3 ] || fail "the counter started again ($n1): not restored"

	run pm container checkpoint --leave-running --tcp-established --file-locks p-cr
	assert_success
	state_is p-cr running || fail "--leave-running: $(state_of p-cr)"

	run pm container checkpoint --export "$ENG_T/p-cr.tar.gz" p-cr
	assert_success
	pm rm -f -t 0 p-cr >/dev/null
	run pm container restore --import "$ENG_T/p-cr.tar.gz" --name p-cr2
	assert_success
	state_is p-cr2 running || fail "restore --import: $(state_of p-cr2)"
	n1=$(pm exec p-cr2 cat /tmp/n)
	[ "$n1" -gt "$n2" ] || fail "the imported counter stands at $n1, was $n2"
	pm rm -f -t 0 p-cr2 >/dev/null
}
