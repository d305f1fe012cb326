#!/usr/bin/env bats
# `agentrun sandbox -- CMD`: a command in a fresh agent sandbox without a
# bundle. Every test ends by checking that the sandbox left nothing behind:
# no state or bundle dir, no mount, no cgroup, no process (the wall-clock
# watchdog included).

load helpers

setup() {
	common_setup
	WS=$TEST_DIR/ws
	mkdir -p "$WS"
	echo original >"$WS/a.txt"
	echo keep >"$WS/keep.txt"
	echo doomed >"$WS/gone.txt"
	touch "$TEST_DIR/marker"
	# The configuration dir is this test's: no /etc/agentrun/agentrun.json
	# of the host changes what the sandbox does.
	export AGENTRUN_CONFIG_DIR=$TEST_DIR/cfg
	mkdir -p "$AGENTRUN_CONFIG_DIR"
}

teardown() {
	local left=""
	[ -n "${TEST_DIR:-}" ] && left=$(sandbox_leftovers)
	common_teardown
	[ -z "$left" ] || { echo "sandbox left: $left" >&2; return 1; }
}

# What a finished sandbox must not leave behind.
sandbox_leftovers() {
	local p
	[ -d "$ROOT" ] || return 0
	find "$ROOT" -mindepth 1 -maxdepth 1 ! -name .seccomp-cache ! -name .sandbox ! -name .audit-heads -printf 'state %p\n'
	[ ! -d "$ROOT/.sandbox" ] || find "$ROOT/.sandbox" -mindepth 1 -printf 'bundle %p\n'
	mounts_under "$ROOT" | sed 's/^/mount /'
	mounts_under "$TEST_DIR" | sed 's/^/mount /'
	for p in $(grep -lsF -- "$ROOT" /proc/[0-9]*/cmdline | sed -n 's|^/proc/\([0-9]*\)/.*|\1|p' | live_pids); do
		[ "$p" = "$$" ] || [ "$p" = "$BASHPID" ] || echo "process $p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
	done
	find /sys/fs/cgroup -mindepth 1 -maxdepth 4 -type d -name 'sandbox-*' -newer "$TEST_DIR/marker" 2>/dev/null | sed 's/^/cgroup /'
}

# sandbox ARG...: agentrun sandbox in the workspace, no terminal, stdin
# from /dev/null.
sandbox() {
	(cd "$WS" && runtime sandbox "$@")
}

digest() {
	(cd "$1" && find . -type f -exec sha256sum {} + | sort && find . -printf '%p %y %m %s\n' | sort) | sha256sum
}

@test "sandbox: the host's root by default, read-only under an overlay; the host is unchanged" {
	local probe=/usr/agentrun-probe-$$-$RANDOM
	run sandbox -- sh -c "ls /usr/bin; touch $probe && echo touched; ls $probe; command -v jq"
	assert_success
	assert_output_contains touched
	assert_output_contains /usr/bin/jq
	[[ "$output" == *$'\n'"$probe"$'\n'* ]] || fail "probe not seen inside"
	[ ! -e "$probe" ] || { rm -f "$probe"; fail "the write reached the host's /usr"; }
	# The host's tools, seen from inside.
	[ "$(grep -cx bash <<<"$output")" -ge 1 ]
}

@test "sandbox: hardened like the agent profile (caps, no_new_privs, seccomp, no network but lo)" {
	run sandbox -- sh -c 'grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status; chown 1000 keep.txt && echo chowned; ls /sys/class/net; unshare -n true 2>&1 || echo refused; hostname'
	assert_success
	# The agent profile's nine capabilities: root in the sandbox can chown
	# in its own overlay (the real workspace is not touched).
	assert_output_contains "CapEff:	00000000000005fb"
	assert_output_contains chowned
	[ "$(stat -c %u "$WS/keep.txt")" = 0 ]
	assert_output_contains "NoNewPrivs:	1"
	assert_output_contains "Seccomp:	2"
	assert_output_contains refused
	[ "$(grep -cE '^(lo|eth.*|en.*)$' <<<"$output")" = 1 ] || fail "interfaces"
	assert_output_contains lo
	assert_output_contains sandbox
}

@test "sandbox: --rootfs DIR, unchanged byte for byte" {
	local rootfs=$TEST_DIR/rootfs before
	cp -a "$AR_ROOTFS" "$rootfs"
	mkdir -p "$rootfs$WS"
	before=$(digest "$rootfs")
	run sandbox --rootfs "$rootfs" -- sh -c 'ls /bin/busybox; ls /usr/bin/jq 2>&1; echo x >/etc/passwd; rm /bin/ls; echo done'
	assert_success
	assert_output_contains /bin/busybox
	assert_output_contains "No such file"
	assert_output_contains done
	[ "$(digest "$rootfs")" = "$before" ] || fail "rootfs changed"
}

@test "sandbox: the workspace is untouched, its changes come back as a diff that applies" {
	local before
	before=$(digest "$WS")
	run sandbox --diff "$TEST_DIR/changes.diff" -- sh -c 'pwd; echo more >>a.txt; echo new >new.txt; rm gone.txt; mkdir sub && echo s >sub/s.txt'
	assert_success
	[ "${lines[0]}" = "$WS" ]
	[ "$(digest "$WS")" = "$before" ] || fail "workspace written"
	local d=$TEST_DIR/changes.diff
	grep -q '^+++ b/new.txt' "$d" && grep -q '^+more$' "$d" && grep -q '^--- a/gone.txt' "$d" || fail "$(cat "$d")"
	! grep -q keep.txt "$d" || fail "unchanged file in the diff"
	# Applied to a copy, the diff reproduces what the sandbox saw.
	cp -a "$WS" "$TEST_DIR/copy"
	(cd "$TEST_DIR/copy" && patch -p1 -s <"$d")
	[ "$(cat "$TEST_DIR/copy/a.txt")" = "original"$'\n'"more" ]
	[ "$(cat "$TEST_DIR/copy/new.txt")" = new ] && [ "$(cat "$TEST_DIR/copy/sub/s.txt")" = s ]
	[ ! -e "$TEST_DIR/copy/gone.txt" ]
}

@test "sandbox: --output DIR gets /output under DIR/<id> with a manifest" {
	mkdir -p "$TEST_DIR/out"
	run sandbox --output "$TEST_DIR/out" -- sh -c 'echo artifact >/output/result.txt; ln -s /etc/shadow /output/evil'
	assert_success
	local dest
	dest=$(find "$TEST_DIR/out" -mindepth 1 -maxdepth 1)
	[ "$(wc -l <<<"$dest")" = 1 ] && [[ "$(basename "$dest")" == sandbox-* ]] || fail "dest: $dest"
	[ "$(cat "$dest/result.txt")" = artifact ]
	[ ! -e "$dest/evil" ] && [ ! -L "$dest/evil" ]
	[ "$(jq -r '.files[0].sha256' "$dest/manifest.json")" = "$(sha256sum <"$dest/result.txt" | cut -d' ' -f1)" ]
}

@test "sandbox: --secret NAME=FILE is readable inside, absent from the audit log and the disk after" {
	local secret=sandbox-secret-$RANDOM$RANDOM$RANDOM
	printf '%s' "$secret" >"$TEST_DIR/secret"
	run sandbox --secret "tok=$TEST_DIR/secret" --audit "$TEST_DIR/audit.log" -- sh -c 'cat /run/secrets/tok; echo; stat -c %a /run/secrets/tok; env'
	assert_success
	[ "${lines[0]}" = "$secret" ]
	[ "${lines[1]}" = 400 ]
	[ "$(grep -c -- "$secret" <<<"$output")" = 1 ] || fail "secret in the environment"
	! grep -qF -- "$secret" "$TEST_DIR/audit.log"
	[ -z "$(find "$ROOT" -xdev -type f -print0 | xargs -0r grep -lF -- "$secret")" ]
}

@test "sandbox: --timeout kills the command and reports it" {
	local start=$SECONDS
	run sandbox --timeout 2s --audit "$TEST_DIR/audit.log" -- sleep 30
	[ $((SECONDS - start)) -le 5 ] || fail "took $((SECONDS - start))s"
	assert_failure 137
	grep -q '"limit":"wall-clock"' "$TEST_DIR/audit.log"
}

@test "sandbox: --memory and --pids are enforced" {
	run sandbox --memory 32m -- sh -c 'head -c 200m /dev/zero | tail -c 1 >/dev/null; python3 -c "b = bytearray(200 << 20)" 2>/dev/null; echo "status=$?"'
	assert_output_contains "status=137"
	run sandbox --pids 20 -- sh -c 'sh -c "for i in \$(seq 1 50); do sleep 10 & done" 2>&1; echo alive'
	# dash says "Cannot fork", busybox "Resource temporarily unavailable".
	[[ "$output" == *"Cannot fork"* || "$output" == *"Resource temporarily unavailable"* ]] || fail "forks not refused"
	assert_output_contains alive
}

@test "sandbox: --audit FILE records the run, and agentrun audit checks it" {
	run sandbox --audit "$TEST_DIR/audit.log" -- sh -c 'exit 4'
	assert_failure 4
	[ "$(jq -r .event "$TEST_DIR/audit.log" | paste -sd' ')" = "create start exit fs-changes delete" ] ||
		fail "$(cat "$TEST_DIR/audit.log")"
	[ "$(jq -r 'select(.event == "exit") | .status' "$TEST_DIR/audit.log")" = 4 ]
	run "$RUNTIME" audit "$TEST_DIR/audit.log"
	assert_output "ok 5 lines"
}

@test "sandbox: --env, stdin, stdout and stderr, exit status" {
	run sandbox -e GREETING=hello --env OTHER=x -- sh -c 'echo "$GREETING $OTHER"'
	assert_output "hello x"
	run bash -c "cd '$WS' && printf 'line1\nline2\n' | '$RUNTIME' --root '$ROOT' sandbox --no-tty -- sh -c 'cat; echo done'"
	assert_output $'line1\nline2\ndone'
	run bash -c "cd '$WS' && '$RUNTIME' --root '$ROOT' sandbox -- sh -c 'echo to-out; echo to-err >&2' 2>'$TEST_DIR/err' </dev/null"
	assert_output to-out
	[ "$(cat "$TEST_DIR/err")" = to-err ]
	run sandbox -- sh -c 'exit 42'
	assert_failure 42
	# The command is the sandbox's pid 1, which ignores signals it has no
	# handler for: a child killed by one gives the shell's 128+N.
	run sandbox -- sh -c 'sh -c "kill -TERM \$\$"'
	assert_failure 143
	run sandbox -- true
	assert_success
}

@test "sandbox: a terminal when run from one, none otherwise" {
	command -v script >/dev/null || skip "no script(1)"
	run script -qec "cd '$WS' && '$RUNTIME' --root '$ROOT' sandbox -- sh -c 'tty; test -t 0 && echo stdin-tty'" /dev/null
	assert_success
	[[ "$output" == */dev/pts/* ]] || fail "no pty"
	assert_output_contains stdin-tty
	run sandbox -- tty
	assert_output_contains "not a tty"
	run script -qec "cd '$WS' && '$RUNTIME' --root '$ROOT' sandbox --no-tty -- tty" /dev/null
	assert_output_contains "not a tty"
}

@test "sandbox: clear errors for a missing command, rootfs, flag or secret file" {
	run sandbox --
	assert_failure 1
	assert_output_contains "give a command"
	run sandbox -- /nonexistent/cmd
	assert_failure
	assert_output_contains "/nonexistent/cmd"
	run sandbox -- no-such-command-anywhere
	assert_failure
	assert_output_contains "no-such-command-anywhere"
	run sandbox --rootfs "$TEST_DIR/missing" -- true
	assert_failure 1
	assert_output_contains "--rootfs"
	assert_output_contains "$TEST_DIR/missing"
	run sandbox --bogus -- true
	assert_failure 1
	assert_output_contains "bogus"
	run sandbox --secret "tok=$TEST_DIR/missing-secret" -- true
	assert_failure 1
	assert_output_contains "missing-secret"
	run sandbox --secret novalue -- true
	assert_failure 1
	assert_output_contains "NAME=FILE"
	run sandbox --output "$TEST_DIR/missing-out" -- true
	assert_failure 1
	assert_output_contains "--output"
	run sandbox --timeout soon -- true
	assert_failure 1
	assert_output_contains "soon"
	# the host's root without the overlay: refused, not a pivot_root error
	run bash -c 'cd "$1" && shift && "$@"' _ "$WS" timeout 30 "$RUNTIME" --root "$ROOT" --profile oci sandbox -- true
	assert_failure 1
	assert_output_contains "host's \`/\`"
}

@test "agent image: python3 and git in a sandbox on images/out/agent/rootfs" {
	[ "${AGENTRUN_AGENT_IMAGE:-0}" = 1 ] || skip "set AGENTRUN_AGENT_IMAGE=1 (after images/agent-image.sh)"
	local rootfs=$AR_TOP/images/out/agent/rootfs
	[ -x "$rootfs/usr/bin/python3" ] || fail "build it first: images/agent-image.sh"
	run sandbox --rootfs "$rootfs" -- python3 -c 'print(1+1)'
	assert_success
	assert_output 2
	run sandbox --rootfs "$rootfs" -- git --version
	assert_success
	assert_output_contains "git version"
	run sandbox --rootfs "$rootfs" -- sh -c 'printf "int main(void){return 7;}" >/tmp/t.c && cc -o /tmp/t /tmp/t.c && /tmp/t'
	assert_failure 7
}
