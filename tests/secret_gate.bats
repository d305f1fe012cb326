#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# secrets.ask (sandbox --ask-secrets): every open of a secret waits for
# the approver (agentrun approve here, with rules), through fanotify's
# open permission events on the secrets tmpfs: an allowed open reads the
# secret, a refused one fails with EPERM and reads nothing.

load helpers
load sandbox_helpers

setup() {
	[ "$(id -u)" -eq 0 ] || skip "secrets.ask needs root (fanotify permission events)"
	common_setup_sandbox
	printf 'alpha-%s' "$RANDOM" >"$TEST_DIR/a"
	printf 'bravo-%s' "$RANDOM" >"$TEST_DIR/b"
	printf 'charlie-%s' "$RANDOM" >"$TEST_DIR/c"
	AUDIT=$TEST_DIR/audit.log
}

teardown() {
	sandbox_teardown
}

with_secrets() {
	sandbox --no-tty --audit "$AUDIT" --secret "A=$TEST_DIR/a" --secret "B=$TEST_DIR/b" \
		--secret "C=$TEST_DIR/c" "$@"
}

@test "secrets.ask: allow-once asks at every open, allow once for the container, deny fails with EPERM and reads nothing" {
	approver "allow-once secret A" "allow secret B" "deny secret C"
	run with_secrets --approver "$APPROVER" --ask-secrets -- sh -c '
		ls /run/secrets | tr "\n" " "; echo
		for s in A A B B C; do v=$(cat /run/secrets/$s 2>&1); echo "$s: $? $v"; done'
	assert_success
	assert_output_contains "A B C"
	assert_output_contains "A: 0 $(cat "$TEST_DIR/a")"
	assert_output_contains "B: 0 $(cat "$TEST_DIR/b")"
	assert_output_contains "C: 1 cat: /run/secrets/C: Operation not permitted"
	refute_output_contains "$(cat "$TEST_DIR/c")"
	[ "$(grep -c 'secret A: allow-once (rule' "$TEST_DIR/approve.log")" -eq 2 ] || fail "$(cat "$TEST_DIR/approve.log")"
	[ "$(grep -c 'secret B: allow (rule' "$TEST_DIR/approve.log")" -eq 1 ] || fail "$(cat "$TEST_DIR/approve.log")"
	[ "$(grep -c 'secret C: deny (rule' "$TEST_DIR/approve.log")" -eq 1 ] || fail "$(cat "$TEST_DIR/approve.log")"
	# Listing the directory asked nothing.
	[ "$(wc -l <"$TEST_DIR/approve.log")" -eq 4 ] || fail "$(cat "$TEST_DIR/approve.log")"
	run grep '"event":"approval-request"' "$AUDIT"
	assert_output_contains '"what":"secret","where":"C","detail":"cat /run/secrets/C"'
	run grep '"event":"approval"' "$AUDIT"
	assert_output_contains '"what":"secret","where":"C","decision":"deny","why":"approver"'
	assert_output_contains '"what":"secret","where":"B","decision":"allow","why":"approver"'
	run "$RUNTIME" audit "$AUDIT"
	assert_success
	# The secrets' values are in no audit line.
	! grep -qF -- "$(cat "$TEST_DIR/a")" "$AUDIT"
	wait_for_no_gates
}

@test "secrets.ask: a silent approver is a deny when its timeout ends; an approver that is gone is a deny at once" {
	approver "allow * *"
	kill -STOP "$APPROVER_PID"
	mkdir -p "$AGENTRUN_CONFIG_DIR/profiles"
	cat >"$AGENTRUN_CONFIG_DIR/profiles/asksecrets.json" <<-EOF
	{"extends": "agent", "secrets": {"ask": true}, "approver": {"socket": "$APPROVER", "timeout": "2s"}}
	EOF
	run runtime --profile asksecrets sandbox --no-tty --audit "$AUDIT" \
		--secret "A=$TEST_DIR/a" -- sh -c 'start=$(date +%s); cat /run/secrets/A; echo "A: $? after $(($(date +%s) - start)) s"'
	kill -CONT "$APPROVER_PID"
	local s
	s=$(echo "$output" | sed -n 's/^A: 1 after \([0-9]*\) s$/\1/p')
	[ -n "$s" ] && [ "$s" -ge 1 ] && [ "$s" -le 5 ] || fail "output: $output"
	refute_output_contains "$(cat "$TEST_DIR/a")"
	run grep '"event":"approval"' "$AUDIT"
	assert_output_contains '"where":"A","decision":"deny","why":"timeout"'

	kill -TERM "$APPROVER_PID"
	wait "$APPROVER_PID" || true
	run with_secrets --approver "$APPROVER" --ask-secrets -- sh -c 'cat /run/secrets/B; echo "B: $?"'
	assert_output_contains "B: 1"
	refute_output_contains "$(cat "$TEST_DIR/b")"
	run grep '"event":"approval"' "$AUDIT"
	assert_output_contains '"where":"B","decision":"deny","why":"approver gone"'
	wait_for_no_gates
}

@test "secrets.ask: an exec'd process asks too; a detached container's gate goes at delete" {
	approver "allow-once secret A"
	mkdir -p "$AGENTRUN_CONFIG_DIR/profiles"
	cat >"$AGENTRUN_CONFIG_DIR/profiles/asksecrets.json" <<-EOF
	{"extends": "agent", "secrets": {"ask": true, "files": {"A": "$TEST_DIR/a"}}, "approver": {"socket": "$APPROVER"}}
	EOF
	set_args sleep 300
	runtime_bg --profile asksecrets run -d -b "$BUNDLE" gated
	run runtime exec gated cat /run/secrets/A
	assert_success
	assert_output "$(cat "$TEST_DIR/a")"
	grep -q 'secret A: allow-once (rule' "$TEST_DIR/approve.log" || fail "$(cat "$TEST_DIR/approve.log")"
	[ -n "$(gates_left)" ] || fail "no gate while the container runs"
	run runtime delete -f gated
	assert_success
	wait_for_no_gates
}

@test "secrets.ask: bad input is one line naming it, and leaves nothing" {
	run with_secrets --ask-secrets -- true
	assert_failure
	assert_output_contains 'secrets.ask needs an approver (profile "agent": approver.socket, or sandbox --approver SOCKET)'
	[ -z "$(state_entries)" ] || fail "left: $(state_entries)"
	mkdir -p "$AGENTRUN_CONFIG_DIR/profiles"
	printf '{"extends": "agent", "approver": {"socket": "rel.sock"}}\n' >"$AGENTRUN_CONFIG_DIR/profiles/bad.json"
	run runtime --profile bad sandbox -- true
	assert_failure
	assert_output_contains "bad.json: .approver.socket:"
	printf '{"extends": "agent", "approver": {"sock": "/a"}}\n' >"$AGENTRUN_CONFIG_DIR/profiles/bad.json"
	run runtime --profile bad sandbox -- true
	assert_output_contains "bad.json: .approver.sock: unknown key"
	[ -z "$(state_entries)" ] || fail "left: $(state_entries)"
	[ -z "$(gates_left)" ] || fail "gate left: $(gates_left)"
}

@test "secrets.ask on a host with no route to its nameserver: the approver's egress asks too, names fail with a warning, the secret is asked for" {
	approver "allow secret A" "deny * *"
	# A network namespace of its own with lo only: no route anywhere.
	run unshare -n sh -c 'ip link set lo up; cd "$1" && shift && exec "$@"' _ "$WS" \
		"$RUNTIME" --root "$ROOT" sandbox --no-tty --audit "$AUDIT" --approver "$APPROVER" --ask-secrets \
		--secret "A=$TEST_DIR/a" -- sh -c 'cat /run/secrets/A; echo; getent hosts example.test; echo "dns: $?"'
	assert_success
	assert_output_contains "warning: egress: upstream resolver"
	assert_output_contains "names will not resolve"
	assert_output_contains "$(cat "$TEST_DIR/a")"
	assert_output_contains "dns: 2"
	wait_for_no_gates
}

@test "secrets.ask without a secret asks nothing: no tmpfs, no mark, no gate" {
	approver "deny * *"
	run sandbox --no-tty --approver "$APPROVER" --ask-secrets -- sh -c 'cat /etc/hostname >/dev/null && ls / >/dev/null && echo ran'
	assert_success
	assert_output_contains ran
	[ ! -s "$TEST_DIR/approve.log" ] || fail "asked: $(cat "$TEST_DIR/approve.log")"
	[ -z "$(gates_left)" ] || fail "a gate: $(gates_left)"
}
