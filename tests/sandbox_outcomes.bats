#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# How `agentrun sandbox` ends, as a person reads it (one line on stderr
# for each way other than the command's own exit, and where /output went)
# and as a program reads it (--json-status FILE). rootless_sandbox_outcomes.bats
# is this suite run by an ordinary user: without a delegated cgroup there
# is no memory or pids limit and no peak memory (null, never a guess).
# Every test ends by checking the sandbox left nothing behind.

load helpers

setup() {
	common_setup
	WS=$TEST_DIR/ws
	OUT=$TEST_DIR/out
	mkdir -p "$WS" "$OUT"
	echo original >"$WS/a.txt"
	[ -z "$AR_TEST_USER" ] || chown -R "$AR_TEST_USER:$AR_TEST_USER" "$WS" "$OUT"
	export AGENTRUN_CONFIG_DIR=$TEST_DIR/cfg
	mkdir -p "$AGENTRUN_CONFIG_DIR"
	STATUS=$TEST_DIR/status.json
	touch "$TEST_DIR/marker"
	# Unique, so the process found is this test's.
	NAP=$((100000 + RANDOM))
	# A user's sandbox finds the user's systemd instance (its cgroup) the
	# way a login session does: through XDG_RUNTIME_DIR=/run/user/UID.
	if [ -n "$AR_TEST_USER" ] && sandbox_has_cgroup; then
		AR_AS_USER=("${AR_AS_USER[@]/#XDG_RUNTIME_DIR=*/XDG_RUNTIME_DIR=/run/user/$AR_TEST_USER}")
	fi
}

teardown() {
	sandbox_teardown
}

# sandbox ARG...: agentrun sandbox in the workspace, writing $STATUS.
sandbox() {
	(cd "$WS" && runtime sandbox --json-status "$STATUS" "$@")
}

# sandbox_in_bg ARG...: the same in the background (started_in_bg). A
# shell's background job starts with SIGINT ignored, which agentrun and
# the command would inherit: it gets its default back, as at a terminal.
sandbox_in_bg() {
	started_in_bg "${AR_AS_USER[@]}" sh -c 'cd "$1" && shift && exec env --default-signal=INT "$@"' sh "$WS" \
		"$RUNTIME" --root "$ROOT" sandbox --json-status "$STATUS" "$@"
}

# ended_bg: wait for $BG (10 s at most); its status in $RC, what it said
# in $output.
ended_bg() {
	wait_bg 10
	output=$(cat "$TEST_DIR/bg.err")
}

# The lines agentrun wrote but for warnings (a user's sandbox without a
# cgroup names the profile's limits it cannot enforce).
said() {
	grep -v '^agentrun: warning: ' <<<"$output" || true
}

# says LINE: that is all it said.
says() {
	[ "$(said)" = "$1" ] || fail "expected '$1', said: $output"
}

# make_git_ws: the workspace as a git repository with one commit, its
# owner's (the user's in a user's sandbox).
make_git_ws() {
	(cd "$WS" && "${AR_AS_USER[@]}" sh -c 'git init -q && git add a.txt && git -c user.name=t -c user.email=t@t commit -qm i')
}

# status_is JQ-FILTER [JQ ARGS...]: $STATUS is there and the filter holds.
status_is() {
	[ -f "$STATUS" ] || fail "no $STATUS"
	jq -e "$@" "$STATUS" >/dev/null || fail "not ($1): $(cat "$STATUS")"
}

# Does the sandbox get a cgroup (limits, peak memory)? Root does; a user
# only through a systemd instance of its own on cgroup v2.
sandbox_has_cgroup() {
	[ -z "$AR_TEST_USER" ] && return 0
	[ -S "/run/user/$AR_TEST_USER/bus" ] && [ -d /run/systemd/system ] \
		&& [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]
}

require_cgroup() {
	sandbox_has_cgroup || skip "no cgroup for uid $AR_TEST_USER's sandbox: no memory or pids limit"
}

@test "outcome: a command that exits by itself: no line, its status, and the JSON says exited" {
	host_kind_neutral
	run sandbox -- sh -c 'exit 7'
	assert_failure 7
	says ""
	status_is '.exitStatus == 7 and .reason == "exited" and .exitCode == 7 and .signal == null
		and .receivedSignal == null and .error == null'
	status_is '.output == null and .diff == null and .auditHead == null'
	status_is '(.durationMs.total | type == "number") and (.durationMs.command | type == "number")
		and .durationMs.command <= .durationMs.total'
	status_is '.id | test("^sandbox-[0-9a-f]{12}$")'
	if sandbox_has_cgroup; then
		status_is '.memoryPeakBytes > 0 and .oomKills == 0 and .refusedForks == 0'
	else
		status_is '.memoryPeakBytes == null and .oomKills == null and .refusedForks == null'
	fi
}

@test "outcome: a command found but in no format the kernel runs: the exec's error, 127, with the init or without" {
	host_kind_neutral
	printf 'not a program\n' >"$WS/bad"
	chmod +x "$WS/bad"
	[ -z "$AR_TEST_USER" ] || chown "$AR_TEST_USER:$AR_TEST_USER" "$WS/bad"
	local init
	for init in "" --no-init; do
		run -127 sandbox $init -- ./bad
		says "agentrun: exec \`./bad\`: Exec format error"
		status_is '.exitStatus == 127 and .reason == "exited" and .exitCode == 127'
		rm "$STATUS"
	done
}

@test "outcome: a command that is not there is 127, one that cannot be executed 126, as a shell's; the JSON says the same" {
	host_kind_neutral
	run -127 sandbox -- no-such-command-here
	says 'agentrun: exec: "no-such-command-here": executable file not found in $PATH'
	status_is '.exitStatus == 127 and .reason == "error"'
	rm "$STATUS"
	printf 'data\n' >"$WS/not-executable"
	[ -z "$AR_TEST_USER" ] || chown "$AR_TEST_USER:$AR_TEST_USER" "$WS/not-executable"
	run sandbox -- ./not-executable
	assert_failure 126
	says 'agentrun: exec: "./not-executable": permission denied'
	status_is '.exitStatus == 126 and .reason == "error"'
}

@test "outcome: a command killed by a signal: one line naming it, 128+N; one that exits 128+N itself is no signal" {
	host_kind_neutral
	run sandbox -- sh -c 'kill -SEGV $$'
	assert_failure 139
	says "agentrun: sandbox: killed by SIGSEGV"
	status_is '.exitStatus == 139 and .reason == "signal" and .signal == "SIGSEGV" and .exitCode == null'

	# The init's exit code is 139 either way: it reports which it was.
	run sandbox -- sh -c 'exit 139'
	assert_failure 139
	says ""
	status_is '.exitStatus == 139 and .reason == "exited" and .exitCode == 139 and .signal == null'
}

@test "outcome: a SIGKILL from outside: 137, one line, and the JSON names it, with the init or without" {
	local init
	for init in "" --no-init; do
		sandbox_in_bg $init -- sleep "$NAP"
		kill -KILL "$(wait_for_nap)"
		ended_bg
		[ "$RC" = 137 ] || fail "$init: status $RC: $output"
		says "agentrun: sandbox: killed by SIGKILL"
		status_is '.exitStatus == 137 and .reason == "signal" and .signal == "SIGKILL" and .receivedSignal == null'
		rm "$STATUS"
	done
}

@test "outcome: SIGTERM or SIGINT to agentrun sandbox is passed on, and it says so whether the command dies of it or not" {
	host_kind_neutral
	sandbox_in_bg -- sleep "$NAP"
	wait_for_nap >/dev/null
	kill -TERM "$BG"
	ended_bg
	[ "$RC" = 143 ] || fail "status $RC: $output"
	says "agentrun: sandbox: SIGTERM received and passed on; killed by SIGTERM"
	status_is '.exitStatus == 143 and .reason == "signal" and .signal == "SIGTERM" and .receivedSignal == "SIGTERM"'

	sandbox_in_bg -- sh -c "trap 'exit 3' INT; sleep $NAP & wait"
	wait_for_nap >/dev/null
	kill -INT "$BG"
	ended_bg
	[ "$RC" = 3 ] || fail "status $RC: $output"
	says "agentrun: sandbox: SIGINT received and passed on; the command exited 3"
	status_is '.exitStatus == 3 and .reason == "exited" and .exitCode == 3 and .signal == null and .receivedSignal == "SIGINT"'
}

@test "outcome: the wall-clock limit: 124, one line, reason timeout" {
	run sandbox --timeout 1s -- sleep 30
	assert_failure 124
	says "agentrun: sandbox: wall-clock limit 1s reached, killed"
	status_is '.exitStatus == 124 and .reason == "timeout" and .signal == "SIGKILL" and .exitCode == null'
}

@test "outcome: the wall-clock limit with a terminal (-t) is the same: 124, reason timeout" {
	run script -qec "cd '$WS' && '$RUNTIME' --root '$ROOT' sandbox -t --json-status '$STATUS' --timeout 1s -- sleep 30" /dev/null
	assert_failure 124
	assert_output_contains "agentrun: sandbox: wall-clock limit 1s reached, killed"
	refute_output_contains "killed by SIGKILL"
	status_is '.exitStatus == 124 and .reason == "timeout" and .signal == "SIGKILL"'
}

@test "outcome: an OOM kill: 137, one line, reason oom, the peak memory within the limit" {
	require_cgroup
	run sandbox --memory 32m -- sh -c 'exec python3 -c "b = bytearray(200 << 20)"'
	assert_failure 137
	says "agentrun: sandbox: out of memory (limit 32M), killed"
	status_is '.exitStatus == 137 and .reason == "oom" and .oomKills >= 1 and .signal == "SIGKILL"'
	status_is '.memoryPeakBytes > 0 and .memoryPeakBytes <= 33554432'
}

@test "outcome: the pids limit: forks refused, one line, reason pids, the command's own status" {
	require_cgroup
	run sandbox --pids 20 -- sh -c 'sh -c "for i in \$(seq 1 50); do sleep 5 & done" 2>/dev/null; exit 4'
	assert_failure 4
	[[ $(said) =~ ^"agentrun: sandbox: pids limit 20 reached, "[0-9]+" fork(s) refused"$ ]] || fail "said: $output"
	status_is '.exitStatus == 4 and .reason == "pids" and .exitCode == 4 and .refusedForks >= 1'
}

@test "outcome: where /output went, the diff and the audit head, in a line and in the JSON; a relative --json-status is the caller's" {
	host_kind_neutral
	local audit=$TEST_DIR/audit.log dest
	# A git workspace the command changes (one file changed, one added).
	make_git_ws
	run runtime_in_ws sandbox --json-status ../status.json -o "$OUT" --diff "$TEST_DIR/changes.diff" --audit "$audit" \
		-- sh -c 'echo 1 >/output/one; mkdir /output/d; echo 2 >/output/d/two; echo 3 >/output/d/three; echo more >>a.txt; echo new >b.txt'
	assert_success
	dest=$(find "$OUT" -mindepth 1 -maxdepth 1 -name 'sandbox-*')
	[ -d "$dest" ] || fail "nothing exported to $OUT"
	says "agentrun: output: $dest (3 files)"
	status_is '.output == {path: $dest, files: 3, withheld: 0, kept: false}' --arg dest "$dest"
	status_is '.diff == {path: $diff, filesChanged: 2, withheld: 0, bundle: null, error: null}' --arg diff "$TEST_DIR/changes.diff"
	status_is '.id == ($dest | split("/") | last)' --arg dest "$dest"
	# The head is the log's last line as it stands, which `audit` takes.
	status_is '.auditHead | test("^[0-9]+:[0-9a-f]{64}$")'
	[ "$(jq -r '.auditHead | split(":")[0]' "$STATUS")" = "$(wc -l <"$audit")" ] || fail "head is not the last line"
	run runtime audit --head "$(jq -r .auditHead "$STATUS")" "$audit"
	assert_success
}

# runtime_in_ws ARG...: the runtime, run from the workspace.
runtime_in_ws() {
	(cd "$WS" && runtime "$@")
}

@test "outcome: an --output directory that refuses the export only at the end: /output is kept under the state root, and the line says where and why" {
	host_kind_neutral
	[ -z "$AR_TEST_USER" ] || skip "a read-only bind needs root"
	local late=$TEST_DIR/late
	mkdir -p "$late"
	sandbox_in_bg -o "$late" -- sh -c "echo important >/output/result.txt; sleep $NAP; true"
	local nap
	nap=$(wait_for_nap)
	# The directory passed the check at the start; now it refuses.
	mount --bind "$late" "$late"
	mount -o remount,bind,ro "$late"
	kill "$nap"
	ended_bg
	umount "$late"
	[ "$RC" = 0 ] || fail "status $RC: $output"
	local kept
	kept=$(find "$ROOT/.output-kept" -mindepth 1 -maxdepth 1 -type d -name 'sandbox-*')
	[ -n "$kept" ] && [ "$(cat "$kept/result.txt")" = important ] || fail "not kept: $(ls -R "$ROOT/.output-kept" 2>&1)"
	assert_output_contains "agentrun: output: not exported to \`$late\` (output: create \`$late/"
	assert_output_contains "Read-only file system): kept in $kept"
	status_is '.output == {path: $kept, files: 1, withheld: 0, kept: true}' --arg kept "$kept"
	[ -z "$(ls -A "$late")" ] || fail "something in $late: $(ls -A "$late")"
	rm -rf "$ROOT/.output-kept"
}

@test "outcome: a failed diff is in the JSON, with the status --diff-strict gives" {
	host_kind_neutral
	make_git_ws
	run sandbox --diff "$TEST_DIR/changes.diff" --diff-strict \
		-- sh -c 'echo x >>a.txt && echo "ref: refs/heads/../../../etc/passwd" >.git/HEAD; exit 3'
	assert_failure 125
	status_is '.exitStatus == 125 and .reason == "exited" and .exitCode == 3'
	status_is '.diff.path == $diff and (.diff.error | type == "string") and .diff.filesChanged >= 1' --arg diff "$TEST_DIR/changes.diff"
}

@test "outcome: a sandbox that fails to start, or whose flag is refused, still writes its JSON, with the error" {
	host_kind_neutral
	mkdir -p "$AGENTRUN_CONFIG_DIR/profiles"
	echo '{"extends": "agent", "limits": ' >"$AGENTRUN_CONFIG_DIR/profiles/broken.json"
	run sandbox_with_profile broken -- true
	assert_failure 125
	status_is '.exitStatus == 125 and .reason == "error" and (.error | type == "string") and .exitCode == null and .signal == null'
	status_is '.durationMs.command == null and .memoryPeakBytes == null'
	# A flag value refused once --json-status was accepted: written too.
	rm -f "$STATUS"
	run sandbox --secret "tok=$TEST_DIR/no-such-file" -- true
	assert_failure 125
	assert_output_contains "--secret tok"
	status_is '.reason == "error" and (.error | test("--secret tok"))'
}

sandbox_with_profile() {
	local profile=$1
	shift
	(cd "$WS" && runtime --profile "$profile" sandbox --json-status "$STATUS" "$@")
}

@test "outcome: a --json-status that cannot be written is refused before anything runs" {
	host_kind_neutral
	local bad
	echo file >"$TEST_DIR/plain"
	for bad in "$TEST_DIR/no/such/dir/s.json" "$TEST_DIR/plain/s.json" "$TEST_DIR" "$TEST_DIR/ws/."; do
		run runtime_in_ws sandbox -o "$OUT" --json-status "$bad" -- sh -c 'echo ran >/output/ran'
		assert_failure 125
		assert_output_contains "agentrun: sandbox: --json-status \`$bad\`"
		[ "$(said | grep -c .)" = 1 ] || fail "not one line: $output"
		[ -z "$(ls -A "$OUT")" ] || fail "the command ran for $bad: $(ls -A "$OUT")"
	done
	[ ! -e "$TEST_DIR/no" ] || fail "made a directory"
}
