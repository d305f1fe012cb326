#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# update, events and features, as runc implements them.

load helpers

# ---------------------------------------------------------------- helpers

# This host: cgroup v1 controllers plus a cgroup2 mount holding only
# hugetlb. The v1 tests read the knobs the kernel shows.
require_v1_memory() {
	[ -f "$AR_CGROUP_V1/memory/memory.limit_in_bytes" ] \
		|| skip "needs the cgroup v1 memory hierarchy at $AR_CGROUP_V1/memory"
}

# A running container `sleep 1000` in a cgroup of its own; extra jq
# filter to adjust the config first.
start_sleeper() {
	CG_PATH=$(test_cgroups_path)
	update_config '.linux.cgroupsPath = $p' --arg p "$CG_PATH"
	[ $# -eq 0 ] || update_config "$1"
	[ -n "${SLEEPER_ARGS:-}" ] || set_args sleep 1000
	ctr_run_bg
	wait_for_state "$CID" running
}

v1_knob() {
	cat "$(cgroup_v1_dir "$1" "$CG_PATH")/$2"
}

# wait_for_line FILE PATTERN [SECONDS]: grep -q until it matches.
wait_for_line() {
	local file=$1 pattern=$2 limit=${3:-10}
	local deadline=$((SECONDS + limit))
	until grep -q -- "$pattern" "$file" 2>/dev/null; do
		[ "$SECONDS" -le "$deadline" ] || { echo "no '$pattern' in $file after ${limit}s:" >&2; cat "$file" >&2; return 1; }
		sleep 0.05
	done
}

# wait_for_exit PID [SECONDS]: a background process we started; its status.
wait_for_exit() {
	local pid=$1 limit=${2:-10}
	local deadline=$((SECONDS + limit))
	while kill -0 "$pid" 2>/dev/null; do
		[ "$SECONDS" -le "$deadline" ] || { echo "process $pid still running after ${limit}s" >&2; return 1; }
		sleep 0.05
	done
	wait "$pid"
}

# ---------------------------------------------------------------- update

@test "update: memory, cpu and pids reach the v1 cgroup files" {
	require_v1_memory
	start_sleeper
	run runtime update --memory 64m --memory-reservation 32M --pids-limit 42 \
		--cpu-shares 512 --cpu-period 100000 --cpu-quota 50000 "$CID"
	assert_success
	assert_equal "$(v1_knob memory memory.limit_in_bytes)" 67108864
	assert_equal "$(v1_knob memory memory.soft_limit_in_bytes)" 33554432
	assert_equal "$(v1_knob pids pids.max)" 42
	assert_equal "$(v1_knob cpu cpu.shares)" 512
	assert_equal "$(v1_knob cpu cpu.cfs_period_us)" 100000
	assert_equal "$(v1_knob cpu cpu.cfs_quota_us)" 50000

	# -1 lifts the limits again.
	run runtime update --memory -1 --pids-limit -1 --cpu-quota -1 "$CID"
	assert_success
	[ "$(v1_knob memory memory.limit_in_bytes)" -gt $((1 << 50)) ] \
		|| fail "memory limit still $(v1_knob memory memory.limit_in_bytes)"
	assert_equal "$(v1_knob pids pids.max)" max
	assert_equal "$(v1_knob cpu cpu.cfs_quota_us)" -1
}

@test "update: cpuset from flags" {
	require_v1_memory
	start_sleeper
	run runtime update --cpuset-cpus 0 --cpuset-mems 0 "$CID"
	assert_success
	assert_equal "$(v1_knob cpuset cpuset.cpus)" 0
	assert_equal "$(v1_knob cpuset cpuset.mems)" 0
}

@test "update --resources FILE, then flags override the file" {
	require_v1_memory
	start_sleeper
	cat >"$TEST_DIR/resources.json" <<-'EOF'
		{"memory": {"limit": 50331648}, "pids": {"limit": 33},
		 "cpu": {"shares": 256}}
	EOF
	run runtime update --resources "$TEST_DIR/resources.json" "$CID"
	assert_success
	assert_equal "$(v1_knob memory memory.limit_in_bytes)" 50331648
	assert_equal "$(v1_knob pids pids.max)" 33
	assert_equal "$(v1_knob cpu cpu.shares)" 256

	run runtime update -r "$TEST_DIR/resources.json" --pids-limit 34 "$CID"
	assert_success
	assert_equal "$(v1_knob pids pids.max)" 34
}

@test "update --resources - reads stdin" {
	require_v1_memory
	start_sleeper
	run runtime_stdin update --resources - "$CID" <<<'{"pids": {"limit": 21}, "memory": {"limit": 41943040}}'
	assert_success
	assert_equal "$(v1_knob pids pids.max)" 21
	assert_equal "$(v1_knob memory memory.limit_in_bytes)" 41943040
}

@test "update: bad values fail clearly and change nothing" {
	require_v1_memory
	start_sleeper
	runtime update --pids-limit 40 "$CID"

	run runtime update --memory 12q "$CID"
	assert_failure
	assert_output_contains '--memory: invalid size "12q"'

	run runtime update --pids-limit many "$CID"
	assert_failure
	assert_output_contains '--pids-limit: invalid number "many"'

	run runtime update --blkio-weight 5 "$CID"
	assert_failure
	assert_output_contains 'not between 10 and 1000'

	echo '{"pids": {"limit": 5}, "memory": {"limit": "lots"}}' >"$TEST_DIR/bad.json"
	run runtime update --resources "$TEST_DIR/bad.json" "$CID"
	assert_failure
	assert_output_contains "$TEST_DIR/bad.json: .memory.limit: expected int64"

	run runtime_stdin update --resources - "$CID" <<<'[1]'
	assert_failure
	assert_output_contains '<stdin>:'

	run runtime update --resources "$TEST_DIR/missing.json" "$CID"
	assert_failure
	assert_output_contains "missing.json"

	run runtime update "$CID"
	assert_failure
	assert_output_contains 'nothing to change'

	# None of the above got as far as the cgroup.
	assert_equal "$(v1_knob pids pids.max)" 40
}

@test "update: memory and memory+swap (v1 memsw) move together" {
	require_v1_memory
	[ -f "$AR_CGROUP_V1/memory/memory.memsw.limit_in_bytes" ] || skip "no swap accounting"
	start_sleeper
	run runtime update --memory 32m --memory-swap 64m "$CID"
	assert_success
	assert_equal "$(v1_knob memory memory.memsw.limit_in_bytes)" 67108864
	run runtime update --memory 128m "$CID"
	assert_failure
	assert_output_contains 'above the current memory+swap limit 67108864: give memory.swap (--memory-swap)'
	run runtime update --memory 128m --memory-swap 256m "$CID"
	assert_success
	assert_equal "$(v1_knob memory memory.limit_in_bytes)" 134217728
	assert_equal "$(v1_knob memory memory.memsw.limit_in_bytes)" 268435456
	run runtime update --memory 16m --memory-swap 8m "$CID"
	assert_failure
	assert_output_contains 'is below memory.limit'
}

@test "update: memory.checkBeforeUpdate refuses a limit below usage" {
	require_v1_memory
	start_sleeper
	run runtime_stdin update -r - "$CID" <<<'{"memory": {"limit": 4096, "checkBeforeUpdate": true}}'
	assert_failure
	assert_output_contains 'below the container'
	assert_output_contains 'current usage'
}

@test "update and events: a stopped or missing container is an error" {
	set_args true
	update_config '.linux.cgroupsPath = $p' --arg p "$(test_cgroups_path)"
	ctr_run_bg
	wait_for_state "$CID" stopped

	run runtime update --pids-limit 10 "$CID"
	assert_failure
	assert_output_contains "cannot update container \`$CID\`: it is stopped"

	run runtime events --stats "$CID"
	assert_failure
	assert_output_contains 'container not running'

	run runtime update --pids-limit 10 nosuch-"$CID"
	assert_failure
	assert_output_contains 'does not exist'
}

# ---------------------------------------------------------------- events

@test "events --stats: memory limit, pids, cpu in runc's format" {
	require_v1_memory
	start_sleeper '.linux.resources.memory.limit = 33554432 | .linux.resources.pids.limit = 64'
	run runtime events --stats "$CID"
	assert_success
	jq -e --arg id "$CID" '.type == "stats" and .id == $id' <<<"$output" >/dev/null \
		|| fail "not a stats event for $CID"
	assert_equal "$(jq .data.memory.usage.limit <<<"$output")" 33554432
	assert_equal "$(jq .data.pids.current <<<"$output")" 1
	assert_equal "$(jq .data.pids.limit <<<"$output")" 64
	jq -e '.data.memory.usage.usage > 0 and (.data.memory.raw | has("rss"))
		and .data.cpu.usage.total > 0 and (.data.cpu.usage.percpu | length > 0)
		and (.data.cpu.throttling | has("periods"))
		and (.data.blkio | has("ioServiceBytesRecursive"))' <<<"$output" >/dev/null \
		|| fail "missing cpu/memory/blkio numbers"

	# A later update shows in the next reading.
	runtime update --memory 48m "$CID"
	run runtime events --stats "$CID"
	assert_equal "$(jq .data.memory.usage.limit <<<"$output")" 50331648
}

@test "events: streams stats every interval and exits when the container stops" {
	start_sleeper
	runtime events --interval 200ms "$CID" >"$TEST_DIR/events" 2>&1 &
	local events_pid=$!
	track_pid "$events_pid"
	wait_for_line "$TEST_DIR/events" '"type":"stats"'
	sleep 0.5
	[ "$(grep -c '"type":"stats"' "$TEST_DIR/events")" -ge 2 ] || fail "fewer than two stats events"

	runtime kill "$CID" KILL
	wait_for_exit "$events_pid" 5 || fail "events did not exit with the container"
	jq -e -s 'all(.[]; .type == "stats")' "$TEST_DIR/events" >/dev/null \
		|| fail "not JSON lines: $(cat "$TEST_DIR/events")"
}

@test "events: bad --interval is an error" {
	start_sleeper
	run runtime events --interval soon "$CID"
	assert_failure
	assert_output_contains '--interval: invalid duration "soon"'
}

@test "events: an OOM kill is reported" {
	require_v1_memory
	CG_PATH=$(test_cgroups_path)
	update_config '.linux.cgroupsPath = $p | .linux.resources.memory.limit = 16777216' \
		--arg p "$CG_PATH"
	# dd fills a 64 MiB buffer from /dev/zero: real, touched memory. swap
	# is off here, so the kernel must kill inside the container.
	set_args sh -c 'dd if=/dev/zero of=/dev/null bs=64M count=1; sleep 1000'
	ctr_create
	runtime events --interval 1h "$CID" >"$TEST_DIR/events" 2>&1 &
	local events_pid=$!
	track_pid "$events_pid"
	sleep 0.3 # let events register its eventfd before the workload runs
	runtime start "$CID"
	wait_for_line "$TEST_DIR/events" '"type":"oom"'
	assert_equal "$(grep '"type":"oom"' "$TEST_DIR/events" | head -1 | jq -r .id)" "$CID"
	[ "$(v1_knob memory memory.failcnt)" -gt 0 ] || fail "memory.failcnt is 0"

	runtime kill "$CID" KILL
	wait_for_exit "$events_pid" 5 || fail "events did not exit with the container"
}

# ---------------------------------------------------------------- features

@test "features: valid features.json that matches this build" {
	run runtime features
	assert_success
	local f=$output
	jq -e '.ociVersionMin == "1.0.0" and (.ociVersionMax | test("^1\\.[0-9]+\\.[0-9]+$"))' <<<"$f" >/dev/null \
		|| fail "ociVersion range"
	assert_equal "$(jq -c '.hooks' <<<"$f")" \
		'["prestart","createRuntime","createContainer","startContainer","poststart","poststop"]'
	assert_equal "$(jq -c '.linux.namespaces | sort' <<<"$f")" \
		'["cgroup","ipc","mount","network","pid","time","user","uts"]'
	jq -e '.mountOptions | index("rbind") and index("rro") and index("nosymfollow") and index("rprivate")' <<<"$f" >/dev/null \
		|| fail "mountOptions"
	jq -e '.mountOptions | index("tmpcopyup") | not' <<<"$f" >/dev/null || fail "tmpcopyup is not implemented"
	jq -e '.linux.capabilities | index("CAP_SYS_ADMIN") and index("CAP_CHOWN") and all(startswith("CAP_"))' <<<"$f" >/dev/null \
		|| fail "capabilities"
	assert_equal "$(jq -c .linux.cgroup <<<"$f")" \
		'{"v1":true,"v2":true,"systemd":true,"systemdUser":false,"rdma":true}'
	jq -e '.linux.seccomp.enabled and (.linux.seccomp.actions | index("SCMP_ACT_NOTIFY") and index("SCMP_ACT_ERRNO"))
		and (.linux.seccomp.operators | index("SCMP_CMP_MASKED_EQ"))
		and (.linux.seccomp.archs | index("SCMP_ARCH_X86_64"))
		and (.linux.seccomp.supportedFlags - .linux.seccomp.knownFlags == [])' <<<"$f" >/dev/null \
		|| fail "seccomp"
	jq -e '.linux.intelRdt.enabled == false and .linux.mountExtensions.idmap.enabled == true
		and (.linux.apparmor.enabled | type == "boolean") and (.linux.selinux.enabled | type == "boolean")' <<<"$f" >/dev/null \
		|| fail "lsm/rdt/idmap"
	jq -e '.annotations["io.github.seccomp.libseccomp.version"] | test("^[0-9]+\\.[0-9]+\\.[0-9]+$")' <<<"$f" >/dev/null \
		|| fail "libseccomp version"
	assert_equal "$(jq -r '.annotations["run.agentrun.version"]' <<<"$f")" \
		"$("$RUNTIME" --version | sed -n 's/^agentrun version //p')"
	# runc's layout: tab indentation.
	[[ "$f" == *$'\n\t"ociVersionMin"'* ]] || fail "not tab-indented"
}

@test "features: every advertised seccomp action is accepted by create" {
	local action
	for action in $(runtime features | jq -r '.linux.seccomp.actions[] | select(. != "SCMP_ACT_NOTIFY")'); do
		update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
			"syscalls": [{"names": ["getcwd"], "action": $a}]}' --arg a "$action"
		set_args true
		run runtime run --bundle "$BUNDLE" "$CID"
		# The process may die by the action (kill, trap): the runtime must
		# not reject the profile.
		refute_output_contains 'agentrun:'
		[ "$status" -ne 1 ] || fail "$action rejected"
		runtime delete --force "$CID" >/dev/null 2>&1 || true
	done
	# The compiled-filter cache is the runtime's, beside the containers;
	# teardown would take it for a leaked container.
	rm -rf "$ROOT/.seccomp-cache"
}

# ---------------------------------------------------------------- cgroup v2

# This host is hybrid. Moving an idle v1 controller (pids) to the unified
# hierarchy would need `umount /sys/fs/cgroup/pids`, which other suites and
# engineers on this host use concurrently, so instead the runtime runs in a
# private mount namespace where /sys/fs/cgroup is the cgroup2 hierarchy:
# a v2-only view. There only the core v2 files exist (the host's v1
# hierarchies keep memory, cpu and pids), which is what this test covers.
@test "cgroup v2 view (private mount namespace): events --stats, update unified, missing controllers" {
	command -v unshare >/dev/null || skip "needs unshare(1)"
	grep -q ' /sys/fs/cgroup/unified .* cgroup2 ' /proc/self/mountinfo \
		|| skip "needs the host's cgroup2 hierarchy at /sys/fs/cgroup/unified"
	local cg_path
	cg_path=$(test_cgroups_path)
	update_config '.linux.cgroupsPath = $p | del(.linux.resources.memory, .linux.resources.pids)' \
		--arg p "$cg_path"
	set_args sleep 1000
	cat >"$TEST_DIR/v2.sh" <<-'EOF'
		set -u
		mount --make-rprivate /
		mount -t tmpfs tmpfs /sys/fs/cgroup
		mount -t cgroup2 cgroup2 /sys/fs/cgroup
		rt() { "$RUNTIME" --root "$ROOT" "$@"; }
		trap 'rt delete --force "$CID" >/dev/null 2>&1' EXIT
		rt run --detach --bundle "$BUNDLE" "$CID" </dev/null >/dev/null 2>"$OUT/run.err" || exit 1
		rt events --stats "$CID" >"$OUT/stats" 2>&1
		echo '{"unified": {"cgroup.max.descendants": "7"}}' | rt update -r - "$CID" >"$OUT/unified.out" 2>&1
		cat "/sys/fs/cgroup$CGPATH/cgroup.max.descendants" >"$OUT/descendants"
		rt update --memory 64m "$CID" >"$OUT/memory.out" 2>&1
		echo "memory status $?" >>"$OUT/memory.out"
		rt delete --force "$CID"
	EOF
	mkdir "$TEST_DIR/out"
	run env RUNTIME="$RUNTIME" ROOT="$ROOT" BUNDLE="$BUNDLE" CID="$CID" CGPATH="$cg_path" \
		OUT="$TEST_DIR/out" timeout 60 unshare -m sh "$TEST_DIR/v2.sh"
	[ "$status" -eq 0 ] || fail "v2 script: $(cat "$TEST_DIR"/out/*)"

	# cpu.stat's core keys, in nanoseconds; no v1 cpuacct here.
	jq -e '.data.cpu.usage.total > 0 and .data.cpu.usage.percpu == [] and (.data | has("memory") | not)' \
		"$TEST_DIR/out/stats" >/dev/null || fail "v2 stats: $(cat "$TEST_DIR/out/stats")"
	assert_equal "$(cat "$TEST_DIR/out/descendants")" 7
	output=$(cat "$TEST_DIR/out/memory.out")
	assert_output_contains "memory: the container's cgroup has no memory controller"
	assert_output_contains "memory status 1"
	# Nothing left in the real unified hierarchy.
	[ ! -e "/sys/fs/cgroup/unified$cg_path" ] || fail "cgroup left behind"
}
