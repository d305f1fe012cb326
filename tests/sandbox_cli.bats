#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# `agentrun sandbox`'s flags as people expect them from runc and docker:
# -t is the terminal, a bad value is one line naming the flag and the value
# before anything is made, paths are relative to the caller's directory,
# -e NAME and --env-file as docker reads them, and the command's user,
# directory, hostname, overlay size and a read-only workspace.

load helpers
load sandbox_helpers

root_listing() {
	find "$ROOT" -mindepth 1 -printf '%P\n' | sort
}

# Nothing was made under the state root since root_listing said $1 (the
# first sandbox of a test: nothing at all, not even the bundles' dir).
assert_nothing_made() {
	local now
	now=$(root_listing)
	[ "$now" = "${1:-}" ] || fail "made under --root: $(diff <(echo "${1:-}") <(echo "$now"))"
}

@test "sandbox_cli: -t is --tty (as in runc and docker), the timeout has only its long name" {
	run sandbox -t -- sh -c 'tty; test -t 0 && echo stdin-tty'
	assert_success
	[[ "$output" == */dev/pts/* ]] || fail "no pty"
	assert_output_contains stdin-tty
	run sandbox --timeout 30s -- tty
	assert_output_contains "not a tty"
	run runtime sandbox --help
	assert_success
	assert_output_contains "-t, --tty"
	assert_output_contains "    --timeout VALUE"
	assert_output_contains "-t is --tty"
	assert_output_contains "--profile"
}

@test "sandbox_cli: a bad value is one line naming the flag and the value; nothing is made" {
	printf 'x\n' >"$TEST_DIR/secret"
	local c args want cases=(
		"--timeout x|--timeout: invalid value \"x\""
		"--timeout 0|--timeout: invalid value \"0\""
		"--memory lots|--memory: invalid value \"lots\""
		"--pids -3|--pids: invalid value \"-3\""
		"--overlay-size 12q|--overlay-size: invalid value \"12q\""
		"--secret bad/name=$TEST_DIR/secret|--secret bad/name: invalid secret name"
		"--secret novalue|--secret \`novalue\`: expected NAME=FILE"
		"--secret A=$TEST_DIR/secret --secret A=$TEST_DIR/secret|--secret A: given twice"
		"--allow-net a..org|--allow-net \`a..org\`"
		"--audit $TEST_DIR/nodir/log|--audit \`$TEST_DIR/nodir/log\`"
		"--user root|invalid --user uid \`root\`"
		"--user 1:staff|invalid --user gid \`staff\`"
		"--hostname=-bad|--hostname \`-bad\`"
		"--hostname -bad|flag \`--hostname\` needs a value, not the flag \`-bad\`"
		"--hostname a_b|--hostname \`a_b\`"
		"--env-file $TEST_DIR/no-env|--env-file: open \`$TEST_DIR/no-env\`"
		"-e =x|--env \`=x\`"
		"--hide etc|--hide \`etc\`"
	)
	for c in "${cases[@]}"; do
		read -ra args <<<"${c%%|*}"
		want=${c#*|}
		run sandbox "${args[@]}" -- true
		assert_failure 125
		[[ "$output" == "agentrun: sandbox: "* ]] || fail "$c: not a sandbox error"
		assert_output_contains "$want"
		refute_output_contains "run.agentrun"
		[ "${#lines[@]}" -eq 1 ] || fail "$c: ${#lines[@]} lines"
		assert_nothing_made
	done
}

@test "sandbox_cli: an --output directory that cannot be written is refused before the command runs" {
	mkdir -p "$TEST_DIR/out"
	mount --bind "$TEST_DIR/out" "$TEST_DIR/out"
	mount -o remount,bind,ro "$TEST_DIR/out"
	run sandbox -o "$TEST_DIR/out" -- sh -c 'echo important >/output/result.txt; echo the-command-ran'
	umount "$TEST_DIR/out"
	assert_failure 125
	# One line, and the command never ran.
	assert_output "agentrun: sandbox: --output \`$TEST_DIR/out\`: /output could not be exported there: Read-only file system"
	assert_nothing_made
}

@test "sandbox_cli: a profile without the overlay is refused in sandbox terms, not as a config.json" {
	run bash -c 'cd "$1" && shift && "$@"' _ "$WS" timeout 30 "$RUNTIME" --root "$ROOT" --profile oci sandbox -- true
	assert_failure 125
	assert_output_contains "sandbox: profile \"oci\" has no overlay"
	refute_output_contains "config.json"
	[ "${#lines[@]}" -eq 1 ] || fail "${#lines[@]} lines"
	assert_nothing_made
	run bash -c 'cd "$1" && shift && "$@"' _ "$WS" timeout 30 "$RUNTIME" --root "$ROOT" --profile no-such sandbox -- true
	assert_failure 125
	assert_output_contains "sandbox: --profile"
	assert_output_contains "no-such"
	assert_nothing_made
}

@test "sandbox_cli: every path flag takes a path relative to the caller's directory" {
	local rootfs=$TEST_DIR/rootfs
	cp -a "$AR_ROOTFS" "$rootfs"
	mkdir -p "$TEST_DIR/out" "$TEST_DIR/ws2"
	echo two >"$TEST_DIR/ws2/b.txt"
	printf 's3cr3t' >"$TEST_DIR/token"
	printf 'FROM_FILE=yes\n' >"$TEST_DIR/env"
	run sandbox --rootfs ../rootfs -w ../ws2 --audit ../audit.jsonl --secret tok=../token \
		-o ../out --diff ../ws2.diff --env-file ../env \
		-- sh -c 'cat /run/secrets/tok; echo; echo "$FROM_FILE"; pwd; cat b.txt; echo new >c.txt; echo o >/output/o.txt; test -x /bin/busybox && echo busybox'
	assert_success
	assert_output_contains s3cr3t
	assert_output_contains "yes"
	assert_output_contains "$TEST_DIR/ws2"
	assert_output_contains two
	assert_output_contains busybox
	[ -s "$TEST_DIR/audit.jsonl" ] || fail "no audit log at ../audit.jsonl"
	grep -q '"event":"create"' "$TEST_DIR/audit.jsonl" || fail "no create event"
	grep -q '^+new$' "$TEST_DIR/ws2.diff" || fail "no diff at ../ws2.diff"
	[ "$(cat "$TEST_DIR"/out/sandbox-*/o.txt)" = o ] || fail "/output not exported to ../out"
	[ ! -e "$TEST_DIR/ws2/c.txt" ] || fail "the workspace was written"
}

@test "sandbox_cli: -e NAME passes the host's value (left out when unset), -e replaces, the default PATH" {
	export AR_FROM_HOST="host value"
	unset AR_NOT_SET
	run sandbox -e AR_FROM_HOST -e AR_NOT_SET -e PATH=/bin:/usr/bin -e X=1 -e X=2 -- env
	assert_success
	assert_output_contains "AR_FROM_HOST=host value"
	refute_output_contains "AR_NOT_SET"
	[ "$(grep -c '^PATH=' <<<"$output")" = 1 ] || fail "PATH twice"
	assert_output_contains "PATH=/bin:/usr/bin"
	[ "$(grep -c '^X=' <<<"$output")" = 1 ] || fail "X twice"
	assert_output_contains "X=2"
	run sandbox -- env
	assert_success
	assert_output_contains "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	assert_output_contains "HOME=/root"
	assert_output_contains "TERM=xterm"
}

@test "sandbox_cli: --env-file in docker's format; a bad line names the file and the line" {
	export AR_FROM_HOST="host value"
	unset AR_NOT_SET
	cat >"$TEST_DIR/env" <<-'EOF'
		# a comment

		  PLAIN=one two
		QUOTED="kept as is"
		AR_FROM_HOST
		AR_NOT_SET
		EMPTY=
		OVERRIDDEN=file
		WITH_EQ=a=b
	EOF
	run sandbox --env-file "$TEST_DIR/env" -e OVERRIDDEN=flag -- env
	assert_success
	assert_output_contains "PLAIN=one two"
	assert_output_contains 'QUOTED="kept as is"'
	assert_output_contains "AR_FROM_HOST=host value"
	refute_output_contains "AR_NOT_SET"
	assert_output_contains "EMPTY="
	assert_output_contains "OVERRIDDEN=flag"
	refute_output_contains "OVERRIDDEN=file"
	assert_output_contains "WITH_EQ=a=b"
	refute_output_contains "comment"

	printf 'GOOD=1\n# fine\nBAD NAME=x\n' >"$TEST_DIR/bad.env"
	local before
	before=$(root_listing)
	run sandbox --env-file "$TEST_DIR/bad.env" -- true
	assert_failure 125
	assert_output_contains "--env-file \`$TEST_DIR/bad.env\`: line 3"
	assert_output_contains "BAD NAME=x"
	[ "${#lines[@]}" -eq 1 ] || fail "${#lines[@]} lines"
	assert_nothing_made "$before"
	printf '=value\n' >"$TEST_DIR/bad.env"
	run sandbox --env-file "$TEST_DIR/bad.env" -- true
	assert_failure 125
	assert_output_contains "line 1"
}

@test "sandbox_cli: --user runs the command as UID:GID; it owns the workspace and /output, what leaves is the caller's" {
	mkdir -p "$TEST_DIR/out"
	run sandbox -u 1500:1501 -o "$TEST_DIR/out" --diff "$TEST_DIR/ws.diff" -- sh -c '
		id -u; id -g; echo "home=$HOME"
		echo made >new.txt && stat -c "new %u:%g" new.txt
		echo out >/output/o.txt && stat -c "out %u:%g" /output/o.txt
		stat -c "ws %u:%g" . a.txt
		echo changed >>a.txt 2>/dev/null || echo "a.txt refused"'
	assert_success
	assert_equal "${lines[0]}" 1500
	assert_equal "${lines[1]}" 1501
	assert_output_contains "home=/"
	assert_output_contains "new 1500:1501"
	assert_output_contains "out 1500:1501"
	# the workspace owner's files are the sandbox user's (idmapped)
	[ "$(grep -c "^ws 1500:1501$" <<<"$output")" = 2 ] || fail "workspace owner"
	refute_output_contains "a.txt refused"
	grep -q '^+made$' "$TEST_DIR/ws.diff" || fail "new.txt not in the diff"
	grep -q '^+changed$' "$TEST_DIR/ws.diff" || fail "a.txt not in the diff"
	[ "$(stat -c %u "$WS/a.txt")" = 0 ] || fail "the real a.txt changed owner"
	# what leaves the sandbox belongs to whoever ran it
	[ "$(stat -c %u "$TEST_DIR/ws.diff")" = 0 ] || fail "diff owner"
	[ "$(stat -c %u "$(echo "$TEST_DIR"/out/sandbox-*/o.txt)")" = 0 ] || fail "output owner"
	git init -q "$TEST_DIR/check" && cp "$WS/a.txt" "$TEST_DIR/check/"
	(cd "$TEST_DIR/check" && git apply "$TEST_DIR/ws.diff") || fail "git apply"
	[ "$(cat "$TEST_DIR/check/new.txt")" = made ]
	[ "$(tail -1 "$TEST_DIR/check/a.txt")" = changed ]
	run sandbox --user 1500 -- id -g
	assert_success
	assert_output 0
}

@test "sandbox_cli: --overlay-size sets the tmpfs that holds the writes" {
	run sandbox -- df -k /
	assert_success
	[[ "${lines[1]}" =~ ^overlay\ +1048576\  ]] || fail "default size"
	run sandbox --overlay-size 64m -- sh -c "df -k / .; head -c 80m /dev/zero >big 2>/dev/null || echo full"
	assert_success
	[[ "${lines[1]}" =~ ^overlay\ +65536\  ]] || fail "/ not 64 MiB"
	[[ "${lines[2]}" =~ ^overlay\ +65536\  ]] || fail "the workspace not in the same 64 MiB"
	assert_output_contains full
}

@test "sandbox_cli: --workdir is the command's directory (relative: below the workspace), --hostname its hostname" {
	mkdir -p "$WS/sub"
	run sandbox --workdir sub -- pwd
	assert_success
	assert_output "$WS/sub"
	run sandbox --workdir /tmp -- pwd
	assert_success
	assert_output /tmp
	run sandbox -- sh -c 'pwd; hostname'
	assert_success
	assert_equal "${lines[0]}" "$WS"
	assert_equal "${lines[1]}" sandbox
	run sandbox --hostname agent-box.local -- hostname
	assert_success
	assert_output agent-box.local
}

@test "sandbox_cli: --read-only-workspace: writes to the workspace fail with EROFS, elsewhere they work; --diff with it is refused" {
	run sandbox --read-only-workspace -- sh -c 'cat a.txt; echo x >>a.txt || echo refused; touch new || echo refused; echo ok >/tmp/f && cat /tmp/f'
	assert_success
	assert_output_contains original
	assert_output_contains "Read-only file system"
	[ "$(grep -c '^refused$' <<<"$output")" = 2 ] || fail "a write went through"
	assert_output_contains ok
	[ "$(cat "$WS/a.txt")" = original ]
	[ ! -e "$WS/new" ]
	local before
	before=$(root_listing)
	run sandbox --read-only-workspace --diff "$TEST_DIR/d.diff" -- true
	assert_failure 125
	assert_output_contains "--diff with --read-only-workspace"
	[ ! -e "$TEST_DIR/d.diff" ]
	assert_nothing_made "$before"
}

@test "sandbox_cli: without root and without user namespaces, the error says what is needed" {
	command -v unshare >/dev/null && command -v setpriv >/dev/null || skip "needs unshare and setpriv"
	# A throw-away user namespace whose own user.max_user_namespaces is 0
	# (the host's is never touched): uid 1500 in it can make none.
	AR_TEST_USER=1500 ar_setup_test_user # a runtime uid 1500 can run
	chmod 0777 "$WS"
	unshare -U sh -c 'while [ -z "$(cat /proc/self/gid_map)" ]; do sleep 0.05; done
		exec sh -c "echo 0 >/proc/sys/user/max_user_namespaces && cd \"\$1\" && exec setpriv --reuid 1500 --regid 1500 --clear-groups \"\$2\" --root \"\$1/.state\" sandbox -- true" _ "$@"' \
		_ "$WS" "$RUNTIME" >"$TEST_DIR/out.txt" 2>&1 &
	local pid=$! own
	track_pid "$pid"
	own=$(readlink /proc/self/ns/user)
	while [ "$(readlink "/proc/$pid/ns/user")" = "$own" ]; do sleep 0.05; done
	echo "0 0 65536" >"/proc/$pid/uid_map"
	echo "0 0 65536" >"/proc/$pid/gid_map"
	local rc=0
	wait "$pid" || rc=$?
	output=$(cat "$TEST_DIR/out.txt")
	status=$rc
	assert_failure 125
	assert_output_contains "sandbox without root needs a user namespace of its own"
	assert_output_contains "user.max_user_namespaces is 0"
	[ "$(cat /proc/sys/user/max_user_namespaces)" != 0 ]
	[ ! -e "$WS/.state" ] || [ -z "$(find "$WS/.state" -mindepth 1)" ]
}

@test "sandbox_cli: without root, --user other than 0:0 is refused by name before anything is made" {
	AR_TEST_USER=${AR_ROOTLESS_UID:-1500}
	ar_setup_test_user
	chown "$AR_TEST_USER:$AR_TEST_USER" "$WS"
	run sandbox --user 1000 -- true
	assert_failure 125
	assert_output_contains "sandbox: --user 1000: without root"
	[ "${#lines[@]}" -eq 1 ] || fail "${#lines[@]} lines"
	assert_nothing_made
	run sandbox --user 0:0 -- id -u
	assert_success
	assert_equal "${lines[-1]}" 0
}

@test "sandbox_cli: the root as the workspace (run from /, or --workspace /) is refused in one line, and nothing is made" {
	run sh -c "cd / && '$RUNTIME' --root '$ROOT' sandbox -- echo RAN-COMMAND </dev/null"
	assert_failure
	refute_output_contains RAN-COMMAND
	assert_output "agentrun: sandbox: --workspace \`/\` (the current directory): a sandbox's root cannot be its workspace; run it from a project directory, or give --workspace DIR"
	run sandbox --workspace / -- echo RAN-COMMAND
	assert_failure
	assert_output "agentrun: sandbox: --workspace \`/\`: a sandbox's root cannot be its workspace; run it from a project directory, or give --workspace DIR"
	[ -z "$(ls -A "$ROOT" 2>/dev/null | grep -v '^\.')" ] || fail "left: $(ls -A "$ROOT")"
}
