#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# containerd (Debian's containerd 1.6) with its runc v2 shim driving
# agentrun: `ctr run --runc-binary`, the task verbs that reach the runtime
# (exec, ps, pause/resume, kill, metrics, delete), the config.toml runtime
# handler that Kubernetes' RuntimeClass uses, and the shim's error path
# (--log FILE --log-format json, read back into ctr's error).
#
# containerd gets its own config, root, state and socket under the suite's
# temp dir; ctr gets --runc-root and --fifo-dir there too. containerd 1.6
# puts shim sockets under /run/containerd/s whatever it is told: that
# directory is removed at the end if this suite made it and it is empty.

load lib

I=docker.io/library/$ENG_IMAGE_TAG
BAD=docker.io/library/agentrun-badcwd:test

c() {
	eng_run ctr --address "$ENG_T/containerd.sock" -n "$ENG_NS" "$@"
}

# What every container gets: agentrun through the shim's runc options,
# with its state and the IO fifos in the temp dir.
RB=()
runtime_args() {
	RB=(--runc-binary "$ENG_AGENTRUN" --runc-root "$ENG_T/runc" --fifo-dir "$ENG_T/fifo")
}

# Private paths first, then contrib/containerd/config.toml as shipped
# (only the binary path changed), so the file users copy is what is tested.
write_config() {
	local t=$ENG_T
	{
		eng_containerd_paths "$t"
		# The CRI plugin must load (it owns the runtime handlers), but
		# no network config is read from the host.
		echo '[plugins."io.containerd.grpc.v1.cri".cni]'
		echo "  conf_dir = \"$t/cni/conf\""
		echo "  bin_dir = \"$t/cni/bin\""
		eng_containerd_handlers
	} >"$t/config.toml"
}

setup_file() {
	eng_require containerd ctr containerd-shim-runc-v2 jq script || return 0
	eng_setup_dir containerd || return 0
	eng_note_host_paths /run/containerd/s /run/containerd/fifo /run/containerd
	mkdir -p "$ENG_T/runc" "$ENG_T/fifo" "$ENG_T/cni/conf" "$ENG_T/cni/bin"
	write_config
	eng_start_daemon containerd containerd --config "$ENG_T/config.toml"
	export ENG_CONTAINERD_PID=$ENG_DAEMON_PID
	eng_wait_ready containerd "$ENG_CONTAINERD_PID" \
		ctr --address "$ENG_T/containerd.sock" version
	eng_containerd_image "$ENG_NS" "$I" \
		'{"Cmd": ["/bin/sh"], "Env": ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]}'
	# An image whose working directory runs through a file: the runtime
	# must refuse it at create, and say why.
	eng_containerd_image "$ENG_NS" "$BAD" \
		'{"Cmd": ["/bin/sh"], "WorkingDir": "/bin/busybox/sub", "Env": ["PATH=/bin"]}'
}

setup() {
	eng_skip_if_file_skipped
	runtime_args
}

teardown_file() {
	if [ -n "${ENG_T:-}" ] && [ -S "$ENG_T/containerd.sock" ]; then
		local t
		for t in $(c task ls -q 2>/dev/null); do
			c task kill -s KILL "$t" >/dev/null 2>&1 || true
			c task delete -f "$t" >/dev/null 2>&1 || true
		done
		for t in $(c container ls -q 2>/dev/null); do
			c container rm "$t" >/dev/null 2>&1 || true
		done
	fi
	eng_teardown_dir
}

# ctr run with agentrun; the container's cgroup goes under this suite's
# parent (ctr's default would be /<namespace>/<id>). IMAGE ID CMD follow.
cr() {
	local id=$1
	shift
	c run $(cgroup_args "$id") "${RB[@]}" "$@"
}

# The container's cgroup: under this suite's parent, or on a systemd host
# a scope in system.slice through the shim's systemd driver.
cgroup_args() {
	if eng_systemd_host; then
		echo "--runc-systemd-cgroup --cgroup system.slice:$ENG_CG:$1"
	else
		echo "--cgroup /$ENG_CG/$1"
	fi
}

start_sleeper() {
	cr "$1" -d "${@:2}" "$I" "$1" \
		sh -c 'trap "exit 3" TERM; while :; do sleep 0.2; done'
}

task_status() {
	c task ls | awk -v id="$1" '$1 == id { print $3 }'
}

status_is() {
	[ "$(task_status "$1")" = "$2" ]
}

remove() {
	c task kill -s KILL "$1" >/dev/null 2>&1 || true
	eng_wait 50 status_is "$1" STOPPED
	c task delete "$1" >/dev/null 2>&1 || true
	c container rm "$1" >/dev/null
}

@test "containerd: config.toml's agentrun handler loads with the CRI plugin" {
	run c plugins ls
	assert_success
	# The CRI plugin holds the runtime handlers; "ok" means the file
	# (runc and agentrun handlers, BinaryName) was accepted.
	line=$(awk '$1 == "io.containerd.grpc.v1" && $2 == "cri"' <<<"$output")
	[[ "$line" == *" ok"* ]] || fail "CRI plugin did not load: $line"
	run eng_run containerd --config "$ENG_T/config.toml" config dump
	assert_success
	assert_contains 'containerd.runtimes.agentrun]'
	assert_contains "BinaryName = \"$ENG_AGENTRUN\""
	assert_contains 'containerd.runtimes.agentrun-agent]'
	assert_contains "BinaryName = \"$ENG_T/bin/agentrun-agent\""
	run grep -i 'failed to load plugin io.containerd.grpc.v1.cri' "$ENG_T/containerd.log"
	assert_failure
}

# docs/engines.md's set-up of a host's containerd, on a copy of Debian's
# stock /etc/containerd/config.toml: contrib's tables appended, and
# restrict_oom_score_adj for hosts without CAP_SYS_RESOURCE.
@test "containerd: docs/engines.md's additions to Debian's config.toml load" {
	local conf=/etc/containerd/config.toml stock
	stock=$(dpkg-query -W -f='${Conffiles}' containerd 2>/dev/null | awk -v f="$conf" '$1 == f { print $2 }')
	[ -n "$stock" ] && [ "$(md5sum <"$conf" | cut -d' ' -f1)" = "$stock" ] ||
		skip "$conf is not Debian's stock file"
	cp "$conf" "$ENG_T/host-config.toml"
	grep -v '^version' "$ENG_TOP/contrib/containerd/config.toml" >>"$ENG_T/host-config.toml"
	sed -i '/^  \[plugins."io.containerd.grpc.v1.cri"\]$/a\    restrict_oom_score_adj = true' "$ENG_T/host-config.toml"
	run eng_run containerd --config "$ENG_T/host-config.toml" config dump
	assert_success
	assert_contains 'restrict_oom_score_adj = true'
	assert_contains 'BinaryName = "/usr/local/sbin/agentrun"'
	assert_contains 'BinaryName = "/usr/local/sbin/agentrun-agent"'
	# A file from `containerd config default` cannot take them as they are.
	containerd config default >"$ENG_T/default-config.toml"
	grep -v '^version' "$ENG_TOP/contrib/containerd/config.toml" >>"$ENG_T/default-config.toml"
	run eng_run containerd --config "$ENG_T/default-config.toml" config dump
	assert_failure
	assert_contains 'duplicated tables'
}

# No registry: an archive made as images/agent-image.sh makes agent-oci.tar
# (its only name is the tag "latest") is imported under a dated name unless
# --base-name names it, as docs/engines.md says.
@test "ctr image import: agent-image.sh's archive needs --base-name for its name; then it runs" {
	command -v umoci >/dev/null || skip "umoci is not installed (contrib/install-deps.sh installs it)"
	eng_umoci_archive "$ENG_T/rootfs.tar" "$ENG_T/agent-oci.tar" \
		--config.cmd /bin/sh --config.env PATH=/usr/sbin:/usr/bin:/sbin:/bin
	local ns=agentrun-doc dated
	run eng_run ctr --address "$ENG_T/containerd.sock" -n "$ns" image import "$ENG_T/agent-oci.tar"
	assert_success
	dated=$(eng_run ctr --address "$ENG_T/containerd.sock" -n "$ns" image ls -q)
	[[ "$dated" == import-[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]:latest ]] || fail "imported as: $dated"
	eng_run ctr --address "$ENG_T/containerd.sock" -n "$ns" image rm "$dated" >/dev/null
	run c image import --base-name docker.io/library/agent-doc "$ENG_T/agent-oci.tar"
	assert_success
	run c image ls -q
	assert_contains 'docker.io/library/agent-doc:latest'
	run cr r-doc --rm docker.io/library/agent-doc:latest r-doc sh -c 'echo hello from the imported image'
	assert_success
	[ "$output" = "hello from the imported image" ] || fail "wrong output"
	c image rm docker.io/library/agent-doc:latest >/dev/null
	eng_run ctr --address "$ENG_T/containerd.sock" namespaces rm "$ns" >/dev/null 2>&1 || true
}

@test "ctr run --runc-binary agentrun: output and exit code" {
	run cr r-out --rm "$I" r-out sh -c 'echo hello from agentrun; exit 6'
	assert_status 6
	assert_contains 'hello from agentrun'
}

@test "ctr run --runc-binary agentrun-agent: root inside is a host range of agentrun's; the image and a bound directory are its root's" {
	mkdir -p "$ENG_T/agent-bind"
	local out
	out=$(c run $(cgroup_args r-agent) --runc-binary "$ENG_T/bin/agentrun-agent" \
		--runc-root "$ENG_T/runc" --fifo-dir "$ENG_T/fifo" --rm \
		--mount "type=bind,src=$ENG_T/agent-bind,dst=/data,options=rbind:rw" "$I" r-agent sh -c '
		cat /proc/self/uid_map | tr -s " " | sed "s/^ //"; stat -c "image %u" /bin/busybox
		echo x >/data/made && echo wrote-bind' 2>&1)
	echo "$out"
	local first host
	first=$(head -1 <<<"$out")
	host=$(echo "$first" | cut -d' ' -f2)
	[ "${first%% *}" = 0 ] && [ "$host" -ge 2147483648 ] || fail "uid_map: $out"
	[[ "$out" == *"image 0"* ]] || fail "image not its root's: $out"
	[[ "$out" == *wrote-bind* ]] || fail "bound directory not writable: $out"
	[ "$(stat -c %u "$ENG_T/agent-bind/made")" = 0 ] || fail "owner on the host"
}

@test "ctr run: --env, --cwd (created when missing), --read-only, --mount" {
	mkdir -p "$ENG_T/bind"
	echo host-data >"$ENG_T/bind/in"
	run cr r-env --rm --env FOO=bar --cwd /new/dir --read-only \
		--mount "type=bind,src=$ENG_T/bind,dst=/data,options=rbind:ro" \
		"$I" r-env sh -c 'echo "$FOO|$(pwd)"; cat /data/in; touch /x'
	assert_failure
	assert_contains 'bar|/new/dir'
	assert_contains host-data
	assert_contains 'Read-only file system'
}

@test "ctr run: --memory-limit, --cpu-quota, --cap-drop, --seccomp" {
	run cr r-lim --rm --memory-limit 67108864 --cpu-quota 50000 --cpu-period 100000 \
		--cap-drop CAP_CHOWN --seccomp "$I" r-lim sh -c \
		'grep -E "^(CapEff|Seccomp):" /proc/self/status; chown 1 /tmp || echo chown-denied'
	assert_success
	assert_contains chown-denied
	assert_contains 'Seccomp:	2'
	start_sleeper r-cg --memory-limit 67108864 >/dev/null
	local bad
	bad=$(eng_unmounted_v1_controllers)
	if [ -n "$bad" ]; then
		remove r-cg
		skip "metrics: containerd's shim cannot load cgroups while v1 controller(s) $bad are mounted nowhere (runc alike)"
	fi
	run c task metrics r-cg
	remove r-cg
	assert_success
	# v1 and v2 name the limit differently.
	[[ "$output" =~ memory\.(limit_in_bytes|usage_limit)\ +67108864 ]] || fail "no memory limit in the metrics"
}

@test "ctr run -t: a terminal, and the exit code" {
	run eng_tty ctr --address "$ENG_T/containerd.sock" -n "$ENG_NS" run --rm -t $(cgroup_args r-tty) "${RB[@]}" \
		"$I" r-tty sh -c 'tty; exit 4'
	assert_status 4
	assert_contains /dev/pts/0
}

@test "ctr task exec (with and without -t), ps" {
	start_sleeper r-exec >/dev/null
	eng_wait 50 status_is r-exec RUNNING
	run c task exec --fifo-dir "$ENG_T/fifo" --exec-id e1 r-exec sh -c 'echo in-exec; exit 5'
	assert_status 5
	assert_contains in-exec
	run eng_tty ctr --address "$ENG_T/containerd.sock" -n "$ENG_NS" task exec -t --fifo-dir "$ENG_T/fifo" --exec-id e2 r-exec \
		sh -c 'tty; exit 7'
	assert_status 7
	assert_contains /dev/pts/
	# ps goes through `agentrun ps --format json`.
	run c task ps r-exec
	assert_success
	pid=$(c task ls | awk '$1 == "r-exec" { print $2 }')
	assert_contains "$pid"
	remove r-exec
}

@test "ctr task pause/resume, kill (TERM, then --all KILL), delete" {
	start_sleeper r-life >/dev/null
	eng_wait 50 status_is r-life RUNNING
	run c task pause r-life
	assert_success
	[ "$(task_status r-life)" = PAUSED ] || fail "not paused"
	run c task resume r-life
	[ "$(task_status r-life)" = RUNNING ] || fail "not resumed"
	run c task kill r-life
	assert_success
	eng_wait 50 status_is r-life STOPPED
	run c task delete r-life
	assert_success
	assert_contains 'exit code 3'
	c container rm r-life
	start_sleeper r-all >/dev/null
	c task exec -d --fifo-dir "$ENG_T/fifo" --exec-id bg r-all sleep 60
	run c task kill --all -s KILL r-all
	assert_success
	eng_wait 50 status_is r-all STOPPED
	c task delete r-all >/dev/null
	c container rm r-all
	run ls "$ENG_T/runc/$ENG_NS"
	[ -z "$output" ] || fail "agentrun state left: $output"
}

@test "ctr: agentrun's error reaches ctr through the shim's JSON log" {
	run cr r-bad --rm "$BAD" r-bad true
	assert_failure
	# The shim runs agentrun with --log FILE --log-format json and, on
	# failure, quotes the last error it logged; this text is agentrun's.
	assert_contains 'OCI runtime create failed'
	assert_contains 'chdir to cwd `/bin/busybox/sub` set in config.json: Not a directory'
	c container rm r-bad >/dev/null 2>&1 || true
	run ls "$ENG_T/runc/$ENG_NS"
	[ -z "$output" ] || fail "a failed create left agentrun state: $output"
}

# A pod as the CRI makes one: a sandbox container whose netns CNI wires
# (here: a veth to a test host the test makes, with a web server on
# 10.251.90.1:8080), and containers that join that netns by path.
@test "containerd pod: a container with the agent profile (agentrun-agent) joining the sandbox's netns is filtered" {
	unshare -n sh -c 'echo $$ >"$1"; exec sleep 600' sh "$ENG_T/testhost.pid" 3>&- &
	eng_track_pid $!
	eng_wait 50 test -s "$ENG_T/testhost.pid"
	local host sandbox link=ctw$$ i outcomes=""
	host=$(cat "$ENG_T/testhost.pid")
	start_sleeper pod-sandbox >/dev/null
	sandbox=$(c task ls | awk '$1 == "pod-sandbox" { print $2 }')
	ip link add "$link" netns "$host" type veth peer name eth0 netns "$sandbox"
	nsenter -t "$host" -n ip addr add 10.251.90.1/24 dev "$link"
	nsenter -t "$host" -n ip link set "$link" up
	nsenter -t "$sandbox" -n ip addr add 10.251.90.2/24 dev eth0
	nsenter -t "$sandbox" -n ip link set eth0 up
	eng_listen "$host" 10.251.90.1
	eng_wait 50 nsenter -t "$host" -n sh -c 'ss -Hltn sport = 8080 | grep -q LISTEN'
	# A plain container in the pod reaches the test host: the test can fail.
	run cr pod-plain --rm --with-ns "network:/proc/$sandbox/ns/net" "$I" pod-plain sh -c "$ENG_GET 10.251.90.1"
	[ "$output" = reached ] || { remove pod-sandbox; fail "the plain pod member should reach the test host"; }
	for i in 1 2 3 4 5; do
		outcomes+=$(c run $(cgroup_args "pod-agent$i") --runc-binary "$ENG_T/bin/agentrun-agent" \
			--runc-root "$ENG_T/runc" --fifo-dir "$ENG_T/fifo" --rm \
			--with-ns "network:/proc/$sandbox/ns/net" "$I" "pod-agent$i" sh -c "$ENG_GET 10.251.90.1" 2>&1)
		outcomes+=" "
	done
	remove pod-sandbox
	[ "$outcomes" = "refused refused refused refused refused " ] || fail "agent pod members: $outcomes"
}

# containerd's checkpoint (ctr pauses the task, the shim calls the
# runtime's checkpoint --leave-running, the images go into the content
# store) and restore (--live: the shim calls restore --detach with the
# images): the task comes back with its memory. Needs a host where CRIU
# works (the test VM).
@test "ctr container checkpoint --task, restore --live: the task comes back where it was" {
	command -v criu >/dev/null && criu check >/dev/null 2>&1 || skip "CRIU does not work on this host"
	# The counter is replaced whole (a rename), never seen truncated: a
	# read between `>`'s truncation and the write found it empty.
	cr r-cr -d "$I" r-cr sh -c 'i=0; while :; do i=$((i + 1)); echo "$i" >/tmp/n.new; mv /tmp/n.new /tmp/n; sleep 0.2; done' >/dev/null
	eng_wait 50 status_is r-cr RUNNING
	sleep 1
	run c container checkpoint --task r-cr localhost/agentrun-ckpt:r-cr
	assert_success
	status_is r-cr RUNNING || fail "after the checkpoint: $(task_status r-cr)"
	remove r-cr
	run c container restore --live r-cr localhost/agentrun-ckpt:r-cr
	assert_success
	eng_wait 50 status_is r-cr RUNNING
	local n1 n2
	n1=$(c task exec --exec-id n1 --fifo-dir "$ENG_T/fifo" r-cr cat /tmp/n)
	sleep 1
	n2=$(c task exec --exec-id n2 --fifo-dir "$ENG_T/fifo" r-cr cat /tmp/n)
	[ "$n1" -gt 3 ] || fail "the counter started again ($n1): not restored"
	[ "$n2" -gt "$n1" ] || fail "the restored counter stands at $n1"
	remove r-cr
	c image rm localhost/agentrun-ckpt:r-cr >/dev/null
}
