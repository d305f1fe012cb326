#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The launcher (launcher/launcher.c), installed as `agentrun`: for a
# command that runs a process of ours in a container it starts the runtime
# from a sealed copy, so the runtime starts once; any other command it
# passes to the runtime's file, but the `start` of a container whose start
# is only its exec fifo it does itself; without the runtime beside it, one
# line says so.

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
		"pool create --no-such-flag" "rollback missing x"; do
		# shellcheck disable=SC2086 # the words of the command
		assert_equal "$cmd: $(entered --root "$ROOT" $cmd)" "$cmd: sealed"
	done
}

@test "launcher: any other command, and sandbox, run the runtime's file" {
	local cmd
	for cmd in "state missing" "kill missing" "delete missing" "list" "start missing" \
		"sandbox --pool missing -- true" "sandbox --pool=missing -- true" "--version" "features" \
		"sandbox --no-such-flag -- true"; do
		# shellcheck disable=SC2086
		assert_equal "$cmd: $(entered --root "$ROOT" $cmd)" "$cmd: file"
	done
}

@test "launcher: real root's sandbox copies the runtime only where its user namespace leaves the binary in reach" {
	[ "$(id -u)" = 0 ] || skip "real root's sandbox"
	grep -q '^agentrun:' /etc/subuid || skip "no range for user agentrun (contrib/agentrun-ids.sh)"
	mkdir -p "$TEST_DIR/ws" "$TEST_DIR/conf/profiles"
	cd "$TEST_DIR/ws"
	# Its command runs in a namespace holding only the range: root's
	# binary is out of its reach, no copy. (The last word is `true`'s.)
	assert_equal "$(entered --root "$ROOT" sandbox -- true)" "file file"
	# Without that namespace the runtime copies itself, as it always did.
	echo '{"extends": "agent", "userNamespace": {"enabled": false}}' >"$TEST_DIR/conf/profiles/plain.json"
	assert_equal "$(AGENTRUN_CONFIG_DIR=$TEST_DIR/conf entered --root "$ROOT" --profile plain sandbox -- true)" \
		"file sealed file"
	# A binary the range owns is one the command could write: copied.
	local start
	start=$(awk -F: '$1 == "agentrun" { print $2; exit }' /etc/subuid)
	mkdir "$TEST_DIR/ranged"
	ar_copy_binaries "$RUNTIME" "$TEST_DIR/ranged"
	chown -R "$start:$start" "$TEST_DIR/ranged"
	RUNTIME=$TEST_DIR/ranged/agentrun
	assert_equal "$(entered --root "$ROOT" sandbox -- true)" "file sealed file"
	# Every one of them ran the command.
	run "$RUNTIME" --root "$ROOT" sandbox -- echo ran
	assert_success
	assert_output ran
}

# The execs of a `start` after the launcher's (entered's words), having
# checked the launcher's own exec was traced.
start_entered() {
	local words
	words=$(entered "$@")
	[ "$(grep -c 'execve(.* = 0$' "$TEST_DIR/strace")" -ge 1 ] || fail "no exec traced: $(cat "$TEST_DIR/strace")"
	echo "$words"
}

@test "launcher: a created container whose start is its fifo alone is started without the runtime" {
	set_args sleep 1000
	ctr_create
	local pid
	pid=$(ctr_pid)
	[ -f "$ROOT/$CID/plain-start" ] || fail "create left no plain-start"
	# containerd's shim's words: every global option it passes is one the
	# launcher knows.
	assert_equal "$(start_entered --root "$ROOT" --log "$TEST_DIR/log" --log-format=json --systemd-cgroup start "$CID")" ""
	assert_equal "$(ctr_status)" running
	assert_equal "$(cat "/proc/$pid/comm")" sleep
	[ ! -e "$ROOT/$CID/exec.fifo" ] || fail "the exec fifo is left"
	[ ! -e "$TEST_DIR/log" ] || fail "a start that went well logged: $(cat "$TEST_DIR/log")"
	# A second start: the launcher finds no fifo, the runtime says why.
	assert_equal "$(start_entered --root "$ROOT" start "$CID")" file
	run runtime start "$CID"
	assert_failure 1
	assert_output "agentrun: cannot start an already running container: \`$CID\`"
}

@test "launcher: a start with hooks, options it does not know, or an init gone, is the runtime's" {
	set_args sleep 1000
	update_config '.hooks.poststart = [{"path": "/bin/sh", "args": ["sh", "-c", "echo ran >$0", $f]}]' \
		--arg f "$TEST_DIR/poststart"
	ctr_create
	[ ! -e "$ROOT/$CID/plain-start" ] || fail "plain-start beside a poststart hook"
	# The runtime's file, then its hook.
	assert_equal "$(start_entered --root "$ROOT" start "$CID")" "file file"
	wait_for_file "$TEST_DIR/poststart"
	assert_equal "$(ctr_status)" running

	update_config 'del(.hooks)'
	# An agent plan: the runtime audits the start.
	runtime_bg --profile agent create --bundle "$BUNDLE" "$CID-a"
	[ ! -e "$ROOT/$CID-a/plain-start" ] || fail "plain-start beside an agent plan"
	assert_equal "$(start_entered --root "$ROOT" start "$CID-a")" file
	assert_equal "$(ctr_status "$CID-a")" running
	runtime delete --force "$CID-a"

	local opts
	for opts in "--debug" "--log-format xml" "--root $ROOT --root $ROOT" "--rootless false"; do
		ctr_create "$CID-o"
		# shellcheck disable=SC2086 # the options' words
		assert_equal "$opts: $(start_entered --root "$ROOT" $opts start "$CID-o")" "$opts: file"
		runtime delete --force "$CID-o"
	done

	# The init killed before the start: the launcher leaves it to the
	# runtime, which says it stopped.
	ctr_create "$CID-k"
	local pid
	pid=$(ctr_pid "$CID-k")
	kill -KILL "$pid"
	wait_for_state "$CID-k" stopped
	assert_equal "$(start_entered --root "$ROOT" start "$CID-k")" file
	run runtime start "$CID-k"
	assert_failure 1
	assert_output "agentrun: cannot start a container that has stopped: \`$CID-k\`"
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
