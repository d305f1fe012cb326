/* SPDX-License-Identifier: Apache-2.0 */
/*
 * deny_mount: run a command under a seccomp filter that refuses mount(2)
 * with EPERM when its flags are exactly FLAGS, for tests that need a
 * kernel refusal the host would not give by itself.
 *
 *   deny_mount FLAGS COMMAND [ARG...]
 *
 * FLAGS is a number (strtoul base 0: 0x... works). Sets no_new_privs, as
 * an unprivileged filter must; every other call, and mount with other
 * flags, goes through.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: deny_mount FLAGS COMMAND [ARG...]\n");
		return 2;
	}
	unsigned long flags = strtoul(argv[1], NULL, 0);
	/* mount's fourth argument, low word then high word (x86_64). */
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mount, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[3])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned) flags, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[3]) + 4),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned) (flags >> 32), 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof filter / sizeof *filter, .filter = filter };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
	    || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
		perror("deny_mount: seccomp");
		return 1;
	}
	execvp(argv[2], argv + 2);
	perror("deny_mount: exec");
	return 127;
}
