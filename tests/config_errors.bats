#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# A bad bundle is refused with a useful message, and a refused or failed
# create leaves nothing behind: no state dir, mount, cgroup or process.

load helpers

setup() {
	common_setup
	# A cgroup of our own, so "no cgroup left" has a precise meaning.
	CG_PATH=$(test_cgroups_path)
	update_config '.linux.cgroupsPath = $p' --arg p "$CG_PATH"
}

assert_nothing_left() {
	local left
	left=$(state_entries)
	[ -z "$left" ] || fail "state left in --root: $left"
	left=$(mounts_under "$TEST_DIR")
	[ -z "$left" ] || fail "mounts left: $left"
	left=$(cgroups_named "$CID")
	[ -z "$left" ] || fail "cgroups left: $left"
	local c
	for c in memory pids cpu cpuset; do
		[ ! -d "$(cgroup_v1_dir "$c" "$CG_PATH")" ] || fail "cgroup $c:$CG_PATH left"
	done
	wait_no_pids "$CID" || fail "processes left: $(pids_matching "$CID")"
}

# try_create: create, and run, must both fail with status 1.
try_create_and_run() {
	run runtime_bg create --bundle "$BUNDLE" "$CID"
	assert_failure 1
	assert_nothing_left
	local create_output=$output
	run runtime_bg run --bundle "$BUNDLE" "$CID"
	assert_failure 125
	assert_nothing_left
	output=$create_output
}

@test "malformed JSON is refused, naming config.json" {
	head -c 200 "$BUNDLE/config.json" >"$BUNDLE/config.json.cut"
	mv "$BUNDLE/config.json.cut" "$BUNDLE/config.json"
	try_create_and_run
	assert_output_contains "config.json"
}

@test "a wrongly typed value is refused with its JSON path" {
	update_config '.process.args = ["sh", "-c", 42]'
	try_create_and_run
	# The one-line error names file and path (runc names only the Go type).
	assert_output_contains "config.json: .process.args[2]"
	assert_equal "$(grep -c 'config.json' <<<"$output")" 1
}

@test "a wrongly typed nested field is refused with its JSON path" {
	update_config '.linux.namespaces[0].type = true'
	try_create_and_run
	assert_output_contains "config.json: .linux.namespaces[0].type"
}

@test "a wrongly typed number is refused with its JSON path" {
	update_config '.process.user.uid = "root"'
	try_create_and_run
	assert_output_contains "config.json: .process.user.uid"
}

@test "a missing config.json is refused" {
	rm "$BUNDLE/config.json"
	try_create_and_run
	assert_output_contains "config.json"
}

@test "a missing rootfs is refused" {
	update_config '.root.path = "no-such-rootfs"'
	try_create_and_run
}

@test "a rootfs that is a file is refused" {
	update_config '.root.path = "rootfs-file"'
	echo not-a-dir >"$BUNDLE/rootfs-file"
	try_create_and_run
}

@test "empty process.args are refused" {
	update_config '.process.args = []'
	try_create_and_run
}

@test "an unknown namespace type is refused" {
	update_config '.linux.namespaces += [{"type": "no-such-ns"}]'
	try_create_and_run
}

@test "unknown fields are ignored" {
	update_config '. + {"org.example.unknown": {"a": [1, 2]}}
		| .process += {"unknownField": true}
		| .linux += {"somethingNew": {"x": 1}}'
	set_args echo ignored-ok
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_success
	assert_output ignored-ok
}

@test "deep nesting ends in an error, not a crash" {
	# 100000 nested arrays under an unknown key.
	local deep=$TEST_DIR/deep.json
	{
		printf '{"x":'
		head -c 100000 /dev/zero | tr '\0' '['
		head -c 100000 /dev/zero | tr '\0' ']'
		printf ',"ociVersion":"1.0.0"}'
	} >"$deep"
	cp "$deep" "$BUNDLE/config.json"
	run runtime_bg create --bundle "$BUNDLE" "$CID"
	# 1 is an error; 128+ would be a crash, 124 a hang killed by timeout.
	assert_failure 1
	assert_nothing_left
}

@test "a bind mount of a missing host path fails create and cleans up" {
	update_config '.mounts += [{"destination": "/mnt/x", "type": "bind",
		"source": $s, "options": ["bind"]}]' --arg s "$TEST_DIR/no-such-source"
	set_args true
	run runtime_bg create --bundle "$BUNDLE" "$CID"
	assert_failure
	assert_nothing_left
	run runtime_bg run --bundle "$BUNDLE" "$CID"
	assert_failure
	assert_nothing_left
}

@test "a missing executable fails and cleans up" {
	set_args /no/such/program
	run -127 runtime run --bundle "$BUNDLE" "$CID"
	assert_nothing_left
}

@test "an impossible cgroup limit fails create and cleans up" {
	update_config '.linux.resources.cpu = {"cpus": "4096-4097"}'
	set_args true
	run runtime_bg create --bundle "$BUNDLE" "$CID"
	assert_failure
	assert_nothing_left
}

@test "a failing createRuntime hook fails create and cleans up" {
	update_config '.hooks.createRuntime = [{"path": "/bin/false"}]'
	set_args true
	run runtime_bg create --bundle "$BUNDLE" "$CID"
	assert_failure
	assert_nothing_left
}

@test "a key repeated in an object of config.json is refused with its JSON path" {
	# jq cannot write a repeated key; splice one into the annotations by text.
	update_config '.annotations = {"org.example.first": "a"}'
	sed -i 's/"org.example.first": *"a"/"org.example.first": "a", "org.example.first": "b"/' "$BUNDLE/config.json"
	[ "$(grep -o '"org.example.first"' "$BUNDLE/config.json" | wc -l)" = 2 ] || fail "the repeated key was not written"
	try_create_and_run
	assert_output_contains 'config.json: .annotations["org.example.first"]: duplicate key'
	assert_equal "$(wc -l <<<"$output")" 1
}

@test "a kernel.hostname or kernel.domainname sysctl that contradicts hostname/domainname is refused; an agreeing one runs" {
	update_config '.hostname = "box" | .linux.sysctl = {"kernel.hostname": "other"}'
	try_create_and_run
	assert_output_contains 'linux.sysctl["kernel.hostname"]: "other" conflicts with the hostname'
	update_config '.hostname = "box" | .domainname = "example" | .linux.sysctl = {"kernel.domainname": "elsewhere"}'
	try_create_and_run
	assert_output_contains 'linux.sysctl["kernel.domainname"]: "elsewhere" conflicts with the domainname'
	update_config '.linux.sysctl = {"kernel.hostname": "box"}'
	run ctr_run hostname
	assert_success
	assert_output "box"
}
