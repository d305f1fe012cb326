#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The launcher (launcher/launcher.c), installed as `agentrun`: for a
# command that runs a process of ours in a container it starts the runtime
# from a sealed copy, so the runtime starts once; any other command it
# passes to the runtime's file; without the runtime beside it, one line
# says so.

load helpers

setup() {
	common_setup
	[ ! -L "$RUNTIME" ] && [ "$(ar_runtime_program "$RUNTIME")" != "$(readlink -f "$RUNTIME")" ] \
		|| skip "$RUNTIME is not agentrun's launcher (a build without one, or another runtime)"
	command -v strace >/dev/null || skip "strace is not installed (contrib/install-deps.sh)"
}

# How `agentrun ARGS...` entered the runtime: one word per successful exec
# after the launcher's own, `sealed` for an exec of a memfd (execveat of
# an fd), `file` for an exec of a path. The command itself may fail.
entered() {
	"${AR_AS_USER[@]}" strace -f -qq -e trace=execve,execveat -o "$TEST_DIR/strace" \
		"$RUNTIME" "$@" >/dev/null 2>&1 </dev/null || true
	awk '/ = 0$/ && /execveat\(/ { print "sealed"; next }
		/ = 0$/ && /execve\(/ && n++ { print "file" }' "$TEST_DIR/strace" | paste -sd' '
}

@test "launcher: a command that enters a container runs from a sealed copy, started once" {
	local cmd
	for cmd in "exec missing true" "create -b $TEST_DIR/nobundle x" "run -b $TEST_DIR/nobundle x" \
		"sandbox --no-such-flag -- true" "pool create --no-such-flag" "rollback missing x"; do
		# shellcheck disable=SC2086 # the words of the command
		assert_equal "$cmd: $(entered --root "$ROOT" $cmd)" "$cmd: sealed"
	done
}

@test "launcher: any other command, and sandbox --pool, run the runtime's file" {
	local cmd
	for cmd in "state missing" "kill missing" "delete missing" "list" "start missing" \
		"sandbox --pool missing -- true" "sandbox --pool=missing -- true" "--version" "features"; do
		# shellcheck disable=SC2086
		assert_equal "$cmd: $(entered --root "$ROOT" $cmd)" "$cmd: file"
	done
	# A word after `--` is the sandbox's command, not its option.
	assert_equal "$(entered --root "$ROOT" sandbox --no-such-flag -- echo --pool)" sealed
}

@test "launcher: every global option that takes a value is skipped with its value to find the command" {
	local options opt
	options=$("$RUNTIME" help --completion | awk -F '\t' '$1 == "option" && $4 == "VALUE" { print $2 }')
	[ "$(wc -w <<<"$options")" -ge 7 ] || fail "too few options with a value: $options"
	for opt in $options; do
		assert_equal "$opt: $(entered "$opt" "$TEST_DIR/value" --root "$ROOT" exec missing true)" "$opt: sealed"
		assert_equal "$opt=: $(entered "$opt=$TEST_DIR/value" --root "$ROOT" exec missing true)" "$opt=: sealed"
		assert_equal "-${opt#--}: $(entered "-${opt#--}" "$TEST_DIR/value" --root "$ROOT" exec missing true)" \
			"-${opt#--}: sealed"
	done
}

@test "launcher: without root the runtime's file runs, and a binary no container can write is not copied" {
	AR_TEST_USER=${AR_ROOTLESS_UID:-1500}
	ar_setup_test_user
	assert_equal "$(entered --root "$ROOT" exec missing true)" file
}

@test "launcher: without the runtime beside it, one line names the missing file and nothing runs" {
	mkdir "$TEST_DIR/alone"
	install -m 0755 "$(readlink -f "$RUNTIME")" "$TEST_DIR/alone/agentrun"
	run "$TEST_DIR/alone/agentrun" --root "$ROOT" state x
	assert_failure 1
	assert_output "agentrun: $TEST_DIR/alone/agentrun-runtime: not found"
	# exec's failure to run anything is 255, as runc's.
	run "$TEST_DIR/alone/agentrun" --root "$ROOT" exec x true
	assert_failure 255
	assert_output "agentrun: $TEST_DIR/alone/agentrun-runtime: not found"
	[ -z "$(ls -A "$ROOT")" ] || fail "state left: $(ls -A "$ROOT")"
}
