#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# exec --cgroup [<controller>:]<path>: the exec'd process joins an existing
# sub-cgroup of the container's cgroup (runc's flag). The sub-cgroups are
# made by the test inside the container's own cgroup; delete removes them
# with the container's, and teardown finds any that are left.

load helpers

setup() {
	common_setup
	CG_PATH=$(test_cgroups_path)
	update_config '.linux.cgroupsPath = $p' --arg p "$CG_PATH"
	set_args sleep 1000
	ctr_run_bg
}

@test "exec without --cgroup: the process is in every cgroup of the init, born in the v2 one" {
	exec_bg
	assert_equal "$(cgroups_of "$EXEC_PID")" "$(cgroups_of "$(ctr_pid)")"
	run cgroups_of "$EXEC_PID"
	assert_output_contains ":$CG_PATH"
	command -v strace >/dev/null || return 0
	# Placed without a move by pid (the kernel's threadgroup lock): born
	# in the v2 directory, writing "0" (itself) into each v1 `tasks`.
	run strace -f -o "$TEST_DIR/trace" -e trace=clone3,openat,write "$RUNTIME" --root "$ROOT" exec "$CID" true
	assert_success
	! grep -q 'openat(.*/cgroup.procs", O_WRONLY' "$TEST_DIR/trace" || fail "moved by pid: $(grep 'cgroup.procs' "$TEST_DIR/trace")"
	if is_cgroup_v2_only; then
		grep -q 'clone3(.*CLONE_INTO_CGROUP' "$TEST_DIR/trace" || fail "not born in its cgroup"
	else
		grep -q "write([0-9]*, \"0\", 1) *= 1" "$TEST_DIR/trace" || fail "did not move itself"
	fi
}

# Controller-specific entries name v1 hierarchies (cgroups_v2.bats has
# the unified one's cases).
needs_v1_pids() {
	[ -d /sys/fs/cgroup/pids ] || skip "needs the v1 pids controller (cgroup v1 or hybrid)"
}

# The host-side cgroup lines of PID: "controllers:path", one per line.
cgroups_of() {
	cut -d: -f2- "/proc/$1/cgroup"
}

# exec_bg ARG...: exec --detach sleep with ARGs; $EXEC_PID is its pid.
exec_bg() {
	rm -f "$TEST_DIR/exec.pid"
	runtime_bg exec --detach --pid-file "$TEST_DIR/exec.pid" "$@" "$CID" sleep 1000 || return 1
	EXEC_PID=$(cat "$TEST_DIR/exec.pid")
	track_pid "$EXEC_PID"
}

# make_sub NAME: NAME inside every cgroup of the container's init (v1
# hierarchies and the unified one); a new v1 cpuset starts empty and takes
# its cpus and mems from the container's.
make_sub() {
	local init line ctrls path dir
	init=$(ctr_pid)
	while IFS= read -r line; do
		ctrls=${line#*:}; ctrls=${ctrls%%:*}
		path=${line#*:*:}
		case $ctrls in
		"") dir=/sys/fs/cgroup/unified$path
			is_cgroup_v2_only && dir=/sys/fs/cgroup$path ;;
		name=systemd) dir=/sys/fs/cgroup/systemd$path ;;
		*) dir=/sys/fs/cgroup/${ctrls%%,*}$path ;;
		esac
		[ -d "$dir" ] || continue
		mkdir -p "$dir/$1"
		# (v2: the new child has no cpuset files unless the container's
		# cgroup passes the controller down, which it does not.)
		if [ -e "$dir/$1/cpuset.cpus" ]; then
			cat "$dir/cpuset.cpus" >"$dir/$1/cpuset.cpus"
			cat "$dir/cpuset.mems" >"$dir/$1/cpuset.mems"
		fi
	done <"/proc/$init/cgroup"
}

@test "exec --cgroup pids:sub: only the pids cgroup changes" {
	needs_v1_pids
	mkdir "/sys/fs/cgroup/pids$CG_PATH/sub"
	exec_bg --cgroup pids:sub
	run cgroups_of "$EXEC_PID"
	assert_output_contains "pids:$CG_PATH/sub"
	assert_output_contains "memory:$CG_PATH"
	refute_output_contains "memory:$CG_PATH/sub"
	grep -qx "$EXEC_PID" "/sys/fs/cgroup/pids$CG_PATH/sub/cgroup.procs" \
		|| fail "not in the sub-cgroup's cgroup.procs"
	# ps lists processes in sub-cgroups too.
	run runtime ps "$CID"
	assert_success
	assert_output_contains "$EXEC_PID"
	# delete removes the sub-cgroup with the container's.
	run runtime delete --force "$CID"
	assert_success
	[ ! -e "/sys/fs/cgroup/pids$CG_PATH" ] || fail "pids cgroup left behind"
}

@test "exec --cgroup sub: every cgroup of the process is the sub-cgroup" {
	make_sub sub
	exec_bg --cgroup sub
	run cgroups_of "$EXEC_PID"
	local line ctrl dir
	for line in "${lines[@]}"; do
		# A hierarchy that is mounted nowhere (a v1 controller left dormant
		# after an unmount) has no cgroup to move into: only root shows.
		ctrl=${line%%:*}
		dir=/sys/fs/cgroup/${ctrl#name=}
		[ -n "$ctrl" ] || dir=/sys/fs/cgroup/unified
		[ -n "$ctrl" ] || ! is_cgroup_v2_only || dir=/sys/fs/cgroup
		mountpoint -q "$dir" || continue
		case $line in
		*"$CG_PATH/sub") ;;
		*) fail "not in the sub-cgroup: $line" ;;
		esac
	done
	[ "${#lines[@]}" -ge 1 ] || fail "no cgroups: $output"
}

@test "exec --cgroup: a controller-specific entry overrides the plain one, repeatable" {
	needs_v1_pids
	make_sub a
	mkdir "/sys/fs/cgroup/pids$CG_PATH/b"
	exec_bg --cgroup pids:b --cgroup a
	run cgroups_of "$EXEC_PID"
	assert_output_contains "pids:$CG_PATH/b"
	assert_output_contains "memory:$CG_PATH/a"
}

@test "exec --cgroup: a missing sub-cgroup, .., an unknown controller are refused, naming them" {
	needs_v1_pids
	run runtime exec --cgroup pids:nosuch "$CID" true
	assert_failure
	assert_output_contains 'sub-cgroup "nosuch" does not exist'
	assert_output_contains "/sys/fs/cgroup/pids$CG_PATH/nosuch"

	# Plain: it must exist in every hierarchy, not only in pids.
	mkdir "/sys/fs/cgroup/pids$CG_PATH/onlypids"
	run runtime exec --cgroup onlypids "$CID" true
	assert_failure
	assert_output_contains 'sub-cgroup "onlypids" does not exist'

	run runtime exec --cgroup ../.. "$CID" true
	assert_failure
	assert_output_contains '".." is not allowed'
	run runtime exec --cgroup pids:onlypids/../.. "$CID" true
	assert_failure
	assert_output_contains '".." is not allowed'

	run runtime exec --cgroup nosuchcontroller:onlypids "$CID" true
	assert_failure
	assert_output_contains "no cgroup with the nosuchcontroller controller"

	# Nothing ran: the container has only its init.
	run runtime ps "$CID"
	assert_success
	[ "${#lines[@]}" -eq 2 ] || fail "extra processes: $output"
}

@test "exec --cgroup: the exit status passes through from a sub-cgroup" {
	needs_v1_pids
	mkdir "/sys/fs/cgroup/pids$CG_PATH/sub"
	run runtime exec --cgroup pids:sub "$CID" sh -c 'grep pids: /proc/self/cgroup; exit 7'
	[ "$status" -eq 7 ] || fail "status $status: $output"
	assert_output_contains "/sub"
}
