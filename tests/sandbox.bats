#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# `agentrun sandbox -- CMD`: a command in a fresh agent sandbox without a
# bundle. Every test ends by checking that the sandbox left nothing behind:
# no state or bundle dir, no mount, no cgroup, no process (the wall-clock
# watchdog included).

load helpers
load sandbox_helpers

digest() {
	(cd "$1" && find . -type f -exec sha256sum {} + | sort && find . -printf '%p %y %m %s\n' | sort) | sha256sum
}

@test "sandbox: the host's root by default, read-only under an overlay; the host is unchanged" {
	local probe=/usr/agentrun-probe-$$-$RANDOM tmp_probe=/tmp/agentrun-probe-$$-$RANDOM
	# Root inside is nobody outside: root's /usr is not the sandbox's to
	# write; /tmp (1777) is, in the overlay.
	run sandbox -- sh -c "ls /usr/bin; touch $probe 2>/dev/null || echo refused; touch $tmp_probe && echo touched; ls $tmp_probe; command -v jq"
	assert_success
	assert_output_contains refused
	assert_output_contains touched
	assert_output_contains /usr/bin/jq
	[[ "$output" == *$'\n'"$tmp_probe"$'\n'* ]] || fail "probe not seen inside"
	[ ! -e "$probe" ] || { rm -f "$probe"; fail "the write reached the host's /usr"; }
	[ ! -e "$tmp_probe" ] || { rm -f "$tmp_probe"; fail "the write reached the host's /tmp"; }
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
	host_kind_neutral
	mkdir -p "$TEST_DIR/out"
	run sandbox --output "$TEST_DIR/out" -- sh -c 'echo artifact >/output/result.txt; ln -s /etc/shadow /output/evil'
	assert_success
	# What is withheld is named, with why, not only counted.
	assert_output_contains "agentrun: output: withheld evil (symlink)"
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
	assert_failure 124
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
	host_kind_neutral
	run sandbox --audit "$TEST_DIR/audit.log" -- sh -c 'exit 4'
	assert_failure 4
	[ "$(jq -r .event "$TEST_DIR/audit.log" | paste -sd' ')" = "hook create start exit hook fs-changes delete" ] ||
		fail "$(cat "$TEST_DIR/audit.log")"
	[ "$(jq -r 'select(.event == "exit") | .status' "$TEST_DIR/audit.log")" = 4 ]
	run "$RUNTIME" audit "$TEST_DIR/audit.log"
	assert_output "ok 7 lines"
}

@test "sandbox: --env, stdin, stdout and stderr, exit status" {
	host_kind_neutral
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
	host_kind_neutral
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
	host_kind_neutral
	run sandbox --
	assert_failure 125
	assert_output_contains "give a command"
	run -127 sandbox -- /nonexistent/cmd
	assert_output_contains "/nonexistent/cmd"
	run -127 sandbox -- no-such-command-anywhere
	assert_output_contains "no-such-command-anywhere"
	run sandbox --rootfs "$TEST_DIR/missing" -- true
	assert_failure 125
	assert_output_contains "--rootfs"
	assert_output_contains "$TEST_DIR/missing"
	run sandbox --bogus -- true
	assert_failure 125
	assert_output_contains "bogus"
	run sandbox --secret "tok=$TEST_DIR/missing-secret" -- true
	assert_failure 125
	assert_output_contains "missing-secret"
	run sandbox --secret novalue -- true
	assert_failure 125
	assert_output_contains "NAME=FILE"
	run sandbox --output "$TEST_DIR/missing-out" -- true
	assert_failure 125
	assert_output_contains "--output"
	run sandbox --timeout soon -- true
	assert_failure 125
	assert_output_contains "soon"
	# a profile without the overlay: refused, not a pivot_root error
	run bash -c 'cd "$1" && shift && "$@"' _ "$WS" timeout 30 "$RUNTIME" --root "$ROOT" --profile oci sandbox -- true
	assert_failure 125
	assert_output_contains "profile \"oci\" has no overlay"
}

@test "sandbox: a bad --allow-net is refused when the options are read, naming the flag; nothing is made" {
	host_kind_neutral
	local entry reasons=(
		"10.0.0.0/33|prefix /33 is longer than the address's 32 bits"
		"::/129|prefix /129 is longer than the address's 128 bits"
		"host:99999|port \`99999\` is not a number from 1 to 65535"
		"host:0|port \`0\` is not a number from 1 to 65535"
		"host:|empty port after"
		"|empty entry"
		"*.|wants a name after it"
		"a*.org|only as the whole first label"
		"a..org|empty label"
		"bad_host!.org|character \`!\`"
	)
	for entry in "${reasons[@]}"; do
		run sandbox --allow-net pypi.org:443 --allow-net "${entry%%|*}" -- true
		assert_failure 125
		assert_equal "${#lines[@]}" 1
		[[ "$output" == "agentrun: sandbox: --allow-net \`${entry%%|*}\`: "* ]] || fail "no flag and entry first"
		assert_output_contains "${entry#*|}"
	done
	# Not even the root dir was made: the flags are read before anything.
	[ ! -e "$ROOT/.sandbox" ]
}

@test "agent image: python3 and git in a sandbox on images/out/agent/rootfs" {
	host_kind_neutral
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

# ---- host secrets in a host-root sandbox (issue #11) -----------------------

@test "sandbox: /etc/shadow reads empty and /root is empty inside; --unhide /etc/shadow shows it, closed by its mode" {
	[ -s /etc/shadow ] && [ -n "$(ls -A /root)" ] || skip "needs a non-empty /etc/shadow and /root on the host"
	run sandbox -- sh -c 'wc -c </etc/shadow; ls -A /root | wc -l; ls -A /home/* 2>/dev/null | grep -v "^/home" | grep -c . ; cat /etc/passwd >/dev/null && echo passwd-ok'
	assert_success
	[ "${lines[0]}" = 0 ] || fail "/etc/shadow: $output"
	[ "${lines[1]}" = 0 ] || fail "/root: $output"
	[ "${lines[2]}" = 0 ] || fail "/home/*: $output"
	assert_output_contains passwd-ok
	# Unhidden, it is there but root's alone: root inside is nobody outside.
	run sandbox --unhide /etc/shadow -- sh -c 'stat -c %s /etc/shadow; cat /etc/shadow >/dev/null 2>&1 || echo closed; ls -A /root | wc -l'
	assert_success
	[ "${lines[0]}" = "$(stat -c %s /etc/shadow)" ] || fail "unhidden /etc/shadow: $output"
	[ "${lines[1]}" = closed ] || fail "unhidden /etc/shadow readable: $output"
	[ "${lines[2]}" = 0 ]
}

@test "sandbox: the emptied home is writable (tools' caches work) and nothing written there reaches the host" {
	local name=.agentrun-test-cache-$RANDOM$RANDOM
	run sandbox -- sh -c "mkdir -p /root/$name && echo cached >/root/$name/x && cat /root/$name/x"
	assert_success
	assert_output cached
	[ ! -e "/root/$name" ] || { rm -rf "/root/$name"; fail "the write reached the host's /root"; }
}

@test "sandbox: a --secret's source file is hidden, /run/secrets/NAME has the value" {
	local secret=hidden-src-$RANDOM$RANDOM
	printf '%s' "$secret" >"$TEST_DIR/secret"
	run sandbox --secret "tok=$TEST_DIR/secret" -- sh -c "echo [\$(cat $TEST_DIR/secret)]; cat /run/secrets/tok"
	assert_success
	[ "${lines[0]}" = "[]" ] || fail "source visible: $output"
	[ "${lines[1]}" = "$secret" ]
}

@test "sandbox: --hide hides a file, a directory and a symlink's target; missing paths are skipped; --rootfs hides nothing" {
	mkdir -p "$TEST_DIR/priv" "$TEST_DIR/tgt"
	echo private >"$TEST_DIR/priv/key"
	echo token >"$TEST_DIR/file"
	echo target >"$TEST_DIR/tgt/t"
	ln -s "$TEST_DIR/tgt" "$TEST_DIR/link"
	run sandbox --hide "$TEST_DIR/priv" --hide "$TEST_DIR/file" --hide "$TEST_DIR/link" --hide "$TEST_DIR/nothing-here" \
		-- sh -c "ls -A $TEST_DIR/priv | wc -l; echo [\$(cat $TEST_DIR/file)]; ls -A $TEST_DIR/tgt | wc -l; touch $TEST_DIR/priv/x 2>&1 || echo ro"
	assert_success
	[ "${lines[0]}" = 0 ] && [ "${lines[1]}" = "[]" ] && [ "${lines[2]}" = 0 ] || fail "$output"
	assert_output_contains ro
	run sandbox --hide relative/path -- true
	assert_failure
	[ "${#lines[@]}" = 1 ] && assert_output_contains "--hide \`relative/path\`"
	local rootfs=$TEST_DIR/rootfs
	cp -a "$AR_ROOTFS" "$rootfs"
	mkdir -p "$rootfs$WS" "$rootfs$TEST_DIR/priv"
	echo inside >"$rootfs$TEST_DIR/priv/key"
	run sandbox --rootfs "$rootfs" --hide "$TEST_DIR/priv" -- cat "$TEST_DIR/priv/key"
	assert_success
	[ "$output" = inside ]
}

@test "sandbox: --print-policy prints the hidden paths with reasons, mounts, egress and limits, and runs nothing" {
	host_kind_neutral
	run runtime sandbox --print-policy
	assert_success
	local json=$output
	[ "$(jq -r '.hidden[] | select(.path == "/etc/shadow") | .reason' <<<"$json")" = "password hashes" ] || fail "$json"
	[ "$(jq -r '.plan.hide["/etc/ssh/*_key"]' <<<"$json")" = "SSH host private keys" ]
	[ "$(jq -r '.plan.egress.mode' <<<"$json")" = none ]
	[ "$(jq -r '.limits.memoryBytes > 0 and .limits.wallClockSeconds > 0' <<<"$json")" = true ]
	[ "$(jq -r '[.mounts[].destination] | index("/proc") != null' <<<"$json")" = true ]
	[ "$(jq -r '.maskedPaths | index("/etc/shadow") != null' <<<"$json")" = true ]
	printf x >"$TEST_DIR/s"
	run sandbox --print-policy --secret "tok=$TEST_DIR/s" --unhide /etc/shadow -- touch "$WS/ran"
	assert_success
	[ ! -e "$WS/ran" ] || fail "the command ran"
	[ "$(jq -r '.plan.hide["'"$TEST_DIR/s"'"]' <<<"$output")" = "source of secret tok" ] || fail "$output"
	[ "$(jq -r '[.hidden[].path] | index("/etc/shadow")' <<<"$output")" = null ]
	run sandbox --print-policy --rootfs "$AR_ROOTFS" -- true
	assert_success
	[ "$(jq -c '.hidden' <<<"$output")" = "[]" ]
}

@test "sandbox: the profile's hideHostPaths key adds and removes entries" {
	host_kind_neutral
	echo token >"$TEST_DIR/file"
	mkdir -p "$AGENTRUN_CONFIG_DIR/profiles"
	cat >"$AGENTRUN_CONFIG_DIR/profiles/hider.json" <<-EOF2
	{"extends": "agent", "hideHostPaths": {"/etc/shadow": false, "$TEST_DIR/file": "test token"}}
	EOF2
	run runtime --profile hider sandbox --print-policy
	assert_success
	[ "$(jq -r '.hidden[] | select(.path == "'"$TEST_DIR/file"'") | .reason' <<<"$output")" = "test token" ] || fail "$output"
	[ "$(jq -r '[.hidden[].path] | index("/etc/shadow")' <<<"$output")" = null ]
	run runtime --profile hider sandbox -- cat "$TEST_DIR/file"
	assert_success
	[ -z "$output" ] || fail "$output"
	cat >"$AGENTRUN_CONFIG_DIR/profiles/hider.json" <<<'{"extends": "agent", "hideHostPaths": {"etc": "x"}}'
	run runtime --profile hider sandbox -- true
	assert_failure
	[ "${#lines[@]}" = 1 ] && assert_output_contains "hider.json: .hideHostPaths.etc"
}

@test "sandbox: --diff withholds a file holding a secret, says so, and the audit log lists it" {
	host_kind_neutral
	local secret=diff-secret-$RANDOM$RANDOM
	printf '%s' "$secret" >"$TEST_DIR/secret"
	echo "old $secret" >"$WS/had-it.txt"
	run sandbox --secret "tok=$TEST_DIR/secret" --audit "$TEST_DIR/audit.log" --diff "$TEST_DIR/changes.diff" \
		-- sh -c 'cp /run/secrets/tok leaked.txt; echo more >>a.txt; rm had-it.txt'
	assert_success
	local d=$TEST_DIR/changes.diff
	! grep -qF -- "$secret" "$d" || fail "secret in the diff: $(cat "$d")"
	grep -qx 'agentrun: withheld b/leaked.txt (contains secret tok)' "$d" || fail "$(cat "$d")"
	grep -qx 'agentrun: withheld b/had-it.txt (contains secret tok)' "$d" || fail "$(cat "$d")"
	grep -q '^+more$' "$d" || fail "$(cat "$d")"
	[ "$(jq -r 'select(.event == "diff") | .withheld | map(.path) | sort | join(",")' "$TEST_DIR/audit.log")" = "had-it.txt,leaked.txt" ]
	! grep -qF -- "$secret" "$TEST_DIR/audit.log"
}

@test "sandbox: --diff withholds both ends of a moved file holding a secret, and a move to a name spelling one" {
	host_kind_neutral
	local secret=diff-secret-$RANDOM$RANDOM
	printf '%s' "$secret" >"$TEST_DIR/secret"
	echo "old $secret" >"$WS/had-it.txt"
	echo "plain" >"$WS/plain.txt"
	run sandbox --secret "tok=$TEST_DIR/secret" --diff "$TEST_DIR/changes.diff" \
		-- sh -c "mv had-it.txt moved.txt && mv plain.txt $secret.txt"
	assert_success
	local d=$TEST_DIR/changes.diff
	! grep -qF -- "$secret" "$d" || fail "secret in the diff: $(cat "$d")"
	! grep -q '^rename ' "$d" || fail "a withheld path in a rename: $(cat "$d")"
	grep -qx 'agentrun: withheld b/had-it.txt (contains secret tok)' "$d" || fail "$(cat "$d")"
	grep -qx 'agentrun: withheld b/moved.txt (contains secret tok)' "$d" || fail "$(cat "$d")"
	grep -qx 'agentrun: withheld b/\[withheld name\] (.*)' "$d" || fail "$(cat "$d")"
	grep -qx 'deleted file mode 100644' "$d" && grep -qx -- '-plain' "$d"
}

@test "sandbox: a workspace under a hidden directory stays visible and writable, its changes land in the diff" {
	local home=$TEST_DIR/home
	mkdir -p "$home/repo"
	echo secret >"$home/.netrc"
	echo original >"$home/repo/a.txt"
	WS=$home/repo
	run sandbox --hide "$home" --diff "$TEST_DIR/changes.diff" \
		-- sh -c "ls -A $home; cat a.txt; echo more >>a.txt; touch $home/x 2>/dev/null || echo home-ro"
	assert_success
	[ "${lines[0]}" = repo ] && [ "${lines[1]}" = original ] || fail "$output"
	assert_output_contains home-ro
	grep -q '^+more$' "$TEST_DIR/changes.diff" || fail "$(cat "$TEST_DIR/changes.diff")"
	[ "$(cat "$home/repo/a.txt")" = original ]
	[ ! -e "$home/x" ]
}

@test "sandbox: a 32-bit syscall (the i386 entry, x32) ends the command with SIGSYS" {
	host_kind_neutral
	[ "$(uname -m)" = x86_64 ] || skip "written for x86-64"
	command -v cc >/dev/null || skip "no compiler to build tests/tools/compat_syscall"
	cp "$(tool_bin compat_syscall -static)" "$WS/compat"
	# The kernel takes it outside (ia32 emulation is on here).
	run "$WS/compat" i386
	[[ "$output" =~ ^i386\ ret=[1-9][0-9]*$ ]] || skip "no ia32 emulation in this kernel: $output"
	local abi
	for abi in i386 x32; do
		run sandbox -- ./compat "$abi"
		assert_failure 159
		assert_output "agentrun: sandbox: killed by SIGSYS"
	done
	# The native call is allowed.
	run sandbox -- sh -c 'echo $$'
	assert_success
}

@test "sandbox: no bundle is written; its state dir, with the spec as config.json, is the bundle" {
	host_kind_neutral
	(cd "$WS" && runtime sandbox -- sh -c 'sleep 3') &
	local pid=$! id="" i
	for i in $(seq 1 100); do
		id=$(ls "$ROOT" 2>/dev/null | grep '^sandbox-' | head -1) || true
		[ -n "$id" ] && [ -e "$ROOT/$id/state.json" ] && break
		sleep 0.05
	done
	[ -n "$id" ] || fail "no sandbox state dir under $ROOT"
	run runtime state "$id"
	assert_success
	assert_equal "$(jq -r .bundle <<<"$output")" "$(readlink -f "$ROOT")/$id"
	jq -e '.root.path | startswith("/")' "$ROOT/$id/config.json" >/dev/null || fail "no spec in $ROOT/$id"
	[ ! -e "$ROOT/.sandbox" ] || fail "a bundle dir was made: $(ls -A "$ROOT/.sandbox")"
	wait "$pid"
}
