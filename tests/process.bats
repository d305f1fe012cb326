#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The container process: args, env, cwd, user, umask, capabilities,
# rlimits, no_new_privs, oom score, sysctls, seccomp, fds, terminal.

load helpers

# status_field NAME: a line of /proc/self/status inside, value only.
STATUS_CMD='grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Groups):" /proc/self/status | tr -s "\t " " "'

# set_caps JSON-ARRAY-FOR-EACH-SET...: bounding effective permitted inheritable ambient
set_caps() {
	update_config '.process.capabilities = {"bounding": $b, "effective": $e,
		"permitted": $p, "inheritable": $i, "ambient": $a}' \
		--argjson b "$1" --argjson e "$2" --argjson p "$3" --argjson i "$4" --argjson a "$5"
}

@test "args keep their boundaries" {
	run ctr_run sh -c 'printf "[%s]" "$@"' _ "a  b" "" "c"
	assert_success
	assert_output "[a  b][][c]"
}

@test "env is exactly what the config gives, plus nothing from the host" {
	update_config '.process.env = ["PATH=/bin", "FOO=bar", "EQ=a=b=c", "AGENTRUN_TEST_ID=" + $id]' --arg id "$CID"
	export AGENTRUN_HOST_ONLY=leak
	run ctr_run sh -c 'echo "$FOO|$EQ|${AGENTRUN_HOST_ONLY:-unset}"'
	assert_success
	assert_output "bar|a=b=c|unset"
}

@test "cwd is set from the config" {
	update_config '.process.cwd = "/home/test"'
	run ctr_run pwd
	assert_success
	assert_output /home/test
}

@test "a relative or missing cwd is created or refused, never escapes" {
	update_config '.process.cwd = "/does/not/exist/yet"'
	run ctr_run pwd
	# runc creates a missing cwd; either way it is inside the rootfs.
	if [ "$status" -eq 0 ]; then
		assert_output /does/not/exist/yet
		[ -d "$BUNDLE/rootfs/does/not/exist/yet" ] || fail "cwd not in the rootfs"
	fi
	[ ! -e /does ] || fail "cwd created on the host"
}

@test "user: uid, gid and additionalGids" {
	update_config '.process.user = {"uid": 1000, "gid": 1000, "additionalGids": [1001]}'
	run ctr_run sh -c 'id -u; id -g; grep ^Groups: /proc/self/status | tr -s "\t " " "'
	assert_success
	assert_equal "${lines[0]}" 1000
	assert_equal "${lines[1]}" 1000
	assert_equal "$(echo "${lines[2]}" | sed 's/ $//')" "Groups: 1001"
}

@test "user: no additionalGids means no supplementary groups" {
	update_config '.process.user = {"uid": 1000, "gid": 1000}'
	run ctr_run sh -c 'grep ^Groups: /proc/self/status | tr -s "\t " " "'
	assert_success
	assert_equal "$(echo "$output" | sed 's/ $//')" "Groups:"
}

@test "user: root by default" {
	run ctr_run id -u
	assert_success
	assert_output 0
}

@test "umask from the config" {
	update_config '.process.user.umask = 63'
	run ctr_run sh -c 'umask; touch /tmp/f; stat -c %a /tmp/f'
	assert_success
	assert_equal "${lines[0]}" 0077
	assert_equal "${lines[1]}" 600
}

@test "capabilities: all five sets for a non-root user" {
	update_config '.process.user = {"uid": 1000, "gid": 1000}'
	# CHOWN=0, KILL=5, NET_BIND_SERVICE=10.
	set_caps '["CAP_CHOWN","CAP_KILL","CAP_NET_BIND_SERVICE"]' \
		'["CAP_KILL","CAP_NET_BIND_SERVICE"]' '["CAP_KILL","CAP_NET_BIND_SERVICE"]' \
		'["CAP_KILL","CAP_NET_BIND_SERVICE"]' '["CAP_NET_BIND_SERVICE"]'
	update_config '.process.noNewPrivileges = false'
	run ctr_run sh -c "$STATUS_CMD"
	assert_success
	assert_output_contains "CapBnd: 0000000000000421"
	assert_output_contains "CapInh: 0000000000000420"
	# After exec a non-root process keeps only its ambient set.
	assert_output_contains "CapPrm: 0000000000000400"
	assert_output_contains "CapEff: 0000000000000400"
	assert_output_contains "CapAmb: 0000000000000400"
}

@test "capabilities: root gets its bounding set, no inheritable or ambient" {
	set_caps '["CAP_CHOWN","CAP_KILL"]' '["CAP_CHOWN","CAP_KILL"]' '["CAP_CHOWN","CAP_KILL"]' '[]' '[]'
	run ctr_run sh -c "$STATUS_CMD"
	assert_success
	assert_output_contains "CapBnd: 0000000000000021"
	assert_output_contains "CapEff: 0000000000000021"
	assert_output_contains "CapPrm: 0000000000000021"
	assert_output_contains "CapInh: 0000000000000000"
	assert_output_contains "CapAmb: 0000000000000000"
}

@test "capabilities: a dropped capability is really gone" {
	set_caps '["CAP_KILL"]' '["CAP_KILL"]' '["CAP_KILL"]' '[]' '[]'
	run ctr_run sh -c 'touch /tmp/f && chown 1000 /tmp/f'
	assert_failure
	assert_output_contains "Operation not permitted"
	set_caps '["CAP_CHOWN"]' '["CAP_CHOWN"]' '["CAP_CHOWN"]' '[]' '[]'
	run ctr_run sh -c 'touch /tmp/f && chown 1000 /tmp/f'
	assert_success
}

@test "capabilities: an unknown capability name does not grant anything" {
	# runc warns and ignores unknown names.
	set_caps '["CAP_NO_SUCH_THING", "CAP_KILL"]' '["CAP_KILL"]' '["CAP_KILL"]' '[]' '[]'
	run ctr_run grep CapBnd /proc/self/status
	if [ "$status" -eq 0 ]; then
		assert_output_contains "CapBnd:	0000000000000020"
	fi
}

@test "rlimits: soft and hard RLIMIT_NOFILE" {
	# The hard nofile limit of this machine is 20000: stay below it.
	update_config '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 1234, "hard": 5678},
		{"type": "RLIMIT_NPROC", "soft": 777, "hard": 888}]'
	run ctr_run sh -c 'ulimit -n; ulimit -Hn; grep "Max processes" /proc/self/limits | tr -s " "'
	assert_success
	assert_equal "${lines[0]}" 1234
	assert_equal "${lines[1]}" 5678
	assert_equal "$(echo "${lines[2]}" | sed 's/ $//')" "Max processes 777 888 processes"
}

@test "rlimits: an unknown type is refused" {
	update_config '.process.rlimits = [{"type": "RLIMIT_BOGUS", "soft": 1, "hard": 1}]'
	run ctr_run true
	assert_failure
}

@test "noNewPrivileges true and false" {
	update_config '.process.noNewPrivileges = true'
	run ctr_run grep NoNewPrivs /proc/self/status
	assert_success
	assert_equal "$(echo "$output" | tr -s '\t ' ' ')" "NoNewPrivs: 1"
	update_config '.process.noNewPrivileges = false'
	run ctr_run grep NoNewPrivs /proc/self/status
	assert_success
	assert_equal "$(echo "$output" | tr -s '\t ' ' ')" "NoNewPrivs: 0"
}

@test "oomScoreAdj from the config" {
	update_config '.process.oomScoreAdj = 123'
	run ctr_run cat /proc/self/oom_score_adj
	assert_success
	assert_output 123
	[ "$(cat /proc/self/oom_score_adj)" != 123 ] || fail "host's score changed"
}

@test "oomScoreAdj: a file bound over the init's /proc/PID/oom_score_adj is refused, not written" {
	# In the container's pid namespace the init is pid 1; the runtime
	# writes its score through /proc/self, which is /proc/1 then.
	local file
	file=$(host_dir oom)/score
	echo untouched >"$file"
	update_config '.process.oomScoreAdj = 123
		| .mounts += [{"destination": "/proc/1/oom_score_adj", "type": "bind", "source": $f, "options": ["bind"]}]' \
		--arg f "$file"
	run ctr_run true
	assert_failure 125
	assert_output_contains "/proc/self/oom_score_adj\`: not on procfs"
	assert_equal "$(wc -l <<<"$output")" 1
	assert_equal "$(cat "$file")" untouched
	[ -z "$(state_entries)" ] || fail "state left: $(state_entries)"
	[ -z "$(mounts_under "$TEST_DIR")" ] || fail "mounts left: $(mounts_under "$TEST_DIR")"
}

@test "sysctl: a namespaced network sysctl in a new netns" {
	local before
	before=$(cat /proc/sys/net/ipv4/ip_forward)
	update_config '.linux.sysctl = {"net.ipv4.ip_forward": "1", "kernel.shmmni": "1234"}'
	update_config '.linux.namespaces |= (map(select(.type != "network" and .type != "ipc")) + [{"type": "network"}, {"type": "ipc"}])'
	run ctr_run sh -c 'cat /proc/sys/net/ipv4/ip_forward /proc/sys/kernel/shmmni'
	assert_success
	assert_equal "${lines[0]}" 1
	assert_equal "${lines[1]}" 1234
	assert_equal "$(cat /proc/sys/net/ipv4/ip_forward)" "$before"
}

@test "sysctl: a file bound over /proc/sys takes no write; the container's own sysctl is set" {
	# The config binds regular host files over the two sysctls it sets. A
	# runtime writing through the container's /proc/sys writes into them.
	local files before
	files=$(host_dir sysctl)
	echo untouched >"$files/ip_forward"
	echo untouched >"$files/shmmni"
	before=$(cat /proc/sys/net/ipv4/ip_forward)
	update_config '.linux.sysctl = {"net.ipv4.ip_forward": "1", "kernel.shmmni": "1234"}
		| .linux.namespaces |= (map(select(.type != "network" and .type != "ipc")) + [{"type": "network"}, {"type": "ipc"}])
		| .mounts += [{"destination": "/proc/sys/net/ipv4/ip_forward", "type": "bind", "source": $f, "options": ["bind"]},
			{"destination": "/proc/sys/kernel/shmmni", "type": "bind", "source": $s, "options": ["bind"]}]' \
		--arg f "$files/ip_forward" --arg s "$files/shmmni"
	set_args sleep 100
	ctr_create
	local pid
	pid=$(ctr_pid)
	# The files are mounted there in the container...
	grep -q ' /proc/sys/net/ipv4/ip_forward ' "/proc/$pid/mountinfo" || fail "no mount on ip_forward"
	grep -q ' /proc/sys/kernel/shmmni ' "/proc/$pid/mountinfo" || fail "no mount on shmmni"
	# ... and untouched; the sysctls of the container's own namespaces are
	# set, read through the host's /proc from inside them.
	assert_equal "$(cat "$files/ip_forward")" untouched
	assert_equal "$(cat "$files/shmmni")" untouched
	assert_equal "$(nsenter -t "$pid" -n cat /proc/sys/net/ipv4/ip_forward)" 1
	assert_equal "$(nsenter -t "$pid" -i cat /proc/sys/kernel/shmmni)" 1234
	assert_equal "$(cat /proc/sys/net/ipv4/ip_forward)" "$before"
	runtime delete --force "$CID"
}

@test "sysctl: a sysctl that is not namespaced is refused" {
	update_config '.linux.sysctl = {"vm.swappiness": "10"}'
	local before
	before=$(cat /proc/sys/vm/swappiness)
	run ctr_run true
	assert_failure
	assert_equal "$(cat /proc/sys/vm/swappiness)" "$before"
}

@test "sysctl: a net sysctl while sharing the caller's netns is refused" {
	update_config '.linux.namespaces |= map(select(.type != "network"))
		| .linux.sysctl = {"net.ipv4.ip_forward": "1"}'
	# The runtime runs in a throwaway netns of its own, so a runtime that
	# wrongly applies the sysctl changes that one, not the host's.
	set_args true
	run unshare --net timeout 30 "$RUNTIME" --root "$ROOT" run --bundle "$BUNDLE" "$CID" </dev/null
	assert_failure
}

@test "seccomp: SCMP_ACT_ERRNO denies mkdir with EPERM" {
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
		"architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
		"syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO"}]}'
	run ctr_run sh -c 'touch /tmp/file && echo touch-ok; mkdir /tmp/x'
	assert_failure
	assert_equal "${lines[0]}" touch-ok
	assert_output_contains "Operation not permitted"
	[ ! -d "$BUNDLE/rootfs/tmp/x" ] || fail "mkdir went through"
}

# ---- the compiled-filter cache ($ROOT/.seccomp-cache)

# deny_mkdir_profile [NAME...]: an allow-all filter that fails mkdir (and
# the names given) with EPERM.
deny_mkdir_profile() {
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
		"architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
		"syscalls": [{"names": (["mkdir", "mkdirat"] + $extra), "action": "SCMP_ACT_ERRNO"}]}' \
		--argjson extra "$(json_array "$@")"
}

# The container runs, and the filter is in effect.
mkdir_is_denied() {
	run ctr_run sh -c 'touch /tmp/file && echo touch-ok; mkdir /tmp/x'
	assert_failure 1
	assert_equal "${lines[0]}" touch-ok
	assert_output_contains "Operation not permitted"
}

# flip_byte FILE OFFSET: invert one bit of the byte at OFFSET.
flip_byte() {
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	printf "\\$(printf '%03o' $((b ^ 0x10)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

@test "seccomp cache: a miss stores, a hit reuses, a damaged file is rebuilt and never loaded" {
	local cache=$ROOT/.seccomp-cache file ino good size off
	deny_mkdir_profile
	mkdir_is_denied
	file=$(ls "$cache"/*.bpf)
	[ "$(wc -w <<<"$file")" = 1 ] || fail "expected one cached program, got: $file"
	good=$(sha256sum <"$file")
	ino=$(stat -c %i "$file")
	# A hit reads the file; a store would replace it (a new inode).
	mkdir_is_denied
	assert_equal "$(stat -c %i "$file")" "$ino"
	# One flipped bit in the header, the key, the program's first and last
	# instruction: each is a miss, the program is rebuilt and the file
	# replaced with the good one; the container still runs filtered.
	size=$(stat -c %s "$file")
	for off in 30 100 $((size - 64)) $((size - 8)) $((size - 1)); do
		flip_byte "$file" "$off"
		[ "$(sha256sum <"$file")" != "$good" ] || fail "byte $off not flipped"
		mkdir_is_denied
		assert_equal "$(sha256sum <"$file")" "$good"
	done
	# Cut short by one instruction, or to the header only.
	truncate -s -8 "$file"
	mkdir_is_denied
	assert_equal "$(sha256sum <"$file")" "$good"
	head -n1 "$file" >"$file.cut" && mv "$file.cut" "$file"
	mkdir_is_denied
	assert_equal "$(sha256sum <"$file")" "$good"
	rm -rf "$cache"
}

@test "seccomp cache: keyed on the build; other builds' programs are evicted, ours bounded" {
	local cache=$ROOT/.seccomp-cache file name build i n
	mkdir -p "$cache"
	# Another build's program, and one of the format before builds were
	# keyed: neither can be used, both must go.
	echo stale >"$cache/0123456789abcdef-0000000000000000.bpf"
	echo stale >"$cache/00000000deadbeef.bpf"
	deny_mkdir_profile
	mkdir_is_denied
	[ ! -e "$cache/0123456789abcdef-0000000000000000.bpf" ] || fail "another build's program kept"
	[ ! -e "$cache/00000000deadbeef.bpf" ] || fail "an unkeyed program kept"
	file=$(ls "$cache"/*.bpf)
	[ "$(wc -w <<<"$file")" = 1 ] || fail "expected one cached program, got: $file"
	name=${file##*/}
	build=${name%%-*}
	grep -q "^agentrun-seccomp-bpf 2 $build " "$file" || fail "header does not name the build $build"
	if [ "$RUNTIME" = "$AR_TOP/agentrun" ]; then
		# The build id is the hash of the version and the translation code,
		# the files Makefile.am lists as SECCOMP_TRANSLATION_FILES.
		local version want files
		version=$(sed -n 's/^AC_INIT(\[agentrun\], \[\([^]]*\)\].*/\1/p' "$AR_TOP/configure.ac")
		files=$(sed -n 's/^SECCOMP_TRANSLATION_FILES = //p' "$AR_TOP/Makefile.am")
		files=${files//\$(srcdir)/$AR_TOP}
		[ -n "$files" ] || fail "SECCOMP_TRANSLATION_FILES not found in Makefile.am"
		# shellcheck disable=SC2086 # a list of paths without spaces
		want=$({ echo "$version"; cat $files; } | sha256sum | cut -c1-16)
		assert_equal "$build" "$want"
	fi
	# 70 older programs of this build: after the next store, at most 64
	# are left, and the ones just used are among them.
	for i in $(seq 1 70); do
		echo old >"$cache/$build-$(printf '%016x' "$i").bpf"
		touch -d '2020-01-01' "$cache/$build-$(printf '%016x' "$i").bpf"
	done
	mkdir_is_denied
	deny_mkdir_profile rmdir
	mkdir_is_denied
	n=$(find "$cache" -name '*.bpf' | wc -l)
	[ "$n" -le 64 ] || fail "$n programs cached, more than 64"
	[ -e "$file" ] || fail "the most recently used program was evicted"
	[ "$(find "$cache" -name '*.bpf' -newer "$file" | wc -l)" = 1 ] || fail "the new program was not stored"
	rm -rf "$cache"
}

@test "seccomp: errnoRet chooses the errno" {
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
		"syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 28}]}'
	run ctr_run mkdir /tmp/x
	assert_failure
	assert_output_contains "No space left on device"
}

@test "seccomp: SCMP_ACT_KILL kills the caller with SIGSYS" {
	# sethostname: busybox never calls it on its own, and without the
	# filter it fails with EPERM (no CAP_SYS_ADMIN), status 1.
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
		"syscalls": [{"names": ["sethostname"], "action": "SCMP_ACT_KILL"}]}'
	run ctr_run sh -c 'sh -c "hostname x"; echo "status=$?"'
	assert_success
	# 128 + SIGSYS (31)
	assert_output_contains "status=159"
}

@test "seccomp: argument conditions select the call" {
	# kill(pid, SIGUSR1) is denied, kill(pid, 0) is not.
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
		"syscalls": [{"names": ["kill"], "action": "SCMP_ACT_ERRNO",
			"args": [{"index": 1, "value": 10, "op": "SCMP_CMP_EQ"}]}]}'
	run ctr_run sh -c 'trap "" USR1; kill -0 $$ && echo probe-ok; kill -USR1 $$ && echo usr1-sent'
	assert_output_contains probe-ok
	refute_output_contains usr1-sent
	assert_output_contains "Operation not permitted"
}

@test "seccomp: a default action of ERRNO with an allow list" {
	skip_if_sanitized
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 1,
		"syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 28}]}'
	# Nothing but the listed calls would work: even exec is denied.
	run ctr_run true
	assert_failure
}

@test "seccomp: an unknown action is refused" {
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_BOGUS", "syscalls": []}'
	run ctr_run true
	assert_failure
}

@test "no host fds leak into the container (run)" {
	run ctr_run sh -c 'ls /proc/self/fd | sort -n | tr "\n" " "'
	assert_success
	# 0-2 and the directory ls is reading.
	assert_output "0 1 2 3 "
}

@test "no host fds leak into the container (create and start)" {
	set_args sh -c 'ls /proc/self/fd | sort -n | tr "\n" " " > /fds'
	# Extra open fds in the caller, as a shim might have.
	exec 7</dev/null 8>"$TEST_DIR/held"
	ctr_create
	exec 7<&- 8>&-
	runtime start "$CID"
	wait_for_state "$CID" stopped
	assert_equal "$(cat "$BUNDLE/rootfs/fds")" "0 1 2 3 "
}

@test "--preserve-fds passes extra fds through" {
	echo passed-through >"$TEST_DIR/fd3"
	set_args sh -c 'cat <&3; ls /proc/self/fd | sort -n | tr "\n" " "'
	run timeout 30 "$RUNTIME" --root "$ROOT" run --preserve-fds 1 --bundle "$BUNDLE" "$CID" 3<"$TEST_DIR/fd3"
	assert_success
	assert_equal "${lines[0]}" passed-through
	assert_equal "${lines[1]}" "0 1 2 3 4 "
}

@test "terminal: the process gets a pty through --console-socket" {
	run_with_terminal sh -c 'tty; [ -t 0 ] && [ -t 1 ] && echo is-a-tty; echo term-ok'
	assert_success
	assert_equal "${lines[0]}" /dev/pts/0
	assert_equal "${lines[1]}" is-a-tty
	assert_equal "${lines[2]}" term-ok
}

@test "terminal: consoleSize sets the window size" {
	update_config '.process.consoleSize = {"height": 33, "width": 101}'
	run_with_terminal stty size
	assert_success
	assert_output "33 101"
}

@test "terminal: detached without a console socket is refused" {
	update_config '.process.terminal = true'
	set_args true
	run runtime_bg run --detach --bundle "$BUNDLE" "$CID"
	assert_failure
}

@test "without terminal stdio is not a tty" {
	run ctr_run sh -c '[ -t 1 ] && echo tty || echo no-tty'
	assert_success
	assert_output no-tty
}

@test "personality LINUX32 makes uname -m report a 32-bit machine" {
	[ "$(uname -m)" = x86_64 ] || skip "LINUX32 check written for x86_64 hosts"
	update_config '.linux.personality = {"domain": "LINUX32"}'
	run ctr_run uname -m
	assert_success
	assert_output i686
}

@test "scheduler SCHED_BATCH and ioPriority reach the process" {
	update_config '.process.scheduler = {"policy": "SCHED_BATCH", "nice": 5}
		| .process.ioPriority = {"class": "IOPRIO_CLASS_BE", "priority": 6}'
	# field 41 of /proc/PID/stat is the policy: 3 is SCHED_BATCH
	run ctr_run sh -c 'cut -d" " -f41 /proc/self/stat; ionice -p $$'
	assert_success
	assert_equal "${lines[0]}" 3
	assert_output_contains "best-effort"
	assert_output_contains "prio 6"
}

@test "a session keyring of the container's own, unless --no-new-keyring" {
	set_args sh -c 'sleep 30'
	runtime run --detach --bundle "$BUNDLE" "$CID"
	grep -q "_ses.$CID" /proc/keys || fail "no _ses.$CID keyring"
	runtime delete --force "$CID"
	runtime create --no-new-keyring --bundle "$BUNDLE" "$CID-nk"
	! grep -q "_ses.$CID-nk" /proc/keys || fail "a keyring was made despite --no-new-keyring"
	runtime delete --force "$CID-nk"
}
