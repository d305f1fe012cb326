#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Seccomp as runc applies it: a syscall newer than every one the profile
# names gets ENOSYS (so libc falls back: clone3 -> clone, faccessat2 ...),
# one the profile could have named gets the default action. Debian's runc
# 1.1.5 was seen to return EPERM for syscall 1000 under the same profile
# (docs/runc-compat.md), so the ENOSYS case runs against agentrun only.

load helpers

setup() {
	common_setup
	cp "$(tool_bin syscall_nr -static)" "$BUNDLE/rootfs/syscall_nr"
	# Enough for the runtime's last steps and a static binary; acct is
	# left out on purpose (below the highest named, so: default action).
	local allowed
	allowed=$(json_array accept4 access arch_prctl bind brk capget capset chdir \
		clock_gettime clock_nanosleep clone clone3 close close_range connect dup dup2 dup3 \
		epoll_create1 epoll_ctl epoll_pwait epoll_wait execve execveat exit exit_group \
		faccessat faccessat2 fchdir fchmod fchown fcntl fstat fstatfs futex getcwd getdents64 \
		getegid geteuid getgid getgroups getpgrp getpid getppid getrandom getrlimit gettid \
		getuid ioctl kill lseek madvise mmap mprotect munmap nanosleep newfstatat open openat \
		openat2 pipe pipe2 poll ppoll prctl pread64 prlimit64 read readlink readlinkat recvfrom \
		recvmsg rseq rt_sigaction rt_sigprocmask rt_sigreturn sched_getaffinity sched_yield \
		sendmsg sendto set_robust_list set_tid_address setgid setgroups setresgid setresuid \
		setsid setuid sigaltstack socket stat statfs statx tgkill umask uname wait4 write writev)
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ERRNO",
		"syscalls": [{"names": $names, "action": "SCMP_ACT_ALLOW"}]}' --argjson names "$allowed"
}

@test "seccomp: a syscall above every named one is ENOSYS, a known one left out gets the default errno" {
	# 1000: no kernel has it; 163 is acct on x86_64.
	[ "$(uname -m)" = x86_64 ] || skip "syscall numbers are x86_64's"
	[ "$(basename "$RUNTIME")" != runc ] || skip "Debian's runc 1.1.5 returns EPERM here"
	run ctr_run /syscall_nr 1000 163 39
	assert_success
	assert_output_contains "1000 errno=ENOSYS"
	assert_output_contains "163 errno=EPERM"
	assert_output_contains "39 ret="
}

@test "seccomp: a profile that allows by default needs no ENOSYS check; its rules still apply" {
	[ "$(uname -m)" = x86_64 ] || skip "syscall numbers are x86_64's"
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
		"syscalls": [{"names": ["acct"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13}]}'
	run ctr_run /syscall_nr 1000 163
	assert_success
	assert_output_contains "1000 errno=ENOSYS"
	assert_output_contains "163 errno=EACCES"
}

@test "seccomp: a startContainer hook runs under the container's filter, as runc 1.1.5 orders it" {
	# Measured with runc 1.1.5: the filter is loaded before the exec fifo
	# wait, startContainer hooks run after it (docs/runc-compat.md).
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
		"syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO"}]}
		| .hooks.startContainer = [{"path": "/bin/mkdir", "args": ["mkdir", "/hookdir"]}]'
	set_args true
	run runtime run --bundle "$BUNDLE" "$CID"
	assert_failure
	assert_output_contains "Operation not permitted"
	[ ! -e "$BUNDLE/rootfs/hookdir" ] || fail "the hook ran without the filter"
	update_config '.linux.seccomp.syscalls = []'
	run runtime run --bundle "$BUNDLE" "$CID-2"
	assert_success
	[ -d "$BUNDLE/rootfs/hookdir" ] || fail "the hook did not run"
}

# start_agent: tests/tools/seccomp_agent on $TEST_DIR/agent.sock, its
# output in $TEST_DIR/agent.out.
start_agent() {
	local bin
	bin=$(tool_bin seccomp_agent)
	"$bin" -t 30 "$TEST_DIR/agent.sock" >"$TEST_DIR/agent.out" 2>&1 &
	track_pid $!
	wait_for_file "$TEST_DIR/agent.sock"
}

# runc 1.1.5 does the same for run; for exec it passes no fd (the call
# gets ENOSYS) and its error words differ (docs/runc-compat.md).
@test "seccomp listener: the runtime hands the notify fd to listenerPath (a host path) with the container process state, for run and exec" {
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
		"listenerPath": $sock, "listenerMetadata": "meta-1",
		"syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_NOTIFY"}]}' \
		--arg sock "$TEST_DIR/agent.sock"
	start_agent
	set_args sh -c 'mkdir /made; echo "status $?"; exec sleep 1000'
	ctr_run_bg
	wait_for_state "$CID" running
	local pid
	pid=$(ctr_pid)
	# The agent answered ENOSPC: the fd reached it and it is in control.
	wait_for_file_content "$TEST_DIR/agent.out" "syscall"
	[ ! -e "$BUNDLE/rootfs/made" ] || fail "mkdir went through"
	assert_equal "$(sed -n 1p "$TEST_DIR/agent.out")" "fds: 1"
	local state
	state=$(sed -n 2p "$TEST_DIR/agent.out")
	jq -e --arg id "$CID" --argjson pid "$pid" '.fds == ["seccompFd"] and .pid == $pid and .metadata == "meta-1"
		and .state.id == $id and .state.status == "creating" and .state.pid == $pid' <<<"$state" >/dev/null \
		|| fail "container process state: $state"

	run runtime exec "$CID" mkdir /made-by-exec
	assert_failure
	assert_output_contains "No space left on device"
	[ "$(grep -c '^fds: 1$' "$TEST_DIR/agent.out")" -eq 2 ] || fail "exec's fd did not arrive: $(cat "$TEST_DIR/agent.out")"
	jq -e --arg id "$CID" '.state.id == $id and .state.status == "running" and .pid != .state.pid' \
		<<<"$(grep '^{' "$TEST_DIR/agent.out" | sed -n 2p)" >/dev/null || fail "exec's state: $(cat "$TEST_DIR/agent.out")"
}

@test "seccomp listener: without notify rules there is nothing to hand over and no connection, as runc 1.1.5" {
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
		"listenerPath": $sock, "syscalls": [{"names": ["mkdirat"], "action": "SCMP_ACT_ERRNO"}]}' \
		--arg sock "$TEST_DIR/agent.sock"
	start_agent
	run ctr_run true
	assert_success
	[ ! -s "$TEST_DIR/agent.out" ] || fail "the agent was contacted: $(cat "$TEST_DIR/agent.out")"
}

@test "seccomp listener: nobody listening is a one-line error naming listenerPath, and nothing is left" {
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
		"listenerPath": $sock, "syscalls": [{"names": ["mkdirat"], "action": "SCMP_ACT_NOTIFY"}]}' \
		--arg sock "$TEST_DIR/nobody.sock"
	run ctr_run true
	assert_failure
	assert_output_contains ".linux.seccomp.listenerPath"
	assert_output_contains "nobody.sock"
	[ "${#lines[@]}" -eq 1 ] || fail "$output"
	[ -z "$(state_entries)" ] || fail "state left"
}

@test "seccomp: an unknown syscall name is skipped as runc does; with crun's run.oci.seccomp_fail_unknown_syscall it is refused" {
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
		"syscalls": [{"names": ["mkdir", "mkdirat", "no_such_syscall_x"], "action": "SCMP_ACT_ERRNO"}]}'
	run ctr_run sh -c 'mkdir /d 2>&1; echo done'
	assert_success
	assert_output_contains "Operation not permitted"
	[ -n "${RUNTIME_IS_RUNC:-}" ] && return 0
	update_config '.annotations["run.oci.seccomp_fail_unknown_syscall"] = "1"'
	run ctr_run true
	assert_failure
	assert_output 'agentrun: config.json: .linux.seccomp.syscalls[0].names[2]: unknown syscall "no_such_syscall_x" (the annotation run.oci.seccomp_fail_unknown_syscall asks to refuse it)'
	[ -z "$(state_entries)" ] || fail "state left"
}
