#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Supervision to the end and an audit log that misses nothing: a container
# whose foreground runtime dies dies too and leaves nothing the next
# create, list or delete does not remove; the sandbox's PID 1 reaps and
# passes signals on; a limit that ended a run says so; every exec, the
# sandbox's own command line and the workspace's changes are in the log,
# and a log cut at the end shows against its head.

load helpers

setup() {
	common_setup
	export AGENTRUN_CONFIG_DIR=$TEST_DIR/cfg
	mkdir -p "$AGENTRUN_CONFIG_DIR/profiles"
	AUDIT=$TEST_DIR/audit.log
	jq -n --arg audit "$AUDIT" '{extends: "agent", audit: {path: $audit}}' \
		>"$AGENTRUN_CONFIG_DIR/profiles/t.json"
	WS=$TEST_DIR/ws
	mkdir -p "$WS"
	echo original >"$WS/a.txt"
	echo doomed >"$WS/gone.txt"
	# Unique, so the processes found are this test's.
	NAP=$((100000 + RANDOM))
}

teardown() {
	common_teardown
}

sandbox() {
	(cd "$WS" && runtime sandbox "$@")
}

# gone PID: the process ends within 3 s.
gone() {
	local i
	for i in $(seq 1 60); do
		pid_alive "$1" || return 0
		sleep 0.05
	done
	echo "process $1 still runs: $(tr '\0' ' ' <"/proc/$1/cmdline")" >&2
	return 1
}

# audit_has FILTER [JQ ARGS...]: some record of the log matches (jq 1.6's
# -e looks at the last input, not the last output: hence -s and any).
audit_has() {
	local filter=$1; shift
	jq -se "$@" "any(.[]; $filter)" "$AUDIT" >/dev/null
}

# Nothing of this test's containers left: state dirs, sandbox bundles,
# mounts.
nothing_left() {
	[ -z "$(state_entries)" ] || fail "state dirs left: $(state_entries)"
	[ -z "$(find "$ROOT/.sandbox" -mindepth 1 2>/dev/null)" ] || fail "bundles left: $(ls "$ROOT/.sandbox")"
	[ -z "$(mounts_under "$ROOT")" ] || fail "mounts left: $(mounts_under "$ROOT")"
}

@test "supervise: SIGKILL of a foreground run kills its container; the next list removes what it left" {
	set_args sleep "$NAP"
	started_in_bg "$RUNTIME" --root "$ROOT" --profile t run --bundle "$BUNDLE" "$CID"
	local nap
	nap=$(wait_for_nap)
	kill -KILL "$BG"
	gone "$nap"
	[ "$(ctr_status)" = stopped ]
	run runtime list -q
	assert_success
	assert_output ""
	nothing_left
	audit_has '.event == "supervisor-gone"' || fail "$(cat "$AUDIT")"
}

@test "supervise: a foreground run holds a lock on its supervisor record; a create tells it lives by that lock alone, and reads a record nobody locks" {
	command -v strace >/dev/null || skip "strace is not installed (contrib/install-deps.sh)"
	command -v flock >/dev/null || skip "flock(1) is not installed (util-linux)"
	set_args sleep "$NAP"
	started_in_bg "$RUNTIME" --root "$ROOT" run --bundle "$BUNDLE" "$CID"
	wait_for_nap >/dev/null
	run flock --nonblock --shared "$ROOT/$CID/supervisor" true
	[ "$status" -ne 0 ] || fail "nobody holds the lock of $CID's supervisor record"
	# Another create's reaper neither reads the record nor the
	# supervisor's /proc/PID/stat: the lock said enough.
	strace -o "$TEST_DIR/create.trace" -e trace=openat,open \
		"$RUNTIME" --root "$ROOT" create --bundle "$BUNDLE" "${CID}-b" \
		</dev/null >"$TEST_DIR/create.out" 2>&1 || fail "$(cat "$TEST_DIR/create.out")"
	! grep -q "/proc/$BG/stat" "$TEST_DIR/create.trace" || fail "$(grep "/proc/$BG/" "$TEST_DIR/create.trace")"
	runtime_bg delete --force "${CID}-b"
	# A record written without the lock (an older build's supervisor) is
	# read: its process lives, so its container stays.
	cp "$ROOT/$CID/supervisor" "$TEST_DIR/record"
	mv "$TEST_DIR/record" "$ROOT/$CID/supervisor"
	flock --nonblock "$ROOT/$CID/supervisor" true
	strace -o "$TEST_DIR/create.trace" -e trace=openat,open \
		"$RUNTIME" --root "$ROOT" create --bundle "$BUNDLE" "${CID}-c" \
		</dev/null >"$TEST_DIR/create.out" 2>&1 || fail "$(cat "$TEST_DIR/create.out")"
	grep -q "/proc/$BG/stat" "$TEST_DIR/create.trace" || fail "the unlocked record was not checked"
	[ "$(ctr_status)" = running ]
	runtime_bg delete --force "${CID}-c"
}

@test "supervise: SIGKILL of a sandbox mid-command kills the command; the next sandbox removes its state, bundle and mounts" {
	started_in_bg sh -c "cd '$WS' && exec '$RUNTIME' --root '$ROOT' sandbox -- sleep $NAP"
	local nap
	nap=$(wait_for_nap)
	[ -n "$(state_entries)" ]
	kill -KILL "$BG"
	gone "$nap"
	run sandbox -- true
	assert_success
	nothing_left
}

@test "supervise: SIGKILL of exec mid-command kills the exec'd process, the container runs on; the log has its start without an end" {
	set_args sleep 1000
	runtime_bg --profile t run --detach --bundle "$BUNDLE" "$CID"
	started_in_bg "$RUNTIME" --root "$ROOT" exec "$CID" sleep "$NAP"
	local nap
	nap=$(wait_for_nap)
	kill -KILL "$BG"
	gone "$nap"
	[ "$(ctr_status)" = running ]
	[ "$(jq -c 'select(.event == "exec-start") | .argv' "$AUDIT")" = "[\"sleep\",\"$NAP\"]" ] || fail "$(cat "$AUDIT")"
	[ -z "$(jq -c 'select(.event == "exec")' "$AUDIT")" ]
	run runtime delete --force "$CID"
	assert_success
	nothing_left
}

@test "supervise: SIGKILL during create (before the init is released) and during delete: delete --force leaves nothing" {
	command -v strace >/dev/null || skip "strace is not installed (contrib/install-deps.sh)"
	set_args sleep "$NAP"
	# The first sendmsg is the go-ahead to the init, after state.json.
	run strace -f -o /dev/null -e trace=sendmsg -e inject=sendmsg:signal=SIGKILL:when=1 \
		"$RUNTIME" --root "$ROOT" --profile t create --bundle "$BUNDLE" "$CID"
	[ -e "$ROOT/$CID/state.json" ] || fail "create died before its state record: $output"
	[ -z "$(pgrep -xf "sleep $NAP")" ]
	run runtime delete --force "$CID"
	assert_success
	nothing_left

	runtime_bg --profile t create --bundle "$BUNDLE" "$CID"
	# Killed at its first unmount: the overlay's teardown is half done.
	run strace -f -o /dev/null -e trace=umount2 -e inject=umount2:signal=SIGKILL:when=1 \
		"$RUNTIME" --root "$ROOT" delete --force "$CID"
	[ -z "$(pgrep -xf "sleep $NAP")" ]
	run runtime delete --force "$CID"
	assert_success
	nothing_left
}

@test "supervise: SIGKILL of the runtime after start leaves no process of the container, whichever verb it was" {
	set_args sh -c "sleep $NAP & exec sleep $NAP"
	started_in_bg "$RUNTIME" --root "$ROOT" --profile t run --bundle "$BUNDLE" "$CID"
	wait_for_nap >/dev/null
	sleep 0.2
	kill -KILL "$BG"
	wait_no_pids "$CID" || fail "left running: $(pids_matching "$CID")"
}

@test "sandbox init: PID 1 is an init that reaps; the command is its child; --no-init makes the command PID 1" {
	run sandbox -- sh -c 'echo $$; sh -c "sleep 0.1 & exit"; sleep 0.5; awk "\$3 == \"Z\"" /proc/[0-9]*/stat | wc -l'
	assert_success
	[ "${lines[0]}" = 2 ] || fail "$output"
	[ "${lines[1]}" = 0 ] || fail "zombies: $output"
	run sandbox --no-init -- sh -c 'echo $$'
	assert_output 1
}

@test "sandbox init: SIGTERM without a terminal ends a command that is PID 1's child; a second signal kills one that ignores it" {
	started_in_bg sh -c "cd '$WS' && exec '$RUNTIME' --root '$ROOT' sandbox -- sleep $NAP"
	wait_for_nap >/dev/null
	kill -TERM "$BG"
	wait_bg 3
	[ "$RC" = 143 ] || fail "status $RC: $(cat "$TEST_DIR/bg.err")"

	started_in_bg sh -c "cd '$WS' && exec '$RUNTIME' --root '$ROOT' sandbox -- sh -c 'trap \"\" TERM INT; while :; do sleep $NAP; done'"
	wait_for_nap >/dev/null
	kill -TERM "$BG"
	sleep 0.5
	pid_alive "$BG" || fail "ended on the first signal, which it ignores"
	kill -INT "$BG"
	wait_bg 3
	[ "$RC" = 137 ] || fail "status $RC: $(cat "$TEST_DIR/bg.err")"
}

@test "sandbox: a timeout, an OOM kill and a pids limit each say so on stderr" {
	run sandbox --timeout 1s -- sleep 30
	assert_failure 124
	assert_output_contains "agentrun: sandbox: wall-clock limit 1s reached, killed"
	run sandbox --memory 32m -- sh -c 'exec python3 -c "b = bytearray(200 << 20)"'
	assert_failure 137
	assert_output_contains "agentrun: sandbox: out of memory (limit 32M), killed"
	run sandbox --pids 20 -- sh -c 'sh -c "for i in \$(seq 1 50); do sleep 5 & done" 2>/dev/null; echo alive'
	assert_success
	assert_output_contains "agentrun: sandbox: pids limit 20 reached"
	run sandbox -- true
	assert_output ""
}

@test "audit: an exec that cannot start is logged with its error, a finished one with its status, each after its start" {
	set_args sleep 1000
	runtime_bg --profile t run --detach --bundle "$BUNDLE" "$CID"
	run runtime exec --cwd /tmp "$CID" /no/such/binary arg
	assert_failure
	run runtime exec --cgroup nosuchsub "$CID" true
	assert_failure
	run runtime exec -u 1000 "$CID" sh -c 'exit 3'
	assert_failure 3
	run runtime delete --force "$CID"
	[ "$(jq -r 'select(.event | startswith("exec")) | .event' "$AUDIT" | paste -sd' ')" = "exec-start exec exec-start exec exec-start exec" ] ||
		fail "$(cat "$AUDIT")"
	audit_has '.event == "exec-start" and .argv == ["/no/such/binary", "arg"] and .cwd == "/tmp" and .uid == 0' || fail "$(cat "$AUDIT")"
	audit_has '.event == "exec" and .argv[0] == "/no/such/binary" and (.error | test("no/such/binary")) and (has("status") | not)'
	audit_has '.event == "exec" and .argv[0] == "true" and (.error | test("cgroup"))'
	audit_has '.event == "exec" and .uid == 1000 and .status == 3'
	run "$RUNTIME" --root "$ROOT" audit "$AUDIT"
	assert_success
}

@test "audit: the sandbox's own command line and the workspace's changes are in the log" {
	run sandbox --audit "$AUDIT" -e MARK=1 -- sh -c 'echo new >>a.txt; rm gone.txt; echo x >made.txt'
	assert_success
	audit_has '.event == "create" and .command == ["sandbox", "--audit", $log, "-e", "MARK=1", "--", "sh", "-c", "echo new >>a.txt; rm gone.txt; echo x >made.txt"] and .cwd == $ws' --arg ws "$WS" --arg log "$AUDIT" ||
		fail "$(cat "$AUDIT")"
	audit_has '.event == "fs-changes" and .modified == [$ws + "/a.txt"] and .deleted == [$ws + "/gone.txt"] and .created == [$ws + "/made.txt"]' --arg ws "$WS" ||
		fail "$(grep fs-changes "$AUDIT")"
}

@test "audit: a log cut at the end or with its last line rewritten fails against its head; --head N:HASH checks a given one" {
	run sandbox --audit "$AUDIT" -- true
	run sandbox --audit "$AUDIT" -- true
	local n head
	n=$(wc -l <"$AUDIT")
	run runtime audit --show-head "$AUDIT"
	assert_success
	head=$output
	[ "${head%%:*}" = "$n" ]
	[ "${head#*:}" = "$(tail -1 "$AUDIT" | tr -d '\n' | sha256sum | cut -d' ' -f1)" ]
	run runtime audit "$AUDIT"
	assert_output "ok $n lines"
	cp "$AUDIT" "$TEST_DIR/orig"

	# Whole lines cut off the end: the chain still holds, the head does not.
	head -n -2 "$TEST_DIR/orig" >"$AUDIT"
	run runtime audit "$AUDIT"
	assert_failure 1
	assert_output "truncated: the head says $n lines, the log has $((n - 2))"
	run "$RUNTIME" audit --head "$head" "$AUDIT"
	assert_failure 1
	assert_output "truncated: the head says $n lines, the log has $((n - 2))"

	# The last line rewritten: nothing after it to break, the head does.
	sed '$s/"delete"/"DELETED"/' "$TEST_DIR/orig" >"$AUDIT"
	run runtime audit "$AUDIT"
	assert_failure 1
	assert_output "line $n: does not match the head"

	cp "$TEST_DIR/orig" "$AUDIT"
	run "$RUNTIME" audit --head "3:$(sed -n 3p "$AUDIT" | tr -d '\n' | sha256sum | cut -d' ' -f1)" "$AUDIT"
	assert_output "ok $n lines"
	run "$RUNTIME" audit --head 3:nothex "$AUDIT"
	assert_failure 1
	assert_output_contains "expected N:SHA256"
}

@test "audit: a log cut at the end stays caught after the next sandbox appends; --forget-head after a rotation" {
	run sandbox --audit "$AUDIT" -- true
	run sandbox --audit "$AUDIT" -- true
	local n head cut
	n=$(wc -l <"$AUDIT")
	head=$(runtime audit --show-head "$AUDIT")
	# The second sandbox's lines cut off; then a third sandbox appends.
	cut=$(grep -n '"event":"delete"' "$AUDIT" | head -1 | cut -d: -f1)
	[ "$cut" -gt 1 ] && [ "$cut" -lt "$n" ]
	head -n "$cut" "$AUDIT" >"$TEST_DIR/cut" && cat "$TEST_DIR/cut" >"$AUDIT"
	run sandbox --audit "$AUDIT" -- true
	assert_success
	[ "$(grep -c "^agentrun: warning: audit log: \`$AUDIT\` no longer holds line $n," <<<"$output")" = 1 ] || fail "said: $output"
	run runtime audit --show-head "$AUDIT"
	assert_output "$head"
	run runtime audit "$AUDIT"
	assert_failure 1
	assert_output "line $n: does not match the head"

	# Rotated: moved away, its head forgotten (printed, to check it by).
	mv "$AUDIT" "$TEST_DIR/audit.log.1"
	run runtime audit --forget-head "$AUDIT"
	assert_success
	assert_output "$head"
	run runtime audit --forget-head "$AUDIT"
	assert_failure 1
	assert_output_contains "no head kept for \`$AUDIT\`"
	run sandbox --audit "$AUDIT" -- true
	assert_success
	[ "$(grep -c 'warning: audit' <<<"$output")" = 0 ] || fail "said: $output"
	run runtime audit "$AUDIT"
	assert_output "ok $(wc -l <"$AUDIT") lines"
}
