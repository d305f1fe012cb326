#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The systemd cgroup driver (--systemd-cgroup): the container's cgroup is a
# transient scope that systemd makes, in the slice cgroupsPath names
# ("slice:prefix:name"). On a host with systemd and cgroup v2 (the test VM,
# tests/vm/) every verb is exercised; elsewhere (the development machine:
# no systemd) the flag must fail with one line that says what is missing
# and leave nothing behind.

load helpers

has_systemd() {
	[ -d /run/systemd/system ] && [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]
}

# A scope of this test's own: the slice is the default one, the prefix
# names the run so leftovers are attributable.
use_scope() {
	update_config '.linux.cgroupsPath = "system.slice:" + $p + ":" + $id' --arg p "$AR_RUN" --arg id "$CID"
	SCOPE=$AR_RUN-$CID.scope
}

sd() {
	runtime --systemd-cgroup "$@"
}

@test "systemd driver: without systemd, one line names what is missing and nothing is left" {
	has_systemd && skip "this host has systemd and cgroup v2"
	use_scope
	set_args true
	run --separate-stderr sd run --bundle "$BUNDLE" "$CID"
	assert_failure
	[[ "$stderr" == *"--systemd-cgroup: systemd is not running on this host"* ]] || fail "wrong error: $stderr"
	[ "$(wc -l <<<"$stderr")" -eq 1 ] || fail "more than one line"
	[ -z "$(state_entries)" ] || fail "state left: $(state_entries)"
}

@test "systemd driver: a bad cgroupsPath is one line with the JSON path" {
	has_systemd || skip "needs systemd and cgroup v2 (tests/vm/)"
	set_args true
	update_config '.linux.cgroupsPath = "not-a-slice:x:y"'
	run --separate-stderr sd run --bundle "$BUNDLE" "$CID"
	assert_failure
	[[ "$stderr" == *'.linux.cgroupsPath: "not-a-slice" is not a slice name'* ]] || fail "wrong error: $stderr"
	update_config '.linux.cgroupsPath = "/plain/path"'
	run --separate-stderr sd run --bundle "$BUNDLE" "$CID"
	assert_failure
	[[ "$stderr" == *'wants "slice:prefix:name"'* ]] || fail "wrong error: $stderr"
}

@test "systemd driver: the container runs in a transient scope with its limits, and delete stops it" {
	has_systemd || skip "needs systemd and cgroup v2 (tests/vm/)"
	use_scope
	update_config '.linux.resources = {"memory": {"limit": 67108864}, "pids": {"limit": 50}, "cpu": {"quota": 50000, "period": 100000, "shares": 512}}
		| .process.args = ["sleep", "100"]'
	runtime_bg --systemd-cgroup run --detach --bundle "$BUNDLE" "$CID"
	run cat "/proc/$(ctr_pid)/cgroup"
	[ "$output" = "0::/system.slice/$SCOPE" ] || fail "not in the scope: $output"
	run systemctl show -p ActiveState,Delegate,MemoryMax,TasksMax,CPUQuotaPerSecUSec "$SCOPE"
	assert_output_contains "ActiveState=active"
	assert_output_contains "Delegate=yes"
	assert_output_contains "MemoryMax=67108864"
	assert_output_contains "TasksMax=50"
	assert_output_contains "CPUQuotaPerSecUSec=500ms"
	run cat "/sys/fs/cgroup/system.slice/$SCOPE/memory.max" "/sys/fs/cgroup/system.slice/$SCOPE/pids.max" \
		"/sys/fs/cgroup/system.slice/$SCOPE/cpu.max"
	[ "$output" = "$(printf '67108864\n50\n50000 100000')" ] || fail "limits not in the cgroup"
	# exec joins the scope (the root of the container's cgroup namespace),
	# ps and pause see it.
	run runtime exec "$CID" cat /proc/self/cgroup
	[ "$output" = "0::/" ] || fail "exec not in the scope: $output"
	run runtime ps "$CID"
	assert_output_contains sleep
	runtime pause "$CID"
	[ "$(cat "/sys/fs/cgroup/system.slice/$SCOPE/cgroup.freeze")" = 1 ] || fail "not frozen"
	runtime resume "$CID"
	run runtime update --memory 134217728 "$CID"
	assert_success
	[ "$(cat "/sys/fs/cgroup/system.slice/$SCOPE/memory.max")" = 134217728 ] || fail "update"
	# The unit says so too: systemd would otherwise restore the old limit.
	[ "$(systemctl show -p MemoryMax --value "$SCOPE")" = 134217728 ] || fail "unit's MemoryMax not updated"
	runtime kill --all "$CID" KILL
	wait_for_state "$CID" stopped
	runtime delete "$CID"
	run systemctl list-units --all --no-legend "$SCOPE"
	[ -z "$output" ] || fail "unit left: $output"
	[ ! -d "/sys/fs/cgroup/system.slice/$SCOPE" ] || fail "cgroup left"
}

@test "systemd driver: delete --force of a running container leaves no unit; the same name starts again" {
	has_systemd || skip "needs systemd and cgroup v2 (tests/vm/)"
	use_scope
	set_args sleep 100
	runtime_bg --systemd-cgroup run --detach --bundle "$BUNDLE" "$CID"
	runtime delete --force "$CID"
	run systemctl list-units --all --no-legend "$SCOPE"
	[ -z "$output" ] || fail "unit left: $output"
	runtime_bg --systemd-cgroup run --detach --bundle "$BUNDLE" "$CID"
	runtime delete --force "$CID"
}
