#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The error words and exit codes that engines, shims and scripts match on,
# as runc 1.1 prints them (containerd's shim treats a kill error holding
# "container not running" as harmless, "does not exist" as not found).
# Every case holds for RUNTIME=/usr/sbin/runc too.

load helpers

setup() {
	common_setup
	set_args sleep 1000
}

@test "runc words: not running, does not exist, already exists" {
	ctr_run_bg
	run runtime_bg run -d --bundle "$BUNDLE" "$CID"
	assert_failure
	run runtime create --bundle "$BUNDLE" "$CID"
	assert_failure
	assert_output_contains "container with given ID already exists"

	kill -KILL "$(ctr_pid)"
	wait_for_state "$CID" stopped
	run runtime kill "$CID" KILL
	assert_failure
	assert_output_contains "container not running"
	run runtime delete "$CID"
	assert_success

	for verb in state kill delete pause resume ps events; do
		run runtime "$verb" "$CID"
		assert_failure
		assert_output_contains "container does not exist"
	done
}

@test "a --log that cannot be opened fails every command, as runc's does; one that can is made" {
	run runtime --log "$TEST_DIR/no/such/dir/log.json" list
	assert_failure 1
	assert_output_contains "$TEST_DIR/no/such/dir/log.json"
	[[ "${output,,}" == *"no such file or directory"* ]] || fail "$output"
	run runtime --log "$TEST_DIR/log.json" list
	assert_success
	[ -f "$TEST_DIR/log.json" ] || fail "no log file made"
}

@test "runc words: start of a running and of a stopped container" {
	ctr_run_bg
	run runtime start "$CID"
	assert_failure
	assert_output_contains "cannot start an already running container"
	kill -KILL "$(ctr_pid)"
	wait_for_state "$CID" stopped
	run runtime start "$CID"
	assert_failure
	assert_output_contains "cannot start a container that has stopped"
}

@test "runc words: pause and resume in the wrong state, delete of a running container" {
	ctr_run_bg
	run runtime resume "$CID"
	assert_failure
	assert_output_contains "container not paused"
	run runtime delete "$CID"
	assert_failure
	assert_output_contains "cannot delete container $CID that is not stopped: running"
	kill -KILL "$(ctr_pid)"
	wait_for_state "$CID" stopped
	run runtime pause "$CID"
	assert_failure
	assert_output_contains "container not running"
}

@test "kill 0 and numeric signals: a liveness check that changes nothing" {
	ctr_run_bg
	run runtime kill "$CID" 0
	assert_success
	[ "$(ctr_status)" = running ] || fail "kill 0 changed the state: $(ctr_status)"
	run runtime kill "$CID" 9
	assert_success
	wait_for_state "$CID" stopped
	run runtime kill "$CID" 0
	assert_failure
	assert_output_contains "container not running"
}

@test "exec: a process that cannot start exits 255, the process's own status passes through" {
	ctr_run_bg
	run runtime exec "$CID" /no/such/binary
	[ "$status" -eq 255 ] || fail "missing binary: status $status: $output"
	run runtime exec --pid-file "$TEST_DIR/no/such/dir/pid" "$CID" true
	[ "$status" -eq 255 ] || fail "bad --pid-file dir: status $status: $output"
	run runtime exec "$CID" sh -c 'exit 3'
	[ "$status" -eq 3 ] || fail "exit 3 came back as $status"
	run runtime exec "$CID" sh -c 'exit 1'
	[ "$status" -eq 1 ] || fail "exit 1 came back as $status"
	run runtime exec nosuch-"$CID" true
	[ "$status" -eq 255 ] || fail "missing container: status $status"
	assert_output_contains "container does not exist"
}

@test "exec into a paused container: refused, or with --ignore-paused it runs once resumed" {
	ctr_run_bg
	run runtime pause "$CID"
	assert_success
	run runtime exec "$CID" true
	[ "$status" -eq 255 ] || fail "status $status: $output"
	assert_output_contains "cannot exec in a paused container"

	# The process joins the frozen cgroup and starts when it thaws.
	(sleep 2 && runtime resume "$CID") &
	local resumer=$!
	run runtime exec --ignore-paused "$CID" echo ran
	wait "$resumer"
	assert_success
	assert_output_contains "ran"
}

@test "a namespace type given twice is refused, with or without a path (runc 1.1.5 refuses it too)" {
	update_config '.linux.namespaces += [{"type": "pid"}]'
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_failure
	assert_output_contains "pid"
	update_config '.linux.namespaces[-1].path = "/proc/1/ns/pid"'
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_failure
	assert_output_contains "pid"
	[ -z "$(state_entries)" ] || fail "state left"
}
