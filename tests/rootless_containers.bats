#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# OCI containers run by an ordinary user (uid 1500 unless AR_TEST_USER):
# what the rootless lifecycle suite (rootless_lifecycle.bats) does not
# cover on its own.

load helpers

# as_user CMD...: CMD as the test user, in the bundle, with its own state.
as_user() {
	(cd "$BUNDLE" && timeout -k 5 "$AR_TIMEOUT" "${AR_AS_USER[@]}" "$@" </dev/null)
}

@test "rootless: a bundle from 'agentrun spec --rootless', made and run by its owner" {
	rm "$BUNDLE/config.json"
	chown "$AR_TEST_USER:$AR_TEST_USER" "$BUNDLE"
	run as_user "$RUNTIME" spec --rootless
	assert_success
	update_config '.process.terminal = false | .process.args = ["sh", "-c", "id -u; cat /proc/self/uid_map; ls /sys/kernel >/dev/null && echo sys-ok; ls /dev/null /dev/zero"]'
	run as_user "$RUNTIME" --root "$ROOT" run "$CID"
	assert_success
	assert_output_contains "0       $AR_TEST_USER          1"
	assert_output_contains sys-ok
	assert_output_contains /dev/zero
	[ "${lines[0]}" = 0 ] || fail "not root in the container"
}

@test "rootless: cgroup limits without a delegated cgroup are refused by name, or run with --rootless-limits=ignore" {
	update_config '.linux.resources.memory = {limit: 67108864} | .linux.resources.pids = {limit: 50}'
	set_args true
	run as_user "$RUNTIME" --root "$ROOT" run "$CID"
	assert_failure
	assert_output_contains "memory, pids"
	assert_output_contains "--rootless-limits=ignore"
	[ "${#lines[@]}" -eq 1 ] || fail "more than one line"
	[ -z "$(state_entries)" ] || fail "state left behind"
	run as_user "$RUNTIME" --root "$ROOT" --rootless-limits=ignore run "$CID"
	assert_success
	assert_output_contains "not enforced"
}

@test "rootless: --systemd-cgroup under a systemd user instance enforces the limits in a user scope, gone after delete" {
	local xdg
	require_user_systemd
	update_config '.linux.resources.memory = {limit: 33554432} | .linux.resources.pids = {limit: 40}
		| .linux.cgroupsPath = ""'
	set_args sh -c 'cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max; cat /proc/self/cgroup'
	run as_user env XDG_RUNTIME_DIR="$xdg" "$RUNTIME" --root "$ROOT" --systemd-cgroup run "$CID"
	assert_success
	assert_output_contains 33554432
	assert_output_contains 40
	[ -z "$(user_scopes "$CID")" ] || fail "scope left: $(user_scopes "$CID")"
	# Without it (the cgroupfs driver) the same limits are refused.
	run as_user env XDG_RUNTIME_DIR="$xdg" "$RUNTIME" --root "$ROOT" run "$CID"
	assert_failure
	assert_output_contains "memory, pids"
}

@test "rootless: without a delegated cgroup, /sys/fs/cgroup shows the container's own cgroup, not the host's tree" {
	# On a systemd host the root of the hierarchy holds init.scope; the
	# container's cgroup (the one it was started in) does not.
	[ -d /sys/fs/cgroup/init.scope ] || skip "no systemd cgroup tree here to tell the two apart (the VM has one)"
	update_config '.linux.namespaces |= (map(select(.type != "cgroup")) + [{type: "cgroup"}])'
	set_args sh -c 'ls /sys/fs/cgroup; test -e /sys/fs/cgroup/cgroup.procs && echo has-procs'
	run as_user "$RUNTIME" --root "$ROOT" run "$CID"
	assert_success
	assert_output_contains has-procs
	refute_output_contains init.scope
	refute_output_contains system.slice
}

@test "rootless: where a fresh cgroup mount is refused, /sys/fs/cgroup shows the container's own cgroup, bound read-only" {
	# The kernel refuses a user namespace's cgroup mount on some hosts
	# (a cgroup namespace it does not own, a hierarchy mounted with other
	# options): the runtime then binds the cgroup the container runs in,
	# as runc does. Neither host here refuses, so a seccomp filter
	# (tests/tools/deny_mount.c) refuses mount(2) with the cgroup mount's
	# flags alone: ro,nosuid,nodev,noexec,relatime and nodiratime, which
	# no other mount of this spec has.
	local h=/sys/fs/cgroup/pids inside=/sys/fs/cgroup/pids
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then h=/sys/fs/cgroup inside=/sys/fs/cgroup; fi
	[ -f "$h/cgroup.procs" ] || skip "no pids hierarchy at $h"
	# A cgroup of the test's own with a sibling, so a bind of the
	# hierarchy's root (or of the parent) would show.
	local own=$h/$AR_RUN-own
	# Built with the tree (the VM has no compiler), else here; a copy in
	# the test dir, which the user reaches (the tree may be out of reach).
	local deny=$TEST_DIR/deny_mount
	if [ -x "$AR_TOP/tests/tools/deny_mount" ]; then
		install -m 0755 "$AR_TOP/tests/tools/deny_mount" "$deny"
	else
		install -m 0755 "$(tool_bin deny_mount)" "$deny"
	fi
	mkdir -p "$own/inner" "$own/sibling"
	update_config '.linux.namespaces |= (map(select(.type != "cgroup")) + [{type: "cgroup"}])
		| .mounts |= map(if .type == "cgroup" then .options = ["nosuid","noexec","nodev","relatime","nodiratime","ro"] else . end)'
	set_args sh -c "ls $inside; test -e $inside/cgroup.procs && echo has-procs; touch $inside/probe 2>/dev/null || echo read-only"
	run bash -c 'echo $$ >"$1/cgroup.procs" && cd "$2" && shift 2 && exec "$@" </dev/null' \
		_ "$own/inner" "$BUNDLE" timeout -k 5 "$AR_TIMEOUT" "${AR_AS_USER[@]}" \
		"$deny" 0x20080f "$RUNTIME" --root "$ROOT" run "$CID"
	rmdir "$own/inner" "$own/sibling" "$own"
	assert_success
	assert_output_contains has-procs
	assert_output_contains read-only
	refute_output_contains sibling
	refute_output_contains inner
	refute_output_contains "$AR_RUN-own"
	# Without the filter the same spec mounts the hierarchy afresh.
}

@test "rootless: --rootless takes true, false or auto, nothing else; false as a user fails as root's run would" {
	run "$RUNTIME" --rootless maybe list
	assert_failure
	assert_output_contains "--rootless: \`maybe\`"
	run "$RUNTIME" --rootless-limits sometimes list
	assert_failure
	assert_output_contains "--rootless-limits"
	# false: the user is treated as root would be, and the cgroup root
	# wants makes it fail, in one line, with nothing left; true runs.
	set_args true
	run as_user "$RUNTIME" --root "$ROOT" --rootless false run "$CID"
	assert_failure
	assert_output_contains "/sys/fs/cgroup"
	[ "${#lines[@]}" -eq 1 ] || fail "more than one line"
	[ -z "$(state_entries)" ] || fail "state left behind"
	run as_user "$RUNTIME" --root "$ROOT" --rootless true run "$CID"
	assert_success
}

@test "rootless: without XDG_RUNTIME_DIR the state defaults to it; a map wider than the own id needs newuidmap" {
	update_config '.linux.uidMappings = [{containerID: 0, hostID: $u, size: 1}, {containerID: 1, hostID: 3900000000, size: 10}]' --argjson u "$AR_TEST_USER"
	set_args true
	run as_user "$RUNTIME" run "$CID"
	assert_failure
	# The default root is $XDG_RUNTIME_DIR/agentrun: the state dir was made
	# there, and removed again with the failed create.
	[ -d "$TEST_DIR/xdg/agentrun" ] || fail "no state root under XDG_RUNTIME_DIR"
	[ -z "$(find "$TEST_DIR/xdg/agentrun" -mindepth 1 -maxdepth 1 ! -name '.*')" ] || fail "state left behind"
	# No /etc/subuid range holds 3900000000: newuidmap
	# refuses, and the error names the mapping and the file.
	assert_output_contains "uidMappings"
	assert_output_contains "/etc/subuid"
	[ "${#lines[@]}" -eq 1 ] || fail "more than one line"
}

@test "rootless: a map of the user's /etc/subuid range goes through newuidmap and newgidmap" {
	local name range_start
	name=$(getent passwd "$AR_TEST_USER" | cut -d: -f1)
	range_start=$(awk -F: -v n="$name" '$1 == n { print $2; exit }' /etc/subuid 2>/dev/null)
	[ -n "$name" ] && [ -n "$range_start" ] && grep -q "^$name:" /etc/subgid \
		|| skip "uid $AR_TEST_USER has no name with /etc/subuid and /etc/subgid ranges here (the VM's tester has)"
	command -v newuidmap >/dev/null || skip "no newuidmap (apt-get install uidmap)"
	update_config '.linux.uidMappings = [{containerID: 0, hostID: $u, size: 1}, {containerID: 1, hostID: $s, size: 1000}]
		| .linux.gidMappings = .linux.uidMappings
		| .process.user = {uid: 5, gid: 5, additionalGids: [7]}' --argjson u "$AR_TEST_USER" --argjson s "$range_start"
	# Only a mapped id can be switched to: uid 5 and the extra group 7 are
	# the range's, and setgroups stays allowed under newgidmap.
	set_args sh -c 'cat /proc/self/uid_map /proc/self/setgroups; echo "ids:$(id -u):$(id -g):$(id -G)"'
	run as_user "$RUNTIME" --root "$ROOT" run "$CID"
	assert_success
	assert_output_contains "1     $range_start       1000"
	assert_output_contains allow
	assert_output_contains "ids:5:5:5 7"
}
