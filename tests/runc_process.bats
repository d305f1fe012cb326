#!/usr/bin/env bats
# What the container's process and the hooks get from the runtime when the
# config leaves it out, as runc gives it. Holds for RUNTIME=/usr/sbin/runc.

load helpers

setup() {
	common_setup
	printf 'root:x:0:0:root:/root:/bin/sh\nagent:x:1234:1234:agent:/home/agent:/bin/sh\n' \
		>"$BUNDLE/rootfs/etc/passwd"
	update_config '.process.env = ["PATH=/bin:/sbin"]'
}

@test "HOME: from the container's /etc/passwd when the environment has none, for run and exec -u" {
	run ctr_run sh -c 'echo "home=$HOME"'
	assert_success
	assert_output_contains "home=/root"

	update_config '.process.user = {"uid": 1234, "gid": 1234}'
	run ctr_run sh -c 'echo "home=$HOME"'
	assert_success
	assert_output_contains "home=/home/agent"

	update_config '.process.user = {"uid": 4321, "gid": 4321}'
	run ctr_run sh -c 'echo "home=$HOME"'
	assert_success
	assert_output "home=/"

	update_config '.process.user = {"uid": 0, "gid": 0} | .process.env += ["HOME=/given"]'
	run ctr_run sh -c 'echo "home=$HOME"'
	assert_success
	assert_output_contains "home=/given"
}

@test "HOME: exec -u picks the exec'd user's entry, an explicit HOME wins" {
	set_args sleep 1000
	ctr_run_bg
	run runtime exec -u 1234 "$CID" sh -c 'echo "home=$HOME"'
	assert_success
	assert_output_contains "home=/home/agent"
	run runtime exec -u 1234 -e HOME=/elsewhere "$CID" sh -c 'echo "home=$HOME"'
	assert_success
	assert_output_contains "home=/elsewhere"
}

@test "hooks without env: PATH is set, so a hook that calls a program by name works" {
	printf '#!/bin/sh\necho "path=$PATH" >"%s"\ncat >/dev/null\n' "$TEST_DIR/hook.out" >"$TEST_DIR/hook.sh"
	chmod 0755 "$TEST_DIR/hook.sh"
	update_config '.hooks.prestart = [{"path": $p}]' --arg p "$TEST_DIR/hook.sh"
	run ctr_run true
	assert_success
	grep -q '^path=.*/usr/bin' "$TEST_DIR/hook.out" || fail "hook env: $(cat "$TEST_DIR/hook.out")"
}
