#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Resource limits at create on this host's cgroup layout: v1 controllers
# under /sys/fs/cgroup/<controller> plus a cgroup2 mount holding only
# hugetlb (runc copes; crun refuses with "hybrid mode not supported").
# Every cgroup a test makes is under /agentrun-test-<run>/ and is checked
# to be gone after delete.

load helpers

setup() {
	common_setup
	[ -d "$AR_CGROUP_V1/memory" ] && [ -d "$AR_CGROUP_V1/pids" ] \
		|| skip "needs the v1 memory and pids controllers"
	CG_PATH=$(test_cgroups_path)
	update_config '.linux.cgroupsPath = $p' --arg p "$CG_PATH"
}

knob() {
	cat "$(cgroup_v1_dir "$1" "$CG_PATH")/$2"
}

start_sleeper() {
	set_args sleep 1000
	ctr_run_bg
	wait_for_state "$CID" running
}

@test "the container's processes are in cgroupsPath in every controller" {
	start_sleeper
	local pid c
	pid=$(ctr_pid)
	for c in memory pids cpu cpuset devices freezer blkio; do
		[ -d "$AR_CGROUP_V1/$c" ] || continue
		grep -qx "$pid" "$(cgroup_v1_dir "$c" "$CG_PATH")/cgroup.procs" \
			|| fail "$pid not in $c:$CG_PATH"
		grep -q ":$c:$CG_PATH\$" "/proc/$pid/cgroup" \
			|| grep -q "[:,]$c[:,].*:$CG_PATH\$" "/proc/$pid/cgroup" \
			|| fail "/proc/$pid/cgroup: $(cat "/proc/$pid/cgroup")"
	done
}

@test "memory limit and reservation reach memory.limit_in_bytes" {
	update_config '.linux.resources.memory = {"limit": 67108864, "reservation": 33554432}'
	start_sleeper
	assert_equal "$(knob memory memory.limit_in_bytes)" 67108864
	assert_equal "$(knob memory memory.soft_limit_in_bytes)" 33554432
}

@test "update: --memory -1 under a swap limit lifts both, as runc; --cpu-share is runc's --cpu-shares" {
	[ -f "$(cgroup_v1_dir memory /)/memory.memsw.limit_in_bytes" ] || skip "no swap accounting (memory.memsw)"
	update_config '.linux.resources.memory = {"limit": 67108864, "swap": 134217728}'
	start_sleeper
	run runtime update --memory -1 "$CID"
	assert_success
	assert_equal "$(knob memory memory.limit_in_bytes)" "$(cat "$(cgroup_v1_dir memory /)/memory.limit_in_bytes")"
	assert_equal "$(knob memory memory.memsw.limit_in_bytes)" "$(cat "$(cgroup_v1_dir memory /)/memory.memsw.limit_in_bytes")"
	run runtime update --cpu-share 256 "$CID"
	assert_success
	assert_equal "$(knob cpu cpu.shares)" 256
}

@test "the memory limit is enforced" {
	# tmpfs pages are charged to the cgroup: 64 MiB into a 16 MiB limit.
	update_config '.linux.resources.memory = {"limit": 16777216, "swap": 16777216}'
	set_args sh -c 'echo started; dd if=/dev/zero of=/dev/shm/fill bs=1M count=64 2>/dev/null; echo dd-status=$?'
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_output_contains started
	# dd is OOM-killed (sh reports 137), or sh itself is (run exits 137).
	[[ $output =~ dd-status=137 ]] || [ "$status" -eq 137 ] || fail "not OOM-killed"
	refute_output_contains "dd-status=0"
}

@test "pids limit reaches pids.max" {
	update_config '.linux.resources.pids = {"limit": 8}'
	start_sleeper
	assert_equal "$(knob pids pids.max)" 8
}

@test "pids limit makes fork fail inside" {
	update_config '.linux.resources.pids = {"limit": 5}'
	run ctr_run sh -c 'i=0; while [ $i -lt 10 ]; do sleep 2 & i=$((i+1)); done; wait'
	assert_output_contains "fork"
	# Without the limit the same loop is fine.
	update_config 'del(.linux.resources.pids)'
	run ctr_run sh -c 'i=0; while [ $i -lt 10 ]; do sleep 0.2 & i=$((i+1)); done; wait'
	assert_success
	refute_output_contains "fork"
}

@test "cpu shares, quota and period reach the cpu controller" {
	update_config '.linux.resources.cpu = {"shares": 512, "quota": 50000, "period": 100000}'
	start_sleeper
	assert_equal "$(knob cpu cpu.shares)" 512
	assert_equal "$(knob cpu cpu.cfs_quota_us)" 50000
	assert_equal "$(knob cpu cpu.cfs_period_us)" 100000
}

@test "cpuset cpus and mems apply, inside too" {
	update_config '.linux.resources.cpu = {"cpus": "0", "mems": "0"}'
	set_args sh -c 'grep Cpus_allowed_list /proc/self/status | tr -s "\t " " "; sleep 1000'
	ctr_run_bg
	wait_for_state "$CID" running
	assert_equal "$(knob cpuset cpuset.cpus)" 0
	assert_equal "$(knob cpuset cpuset.mems)" 0
	local pid
	pid=$(ctr_pid)
	assert_equal "$(awk '/Cpus_allowed_list/ {print $2}' "/proc/$pid/status")" 0
}

@test "delete removes the container's cgroups" {
	update_config '.linux.resources.memory = {"limit": 67108864} | .linux.resources.pids = {"limit": 100}'
	start_sleeper
	[ -d "$(cgroup_v1_dir memory "$CG_PATH")" ] || fail "no memory cgroup while running"
	runtime delete --force "$CID"
	local c
	for c in memory pids cpu cpuset devices freezer blkio cpuacct; do
		[ ! -d "$(cgroup_v1_dir "$c" "$CG_PATH")" ] || fail "$c:$CG_PATH left after delete"
	done
	[ -z "$(cgroups_named "$CID")" ] || fail "left: $(cgroups_named "$CID")"
}

@test "a stopped container's cgroup goes at delete too" {
	update_config '.linux.resources.pids = {"limit": 100}'
	set_args true
	ctr_create
	runtime start "$CID"
	wait_for_state "$CID" stopped
	runtime delete "$CID"
	[ -z "$(cgroups_named "$CID")" ] || fail "left: $(cgroups_named "$CID")"
}

@test "without a pid namespace a process left in the cgroups after the init is killed at delete, and the cgroups go" {
	# The removal tries each leaf's rmdir first; a leaf that still holds a
	# process must still be searched and its processes killed.
	update_config '.linux.namespaces |= map(select(.type != "pid")) | .linux.resources.pids = {"limit": 100}'
	set_args sh -c 'sleep 7391 </dev/null >/dev/null 2>&1 & echo $! > /left.pid'
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_success
	local left
	left=$(cat "$BUNDLE/rootfs/left.pid")
	[ -z "$(cgroups_named "$CID")" ] || fail "left: $(cgroups_named "$CID")"
	local i
	for i in $(seq 50); do
		[ -e "/proc/$left" ] || break
		sleep 0.1
	done
	[ ! -e "/proc/$left" ] || fail "the process left behind ($left) is still running"
}

@test "containers in sibling cgroups do not disturb each other" {
	update_config '.linux.resources.pids = {"limit": 50}'
	set_args sleep 1000
	update_config '.linux.cgroupsPath = $p' --arg p "$(test_cgroups_path "$CID-a")"
	ctr_run_bg "$CID-a"
	update_config '.linux.cgroupsPath = $p' --arg p "$(test_cgroups_path "$CID-b")"
	ctr_run_bg "$CID-b"
	runtime delete --force "$CID-a"
	[ ! -d "$(cgroup_v1_dir pids "$(test_cgroups_path "$CID-a")")" ] || fail "a's cgroup left"
	[ -d "$(cgroup_v1_dir pids "$(test_cgroups_path "$CID-b")")" ] || fail "b's cgroup removed"
	run runtime state "$CID-b"
	assert_success
}

@test "an invalid limit fails create and leaves no cgroup" {
	update_config '.linux.resources.cpu = {"cpus": "99999"}'
	set_args true
	run runtime_bg create --bundle "$BUNDLE" "$CID"
	assert_failure
	[ -z "$(cgroups_named "$CID")" ] || fail "left: $(cgroups_named "$CID")"
}

@test "run in an existing frozen cgroup is refused at once, not left hanging in the freezer" {
	[ -d "$AR_CGROUP_V1/freezer" ] || skip "needs the v1 freezer"
	local dir
	dir=$(cgroup_v1_dir freezer "$CG_PATH")
	mkdir -p "$dir"
	echo FROZEN >"$dir/freezer.state"
	set_args true
	run runtime run --bundle "$BUNDLE" "$CID"
	echo THAWED >"$dir/freezer.state"
	assert_failure 125
	assert_output_contains "cgroup \`$dir\` is frozen"
	rmdir "$dir"
	[ -z "$(cgroups_named "$CID")" ] || fail "cgroups left: $(cgroups_named "$CID")"
	[ -z "$(state_entries)" ] || fail "state left"
}

@test "the init is cloned into its cgroup v2 directory and moves itself into the v1 ones" {
	command -v strace >/dev/null || skip "strace is not installed"
	local unified=/sys/fs/cgroup/unified init
	[ "$(stat -f -c %T "$unified" 2>/dev/null)" = cgroup2fs ] || skip "no cgroup2 at $unified"
	set_args true
	run strace -f -o "$TEST_DIR/trace" -e trace=clone3,openat,write \
		"$RUNTIME" --root "$ROOT" run --bundle "$BUNDLE" "$CID"
	assert_success
	grep -q 'clone3(.*CLONE_INTO_CGROUP' "$TEST_DIR/trace" || fail "no CLONE_INTO_CGROUP: $(grep clone3 "$TEST_DIR/trace")"
	! grep -q "openat(.*unified/.*cgroup.procs\", O_WRONLY" "$TEST_DIR/trace" || fail "the init was moved in v2 afterwards"
	# No move by pid (the kernel's global threadgroup lock): the runtime
	# opens `tasks`, the init writes "0" (itself) there.
	! grep -q "openat(.*memory$CG_PATH/cgroup.procs\", O_WRONLY" "$TEST_DIR/trace" || fail "moved by pid"
	grep -q "openat(.*memory$CG_PATH/tasks\", O_WRONLY" "$TEST_DIR/trace" || fail "the v1 memory tasks file not opened"
	init=$(grep -o 'clone3(.*CLONE_INTO_CGROUP.*= [0-9]*$' "$TEST_DIR/trace" | grep -o '[0-9]*$' | head -1)
	grep -q "^$init  *write([0-9]*, \"0\", 1) *= 1" "$TEST_DIR/trace" \
		|| fail "the init ($init) did not move itself: $(grep "^$init " "$TEST_DIR/trace" | head -5)"
}

@test "cgroup files are looked up from one fd of /sys/fs/cgroup, not from / each time" {
	command -v strace >/dev/null || skip "strace is not installed"
	# Each lookup from / revalidates sysfs's dentries under the lock every
	# new network namespace takes: many containers at once queued there.
	set_args true
	run strace -f -o "$TEST_DIR/trace" -e trace=openat,mkdir,mkdirat,rmdir,unlinkat,access,faccessat,faccessat2,statfs \
		"$RUNTIME" --root "$ROOT" run --bundle "$BUNDLE" "$CID"
	assert_success
	local from_root within
	from_root=$(grep -cE '(AT_FDCWD, |^[0-9]+ +[a-z0-9]+\()"/sys/fs/cgroup/' "$TEST_DIR/trace" || true)
	within=$(grep -cE "\([0-9]+, \"([^/\"][^\"]*/)?${CG_PATH#/}[/\"]" "$TEST_DIR/trace" || true)
	[ "$within" -ge 10 ] || fail "expected the container's cgroup files opened relative to a dir fd, saw $within"
	[ "$from_root" -eq 0 ] || fail "$from_root lookups from /: $(grep -E '"/sys/fs/cgroup/' "$TEST_DIR/trace" | head -5)"
}

@test "a cgroup the init cannot move itself into fails the create in one line, naming it; nothing left" {
	[ -d "$AR_CGROUP_V1/cpuset" ] || skip "needs the v1 cpuset controller"
	local dir
	# An existing leaf is joined as is: a new v1 cpuset has no cpus, and
	# the kernel refuses a process there (ENOSPC).
	dir=$(cgroup_v1_dir cpuset "$CG_PATH")
	mkdir -p "$dir"
	set_args true
	run runtime run --bundle "$BUNDLE" "$CID"
	rmdir "$dir"
	assert_failure
	assert_output_contains "write \"0\" to \`$dir/tasks\`: No space left on device"
	assert_equal "${#lines[@]}" 1
	[ ! -e "$(cgroup_v1_dir memory "$CG_PATH")" ] || fail "the memory cgroup was left"
	[ ! -e "$ROOT/$CID" ] || fail "state left"
}

@test "run in an existing cgroup that has processes warns, as runc does, and leaves them alone at delete" {
	local dir
	dir=$(cgroup_v1_dir pids "$CG_PATH")
	mkdir -p "$dir"
	sleep 1000 &
	local other=$!
	track_pid "$other"
	echo "$other" >"$dir/cgroup.procs"
	set_args true
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_success
	assert_output_contains "agentrun: warning: cgroup \`$dir\` already has processes"
	kill -0 "$other" || fail "delete killed a process that was not the container's"
	grep -qx "$other" "$dir/cgroup.procs" || fail "the other process was moved"
	kill "$other"
	wait "$other" 2>/dev/null || true
	rmdir "$dir"
}

@test "update of cpu period and quota inside a pod cgroup with a cpu limit: the order that the pod's limit allows" {
	local pod=/$AR_RUN/$CID-pod cpu
	cpu=$(cgroup_v1_dir cpu "$pod")
	[ -e "$(cgroup_v1_dir cpu /)/cpu.cfs_quota_us" ] || skip "no v1 cpu controller with CFS quota"
	mkdir -p "$cpu"
	# The pod: half a CPU.
	echo 100000 >"$cpu/cpu.cfs_period_us"
	echo 50000 >"$cpu/cpu.cfs_quota_us"
	update_config '.linux.cgroupsPath = $p | .linux.resources.cpu = {"quota": 25000, "period": 100000}' --arg p "$pod/$CID"
	set_args sleep 1000
	ctr_run_bg
	wait_for_state "$CID" running
	# A quarter CPU still, over a 10 ms period: period first would ask
	# for 25000/10000 (2.5 CPUs) under the pod's half.
	echo '{"cpu": {"quota": 2500, "period": 10000}}' >"$TEST_DIR/r.json"
	run runtime update -r "$TEST_DIR/r.json" "$CID"
	assert_success
	assert_equal "$(cat "$cpu/$CID/cpu.cfs_period_us")" 10000
	assert_equal "$(cat "$cpu/$CID/cpu.cfs_quota_us")" 2500
	# And back: a longer period with a larger quota.
	echo '{"cpu": {"quota": 40000, "period": 100000}}' >"$TEST_DIR/r.json"
	run runtime update -r "$TEST_DIR/r.json" "$CID"
	assert_success
	assert_equal "$(cat "$cpu/$CID/cpu.cfs_quota_us")" 40000
	runtime delete --force "$CID"
	rmdir "$cpu"
}

@test "a pod cgroup whose cpuset is empty is filled from its parents, as runc fills it; the container joins" {
	local pod=/$AR_RUN/$CID-pod cpuset
	cpuset=$(cgroup_v1_dir cpuset "$pod")
	[ -e "$(cgroup_v1_dir cpuset /)/cpuset.cpus" ] || skip "no v1 cpuset controller"
	# The pod as a kubelet makes it: a directory, no CPUs, no memory nodes.
	mkdir -p "$cpuset"
	[ -z "$(cat "$cpuset/cpuset.cpus")" ] || skip "new cpusets inherit here (cgroup.clone_children)"
	update_config '.linux.cgroupsPath = $p' --arg p "$pod/$CID"
	run ctr_run cat /proc/self/status
	assert_success
	assert_output_contains Cpus_allowed_list
	assert_equal "$(cat "$cpuset/cpuset.cpus")" "$(cat "$(cgroup_v1_dir cpuset /)/cpuset.cpus")"
	rmdir "$cpuset"
}

@test "update: a device deny rule takes effect for the running container" {
	[ -d "$AR_CGROUP_V1/devices" ] || skip "no v1 devices controller"
	set_args sh -c 'while :; do if echo x >/dev/null 2>/dev/null; then echo ok >/tmp/probe; else echo denied >/tmp/probe; fi; sleep 0.1; done'
	update_config '.mounts += [{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs"}]'
	ctr_run_bg
	wait_for_state "$CID" running
	run runtime exec "$CID" sh -c 'sleep 0.3; cat /tmp/probe'
	assert_output ok
	echo '{"devices": [{"allow": false, "type": "c", "major": 1, "minor": 3, "access": "rw"}]}' >"$TEST_DIR/r.json"
	runtime update -r "$TEST_DIR/r.json" "$CID"
	# The container's own loop, already running, sees the rule.
	run runtime exec "$CID" sh -c 'sleep 0.3; cat /tmp/probe'
	assert_output denied
	! grep -qE "^c 1:3 [a-z]*[rw]" "$(cgroup_v1_dir devices "$CG_PATH")/devices.list" \
		|| fail "1:3 still readable or writable: $(grep '^c 1:3' "$(cgroup_v1_dir devices "$CG_PATH")/devices.list")"
}
