#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# cgroup v2 device control: linux.resources.devices becomes an eBPF program
# (BPF_PROG_TYPE_CGROUP_DEVICE) on the container's cgroup.
#
# On a v2-only host (the test VM) the runtime runs as it is. On this
# development host, hybrid with a v1 devices controller, as in
# verbs.bats, the runtime runs in a private mount namespace where
# /sys/fs/cgroup is the cgroup2 hierarchy: a v2-only view, in which no v1
# devices hierarchy is visible and the runtime must use eBPF. The host's v1
# devices cgroup of the runtime (the root, allow-all) still applies too, so
# any denial seen here comes from the program.

load helpers

# A character device no driver claims (240 is in the "local/experimental"
# range): opening it fails with ENXIO when the device cgroup allows it and
# with EPERM when the device cgroup refuses it, and it is not among the
# default devices the runtime always allows (null, zero, full, random,
# urandom, tty, console, ptmx, pts).
TEST_MAJOR=240
TEST_MINOR=7

v2_skip_reasons() {
	command -v unshare >/dev/null || skip "needs unshare(1)"
	is_cgroup_v2_only && return 0
	grep -q ' /sys/fs/cgroup/unified .* cgroup2 ' /proc/self/mountinfo \
		|| skip "needs the host's cgroup2 hierarchy at /sys/fs/cgroup/unified"
}

# run_v2 SCRIPT: SCRIPT (sh) in a private mount namespace with cgroup2 on
# /sys/fs/cgroup; rt is the runtime; the container is deleted at exit.
run_v2() {
	cat >"$TEST_DIR/v2.sh" <<-'EOF'
		set -u
		mount --make-rprivate /
		if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then
			mount -t tmpfs tmpfs /sys/fs/cgroup
			mount -t cgroup2 cgroup2 /sys/fs/cgroup
		fi
		rt() { "$RUNTIME" --root "$ROOT" "$@"; }
		trap 'rt delete --force "$CID" >/dev/null 2>&1' EXIT
	EOF
	printf '%s\n' "$1" >>"$TEST_DIR/v2.sh"
	mkdir -p "$TEST_DIR/out"
	run env RUNTIME="$RUNTIME" ROOT="$ROOT" BUNDLE="$BUNDLE" CID="$CID" \
		CGPATH="$CG_PATH" OUT="$TEST_DIR/out" timeout 60 unshare -m sh "$TEST_DIR/v2.sh"
}

setup() {
	common_setup
	v2_skip_reasons
	CG_PATH=$(test_cgroups_path)
	mknod "$TEST_DIR/testdev" c "$TEST_MAJOR" "$TEST_MINOR"
	update_config '.linux.cgroupsPath = $p
		| del(.linux.resources.memory, .linux.resources.pids)
		| .mounts += [{"destination": "/dev/testdev", "type": "bind",
			"source": $dev, "options": ["bind"]}]' \
		--arg p "$CG_PATH" --arg dev "$TEST_DIR/testdev"
}

# BPF_PROG_LOAD of a cgroup device program needs CAP_BPF (or CAP_SYS_ADMIN)
# and a kernel with CONFIG_CGROUP_BPF: where the kernel refuses, say so.
skip_unless_bpf_allowed() {
	local refusal
	refusal=$(grep -h -m1 -E 'BPF_PROG_LOAD\): (Operation not permitted|Invalid argument|Function not implemented)' \
		"$TEST_DIR"/out/* 2>/dev/null) || return 0
	skip "the kernel refuses the device program here: $refusal"
}

# The container's process: try each device and report.
PROBE='
(exec 3</dev/testdev) 2>&1; echo "testdev status $?"
echo hi >/dev/null && echo "null write ok"
head -c 4 /dev/null | wc -c | sed "s/^ */null read /"
head -c 4 /dev/zero | wc -c | sed "s/^ */zero read /"
'

@test "cgroup v2 devices: deny all but /dev/null; a device outside the list is refused by the eBPF program" {
	update_config '.linux.resources.devices = [
		{"allow": false, "access": "rwm"},
		{"allow": true, "type": "c", "major": 1, "minor": 3, "access": "rwm"}]'
	set_args sh -c "$PROBE"
	run_v2 'rt run --bundle "$BUNDLE" "$CID" </dev/null >"$OUT/run.out" 2>&1
		echo "run status $?" >>"$OUT/run.out"
		test -d "/sys/fs/cgroup$CGPATH" && echo "cgroup left behind" >>"$OUT/run.out"
		exit 0'
	skip_unless_bpf_allowed
	[ "$status" -eq 0 ] || fail "v2 script: $output"
	output=$(cat "$TEST_DIR/out/run.out")
	assert_output_contains "can't open /dev/testdev: Operation not permitted"
	assert_output_contains "testdev status 1"
	assert_output_contains "null write ok"
	assert_output_contains "null read 0"
	# The runtime always allows the default devices (as v1 does), zero too.
	assert_output_contains "zero read 4"
	assert_output_contains "run status 0"
	refute_output_contains "cgroup left behind"
}

@test "cgroup v2 devices: the same device allowed by a rule is opened (the driver, not the cgroup, says no)" {
	update_config '.linux.resources.devices = [
		{"allow": false, "access": "rwm"},
		{"allow": true, "type": "c", "major": ($ma | tonumber), "minor": ($mi | tonumber), "access": "r"}]' \
		--arg ma "$TEST_MAJOR" --arg mi "$TEST_MINOR"
	set_args sh -c "$PROBE"
	run_v2 'rt run --bundle "$BUNDLE" "$CID" </dev/null >"$OUT/run.out" 2>&1; echo "run status $?" >>"$OUT/run.out"'
	skip_unless_bpf_allowed
	[ "$status" -eq 0 ] || fail "v2 script: $output"
	output=$(cat "$TEST_DIR/out/run.out")
	assert_output_contains "can't open /dev/testdev: No such device or address"
	refute_output_contains "Operation not permitted"
	assert_output_contains "null write ok"
}

@test "cgroup v2 devices: update replaces the program instead of adding one" {
	update_config '.linux.resources.devices = [{"allow": false, "access": "rwm"}]'
	set_args sleep 1000
	run_v2 'rt run --detach --bundle "$BUNDLE" "$CID" </dev/null >"$OUT/run.out" 2>&1 || exit 1
		rt exec "$CID" sh -c "(exec 3</dev/testdev) 2>&1; echo status \$?" >"$OUT/before" 2>&1
		echo "{\"devices\": [{\"allow\": true, \"access\": \"rwm\"}]}" | rt update -r - "$CID" >"$OUT/update" 2>&1
		echo "update status $?" >>"$OUT/update"
		rt exec "$CID" sh -c "(exec 3</dev/testdev) 2>&1; echo status \$?" >"$OUT/after" 2>&1
		rt delete --force "$CID"'
	skip_unless_bpf_allowed
	[ "$status" -eq 0 ] || fail "v2 script: $output $(cat "$TEST_DIR"/out/*)"
	output=$(cat "$TEST_DIR/out/before")
	assert_output_contains "Operation not permitted"
	output=$(cat "$TEST_DIR/out/update")
	assert_output_contains "update status 0"
	output=$(cat "$TEST_DIR/out/after")
	assert_output_contains "No such device or address"
}
