#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# checkpoint and restore with CRIU, runc's verbs: a container whose
# processes hold an open file, a TCP listener and a pty is dumped and
# comes back where it was (its counters go on, the listener answers, the
# pty still carries lines); --leave-running keeps it and a second copy
# restores beside it; what cannot work is one line that leaves nothing.
# The round trips need a host where CRIU works (`criu check`): the test
# VM (Debian 12's kernel and criu); elsewhere they skip and say why.

load helpers

setup() {
	common_setup
	IMAGES=$TEST_DIR/images
	mkdir -p "$BUNDLE/rootfs/www" "$BUNDLE/rootfs/tmp"
	echo pong >"$BUNDLE/rootfs/www/ping"
	cp "$AR_TOP/tests/tools/echo_loop" "$BUNDLE/rootfs/bin/echo_loop"
}

teardown() {
	common_teardown
}

require_criu() {
	command -v criu >/dev/null || skip "criu is not installed"
	local why
	why=$(criu check 2>&1) || skip "CRIU does not work on this host: $(tail -1 <<<"$why")"
}

# piped VERB ARG...: the runtime with its stdout and stderr in a pipe
# (read into $TEST_DIR/out), as an engine gives a container its stdio: a
# restore hands CRIU its own pipe for the checkpointed init's.
piped() {
	runtime "$@" > >(cat >>"$TEST_DIR/out") 2>&1
}

# The init: a counter written through an fd it keeps open, an HTTP server
# listening on port 7777 of the container's own network, and echo_loop's
# counter through a pty it holds both ends of.
start_worker() {
	set_args sh -c 'httpd -p 7777 -h /www; echo_loop pty /tmp/pty & i=0; while :; do i=$((i + 1)); echo "$i" >&3; sleep 0.2; done 3>>/tmp/count'
	piped run --detach --bundle "$BUNDLE" "$CID"
	wait_for_file_content "$BUNDLE/rootfs/tmp/count" '^3$'
	wait_for_file_content "$BUNDLE/rootfs/tmp/pty" '^pty 3$'
}

# last_count FILE: the last number in the file's last line.
last_count() {
	tail -1 "$1" | tr -dc 0-9
}

# ping ID: what the container's HTTP server answers, asked from inside.
ping() {
	runtime exec "${1:-$CID}" wget -q -O - http://127.0.0.1:7777/ping
}

@test "checkpoint/restore: open file, TCP listener and pty round-trip; the restored container is whole" {
	require_criu
	start_worker
	run ping
	assert_success
	assert_output pong

	runtime checkpoint --image-path "$IMAGES" "$CID"
	# Dumped and gone, as under runc: no process, no state, no cgroup.
	run runtime state "$CID"
	assert_failure
	assert_output_contains "does not exist"
	wait_no_pids "$CID"
	[ -z "$(cgroups_named "$CID")" ]
	local before pty_before
	before=$(last_count "$BUNDLE/rootfs/tmp/count")
	pty_before=$(last_count "$BUNDLE/rootfs/tmp/pty")
	sleep 0.5
	[ "$(last_count "$BUNDLE/rootfs/tmp/count")" = "$before" ]

	piped restore --detach --image-path "$IMAGES" --bundle "$BUNDLE" "$CID"
	[ "$(ctr_status)" = running ]
	# The counters go on from where they were, through the same fd and pty.
	wait_for_file_content "$BUNDLE/rootfs/tmp/count" "^$((before + 3))\$"
	wait_for_file_content "$BUNDLE/rootfs/tmp/pty" "^pty $((pty_before + 3))\$"
	run grep -c "^$((before + 1))\$" "$BUNDLE/rootfs/tmp/count"
	assert_output 1
	run ping
	assert_success
	assert_output pong
	# Its processes are the container's: in its cgroup, its pid namespace.
	local pid
	pid=$(ctr_pid)
	[ "$(awk '{ print $1 }' "/proc/$pid/stat")" = "$pid" ]
	run runtime ps --format json "$CID"
	assert_success
	[ "$(jq length <<<"$output")" -ge 3 ]
	[ "$(readlink /proc/$pid/ns/pid)" != "$(readlink /proc/self/ns/pid)" ]

	runtime delete --force "$CID"
	wait_no_pids "$CID"
	[ -z "$(cgroups_named "$CID")" ]
	[ -z "$(mounts_under "$TEST_DIR")" ]
}

@test "checkpoint --leave-running keeps the container (a paused one paused); a second copy restores beside it" {
	require_criu
	start_worker
	runtime checkpoint --leave-running --image-path "$IMAGES" --work-path "$TEST_DIR/work" "$CID"
	[ "$(ctr_status)" = running ]
	[ -s "$TEST_DIR/work/dump.log" ]
	# A paused one stays paused (containerd pauses before it checkpoints).
	runtime pause "$CID"
	runtime checkpoint --leave-running --image-path "$TEST_DIR/paused" "$CID"
	[ "$(ctr_status)" = paused ]
	runtime resume "$CID"
	# stdout a file where the init had a pipe: refused before criu runs.
	local rc=0
	runtime restore --detach --image-path "$IMAGES" --bundle "$BUNDLE" "$CID-file" >"$TEST_DIR/file" 2>&1 || rc=$?
	[ "$rc" -ne 0 ]
	grep -q "restore: stdout is a file, the checkpointed init's was a pipe (pipe:" "$TEST_DIR/file"
	[ "$(wc -l <"$TEST_DIR/file")" -eq 1 ]
	run runtime state "$CID-file"
	assert_failure
	# Each copy has its own network: both listen on 7777.
	piped restore --detach --image-path "$IMAGES" --work-path "$TEST_DIR/work" \
		--bundle "$BUNDLE" --pid-file "$TEST_DIR/copy.pid" "$CID-copy"
	[ "$(ctr_status "$CID-copy")" = running ]
	[ "$(cat "$TEST_DIR/copy.pid")" = "$(ctr_pid "$CID-copy")" ]
	[ "$(ctr_pid "$CID-copy")" != "$(ctr_pid)" ]
	run ping "$CID-copy"
	assert_output pong
	run ping "$CID"
	assert_output pong
	runtime delete --force "$CID-copy"
	[ "$(ctr_status)" = running ]
}

@test "checkpoint --pre-dump, then --parent-path: the dump takes only what changed since; the restore is whole" {
	require_criu
	start_worker
	runtime checkpoint --pre-dump --image-path "$TEST_DIR/pre" "$CID"
	[ "$(ctr_status)" = running ]
	runtime checkpoint --parent-path ../pre --image-path "$IMAGES" "$CID"
	# criu links the images to their parent's.
	[ "$(readlink "$IMAGES/parent")" = ../pre ] || fail "no parent link: $(ls -l "$IMAGES")"
	run runtime state "$CID"
	assert_failure
	local before
	before=$(last_count "$BUNDLE/rootfs/tmp/count")
	piped restore --detach --image-path "$IMAGES" --bundle "$BUNDLE" "$CID"
	wait_for_file_content "$BUNDLE/rootfs/tmp/count" "^$((before + 3))\$"
	run ping
	assert_output pong
}

@test "an established TCP connection survives with --tcp-established; without it CRIU's refusal is one line and the container runs on" {
	require_criu
	# A counter sent every 0.2 s over a TCP connection whose two ends the
	# container holds, appended to /tmp/tcp as it arrives.
	set_args echo_loop tcp /tmp/tcp
	piped run --detach --bundle "$BUNDLE" "$CID"
	wait_for_file_content "$BUNDLE/rootfs/tmp/tcp" '^tcp 3$'
	run runtime checkpoint --image-path "$IMAGES" "$CID"
	assert_failure
	assert_output_contains "criu dump failed"
	assert_output_contains "tcp-established"
	[ "$(wc -l <<<"$output")" -eq 1 ]
	[ "$(ctr_status)" = running ]
	local before
	before=$(last_count "$BUNDLE/rootfs/tmp/tcp")
	runtime checkpoint --tcp-established --image-path "$IMAGES" "$CID"
	piped restore --detach --tcp-established --image-path "$IMAGES" --bundle "$BUNDLE" "$CID"
	# The same connection carries on: the server gets the next lines.
	wait_for_file_content "$BUNDLE/rootfs/tmp/tcp" "^tcp $((before + 5))\$"
}

@test "restore in the foreground: waits, passes the exit status on, deletes" {
	require_criu
	set_args sh -c 'i=0; while [ ! -e /tmp/stop ]; do i=$((i + 1)); echo "$i" >/tmp/n.new; mv /tmp/n.new /tmp/n; sleep 0.1; done; echo "ended at $i"; exit 7'
	piped run --detach --bundle "$BUNDLE" "$CID"
	wait_for_file "$BUNDLE/rootfs/tmp/n"
	runtime checkpoint --image-path "$IMAGES" "$CID"
	(sleep 1; touch "$BUNDLE/rootfs/tmp/stop") &
	run piped restore --image-path "$IMAGES" --bundle "$BUNDLE" "$CID"
	[ "$status" -eq 7 ] || fail "restore: status $status, not 7: $(cat "$TEST_DIR/out")"
	wait_for_file_content "$TEST_DIR/out" "^ended at "
	run runtime state "$CID"
	assert_failure
}

@test "checkpoint/restore of a container with a terminal: a new pty, its master to --console-socket, the process goes on writing to it" {
	require_criu
	local rtty
	rtty=$(recvtty_bin)
	update_config '.process.terminal = true'
	set_args sh -c 'i=0; while :; do i=$((i + 1)); [ -t 1 ] && echo "tick $i"; echo "$i" >>/tmp/n; sleep 0.2; done'
	"$rtty" -t 60 "$TEST_DIR/c1.sock" >"$TEST_DIR/c1.out" 2>&1 &
	track_pid $!
	wait_for_file "$TEST_DIR/c1.sock"
	runtime_bg run --detach --console-socket "$TEST_DIR/c1.sock" --bundle "$BUNDLE" "$CID"
	wait_for_file_content "$TEST_DIR/c1.out" '^tick 3'

	# Without a console socket there is nowhere to send the new master.
	runtime checkpoint --leave-running --image-path "$IMAGES" "$CID"
	run runtime restore -d --image-path "$IMAGES" --bundle "$BUNDLE" "$CID-copy"
	assert_failure
	assert_output "agentrun: config.json: .process.terminal: restore needs --console-socket for the new terminal's master"
	run runtime state "$CID-copy"
	assert_failure

	runtime checkpoint --image-path "$IMAGES" "$CID"
	local before
	before=$(last_count "$BUNDLE/rootfs/tmp/n")
	"$rtty" -t 60 "$TEST_DIR/c2.sock" >"$TEST_DIR/c2.out" 2>&1 &
	track_pid $!
	wait_for_file "$TEST_DIR/c2.sock"
	runtime_bg restore -d --console-socket "$TEST_DIR/c2.sock" --image-path "$IMAGES" --bundle "$BUNDLE" "$CID"
	# Its stdout is a terminal still, and the new one: the ticks go on there.
	wait_for_file_content "$TEST_DIR/c2.out" "^tick $((before + 3))"
	local first
	first=$(tr -d '\r' <"$TEST_DIR/c2.out" | sed -n 's/^tick //p' | head -1)
	[ "$first" -ge "$before" ] || fail "the new terminal's first tick is $first: the count started again"
	runtime delete --force "$CID"
}

@test "checkpoint and restore refuse what they cannot do: one line, nothing changed or left" {
	# No criu: said, and the container runs on.
	set_args sleep 600
	ctr_run_bg
	run env PATH="$TEST_DIR/none" "$RUNTIME" --root "$ROOT" checkpoint --image-path "$IMAGES" "$CID"
	assert_failure
	assert_output_contains "criu not found in PATH"
	[ "$(wc -l <<<"$output")" -eq 1 ]
	[ "$(ctr_status)" = running ]
	# Nothing of the checkpoint that did not happen: no descriptors file,
	# no images directory it made.
	[ ! -e "$IMAGES" ] || fail "left: $(ls -A "$IMAGES")"

	run runtime checkpoint --lazy-pages --image-path "$IMAGES" "$CID"
	assert_failure
	assert_output "agentrun: --lazy-pages: not supported by agentrun"
	run runtime checkpoint --manage-cgroups-mode sometimes "$CID"
	assert_failure
	assert_output "agentrun: --manage-cgroups-mode: \`sometimes\` is not soft, full, strict or ignore"
	run runtime checkpoint --image-path "$IMAGES" "$CID-none"
	assert_failure
	assert_output_contains "does not exist"
	runtime delete --force "$CID"

	# Not running: created, not started.
	ctr_create
	run runtime checkpoint --image-path "$IMAGES" "$CID"
	assert_failure
	assert_output "agentrun: checkpoint: container \`$CID\` is created: only a running or paused container can be checkpointed"
	runtime delete --force "$CID"

	# --console-socket for a container that had no terminal.
	update_config '.hooks = {"prestart": [{"path": "/bin/true"}]}'
	run runtime restore --image-path "$IMAGES" --bundle "$BUNDLE" "$CID"
	assert_failure
	assert_output "agentrun: config.json: .hooks: restore: hooks run before the process starts (prestart, createRuntime, createContainer, startContainer) have no moment in a restore"
	update_config 'del(.hooks)'

	# No images: one line, and no state dir, cgroup or mount left.
	run runtime restore --detach --image-path "$TEST_DIR/no-images" --bundle "$BUNDLE" "$CID"
	assert_failure
	assert_output_contains "no-images/descriptors"
	[ "$(wc -l <<<"$output")" -eq 1 ]
	run runtime state "$CID"
	assert_failure
	[ -z "$(cgroups_named "$CID")" ]
	[ -z "$(mounts_under "$TEST_DIR")" ]
}

@test "checkpoint/restore with the systemd driver: the restored processes are in a new scope, with the config's limits" {
	require_criu
	[ -d /run/systemd/system ] && [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || skip "needs systemd and cgroup v2 (tests/vm/)"
	update_config '.linux.cgroupsPath = "system.slice:" + $p + ":" + $id
		| .linux.resources = {"pids": {"limit": 40}}' --arg p "$AR_RUN" --arg id "$CID"
	local scope=$AR_RUN-$CID.scope
	set_args sh -c 'sleep 600 & i=0; while :; do i=$((i + 1)); echo "$i" >>/tmp/n; sleep 0.2; done'
	runtime --systemd-cgroup run --detach --bundle "$BUNDLE" "$CID" > >(cat >>"$TEST_DIR/out") 2>&1
	wait_for_file_content "$BUNDLE/rootfs/tmp/n" '^3$'
	runtime --systemd-cgroup checkpoint --image-path "$IMAGES" "$CID"
	run systemctl is-active "$scope"
	[ "$output" != active ] || fail "the scope outlived the checkpoint"
	local before
	before=$(last_count "$BUNDLE/rootfs/tmp/n")
	runtime --systemd-cgroup restore -d --image-path "$IMAGES" --bundle "$BUNDLE" "$CID" > >(cat >>"$TEST_DIR/out") 2>&1
	wait_for_file_content "$BUNDLE/rootfs/tmp/n" "^$((before + 2))\$"
	run systemctl show -p ActiveState,TasksMax "$scope"
	assert_output_contains "ActiveState=active"
	assert_output_contains "TasksMax=40"
	# Every restored process, the init's children too, is in the scope.
	local init child
	init=$(ctr_pid)
	[ "$(cat "/proc/$init/cgroup")" = "0::/system.slice/$scope" ]
	for child in $(cat "/proc/$init/task/$init/children"); do
		[ "$(cat "/proc/$child/cgroup" 2>/dev/null || echo "0::/system.slice/$scope")" = "0::/system.slice/$scope" ] \
			|| fail "child $child of the init is in $(cat "/proc/$child/cgroup")"
	done
	[ -n "$(cat "/proc/$init/task/$init/children")" ] || fail "the restored init has no children"
	runtime --systemd-cgroup delete --force "$CID"
	run systemctl is-active "$scope"
	[ "$output" != active ]
}
