#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# programs.ask (sandbox --ask-program RULE): an exec of a program a rule
# names waits for the approver (agentrun approve here, with rules). The
# kernel holds the exec at the open of the file that will run (fanotify's
# exec permission events on every mount of the container): an allowed
# exec runs, a refused one fails with EPERM and the program never runs.

load helpers
load sandbox_helpers

setup() {
	[ "$(id -u)" -eq 0 ] || skip "programs.ask needs root (fanotify permission events)"
	common_setup_sandbox
	AUDIT=$TEST_DIR/audit.log
}

teardown() {
	sandbox_teardown
}

# count PATTERN: lines of the approver's log with PATTERN (fixed string).
count() {
	grep -cF -- "$1" "$TEST_DIR/approve.log" || true
}

@test "programs.ask: allow-once asks at every exec, allow once for the command, deny fails with EPERM and the program never runs; others are not asked" {
	approver "allow-once exec id -u" "allow exec ls /" "deny exec touch *"
	run sandbox --no-tty --audit "$AUDIT" --approver "$APPROVER" --ask-program id \
		--ask-program 'ls /' --ask-program touch -- sh -c '
		id -u; echo "id -u: $?"; id -u >/dev/null; echo "again: $?"
		id -g; echo "id -g: $?"
		ls / >/dev/null; ls / >/dev/null; echo "ls /: $?"
		ls /tmp >/dev/null; echo "ls /tmp: $?"
		touch ./made; echo "touch: $?"
		cat /etc/hostname >/dev/null; echo "cat: $?"
		id -u "$(printf "a\033[2K\rb")"; echo "escapes: $?"'
	assert_success
	assert_output_contains "id -u: 0"
	assert_output_contains "again: 0"
	assert_output_contains "id: Operation not permitted"
	assert_output_contains "id -g: 126"
	assert_output_contains "ls /: 0"
	assert_output_contains "ls /tmp: 0"
	assert_output_contains "touch: 126"
	assert_output_contains "cat: 0"
	[ ! -e "$WS/made" ] || fail "touch ran"
	[ "$(count 'exec id -u: allow-once (rule')" -eq 2 ] || fail "$(cat "$TEST_DIR/approve.log")"
	[ "$(count 'exec ls /: allow (rule')" -eq 1 ] || fail "$(cat "$TEST_DIR/approve.log")"
	[ "$(count 'exec touch ./made: deny (rule')" -eq 1 ] || fail "$(cat "$TEST_DIR/approve.log")"
	# The shell tries /usr/bin/id, then /bin/id (the same file): one
	# question, its deny answers the retry.
	[ "$(count 'exec id -g: deny (default)')" -eq 1 ] || fail "$(cat "$TEST_DIR/approve.log")"
	# What the container wrote reaches the person's terminal as text.
	[ "$(count 'exec id -u a\x1b[2K\x0db: deny (default)')" -eq 1 ] || fail "$(cat "$TEST_DIR/approve.log")"
	assert_output_contains "escapes: 126"
	# ls /tmp, cat, sh and the loader's opens asked nothing.
	[ "$(wc -l <"$TEST_DIR/approve.log")" -eq 6 ] || fail "$(cat "$TEST_DIR/approve.log")"
	run grep '"event":"approval-request"' "$AUDIT"
	assert_output_contains "\"what\":\"exec\",\"where\":\"id -u\",\"detail\":\"/usr/bin/id in $WS\""
	run grep '"event":"approval"' "$AUDIT"
	assert_output_contains '"what":"exec","where":"id -g","decision":"deny","why":"approver"'
	assert_output_contains '"what":"exec","where":"id -g","decision":"deny","why":"denied just before"'
	assert_output_contains '"what":"exec","where":"ls /","decision":"allow","why":"approver"'
	run "$RUNTIME" audit "$AUDIT"
	assert_success
	wait_for_no_gates
}

@test "programs.ask: a program is known by the file that runs: through a symlink, as a multi-call program's name, a script; never by its interpreter's or loader's open" {
	approver "allow-once exec *"
	ln -s /usr/bin/id "$WS/alias"
	ln -s /usr/bin/busybox "$WS/rm"
	printf '#!/bin/sh\necho deployed\n' >"$WS/deploy.sh"
	chmod +x "$WS/deploy.sh"
	touch "$WS/doomed"
	run sandbox --no-tty --audit "$AUDIT" --approver "$APPROVER" --ask-program id \
		--ask-program rm --ask-program deploy.sh -- sh -c '
		./alias -u; ./rm ./doomed; echo "rm: $?"; ./deploy.sh; busybox true; echo end'
	assert_success
	assert_output_contains "rm: 0"
	assert_output_contains deployed
	assert_output_contains end
	[ "$(count 'exec ./alias -u: allow-once')" -eq 1 ] || fail "$(cat "$TEST_DIR/approve.log")"
	[ "$(count 'exec ./rm ./doomed: allow-once')" -eq 1 ] || fail "$(cat "$TEST_DIR/approve.log")"
	[ "$(count 'exec ./deploy.sh: allow-once')" -eq 1 ] || fail "$(cat "$TEST_DIR/approve.log")"
	# sh as the script's interpreter, busybox by its own name: not asked.
	[ "$(wc -l <"$TEST_DIR/approve.log")" -eq 3 ] || fail "$(cat "$TEST_DIR/approve.log")"
	run grep '"event":"approval-request"' "$AUDIT"
	assert_output_contains '"where":"./alias -u","detail":"/usr/bin/id in'
	assert_output_contains '"where":"./rm ./doomed","detail":"/usr/bin/busybox in'
	wait_for_no_gates
}

@test "programs.ask: the sandbox's own command is asked with its arguments, with the init (which waits in vfork while the command execs) or without" {
	approver "allow-once exec id -u"
	local init
	for init in "" --no-init; do
		run sandbox --no-tty $init --audit "$AUDIT" --approver "$APPROVER" --ask-program 'id -u' -- id -u
		assert_success
		assert_output "0"
	done
	[ "$(count 'exec id -u: allow-once (rule')" -eq 2 ] || fail "$(cat "$TEST_DIR/approve.log")"
	run grep -c 'arguments unverified' "$AUDIT"
	assert_output "0"
	wait_for_no_gates
}

@test "programs.ask: arguments another thread can rewrite are not trusted: the question names the program only, and no rule on its arguments lets it through" {
	# The attack on arguments read from memory: a thread rewrites them.
	# Built with the tree (the VM has no compiler); a copy the sandbox
	# sees (it hides /root, where the VM keeps the tree).
	[ -x "$AR_TOP/tests/tools/argv_flip" ] || fail "no tests/tools/argv_flip: make builds it"
	local flip=$TEST_DIR/argv_flip
	install -m 0755 "$AR_TOP/tests/tools/argv_flip" "$flip"
	approver "allow-once exec /usr/bin/id -u"
	run sandbox --no-tty --audit "$AUDIT" --approver "$APPROVER" --ask-program 'id -u' -- sh -c "
		$flip --still /usr/bin/id -u -g; echo \"still: \$?\"
		$flip /usr/bin/id -u -g; echo \"flipping: \$?\""
	assert_success
	assert_output_contains "still: 0"
	assert_output_contains "flipping: 126"
	[ "$(count 'exec /usr/bin/id -u: allow-once (rule')" -eq 1 ] || fail "$(cat "$TEST_DIR/approve.log")"
	[ "$(count 'exec /usr/bin/id: deny (default)')" -eq 1 ] || fail "$(cat "$TEST_DIR/approve.log")"
	run grep '"event":"approval-request"' "$AUDIT"
	assert_output_contains '"where":"/usr/bin/id","detail":"/usr/bin/id in'
	assert_output_contains 'arguments unverified (another task shares its memory: 2 threads)'
	wait_for_no_gates
}

@test "programs.ask: twelve execs at once are each asked; a silent approver is a deny when its timeout ends, one that is gone a deny at once" {
	approver "allow-once exec id -u" "deny exec id -G"
	run sandbox --no-tty --audit "$AUDIT" --approver "$APPROVER" --ask-program id -- sh -c '
		for i in 1 2 3 4 5 6 7 8 9 10 11 12; do id -u & done; wait
		for i in 1 2 3 4; do id -G & done; wait' 
	assert_success
	[ "$(echo "$output" | grep -cx 0)" -eq 12 ] || fail "output: $output"
	[ "$(count 'exec id -u: allow-once (rule')" -eq 12 ] || fail "$(cat "$TEST_DIR/approve.log")"
	# Counted as matches, not lines: four shells writing to one stderr at
	# once can put two messages on one line.
	[ "$(echo "$output" | grep -o 'id: Operation not permitted' | wc -l)" -eq 4 ] || fail "output: $output"
	[ "$(grep -c '"event":"approval",.*"where":"id -u","decision":"allow-once"' "$AUDIT")" -eq 12 ] || fail "$(cat "$AUDIT")"

	kill -STOP "$APPROVER_PID"
	mkdir -p "$AGENTRUN_CONFIG_DIR/profiles"
	cat >"$AGENTRUN_CONFIG_DIR/profiles/askexec.json" <<-EOF
	{"extends": "agent", "programs": {"ask": ["id"]}, "approver": {"socket": "$APPROVER", "timeout": "2s"}}
	EOF
	run runtime --profile askexec sandbox --no-tty --audit "$AUDIT" -- sh -c \
		'start=$(date +%s); /usr/bin/id -u; echo "id: $? after $(($(date +%s) - start)) s"'
	kill -CONT "$APPROVER_PID"
	local s
	s=$(echo "$output" | sed -n 's/^id: 126 after \([0-9]*\) s$/\1/p')
	[ -n "$s" ] && [ "$s" -ge 1 ] && [ "$s" -le 5 ] || fail "output: $output"
	run grep '"event":"approval"' "$AUDIT"
	assert_output_contains '"where":"/usr/bin/id -u","decision":"deny","why":"timeout"'

	kill -TERM "$APPROVER_PID"
	wait "$APPROVER_PID" || true
	run runtime --profile askexec sandbox --no-tty --audit "$AUDIT" -- sh -c '/usr/bin/id -g; echo "id: $?"'
	assert_output_contains "id: 126"
	run grep '"event":"approval"' "$AUDIT"
	assert_output_contains '"where":"/usr/bin/id -g","decision":"deny","why":"approver gone"'
	wait_for_no_gates
}

@test "programs.ask: a container's own processes and exec'd ones ask (a busybox rm by its name); its gate goes at delete" {
	approver "deny exec rm *" "allow-once exec *"
	mkdir -p "$AGENTRUN_CONFIG_DIR/profiles"
	cat >"$AGENTRUN_CONFIG_DIR/profiles/askexec.json" <<-EOF
	{"extends": "agent", "programs": {"ask": ["rm", "sleep 300"]}, "approver": {"socket": "$APPROVER"},
	 "audit": {"path": "$AUDIT"}}
	EOF
	set_args sleep 300
	runtime_bg --profile askexec run -d -b "$BUNDLE" gated
	# `run -d` returns once the init started; the approver may write its
	# line a moment after the exec it allowed.
	wait_for_file_content "$TEST_DIR/approve.log" 'exec sleep 300: allow-once (rule'
	[ "$(count 'exec sleep 300: allow-once (rule')" -eq 1 ] || fail "$(cat "$TEST_DIR/approve.log")"
	# busybox's sh runs its applets without an exec (nothing to ask
	# about): rm is exec'd by the runtime, as /bin/rm -> busybox.
	runtime exec gated touch /tmp/f
	run runtime exec gated rm /tmp/f
	assert_failure
	assert_output_contains "Operation not permitted"
	run runtime exec gated ls /tmp/f
	assert_success
	[ "$(count 'exec rm /tmp/f: deny (rule')" -eq 1 ] || fail "$(cat "$TEST_DIR/approve.log")"
	run grep -c '"what":"exec","where":"rm /tmp/f","detail":"/bin/busybox in /' "$AUDIT"
	assert_output 1
	[ -n "$(gates_left)" ] || fail "no gate while the container runs"
	run runtime delete -f gated
	assert_success
	wait_for_no_gates
}

@test "programs.ask: bad input is one line naming it, and leaves nothing" {
	approver "deny * *"
	run sandbox --approver "$APPROVER" --ask-program 'git push, origin' -- true
	assert_failure
	assert_output_contains "sandbox: --ask-program \"git push, origin\": a ',' or a control character"
	run sandbox --ask-program id -- true
	assert_failure
	assert_output_contains 'programs.ask needs an approver (profile "agent": approver.socket, or sandbox --approver SOCKET)'
	mkdir -p "$AGENTRUN_CONFIG_DIR/profiles"
	printf '{"extends": "agent", "programs": {"ask": ["git push", "  "]}}\n' >"$AGENTRUN_CONFIG_DIR/profiles/bad.json"
	run runtime --profile bad sandbox -- true
	assert_failure
	assert_output_contains "bad.json: .programs.ask[1]:"
	printf '{"extends": "agent", "programs": {"asks": ["id"]}}\n' >"$AGENTRUN_CONFIG_DIR/profiles/bad.json"
	run runtime --profile bad sandbox -- true
	assert_output_contains "bad.json: .programs.asks: unknown key"
	[ -z "$(state_entries)" ] || fail "left: $(state_entries)"
	[ -z "$(gates_left)" ] || fail "gate left: $(gates_left)"
	[ ! -s "$TEST_DIR/approve.log" ] || fail "asked: $(cat "$TEST_DIR/approve.log")"
}
