#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# kill, delete, start and state of containers that are stopped, paused,
# created, or half-created (the state dir exists but the init died), as
# runc 1.1 behaves (checked side by side on this machine). Error checks use
# the words both runtimes print, so RUNTIME=runc passes too.

load helpers

setup() {
	common_setup
	CG_PATH=$(test_cgroups_path)
	update_config '.linux.cgroupsPath = $p' --arg p "$CG_PATH"
	set_args sleep 1000
}

# The init is gone and delete removed every cgroup directory it had.
assert_cgroups_gone() {
	local d
	for d in /sys/fs/cgroup/*"$CG_PATH"; do
		[ ! -e "$d" ] || fail "cgroup left behind: $d"
	done
}

kill_init_hard() {
	local pid
	pid=$(ctr_pid)
	kill -KILL "$pid"
	wait_for_state "$CID" stopped
}

@test "stopped: kill fails (not running), kill --all succeeds, delete without --force works" {
	ctr_run_bg
	kill_init_hard
	run runtime state "$CID"
	assert_success
	[ "$(jq -r .status <<<"$output")" = stopped ] || fail "$output"

	run runtime kill "$CID" KILL
	assert_failure
	assert_output_contains "not running"
	run runtime kill "$CID"
	assert_failure
	assert_output_contains "not running"
	run runtime kill --all "$CID" KILL
	assert_success

	run runtime delete "$CID"
	assert_success
	assert_cgroups_gone
	run runtime state "$CID"
	assert_failure
	assert_output_contains "does not exist"
}

@test "paused: SIGTERM waits for resume, SIGKILL takes effect at once (the runtime thaws)" {
	ctr_run_bg
	local pid
	pid=$(ctr_pid)
	run runtime pause "$CID"
	assert_success
	run runtime kill "$CID" TERM
	assert_success
	sleep 0.2
	assert_equal "$(ctr_status)" paused
	pid_alive "$pid" || fail "init died while frozen"

	run runtime kill "$CID" KILL
	assert_success
	wait_for_state "$CID" stopped
	run runtime delete "$CID"
	assert_success
	assert_cgroups_gone
}

@test "paused: kill --all thaws afterwards, as runc does" {
	ctr_run_bg
	run runtime pause "$CID"
	assert_success
	# sleep as pid 1 ignores SIGTERM: the container survives, thawed.
	run runtime kill --all "$CID" TERM
	assert_success
	wait_for_state "$CID" running
	run runtime pause "$CID"
	assert_success
	run runtime kill --all "$CID" KILL
	assert_success
	wait_for_state "$CID" stopped
}

@test "paused: delete without --force is refused, with --force it thaws and removes" {
	ctr_run_bg
	local pid
	pid=$(ctr_pid)
	run runtime pause "$CID"
	assert_success
	run runtime delete "$CID"
	assert_failure
	assert_output_contains "not stopped: paused"
	assert_equal "$(ctr_status)" paused

	run runtime delete --force "$CID"
	assert_success
	wait_no_pids "$CID" || fail "processes left: $(pids_matching "$CID")"
	! pid_alive "$pid" || fail "init $pid still alive"
	assert_cgroups_gone
}

@test "created: delete without --force works and kills the waiting init" {
	ctr_create
	local pid
	pid=$(ctr_pid)
	assert_equal "$(ctr_status)" created
	run runtime delete "$CID"
	assert_success
	wait_no_pids "$CID" || fail "processes left: $(pids_matching "$CID")"
	! pid_alive "$pid" || fail "init $pid still alive"
	assert_cgroups_gone
}

@test "created: kill (SIGTERM) ends the waiting init; a signal it does not act on leaves it created" {
	ctr_create
	run runtime kill "$CID" USR1
	assert_success
	sleep 0.2
	assert_equal "$(ctr_status)" created
	run runtime kill "$CID"
	assert_success
	wait_for_state "$CID" stopped
	run runtime start "$CID"
	assert_failure
	assert_output_contains "stopped"
	run runtime delete "$CID"
	assert_success
	assert_cgroups_gone
}

@test "created: kill --all ends it too" {
	ctr_create
	run runtime kill --all "$CID" TERM
	assert_success
	wait_for_state "$CID" stopped
	run runtime delete "$CID"
	assert_success
}

@test "half-created (init died before start): state stopped, kill and start fail, delete cleans up" {
	ctr_create
	kill_init_hard
	run runtime state "$CID"
	assert_success
	[ "$(jq -r .status <<<"$output")" = stopped ] || fail "$output"
	run runtime kill "$CID" KILL
	assert_failure
	assert_output_contains "not running"
	run runtime start "$CID"
	assert_failure
	assert_output_contains "stopped"
	run runtime list -q
	assert_output_contains "$CID"

	run runtime delete "$CID"
	assert_success
	assert_cgroups_gone
	[ -z "$(state_entries)" ] || fail "state left: $(state_entries)"
}

@test "missing container: kill and delete fail (does not exist), delete --force succeeds" {
	run runtime kill "$CID-nosuch" KILL
	assert_failure
	assert_output_contains "does not exist"
	run runtime delete "$CID-nosuch"
	assert_failure
	assert_output_contains "does not exist"
	run runtime delete --force "$CID-nosuch"
	assert_success
}
