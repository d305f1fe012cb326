#!/usr/bin/env bats
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
