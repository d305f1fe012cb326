#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Sandboxes made ahead (agentrun pool, sandbox --pool): a pooled sandbox
# runs the caller's command as a fresh one would (stdio, exit status,
# env, workdir, --diff, --json-status, the agent's confinement), its
# wall-clock limit counts from the take, two of them share nothing, the
# pool refills itself, bad input is one line that leaves nothing, and a
# taker that dies takes its sandbox with it.

load helpers
load sandbox_helpers

setup() {
	common_setup_sandbox
	POOL=$CID
}

teardown() {
	if [ -n "${POOL:-}" ]; then
		runtime pool rm "$POOL" >/dev/null 2>&1 || true
		# A filler that waited for the lock sees the pool gone, and ends.
		local i
		for i in $(seq 1 100); do
			[ -z "$(live_pids_of $(grep -lsF -- "pool fill $POOL" /proc/[0-9]*/cmdline))" ] && break
			sleep 0.05
		done
	fi
	sandbox_teardown
}

# pool_create [OPTIONS]: the pool $POOL (named by the test, so its
# sandboxes' cgroups and processes are the test's), made in the workspace.
pool_create() {
	(cd "$WS" && runtime pool create "$POOL" "$@")
}

pooled() {
	(cd "$WS" && runtime sandbox --pool "$POOL" "$@")
}

# ready_count: the pool's READY column.
ready_count() {
	runtime pool list | awk -v n="$POOL" '$1 == n { print $3 }'
}

# wait_ready N: the filler made the pool whole again.
wait_ready() {
	local i
	for i in $(seq 1 200); do
		[ "$(ready_count)" = "$1" ] && return 0
		sleep 0.05
	done
	fail "pool $POOL: $(ready_count) ready, not $1; fill.log: $(cat "$ROOT/.pool/$POOL/fill.log" 2>/dev/null)"
}

@test "pool: create makes N sandboxes that wait, created; list shows them; rm leaves nothing" {
	host_kind_neutral
	run pool_create --size 3
	assert_success
	run runtime pool list
	assert_success
	assert_output_contains "$POOL	3	3"
	run runtime list
	[ "$(grep -c "^$POOL-.* created " <<<"$output")" -eq 3 ] || fail "not 3 created: $output"
	local id
	id=$(ls "$ROOT/.pool/$POOL/ready" | head -1)
	run runtime start "$id"
	assert_failure
	assert_output_contains "waits in a pool: agentrun sandbox --pool takes it"
	run runtime pool rm "$POOL"
	assert_success
	POOL=
	[ -z "$(state_entries)" ] || fail "left: $(state_entries)"
	[ ! -e "$ROOT/.pool" ] || fail "left: $(ls -la "$ROOT/.pool")"
	[ -z "$(cgroups_named "$CID")" ] || fail "cgroups left: $(cgroups_named "$CID")"
}

@test "pool: a sandbox claimed by a taker that died before starting it goes with the pool" {
	host_kind_neutral
	run pool_create --size 2
	assert_success
	local id
	id=$(ls "$ROOT/.pool/$POOL/ready" | head -1)
	# What a taker killed between its claim and its start leaves.
	mv "$ROOT/.pool/$POOL/ready/$id" "$ROOT/.pool/$POOL/taken/$id"
	run runtime pool rm "$POOL"
	assert_success
	POOL=
	[ -z "$(state_entries)" ] || fail "left: $(state_entries)"
}

@test "pool: the command gets the caller's stdio and exit status, -e, --env-file, --workdir, the agent's confinement" {
	host_kind_neutral
	run pool_create --size 1 -e FROM_POOL=p -e OVER=pool
	assert_success
	printf 'FROM_FILE=f\n' >"$TEST_DIR/env"
	run bash -c "echo fed | (cd '$WS' && '$RUNTIME' --root '$ROOT' sandbox --pool '$POOL' -e OVER=call --env-file '$TEST_DIR/env' --workdir sub -- sh -c 'cat; echo \$FROM_POOL \$OVER \$FROM_FILE; pwd; grep -E \"^(NoNewPrivs|Seccomp):\" /proc/self/status; echo err >&2; exit 7')"
	[ "$status" -eq 7 ] || fail "status $status: $output"
	assert_output_contains "fed"
	assert_output_contains "p call f"
	assert_output_contains "$WS/sub"
	assert_output_contains "NoNewPrivs:	1"
	assert_output_contains "Seccomp:	2"
	assert_output_contains "err"
	[ -d "$WS/sub" ] && fail "the workspace changed on the host"
	run pooled -- sh -c 'echo $OVER; pwd'
	assert_success
	assert_output_contains "pool"
	assert_output_contains "$WS"
}

@test "pool: a missing command is the error a fresh sandbox gives; the sandbox goes" {
	host_kind_neutral
	pool_create --size 1
	local id
	id=$(ls "$ROOT/.pool/$POOL/ready")
	run -127 pooled -- no-such-command-here
	assert_output_contains 'exec: "no-such-command-here": executable file not found in $PATH'
	[ ! -e "$ROOT/$id" ] || fail "the sandbox $id is left"
	# The filler the take started makes its successor, the only one.
	wait_ready 1
	[ "$(state_entries | wc -l)" -eq 1 ] || fail "left: $(state_entries)"
}

@test "pool: --diff and --json-status are each call's own; the audit log has the take" {
	host_kind_neutral
	pool_create --size 2 --audit "$TEST_DIR/audit.log"
	run pooled --diff "$TEST_DIR/d.patch" --json-status "$TEST_DIR/s.json" -- sh -c 'echo changed >a.txt; rm gone.txt'
	assert_success
	grep -q '^+changed' "$TEST_DIR/d.patch" || fail "diff: $(cat "$TEST_DIR/d.patch")"
	grep -q '^deleted file mode' "$TEST_DIR/d.patch" || fail "no deletion in the diff"
	[ "$(jq -r .reason "$TEST_DIR/s.json")" = exited ] || fail "$(cat "$TEST_DIR/s.json")"
	[ "$(jq -r .diff.filesChanged "$TEST_DIR/s.json")" = 2 ] || fail "$(cat "$TEST_DIR/s.json")"
	grep -q original "$WS/a.txt" || fail "the host's workspace changed"
	# The next one starts from the pool's state, not the first one's.
	run pooled -- cat a.txt gone.txt
	assert_success
	assert_output_contains original
	assert_output_contains doomed
	# The command each sandbox was given, in the chained log.
	[ "$(jq -c 'select(.event == "take") | .argv' "$TEST_DIR/audit.log" | tail -1)" = '["cat","a.txt","gone.txt"]' ] \
		|| fail "no take record: $(grep take "$TEST_DIR/audit.log")"
	[ "$(jq -r 'select(.event == "start") | .id' "$TEST_DIR/audit.log" | wc -l)" -eq 2 ] || fail "starts: $(cat "$TEST_DIR/audit.log")"
	run runtime audit "$TEST_DIR/audit.log"
	assert_success
}

@test "pool: two pooled sandboxes share nothing (namespaces, cgroup, root overlay, /tmp)" {
	pool_create --size 2
	# Each says what it sees, then stays until the test has looked at
	# both from the host (a slow machine may take seconds between them).
	local probe='for n in mnt pid net uts ipc cgroup; do readlink /proc/self/ns/$n; done; echo mine-$1 >/tmp/own; echo mine-$1 >/var/tmp/own; cat /tmp/own /var/tmp/own; echo started; exec sleep 300'
	(cd "$WS" && exec "$RUNTIME" --root "$ROOT" sandbox --pool "$POOL" -- sh -c "$probe" sh A >"$TEST_DIR/a.out" 2>&1) &
	local a=$!
	track_pid $a
	(cd "$WS" && exec "$RUNTIME" --root "$ROOT" sandbox --pool "$POOL" -- sh -c "$probe" sh B >"$TEST_DIR/b.out" 2>&1) &
	local b=$!
	track_pid $b
	wait_for_file_content "$TEST_DIR/a.out" started 60
	wait_for_file_content "$TEST_DIR/b.out" started 60
	# Each in a cgroup of its own: the host's view of each one's init.
	local id pid running=0
	for id in $(runtime list | awk '$3 == "running" { print $1 }'); do
		pid=$(ctr_pid "$id")
		grep -q "/$id\$" "/proc/$pid/cgroup" || fail "$id ($pid) is not in its own cgroup: $(cat "/proc/$pid/cgroup")"
		running=$((running + 1))
	done
	[ "$running" -eq 2 ] || fail "$running running: $(runtime list)"
	kill -TERM $a $b
	wait $a || true
	wait $b || true
	local common
	common=$(comm -12 <(grep -E '^[a-z]+:\[' "$TEST_DIR/a.out" | sort) <(grep -E '^[a-z]+:\[' "$TEST_DIR/b.out" | sort))
	[ -z "$common" ] || fail "namespaces shared: $common"
	[ "$(grep -c ':\[' "$TEST_DIR/a.out")" -eq 6 ] || fail "A: $(cat "$TEST_DIR/a.out")"
	[ "$(grep -c '^mine-A$' "$TEST_DIR/a.out")" -eq 2 ] || fail "A saw: $(cat "$TEST_DIR/a.out")"
	[ "$(grep -c '^mine-B$' "$TEST_DIR/b.out")" -eq 2 ] || fail "B saw: $(cat "$TEST_DIR/b.out")"
	[ ! -e /var/tmp/own ] || fail "/var/tmp/own reached the host"
}

@test "pool: each take starts a filler; the pool is whole again, and an empty pool waits for it" {
	host_kind_neutral
	pool_create --size 1 --allow-net 10.99.0.1
	run pooled -- true
	assert_success
	wait_ready 1
	# The filler's sandboxes have the egress hook beside the binary the
	# taker ran, as the pool's first ones have (not one found in PATH).
	local id
	id=$(ls "$ROOT/.pool/$POOL/ready")
	grep -qF "\"path\":\"$(dirname "$RUNTIME")/agentrun-egress\"" "$ROOT/$id/config.json" \
		|| fail "hooks: $(jq -c .hooks "$ROOT/$id/config.json")"
	# Take two at once from a pool of one: the second waits for the
	# filler's next sandbox instead of failing.
	(cd "$WS" && "$RUNTIME" --root "$ROOT" sandbox --pool "$POOL" -- echo one >"$TEST_DIR/one.out" 2>&1) &
	local one=$!
	track_pid $one
	run pooled -- echo two
	assert_success
	assert_output_contains two
	wait $one || fail "one: $(cat "$TEST_DIR/one.out")"
	grep -q one "$TEST_DIR/one.out" || fail "one: $(cat "$TEST_DIR/one.out")"
	wait_ready 1
}

@test "pool: --timeout counts from the take, not from when the sandbox was made" {
	host_kind_neutral
	pool_create --size 1 --timeout 2s
	# Longer than the limit in the pool: a limit counted from the create
	# would end the sandbox before the command could print.
	sleep 3
	run pooled --json-status "$TEST_DIR/s.json" -- sh -c 'echo started; sleep 30'
	assert_failure
	assert_output_contains started
	[ "$(jq -r .reason "$TEST_DIR/s.json")" = timeout ] || fail "$(cat "$TEST_DIR/s.json")"
}

@test "pool: a sandbox whose init died while it waited is deleted with a warning; the take runs in the next one" {
	host_kind_neutral
	pool_create --size 1
	local id pid
	id=$(ls "$ROOT/.pool/$POOL/ready")
	pid=$(jq -r .pid "$ROOT/$id/state.json")
	kill -KILL "$pid"
	run pooled -- echo ran
	assert_success
	assert_output_contains ran
	assert_output_contains "warning: pool \`$POOL\`: container \`$id\`: its init is gone"
	[ ! -e "$ROOT/$id" ] || fail "the dead sandbox's state is left"
}

# A sandbox's init killed after the taker connected to it and sent the
# command, before it read it: the taker sees the connection end, not a
# refusal. Nothing of the command ran, so the next sandbox takes it; the
# launcher's take (the plain form) and the runtime's own (-e) alike.
@test "pool: an init that dies after the taker connected is deleted with a warning; the take runs in the next one" {
	host_kind_neutral
	pool_create --size 1
	local form id pid
	for form in plain env; do
		wait_ready 1
		id=$(ls "$ROOT/.pool/$POOL/ready")
		pid=$(jq -r .pid "$ROOT/$id/state.json")
		kill -STOP "$pid"
		if [ $form = plain ]; then
			started_in_bg bash -c "cd '$WS' && exec '$RUNTIME' --root '$ROOT' sandbox --pool '$POOL' -- echo ran"
		else
			started_in_bg bash -c "cd '$WS' && exec '$RUNTIME' --root '$ROOT' sandbox --pool '$POOL' -e FORM=env -- sh -c 'echo ran \$FORM'"
		fi
		connected_to "$id"
		kill -KILL "$pid"
		wait_bg 30
		[ "$RC" -eq 0 ] || fail "$form: status $RC: $(cat "$TEST_DIR/bg.out" "$TEST_DIR/bg.err")"
		grep -q "^ran" "$TEST_DIR/bg.out" || fail "$form: $(cat "$TEST_DIR/bg.out" "$TEST_DIR/bg.err")"
		[ $form = plain ] || grep -qx "ran env" "$TEST_DIR/bg.out" || fail "env: $(cat "$TEST_DIR/bg.out")"
		grep -qF "warning: pool \`$POOL\`: container \`$id\`: its init is gone; deleted, another taken" "$TEST_DIR/bg.err" \
			|| fail "$form: $(cat "$TEST_DIR/bg.err")"
		[ "$(wc -l <"$TEST_DIR/bg.err")" -eq 1 ] || fail "$form: $(cat "$TEST_DIR/bg.err")"
		[ ! -e "$ROOT/$id" ] || fail "$form: the dead sandbox's state is left"
	done
}

@test "pool: a signal sent as soon as the command runs is passed on, even before the runtime has its handlers" {
	host_kind_neutral
	command -v strace >/dev/null || skip "strace is not installed (contrib/install-deps.sh)"
	pool_create --size 1
	NAP=$((71000 + BATS_TEST_NUMBER))
	# strace holds each exec of the taker (not its children) for 2 s once
	# done: the launcher's exec of the runtime comes after the command's
	# start, so the command runs while the runtime has no handler yet.
	started_in_bg bash -c "cd '$WS' && exec strace -qq -o /dev/null -e trace=execve -e inject=execve:delay_exit=2000000 \
		'$RUNTIME' --root '$ROOT' sandbox --pool '$POOL' -- sh -c 'trap \"echo got-term; exit 5\" TERM; sleep $NAP & wait'"
	wait_for_nap >/dev/null
	local taker
	taker=$(pgrep -P "$BG" | head -1)
	[ -n "$taker" ] || fail "no taker under strace"
	kill -TERM "$taker"
	wait_bg 15
	[ "$RC" -eq 5 ] || fail "status $RC: $(cat "$TEST_DIR/bg.out" "$TEST_DIR/bg.err")"
	grep -q got-term "$TEST_DIR/bg.out" || fail "no TERM: $(cat "$TEST_DIR/bg.out")"
}

@test "pool: a taker killed takes its sandbox with it; signals reach the command" {
	host_kind_neutral
	pool_create --size 1
	NAP=$((70000 + BATS_TEST_NUMBER))
	started_in_bg bash -c "cd '$WS' && exec '$RUNTIME' --root '$ROOT' sandbox --pool '$POOL' -- sh -c 'trap \"echo got-term; exit 5\" TERM; sleep $NAP & wait'"
	local nap
	nap=$(wait_for_nap)
	kill -TERM "$BG"
	wait_bg 10
	[ "$RC" -eq 5 ] || fail "status $RC: $(cat "$TEST_DIR/bg.out" "$TEST_DIR/bg.err")"
	grep -q got-term "$TEST_DIR/bg.out" || fail "no TERM: $(cat "$TEST_DIR/bg.out")"
	wait_ready 1
	local id
	id=$(ls "$ROOT/.pool/$POOL/ready")
	started_in_bg bash -c "cd '$WS' && exec '$RUNTIME' --root '$ROOT' sandbox --pool '$POOL' -- sleep $NAP"
	nap=$(wait_for_nap)
	kill -KILL "$BG"
	local i
	for i in $(seq 1 100); do
		pid_alive "$nap" || break
		sleep 0.05
	done
	pid_alive "$nap" && fail "sleep $NAP outlived its taker"
	# Its init went with it; the next list deletes what its taker left.
	run runtime list
	assert_success
	[ ! -e "$ROOT/$id" ] || fail "the killed taker's sandbox $id is left: $output"
	# The filler the take started makes its successor, the only one.
	wait_ready 1
	[ "$(state_entries | wc -l)" -eq 1 ] || fail "left: $(state_entries)"
}

@test "pool: bad input is one line naming it, and leaves no pool" {
	host_kind_neutral
	local c args want cases=(
		"create $POOL --diff x|pool create: --diff: not an option of a pool"
		"create $POOL --json-status x|pool create: --json-status: not an option of a pool"
		"create $POOL --tty|pool create: --tty: not an option of a pool"
		"create $POOL --no-init|pool create: --no-init: not an option of a pool"
		"create $POOL --memory lots|--memory: invalid value \"lots\""
		"create $POOL --allow-net a..org|--allow-net \`a..org\`"
		"create $POOL -- true|pool create: \`true\`: a pool takes no command"
		"create $POOL --size 0|pool create: --size \`0\`: expected 1 to 256"
		"create .hidden|pool: name \`.hidden\`"
		"create|pool create: expected a NAME"
		"fill nope|pool \`nope\` does not exist"
		"rm nope|pool \`nope\` does not exist"
		"frobnicate|pool: expected create NAME, fill NAME, list or rm NAME"
	)
	for c in "${cases[@]}"; do
		read -ra args <<<"${c%%|*}"
		want=${c#*|}
		run runtime pool "${args[@]}"
		[ "$status" -eq 1 ] || fail "pool ${args[*]}: status $status: $output"
		[ "${#lines[@]}" -eq 1 ] || fail "pool ${args[*]}: not one line: $output"
		assert_output_contains "$want"
		[ ! -e "$ROOT/.pool/$POOL" ] || fail "pool ${args[*]} left $ROOT/.pool/$POOL"
		[ -z "$(state_entries)" ] || fail "pool ${args[*]} left $(state_entries)"
	done
	run pool_create --size 1
	assert_success
	run runtime pool create "$POOL"
	assert_failure
	assert_output_contains "pool \`$POOL\` exists (agentrun pool rm $POOL first)"
	for c in "--memory 1g" "--timeout 5s" "--allow-net 10.0.0.1" "--rootfs /" "--user 1" "--tty"; do
		read -ra args <<<"$c"
		run pooled "${args[@]}" -- true
		assert_failure
		[ "${#lines[@]}" -eq 1 ] || fail "$c: not one line: $output"
		assert_output_contains "sandbox: ${args[0]} with --pool"
	done
	run runtime sandbox --pool nope -- true
	assert_failure
	assert_output_contains "pool \`nope\` does not exist (agentrun pool create nope)"
	[ "$(ready_count)" = 1 ] || fail "a refused call took a sandbox"
}

@test "pool: with --systemd-cgroup each pooled sandbox is a systemd scope of its own, with the pool's limits" {
	[ -d /run/systemd/system ] || skip "needs systemd as PID 1 (the test VM, tests/vm/)"
	run bash -c "cd '$WS' && '$RUNTIME' --root '$ROOT' --systemd-cgroup pool create '$POOL' --size 2 --memory 256m --pids 64"
	assert_success
	local id
	for id in $(ls "$ROOT/.pool/$POOL/ready"); do
		run systemctl show -p ActiveState -p MemoryMax -p TasksMax "agentrun-$id.scope"
		assert_output_contains "ActiveState=active"
		assert_output_contains "MemoryMax=268435456"
		assert_output_contains "TasksMax=64"
	done
	run pooled -- sh -c 'echo ran'
	assert_success
	assert_output_contains ran
	# The filler made the next one the same way, under the pool's flags.
	wait_ready 2
	for id in $(ls "$ROOT/.pool/$POOL/ready"); do
		systemctl is-active --quiet "agentrun-$id.scope" || fail "no scope for $id"
	done
}

# take_trace ARGS...: `agentrun ARGS...` in the workspace under strace
# (this process only: the refill's filler is not followed), its output in
# $output; the calls up to and after the runtime's exec in
# $TEST_DIR/launcher.calls and $TEST_DIR/runtime.calls.
take_trace() {
	output=$(cd "$WS" && strace -qq -s 16 -e trace=execve,renameat,renameat2,connect,sendmsg \
		-o "$TEST_DIR/take.strace" "$RUNTIME" --root "$ROOT" "$@" 2>&1) || fail "$*: $output"
	awk -v l="$TEST_DIR/launcher.calls" -v r="$TEST_DIR/runtime.calls" \
		'/^execve\(/ && / = 0$/ { n++ } { print > (n > 1 ? r : l) }' "$TEST_DIR/take.strace"
	touch "$TEST_DIR/launcher.calls" "$TEST_DIR/runtime.calls"
}

@test "pool: as root the launcher takes up to the start (--no-tty too) and the runtime claims nothing more; any other form is the runtime's take; the handover is the runtime's alone" {
	host_kind_neutral
	[ ! -L "$RUNTIME" ] && [ "$(ar_runtime_program "$RUNTIME")" != "$(readlink -f "$RUNTIME")" ] \
		|| skip "$RUNTIME is not agentrun's launcher"
	command -v strace >/dev/null || skip "strace is not installed (contrib/install-deps.sh)"
	pool_create --size 2
	# A handover in the caller's environment never reaches the runtime
	# nor the command: the launcher puts its own in its place.
	_AGENTRUN_TAKEN="$POOL-x" take_trace sandbox --pool "$POOL" -- sh -c 'echo "handover=${_AGENTRUN_TAKEN-none}"'
	assert_output "handover=none"
	# Claimed (ready/ to taken/), connected, started (START is type 6),
	# then the runtime: it claims and connects to nothing.
	grep -q '^renameat2(.* = 0$' "$TEST_DIR/launcher.calls" || fail "$(cat "$TEST_DIR/take.strace")"
	grep -q '^connect(.*/proc/self/fd/.*= 0$' "$TEST_DIR/launcher.calls" || fail "$(cat "$TEST_DIR/take.strace")"
	grep -q '^sendmsg(.*iov_base="\\6\\0\\0\\0' "$TEST_DIR/launcher.calls" || fail "$(cat "$TEST_DIR/take.strace")"
	grep -q 'agentrun-runtime' "$TEST_DIR/runtime.calls" || fail "$(cat "$TEST_DIR/take.strace")"
	! grep -q '^renameat2\?([0-9]*, "'"$POOL"'-\|^connect(' "$TEST_DIR/runtime.calls" || fail "$(cat "$TEST_DIR/runtime.calls")"

	# `--no-tty` (a pooled sandbox has no terminal anyway), before or after
	# --pool=NAME, keeps the take the launcher's.
	wait_ready 2
	take_trace sandbox --no-tty --pool="$POOL" --no-tty -- sh -c 'echo taken'
	assert_output "taken"
	grep -q '^connect(.*/proc/self/fd/.*= 0$' "$TEST_DIR/launcher.calls" || fail "$(cat "$TEST_DIR/take.strace")"
	! grep -q '^renameat2\?([0-9]*, "'"$POOL"'-\|^connect(' "$TEST_DIR/runtime.calls" || fail "$(cat "$TEST_DIR/runtime.calls")"

	# With an option of its own (-e) the take is the runtime's.
	wait_ready 2
	take_trace sandbox --pool "$POOL" -e V=1 -- sh -c 'echo "V=$V"'
	assert_output "V=1"
	! grep -q '^renameat2(\|^connect(' "$TEST_DIR/launcher.calls" || fail "$(cat "$TEST_DIR/launcher.calls")"
	grep -q '^renameat([0-9]*, "'"$POOL"'-' "$TEST_DIR/runtime.calls" || fail "$(cat "$TEST_DIR/take.strace")"

	# Given to the runtime itself, a handover that is not a claim of the
	# pool, or whose fd is not a connection, is one line; no sandbox goes.
	wait_ready 2
	local program
	program=$(ar_runtime_program "$RUNTIME")
	run env _AGENTRUN_TAKEN="$POOL-x" "$program" --root "$ROOT" sandbox --pool "$POOL" -- true
	assert_failure 125
	assert_output "agentrun: pool \`$POOL\`: \`$POOL-x\` was claimed by no one"
	run env _AGENTRUN_TAKEN="$POOL-x 0" "$program" --root "$ROOT" sandbox --pool "$POOL" -- true </dev/null
	assert_failure 125
	assert_output "agentrun: _AGENTRUN_TAKEN: \`0\` is not a socket's fd"
	run env _AGENTRUN_TAKEN="../x" "$program" --root "$ROOT" sandbox --pool "$POOL" -- true
	assert_failure 125
	assert_output_contains "agentrun: _AGENTRUN_TAKEN: name \`../x\`: expected"
	[ "$(ready_count)" = 2 ] || fail "ready: $(ready_count)"
	[ -z "$(ls -A "$ROOT/.pool/$POOL/taken")" ] || fail "claims left: $(ls -A "$ROOT/.pool/$POOL/taken")"
}
