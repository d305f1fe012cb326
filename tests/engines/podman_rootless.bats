#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Rootless Podman (Debian's podman, run by an ordinary user) driving
# agentrun, by path (`podman --runtime /path/agentrun`) and by the name
# contrib/podman's containers.conf registers (`podman --runtime agentrun`).
#
# Rootless Podman runs the runtime as uid 0 of a user namespace of its own
# (the user's id and its /etc/subuid range): agentrun sees a non-initial
# user namespace and works rootless (state under $XDG_RUNTIME_DIR/agentrun,
# cgroups only where delegated).
#
# The user: `tester` where it exists (the test VM's: subordinate ids,
# lingering, user@.service delegating cpu, io, memory and pids), else the
# first user of /etc/subuid, else `agentrun-rl` made here and removed at
# the end. Podman's storage (vfs), runroot and tmpdir, the user's HOME and
# containers.conf live in the suite's temp dir, two levels below /tmp.
#   - systemd host (the VM): the user's own login environment, the systemd
#     cgroup manager over the user bus (XDG_RUNTIME_DIR=/run/user/UID);
#   - elsewhere (this development host: no systemd, cgroup v1): an
#     XDG_RUNTIME_DIR in the temp dir and the cgroupfs manager; nothing is
#     delegated, so limits are refused or warned about, never dropped
#     silently, and pause is Podman's refusal.
# The default rootless network is slirp4netns (Podman 4.3 has no pasta).
# Traffic stays on loopback: a published port on 127.0.0.1, and the host's
# loopback through slirp's 10.0.2.2 only with allow_host_loopback=true.

load lib

I=localhost/$ENG_IMAGE_TAG

# ---------------------------------------------------------------- the user

# The user: eng_rootless_pick_user (eng.bash).

# Whether the user's systemd instance has memory and pids delegated: only
# then can a rootless container have limits (and be frozen).
rl_delegated() {
	eng_systemd_host || return 1
	local f=/sys/fs/cgroup/user.slice/user-$RL_UID.slice/user@$RL_UID.service/cgroup.controllers
	grep -qw memory "$f" 2>/dev/null && grep -qw pids "$f"
}

# On a systemd host the user's manager (user@UID.service, lingering in
# the VM) owns the cgroups and answers on the user bus.
rl_start_user_manager() {
	systemctl start "user@$RL_UID.service" || return 1
	eng_wait 100 test -S "/run/user/$RL_UID/bus" \
		|| { echo "user@$RL_UID.service gave no bus at /run/user/$RL_UID/bus" >&2; return 1; }
}

# ---------------------------------------------------------------- podman

# Arrays do not cross from setup_file to the tests: rebuilt in each.
rl_args() {
	local p=$ENG_T/podman
	local env=(HOME="$ENG_T/home" XDG_RUNTIME_DIR="$RL_XDG"
		CONTAINERS_CONF="$p/containers.conf" CONTAINERS_STORAGE_CONF="$p/storage.conf"
		CONTAINERS_REGISTRIES_CONF="$p/registries.conf")
	[ "$RL_MANAGER" = cgroupfs ] || env+=(DBUS_SESSION_BUS_ADDRESS="unix:path=$RL_XDG/bus")
	# From a directory the user may enter (not root's home).
	RL_AS_USER=(runuser -u "$RL_USER" -- env -C "$ENG_T" "${env[@]}")
	# Where /dev/net/tun is not the user's (no udev: this development
	# host's is 0600), slirp4netns could not open it: Podman then runs in a
	# mount namespace of its own where a node of udev's 0666 is bound
	# there. Its pause process, made by the first call, keeps that view
	# for the calls that join it.
	[ ! -e "$ENG_T/tun" ] \
		|| RL_AS_USER=(unshare -m --propagation private -- sh -c 'mount --bind "$0" /dev/net/tun && exec "$@"'
			"$ENG_T/tun" "${RL_AS_USER[@]}")
	RL_PODMAN_ARGS=(--root "$p/root" --runroot "$ENG_T/rr" --tmpdir "$p/tmp"
		--storage-driver vfs --cgroup-manager "$RL_MANAGER" --events-backend file
		--runtime "$ENG_AGENTRUN")
	# The agent profile through Podman's runtime flags, as podman.bats;
	# without a delegated cgroup its limits cannot hold and are waived
	# explicitly (the refusal itself has a test of its own).
	RL_AGENT=(--runtime-flag profile=agent)
	[ "$RL_DELEGATED" = 1 ] || RL_AGENT+=(--runtime-flag rootless-limits=ignore)
}

# The agent profile's limits, unenforced without a delegated cgroup, are
# named in a warning that Podman passes on now and then: dropped from what
# a test compares.
without_limits_warning() {
	grep -v '^agentrun: warning: linux.resources' || true
}

pm() {
	eng_run "${RL_AS_USER[@]}" podman "${RL_PODMAN_ARGS[@]}" "$@"
}

# The suite's containers.conf: contrib/podman/containers.conf with the
# runtime path pointed at the binary under test, and Podman's own files
# in the temp dir.
write_containers_conf() {
	local p=$ENG_T/podman
	sed -e "s|^\(\[engine\]\)$|\1\nvolume_path = \"$p/volumes\"\nevents_logfile_path = \"$p/events.log\"|" \
		-e "s|\"/usr/local/s\?bin/agentrun\"|\"$ENG_AGENTRUN\"|" \
		"$ENG_TOP/contrib/podman/containers.conf" >"$p/containers.conf"
	printf '[storage]\ndriver = "vfs"\ngraphroot = "%s"\nrunroot = "%s"\n' \
		"$p/root" "$ENG_T/rr" >"$p/storage.conf"
	: >"$p/registries.conf"
}

# Rootless Podman keeps its user namespace open with a pause process; its
# pid file is in the tmpdir we gave it.
rl_stop_pause_process() {
	local f pid
	for f in "$ENG_T/podman/tmp/pause.pid" "$RL_XDG/libpod/tmp/pause.pid"; do
		[ -f "$f" ] && [ ! -f "$ENG_T/pause-before" ] || continue
		pid=$(cat "$f")
		[ -n "$pid" ] && eng_stop_pid "$pid"
	done
}

setup_file() {
	eng_require podman conmon script newuidmap slirp4netns runuser curl || return 0
	# Every level searchable by the user. Short: rootless Podman takes a
	# runroot ($ENG_T/rr) of at most 50 characters.
	eng_setup_dir pmrl || return 0
	chmod 0711 "$ENG_T"
	chmod 0644 "$ENG_T/rootfs.tar"
	RL_USER=$(eng_rootless_pick_user)
	RL_UID=$(id -u "$RL_USER")
	export RL_USER RL_UID
	mkdir -p "$ENG_T/podman" "$ENG_T/home" "$ENG_T/rr"
	write_containers_conf
	chown -R "$RL_USER:" "$ENG_T/podman" "$ENG_T/home" "$ENG_T/rr"
	if eng_systemd_host; then
		rl_start_user_manager
		export RL_XDG=/run/user/$RL_UID RL_MANAGER=systemd
		# agentrun's state root there: whatever the suite leaves in it.
		eng_note_host_paths "$RL_XDG/agentrun" "$RL_XDG/agentrun-egress"
		[ ! -f "$RL_XDG/libpod/tmp/pause.pid" ] || touch "$ENG_T/pause-before"
	else
		export RL_XDG=$ENG_T/xdg RL_MANAGER=cgroupfs
		install -d -m 0700 -o "$RL_USER" -g "$RL_USER" "$RL_XDG"
	fi
	export RL_DELEGATED=0
	if rl_delegated; then RL_DELEGATED=1; fi
	runuser -u "$RL_USER" -- test -r /dev/net/tun -a -w /dev/net/tun || mknod -m 0666 "$ENG_T/tun" c 10 200
	rl_args
	pm import --change 'CMD ["/bin/sh"]' "$ENG_T/rootfs.tar" "$I" >/dev/null
}

setup() {
	eng_skip_if_file_skipped
	rl_args
}

teardown_file() {
	if [ -n "${ENG_T:-}" ] && [ -d "$ENG_T/podman" ]; then
		rl_args
		pm rm -a -f -t 0 >/dev/null 2>&1 || true
		rl_stop_pause_process
	fi
	eng_teardown_dir
	eng_rootless_remove_user
}

start_sleeper() {
	pm run -d --name "$1" "${@:2}" "$I" \
		sh -c "$ENG_SLEEPER"
}

state_of() {
	pm inspect -f '{{.State.Status}}' "$1"
}

state_is() {
	[ "$(state_of "$1")" = "$2" ]
}

# ---------------------------------------------------------------- network

# A port nothing listens on, on loopback.
rl_free_port() {
	local p
	for p in $(shuf -i 20000-40000 -n 50); do
		[ -z "$(ss -Hltn "sport = :$p")" ] && { echo "$p"; return 0; }
	done
	return 1
}

# GET / from busybox in a container: "reached" or "refused".
RL_GET='get() { printf "GET / HTTP/1.0\\r\\n\\r\\n" | nc -w 3 "$1" "$2" >/dev/null 2>&1 && echo reached || echo refused; }; get'

# A web server of the test on the host's 127.0.0.1 (stopped at teardown).
rl_listen_loopback() {
	RL_PORT=$(rl_free_port)
	mkdir -p "$ENG_T/www"
	echo "hello from the test host" >"$ENG_T/www/index.html"
	busybox httpd -f -p "127.0.0.1:$RL_PORT" -h "$ENG_T/www" 3>&- &
	eng_track_pid $!
	eng_wait 50 rl_http_get "127.0.0.1:$RL_PORT" >/dev/null
}

rl_http_get() {
	curl -sf -m 3 "http://$1/"
}

# ---------------------------------------------------------------- tests

@test "rootless podman --runtime /path/agentrun run: output and exit codes, as the user" {
	run pm run --rm "$I" echo hello from agentrun
	assert_success
	[ "$output" = "hello from agentrun" ] || fail "wrong output"
	run pm run --rm "$I" sh -c 'exit 9'
	assert_status 9
	run -127 pm run --rm "$I" /no/such/binary
	assert_status 127
	start_sleeper p-which >/dev/null
	local id pid
	id=$(pm inspect -f '{{.Id}}' p-which)
	pid=$(pm inspect -f '{{.State.Pid}}' p-which)
	# Root in the container, the user on the host.
	run ps -o uid= -p "$pid"
	[ "${output// /}" = "$RL_UID" ] || fail "the container's init is not the user's ($RL_UID) on the host"
	# agentrun's rootless state root knows the container: it really ran it.
	run pm unshare "$ENG_AGENTRUN" --root "$RL_XDG/agentrun" state "$id"
	assert_success
	assert_contains '"status": "running"'
	pm rm -f -t 0 p-which >/dev/null
}

@test "rootless podman --runtime agentrun: the name containers.conf registers" {
	local args=("${RL_PODMAN_ARGS[@]}")
	args[${#args[@]} - 1]=agentrun # the value after --runtime
	run eng_run "${RL_AS_USER[@]}" podman "${args[@]}" run --rm "$I" echo by-name
	assert_success
	[ "$output" = by-name ] || fail "wrong output"
	eng_run "${RL_AS_USER[@]}" podman "${args[@]}" run -d --name p-name "$I" sleep 30 >/dev/null
	run pm inspect -f '{{.OCIRuntime}}' p-name
	[ "$output" = agentrun ] || fail "not run by the registered name"
	pm rm -f -t 0 p-name >/dev/null
}

@test "rootless podman run -it: a terminal, and the exit code" {
	# The pause lets conmon read the pty before the container exits.
	run eng_tty "${RL_AS_USER[@]}" podman "${RL_PODMAN_ARGS[@]}" run --rm -it "$I" sh -c 'tty; sleep 0.5; exit 4'
	assert_status 4
	assert_contains /dev/pts/0
}

@test "rootless podman run -d, logs, exec (with and without -it), top" {
	start_sleeper p-exec >/dev/null
	run pm exec p-exec sh -c 'echo in-exec; exit 5'
	assert_status 5
	[ "$output" = in-exec ] || fail "exec output"
	run pm exec -u 1000 -e X=1 -w /tmp p-exec sh -c 'echo "$(id -u) $X $(pwd)"'
	[ "$output" = "1000 1 /tmp" ] || fail "exec -u -e -w"
	run eng_tty "${RL_AS_USER[@]}" podman "${RL_PODMAN_ARGS[@]}" exec -it p-exec sh -c 'tty; exit 6'
	assert_status 6
	assert_contains /dev/pts/
	run pm top p-exec
	assert_success
	assert_contains 'while :'
	run pm logs p-exec
	[ "$output" = started ] || fail "logs"
	pm rm -f -t 0 p-exec >/dev/null
}

@test "rootless podman stop, start, kill, rm" {
	start_sleeper p-life >/dev/null
	run pm stop -t 10 p-life
	assert_success
	run pm inspect -f '{{.State.ExitCode}}' p-life
	[ "$output" = 3 ] || fail "stop: the TERM handler's exit code"
	run pm logs p-life
	assert_contains stopping
	run pm start p-life
	assert_success
	run pm kill p-life
	assert_success
	eng_wait 50 state_is p-life exited
	run pm inspect -f '{{.State.ExitCode}}' p-life
	[ "$output" = 137 ] || fail "kill: 137 expected"
	local id
	id=$(pm inspect -f '{{.Id}}' p-life)
	pm rm p-life >/dev/null
	run pm unshare "$ENG_AGENTRUN" --root "$RL_XDG/agentrun" state "$id"
	assert_failure
	assert_contains 'does not exist'
}

@test "rootless podman pause/unpause (a delegated cgroup)" {
	start_sleeper p-pause >/dev/null
	run pm pause p-pause
	if [ "$RL_DELEGATED" != 1 ]; then
		# Podman itself refuses: there is no cgroup to freeze.
		assert_failure
		assert_contains 'can not pause'
		pm rm -f -t 0 p-pause >/dev/null
		skip "no cgroup is delegated to $RL_USER here (no systemd user instance): Podman refuses pause"
	fi
	assert_success
	[ "$(state_of p-pause)" = paused ] || fail "pause"
	local pid
	pid=$(pm inspect -f '{{.State.Pid}}' p-pause)
	eng_frozen "$pid" || fail "the container's cgroup is not frozen"
	run pm unpause p-pause
	assert_success
	[ "$(state_of p-pause)" = running ] || fail "unpause"
	! eng_frozen "$pid" || fail "still frozen after unpause"
	run pm logs p-pause
	[ "$output" = started ] || fail "the process did not survive pause"
	pm rm -f -t 0 p-pause >/dev/null
}

@test "rootless podman run --memory --cpus --pids-limit: enforced, or refused aloud" {
	run pm run --rm --memory 64m --cpus 0.5 --pids-limit 30 "$I" sh -c "$ENG_CG_LIMITS"
	if [ "$RL_DELEGATED" = 1 ]; then
		assert_success
		[ "$output" = "$(printf '67108864\n50000\n100000\n30')" ] || fail "limits in the container's cgroup"
	elif [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then
		# cgroup v1: Podman drops them itself, and says so.
		assert_contains 'Resource limits are not supported and ignored on cgroups V1 rootless systems'
	else
		# They reach agentrun, which has nowhere to put them.
		assert_failure
		assert_contains 'no cgroup to enforce them in without root'
	fi
}

@test "rootless agent profile: its limits hold in a delegated cgroup, or are refused in one line" {
	if [ "$RL_DELEGATED" = 1 ]; then
		run pm --runtime-flag profile=agent run --rm "$I" sh -c "$ENG_CG_LIMITS"
		assert_success
		[ "$output" = "$(printf '2147483648\n200000\n100000\n1024')" ] || fail "the agent profile's limits"
	else
		run pm --runtime-flag profile=agent run --rm "$I" echo ran
		assert_failure
		refute_contains ran
		assert_contains 'linux.resources (memory, cpu, pids): no cgroup to enforce them in without root'
		assert_contains 'rootless-limits=ignore'
	fi
}

@test "rootless podman default network: slirp4netns, a port published on loopback" {
	local port
	port=$(rl_free_port)
	pm run -d --name p-web -p "127.0.0.1:$port:8080" "$I" sh -c \
		'mkdir /www && echo hello from the container >/www/index.html && exec httpd -f -p 8080 -h /www' >/dev/null
	run pm inspect -f '{{.HostConfig.NetworkMode}}' p-web
	[ "$output" = slirp4netns ] || fail "the default rootless network"
	run pm exec p-web sh -c "ip -4 -o addr show tap0 | grep -o 'inet 10.0.2.100'"
	[ "$output" = "inet 10.0.2.100" ] || fail "slirp's tap0"
	eng_wait 50 rl_http_get "127.0.0.1:$port" >/dev/null || true
	run rl_http_get "127.0.0.1:$port"
	pm rm -f -t 0 p-web >/dev/null
	[ "$output" = "hello from the container" ] || fail "the published port"
}

# The agent profile filters the netns Podman wired (slirp4netns' tap0).
# The host's loopback through slirp's 10.0.2.2 (allowed here on purpose)
# stands for every service on the host.
@test "rootless agent profile, slirp4netns: no egress (the host's loopback is refused)" {
	rl_listen_loopback
	local net=slirp4netns:allow_host_loopback=true
	run pm run --rm --network "$net" "$I" sh -c "$RL_GET 10.0.2.2 $RL_PORT"
	[ "$output" = reached ] || fail "without the agent profile the host's loopback should answer"
	local i outcomes=""
	for i in 1 2 3; do
		outcomes+=$(pm "${RL_AGENT[@]}" run --rm --network "$net" "$I" \
			sh -c "ip -4 -o addr show tap0 | grep -o 'inet 10.0.2.100'; $RL_GET 10.0.2.2 $RL_PORT" 2>&1 \
			| without_limits_warning)
		outcomes+=" "
	done
	want="$(printf 'inet 10.0.2.100\nrefused') "
	[ "$outcomes" = "$want$want$want" ] || fail "agent profile on slirp4netns: $outcomes"
}

@test "rootless agent profile: an overlay root, the image's rootfs never written" {
	run pm run --name p-plain "$I" sh -c 'echo x >/marker && echo wrote'
	[ "$output" = wrote ] || fail "plain run"
	run pm "${RL_AGENT[@]}" run --name p-agent "$I" \
		sh -c 'awk "\$2 == \"/\" { print \$3 }" /proc/mounts; echo x >/marker && echo wrote'
	output=$(without_limits_warning <<<"$output")
	[ "$output" = "$(printf 'overlay\nwrote')" ] || fail "agent root"
	# Exported into a file of the user's: Podman reopens /dev/stdout.
	local plain agent
	pm export -o "$ENG_T/home/plain.tar" p-plain
	pm export -o "$ENG_T/home/agent.tar" p-agent
	pm rm -f -t 0 p-plain p-agent >/dev/null
	plain=$(tar -tf "$ENG_T/home/plain.tar" | grep -cxE '(\./)?marker' || true)
	agent=$(tar -tf "$ENG_T/home/agent.tar" | grep -cxE '(\./)?marker' || true)
	[ "$plain" = 1 ] || fail "a plain container's write should reach its rootfs"
	[ "$agent" = 0 ] || fail "the agent container wrote its rootfs"
}

@test "rootless: removed containers leave no agentrun state" {
	pm run --rm "$I" true
	start_sleeper p-gone >/dev/null
	pm rm -f -t 0 p-gone >/dev/null
	run pm ps -a -q
	[ -z "$output" ] || fail "containers left"
	run pm unshare "$ENG_AGENTRUN" --root "$RL_XDG/agentrun" list -q
	assert_success
	[ -z "$output" ] || fail "agentrun state left in $RL_XDG/agentrun"
}
