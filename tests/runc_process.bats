#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
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

@test "socket activation: LISTEN_FDS fds reach the process before the preserved ones, with LISTEN_FDS and LISTEN_PID" {
	echo listen >"$TEST_DIR/f3"
	echo preserved >"$TEST_DIR/f4"
	set_args sh -c 'echo "$LISTEN_FDS $LISTEN_PID"; cat <&3; cat <&4'
	# LISTEN_PID names the runtime itself (sh execs it): systemd's rule.
	run timeout -k 5 "$AR_TIMEOUT" sh -c 'exec 3<"$1" 4<"$2"; export LISTEN_FDS=1 LISTEN_PID=$$; shift 2; exec "$@"' \
		sh "$TEST_DIR/f3" "$TEST_DIR/f4" "$RUNTIME" --root "$ROOT" run --preserve-fds 1 --bundle "$BUNDLE" "$CID"
	assert_success
	assert_equal "${lines[0]}" "1 1"
	assert_equal "${lines[1]}" "listen"
	assert_equal "${lines[2]}" "preserved"
	# Meant for another process (LISTEN_PID is not ours): not passed on.
	set_args sh -c 'echo "fds=${LISTEN_FDS:-none}"; test ! -e /proc/self/fd/3'
	run timeout -k 5 "$AR_TIMEOUT" sh -c 'exec 3<"$1"; export LISTEN_FDS=1 LISTEN_PID=1; shift; exec "$@"' \
		sh "$TEST_DIR/f3" "$RUNTIME" --root "$ROOT" run --bundle "$BUNDLE" "$CID"
	assert_success
	assert_output "fds=none"
}

@test "exec: noNewPrivileges comes from the exec'd process, not from the container's init" {
	update_config '.process.noNewPrivileges = true'
	set_args sleep 1000
	ctr_run_bg
	run runtime exec "$CID" grep NoNewPrivs /proc/self/status
	assert_output "NoNewPrivs:	1"
	jq '.process | .args = ["grep", "NoNewPrivs", "/proc/self/status"] | .noNewPrivileges = false' \
		"$BUNDLE/config.json" >"$TEST_DIR/process.json"
	run runtime exec --process "$TEST_DIR/process.json" "$CID"
	assert_success
	assert_output "NoNewPrivs:	0"
	runtime delete --force "$CID"

	update_config '.process.noNewPrivileges = false'
	ctr_run_bg
	run runtime exec "$CID" grep NoNewPrivs /proc/self/status
	assert_output "NoNewPrivs:	0"
	run runtime exec --no-new-privs "$CID" grep NoNewPrivs /proc/self/status
	assert_output "NoNewPrivs:	1"
}

@test "stdio: a non-root process owns its pipes (it can reopen /proc/self/fd/1) and its terminal" {
	update_config '.process.user = {"uid": 1234, "gid": 1234}'
	run ctr_run sh -c 'echo via-proc >/proc/self/fd/1 && stat -c %u /proc/self/fd/1'
	assert_success
	assert_equal "${lines[0]}" via-proc
	assert_equal "${lines[1]}" 1234
	[ -n "${RUNTIME_IS_RUNC:-}" ] && return 0
	run_with_terminal sh -c 'stat -c "%u %g" $(tty); echo ok >$(tty)'
	assert_success
	assert_equal "${lines[0]}" "1234 5"
	assert_equal "${lines[1]}" ok
}

@test "stdio: the host's /dev/null stays root's, whatever user the process or an exec runs as" {
	# crun 1.8.1 and runc 1.1.5 chown it to the container's user; a host
	# device node is not the container's to own (docs/runc-compat.md).
	update_config '.process.user = {"uid": 1234, "gid": 1234}'
	set_args sleep 1000
	ctr_run_bg </dev/null
	wait_for_state "$CID" running
	runtime exec --user 4321:4321 "$CID" true </dev/null >/dev/null 2>&1
	assert_equal "$(stat -c %u:%g /dev/null)" 0:0
	runtime delete --force "$CID"
	assert_equal "$(stat -c %u:%g /dev/null)" 0:0
}

@test "stdio: a terminal or file the caller passed in keeps its owner" {
	update_config '.process.user = {"uid": 1234, "gid": 1234}'
	: >"$TEST_DIR/out"
	set_args sh -c 'echo written'
	runtime run --bundle "$BUNDLE" "$CID" >"$TEST_DIR/out"
	assert_equal "$(cat "$TEST_DIR/out")" written
	assert_equal "$(stat -c %u "$TEST_DIR/out")" 0
}
