#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Regression tests for what the OCI runtime-tools validation suite found
# (tests/conformance.sh runs the suite itself). Each test fails without its
# fix; the validation named in the comment is the one that caught it.

load helpers

# validation/linux_ns_path (uts): joining a uts namespace by path and
# setting the hostname was refused; runc and crun set it in the joined one.
@test "hostname is set in a uts namespace joined by path" {
	# --kill-child: the sleep dies with unshare, which teardown kills; no
	# stdio, or a surviving sleep would keep bats waiting on its output.
	unshare --uts --fork --kill-child sleep 1000 </dev/null >/dev/null 2>&1 &
	local holder=$!
	track_pid "$holder"
	local child="" i
	for i in $(seq 1 100); do
		child=$(pgrep -P "$holder" sleep) && break
		sleep 0.05
	done
	[ -n "$child" ] || fail "no namespace holder process"
	update_config '.hostname = "joined-uts"
		| .linux.namespaces |= map(select(.type != "uts"))
		| .linux.namespaces += [{"type": "uts", "path": $p}]' \
		--arg p "/proc/$child/ns/uts"
	run ctr_run hostname
	assert_success
	assert_output joined-uts
	run nsenter -t "$child" -u hostname
	assert_output joined-uts
}

# validation/hooks_stdin: prestart hooks must see status "created".
@test "prestart hook reads status created on stdin" {
	local out
	out=$(host_dir hooks)/prestart.json
	update_config '.hooks.prestart = [{"path": "/bin/sh",
		"args": ["sh", "-c", "cat > " + $f]}]' --arg f "$out"
	run ctr_run true
	assert_success
	run jq -r .status "$out"
	assert_output created
}

# validation/killsig: `start` returned as soon as the init was released,
# before it reached execve, so a signal sent right after start could reach
# the init instead of the program. start now returns once the program runs.
# The startContainer hook widens the gap between release and execve.
@test "start returns only once the user's program runs" {
	update_config '.hooks.startContainer = [{"path": "/bin/sleep",
		"args": ["sleep", "1"]}]'
	set_args sleep 1000
	run ctr_create
	assert_success
	local pid
	pid=$(ctr_pid)
	run runtime start "$CID"
	assert_success
	local cmd
	cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline")
	assert_equal "$cmd" "sleep 1000 "
}

# validation/linux_rootfs_propagation (unbindable): an unbindable "/"
# before pivot_root refused the bind of the rootfs onto itself.
@test "rootfsPropagation unbindable" {
	update_config '.linux.rootfsPropagation = "unbindable"'
	# mountinfo field 5 is the mount point; the root's line lists its
	# propagation among the optional fields.
	run ctr_run awk '$5 == "/"' /proc/self/mountinfo
	assert_success
	assert_output_contains "unbindable"
}

# validation/linux_cgroups_network: a classID on a host with cgroup v1 but
# no net_cls hierarchy was silently dropped; runc and crun refuse it.
@test "network classID without a net_cls hierarchy fails the create" {
	is_cgroup_v2_only && skip "pure cgroup v2: network limits are ignored"
	grep -qw net_cls /proc/self/mountinfo && skip "net_cls is mounted here"
	update_config '.linux.resources.network = {"classID": 1048577}
		| .linux.cgroupsPath = $p' --arg p "$(test_cgroups_path)"
	run ctr_run true
	assert_failure
	assert_output_contains "no cgroup hierarchy has the net_cls controller"
}
