/* SPDX-License-Identifier: Apache-2.0 */
/* The launcher's only contact with the machine: the process entry and a
 * raw system call, per architecture. No libc: its start-up (the loader,
 * relocations, TLS, CPU feature probes) is what the launcher exists to
 * avoid paying twice. */
#ifndef AR_LAUNCHER_ARCH_H
#define AR_LAUNCHER_ARCH_H

#include <asm/unistd.h>

/* The kernel enters _start with the stack pointer at argc, argv[] and
 * envp[] above it; launcher_main (const long *sp) takes it from there.
 * Defined by the one file that defines AR_LAUNCHER_ENTRY first. */
#if defined(__x86_64__)
#ifdef AR_LAUNCHER_ENTRY
__asm__(".text\n"
        ".global _start\n"
        "_start:\n"
        "  xor %rbp, %rbp\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call launcher_main\n"
        "  hlt\n");
#endif

static inline long
raw_syscall (long nr, long a, long b, long c, long d, long e)
{
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                   : "rcx", "r11", "memory");
  return ret;
}
#elif defined(__aarch64__)
#ifdef AR_LAUNCHER_ENTRY
__asm__(".text\n"
        ".global _start\n"
        "_start:\n"
        "  mov x29, #0\n"
        "  mov x30, #0\n"
        "  mov x0, sp\n"
        "  bl launcher_main\n"
        "  brk #0\n");
#endif

static inline long
raw_syscall (long nr, long a, long b, long c, long d, long e)
{
  register long x8 __asm__("x8") = nr;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = d;
  register long x4 __asm__("x4") = e;
  __asm__ volatile("svc #0"
                   : "+r"(x0)
                   : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4)
                   : "memory");
  return x0;
}
#else
#error                                                                         \
    "the launcher knows x86_64 and aarch64; configure builds without it elsewhere"
#endif

#endif
