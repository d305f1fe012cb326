#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The create/start/state/kill/delete model and `run`, as runc implements it.

load helpers

# The container's processes as seen from the host, found through the
# AGENTRUN_TEST_ID the test bundles put in every container's environment.
host_pids_running() {
	local want=$1 p cmd
	for p in $(pids_matching "$CID"); do
		cmd=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) || continue
		[ "$cmd" = "$want " ] && echo "$p"
	done
	return 0
}

# wait_for_lines FILE N: until FILE has N lines.
wait_for_lines() {
	local i
	for i in $(seq 1 100); do
		[ "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge "$2" ] && return 0
		sleep 0.05
	done
	fail "$1 has fewer than $2 lines"
}

@test "create leaves the process waiting, start releases it" {
	set_args sh -c 'touch /started; sleep 1000'
	run ctr_create
	assert_success
	run ctr_status
	assert_output created
	# Created means set up but not running the user's program yet.
	[ ! -e "$BUNDLE/rootfs/started" ] || fail "process ran before start"

	run runtime start "$CID"
	assert_success
	run ctr_status
	assert_output running
	wait_for_file "$BUNDLE/rootfs/started"
}

@test "state reports id, pid, bundle, status and ociVersion" {
	set_args sleep 1000
	update_config '.annotations = {"org.example.k": "v1"}'
	ctr_create
	run runtime state "$CID"
	assert_success
	local pid
	pid=$(jq -r .pid <<<"$output")
	assert_equal "$(jq -r .id <<<"$output")" "$CID"
	assert_equal "$(jq -r .status <<<"$output")" created
	assert_equal "$(jq -r .bundle <<<"$output")" "$BUNDLE"
	assert_equal "$(jq -r '.annotations["org.example.k"]' <<<"$output")" v1
	jq -e '.ociVersion | type == "string" and length > 0' <<<"$output" >/dev/null \
		|| fail "no ociVersion"
	[ "$pid" -gt 0 ] && pid_alive "$pid" || fail "pid $pid is not a live process"
}

@test "full lifecycle: create, start, kill, stopped, delete, state fails" {
	set_args sleep 1000
	ctr_create
	local pid
	pid=$(ctr_pid)
	runtime start "$CID"
	wait_for_state "$CID" running
	assert_equal "$(ctr_pid)" "$pid"

	run runtime kill "$CID" KILL
	assert_success
	wait_for_state "$CID" stopped

	run runtime delete "$CID"
	assert_success
	run runtime state "$CID"
	assert_failure
	[ ! -d "$ROOT/$CID" ] || fail "state dir $ROOT/$CID survived delete"
	! pid_alive "$pid" || fail "process $pid survived delete"
}

@test "a process that exits on its own leaves the container stopped" {
	set_args true
	ctr_create
	runtime start "$CID"
	wait_for_state "$CID" stopped
	run runtime delete "$CID"
	assert_success
}

@test "run exits with the status of the container process" {
	run ctr_run sh -c 'exit 42'
	assert_failure 42
	run ctr_run true
	assert_success
	# run deletes the container unless --keep.
	run runtime state "$CID"
	assert_failure
}

@test "run forwards the process's stdout and stderr" {
	run --separate-stderr ctr_run sh -c 'echo to-out; echo to-err >&2'
	assert_success
	assert_output to-out
	assert_equal "$stderr" to-err
}

@test "run of a process killed by a signal exits 128+signal" {
	set_args sleep 1000
	# run stays in the foreground; kill its container from the side.
	runtime run --bundle "$BUNDLE" "$CID" >"$TEST_DIR/run.out" 2>&1 &
	local runner=$!
	track_pid "$runner"
	wait_for_state "$CID" running
	runtime kill "$CID" KILL
	local rc=0
	wait "$runner" || rc=$?
	assert_equal "$rc" 137
}

@test "run --detach returns while the container keeps running" {
	set_args sleep 1000
	run ctr_run_bg
	assert_success
	run ctr_status
	assert_output running
	runtime kill "$CID" KILL
	wait_for_state "$CID" stopped
	runtime delete "$CID"
}

@test "run --keep keeps the stopped container until delete" {
	set_args sh -c 'exit 3'
	run runtime run --keep --bundle "$BUNDLE" "$CID"
	assert_failure 3
	run ctr_status
	assert_output stopped
	run runtime delete "$CID"
	assert_success
	run runtime state "$CID"
	assert_failure
}

@test "create --pid-file writes the container's pid" {
	set_args sleep 1000
	run runtime_bg create --pid-file "$TEST_DIR/ctr.pid" --bundle "$BUNDLE" "$CID"
	assert_success
	[ -s "$TEST_DIR/ctr.pid" ] || fail "pid file missing or empty"
	local pid
	pid=$(cat "$TEST_DIR/ctr.pid")
	assert_equal "$pid" "$(ctr_pid)"
	pid_alive "$pid" || fail "pid $pid is not running"
	# The pid is the container's init: in its own pid namespace.
	[ "$(readlink "/proc/$pid/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] \
		|| fail "pid $pid is not in a new pid namespace"
}

@test "run --pid-file writes the pid too" {
	set_args sleep 1000
	run runtime_bg run -d --pid-file "$TEST_DIR/run.pid" --bundle "$BUNDLE" "$CID"
	assert_success
	assert_equal "$(cat "$TEST_DIR/run.pid")" "$(ctr_pid)"
}

@test "kill accepts signal names and numbers" {
	# sh as pid 1 only dies of signals it handles, so trap and record them.
	set_args sh -c 'for s in TERM USR1 USR2 HUP; do trap "echo $s >> /sigs" $s; done
		touch /ready; while :; do sleep 0.05; done'
	ctr_run_bg
	wait_for_file "$BUNDLE/rootfs/ready"
	# One at a time: ash runs pending traps in signal-number order.
	local sig n=0
	for sig in TERM SIGUSR1 12 1; do
		run runtime kill "$CID" "$sig"
		assert_success
		n=$((n + 1))
		wait_for_lines "$BUNDLE/rootfs/sigs" "$n"
	done
	assert_equal "$(cat "$BUNDLE/rootfs/sigs")" $'TERM\nUSR1\nUSR2\nHUP'
	run ctr_status
	assert_output running
}

@test "kill with no signal sends SIGTERM" {
	set_args sh -c 'trap "echo TERM > /sig; exit 0" TERM; touch /ready; while :; do sleep 0.05; done'
	ctr_run_bg
	wait_for_file "$BUNDLE/rootfs/ready"
	run runtime kill "$CID"
	assert_success
	wait_for_state "$CID" stopped
	assert_equal "$(cat "$BUNDLE/rootfs/sig")" TERM
}

@test "kill with KILL, SIGKILL and 9 stops the container" {
	local sig i=0
	for sig in KILL SIGKILL 9; do
		i=$((i + 1))
		set_args sleep 1000
		ctr_run_bg "$CID-$i"
		run runtime kill "$CID-$i" "$sig"
		assert_success
		wait_for_state "$CID-$i" stopped
		runtime delete "$CID-$i"
	done
}

@test "kill rejects an unknown signal" {
	set_args sleep 1000
	ctr_run_bg
	run runtime kill "$CID" NOTASIGNAL
	assert_failure
	run runtime kill "$CID" 99999
	assert_failure
	run ctr_status
	assert_output running
}

@test "kill --all signals every process in the container" {
	# init handles TERM and lives on; its child has the default action.
	set_args sh -c 'trap "touch /init-got-term" TERM
		sleep 1000 &
		touch /ready; while :; do sleep 0.05; done'
	ctr_run_bg
	wait_for_file "$BUNDLE/rootfs/ready"
	[ -n "$(host_pids_running 'sleep 1000')" ] || fail "child not found"

	run runtime kill --all "$CID" TERM
	assert_success
	wait_for_file "$BUNDLE/rootfs/init-got-term"
	local i
	for i in $(seq 1 100); do
		[ -z "$(host_pids_running 'sleep 1000')" ] && break
		sleep 0.05
	done
	[ -z "$(host_pids_running 'sleep 1000')" ] || fail "kill --all missed the child"
	run ctr_status
	assert_output running
}

@test "plain kill signals only init" {
	set_args sh -c 'trap "touch /init-got-term" TERM
		sleep 1000 &
		touch /ready; while :; do sleep 0.05; done'
	ctr_run_bg
	wait_for_file "$BUNDLE/rootfs/ready"
	runtime kill "$CID" TERM
	wait_for_file "$BUNDLE/rootfs/init-got-term"
	sleep 0.2
	[ -n "$(host_pids_running 'sleep 1000')" ] || fail "the child was signalled too"
}

@test "delete refuses a running container, delete --force kills it" {
	set_args sleep 1000
	ctr_run_bg
	local pid
	pid=$(ctr_pid)
	run runtime delete "$CID"
	assert_failure
	run ctr_status
	assert_output running

	run runtime delete --force "$CID"
	assert_success
	run runtime state "$CID"
	assert_failure
	local i
	for i in $(seq 1 100); do
		pid_alive "$pid" || break
		sleep 0.02
	done
	! pid_alive "$pid" || fail "init $pid still alive after delete --force"
}

@test "delete --force of a created container" {
	set_args sleep 1000
	ctr_create
	run runtime delete -f "$CID"
	assert_success
	run runtime state "$CID"
	assert_failure
}

@test "delete of an unknown container fails unless --force" {
	run runtime delete "$CID-nosuch"
	assert_failure
	# runc: --force on a missing container is not an error.
	run runtime delete --force "$CID-nosuch"
	assert_success
}

@test "start of a running container fails" {
	set_args sleep 1000
	ctr_create
	runtime start "$CID"
	wait_for_state "$CID" running
	run runtime start "$CID"
	assert_failure
	run ctr_status
	assert_output running
}

@test "start of a stopped container fails" {
	set_args true
	ctr_create
	runtime start "$CID"
	wait_for_state "$CID" stopped
	run runtime start "$CID"
	assert_failure
}

@test "start, state and kill of an unknown container fail" {
	run runtime start "$CID-nosuch"
	assert_failure
	run runtime state "$CID-nosuch"
	assert_failure
	run runtime kill "$CID-nosuch" KILL
	assert_failure
}

@test "container ids with path separators or dot-dot are rejected" {
	local bad
	for bad in ../x a/b .. . /abs "a/../b"; do
		run runtime_bg create --bundle "$BUNDLE" "$bad"
		assert_failure
	done
	run runtime_bg run --bundle "$BUNDLE" "../$CID-escape"
	assert_failure
	[ ! -e "$TEST_DIR/$CID-escape" ] || fail "state written outside --root"
	[ -z "$(state_entries)" ] || fail "state left in $ROOT: $(state_entries)"
}

@test "ids starting with a dot are refused: the state root keeps agentrun's own files there" {
	local id
	for id in .seccomp-cache .sandbox .audit-heads .x; do
		run runtime_bg create --bundle "$BUNDLE" "$id"
		assert_failure
		assert_output_contains "invalid container id \`$id\`: ids starting with '.' are kept"
		[ "${#lines[@]}" = 1 ] || fail "not one line: $output"
	done
	[ ! -e "$ROOT/.x" ] || fail "state made for .x"
	[ -z "$(state_entries)" ] || fail "state left in $ROOT: $(state_entries)"
}

@test "an empty container id is rejected" {
	run runtime_bg create --bundle "$BUNDLE" ""
	assert_failure
}

@test "a duplicate container id is rejected" {
	set_args sleep 1000
	ctr_create
	local pid
	pid=$(ctr_pid)
	run runtime_bg create --bundle "$BUNDLE" "$CID"
	assert_failure
	# The first container is untouched.
	run ctr_status
	assert_output created
	assert_equal "$(ctr_pid)" "$pid"
}

@test "create without --bundle uses the current directory" {
	set_args sleep 1000
	run bash -c 'cd "$1" && shift && "$@" >/dev/null 2>&1' _ "$BUNDLE" \
		timeout 30 "${AR_AS_USER[@]}" "$RUNTIME" --root "$ROOT" create "$CID"
	assert_success
	run runtime state "$CID"
	assert_equal "$(jq -r .bundle <<<"$output")" "$BUNDLE"
}

@test "a relative --bundle is recorded as an absolute path" {
	set_args sleep 1000
	run bash -c 'cd "$1" && shift && "$@" >/dev/null 2>&1' _ "$TEST_DIR" \
		timeout 30 "${AR_AS_USER[@]}" "$RUNTIME" --root "$ROOT" create --bundle bundle "$CID"
	assert_success
	run runtime state "$CID"
	assert_equal "$(jq -r .bundle <<<"$output")" "$BUNDLE"
}

@test "two containers from one bundle run side by side" {
	set_args sleep 1000
	ctr_run_bg "$CID-a"
	ctr_run_bg "$CID-b"
	run runtime list -q
	assert_output_contains "$CID-a"
	assert_output_contains "$CID-b"
	[ "$(ctr_pid "$CID-a")" != "$(ctr_pid "$CID-b")" ] || fail "same pid"
}
