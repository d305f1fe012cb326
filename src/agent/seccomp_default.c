/* SPDX-License-Identifier: Apache-2.0 */
/* The default seccomp filter of the agent profile.
 *
 * An allow-list: every syscall not named here fails with EPERM. The list
 * holds what ordinary programs (shells, compilers, interpreters, package
 * managers, test suites) need, grouped by purpose. Deliberately absent,
 * among others: mount and the new mount API, pivot_root, chroot,
 * unshare/setns (and namespace flags on clone), ptrace and
 * process_vm_*, kcmp, bpf, perf_event_open, userfaultfd, io_uring, the
 * keyring calls, module loading, kexec, reboot, swap, clock and time
 * setting, iopl/ioperm, quotactl, syslog, acct, file handles
 * (open_by_handle_at), fanotify, NUMA page moving, and the obsolete
 * calls nobody should reach (uselib, ustat, sysfs, _sysctl, ...).
 *
 * Only the native architecture's calls are allowed (set_architectures).
 * Names a given kernel or architecture does not have are skipped by the
 * loader, so one list serves x86-64 and arm64 (and 32-bit builds). */
#include "config.h"
#include "seccomp_default.h"
#include "../../oci/oci.h"
#include "../util/cleanup.h"

#include <errno.h>
#include <string.h>

#define N_ELEMENTS(a) (sizeof (a) / sizeof ((a)[0]))

static const char *const allowed_syscalls[] = {
  /* Reading and writing open files. */
  "read",
  "write",
  "readv",
  "writev",
  "pread64",
  "pwrite64",
  "preadv",
  "pwritev",
  "preadv2",
  "pwritev2",
  "lseek",
  "_llseek",
  "sendfile",
  "sendfile64",
  "copy_file_range",
  "splice",
  "tee",
  "vmsplice",
  "readahead",
  "fadvise64",
  "fadvise64_64",
  "arm_fadvise64_64",
  "fallocate",
  "ftruncate",
  "ftruncate64",
  "fsync",
  "fdatasync",
  "sync",
  "syncfs",
  "sync_file_range",
  "sync_file_range2",
  "arm_sync_file_range",
  "flock",

  /* Opening, closing, duplicating descriptors. */
  "open",
  "openat",
  "openat2",
  "creat",
  "close",
  "close_range",
  "dup",
  "dup2",
  "dup3",
  "fcntl",
  "fcntl64",
  "pipe",
  "pipe2",
  "memfd_create",
  "eventfd",
  "eventfd2",

  /* Paths and metadata. */
  "stat",
  "stat64",
  "lstat",
  "lstat64",
  "fstat",
  "fstat64",
  "newfstatat",
  "fstatat64",
  "statx",
  "statfs",
  "statfs64",
  "fstatfs",
  "fstatfs64",
  "access",
  "faccessat",
  "faccessat2",
  "readlink",
  "readlinkat",
  "getdents",
  "getdents64",
  "getcwd",
  "chdir",
  "fchdir",
  "mkdir",
  "mkdirat",
  "rmdir",
  "unlink",
  "unlinkat",
  "rename",
  "renameat",
  "renameat2",
  "link",
  "linkat",
  "symlink",
  "symlinkat",
  "truncate",
  "truncate64",
  "chmod",
  "fchmod",
  "fchmodat",
  "fchmodat2",
  "chown",
  "fchown",
  "lchown",
  "fchownat",
  "chown32",
  "fchown32",
  "lchown32",
  "umask",
  "utime",
  "utimes",
  "futimesat",
  "utimensat",
  "utimensat_time64",
  "mknod",
  "mknodat", /* devices still need CAP_MKNOD */
  "getxattr",
  "lgetxattr",
  "fgetxattr",
  "listxattr",
  "llistxattr",
  "flistxattr",
  "setxattr",
  "lsetxattr",
  "fsetxattr",
  "removexattr",
  "lremovexattr",
  "fremovexattr",
  "getxattrat",
  "setxattrat",
  "listxattrat",
  "removexattrat",
  "inotify_init",
  "inotify_init1",
  "inotify_add_watch",
  "inotify_rm_watch",

  /* Memory. */
  "brk",
  "mmap",
  "mmap2",
  "munmap",
  "mremap",
  "mprotect",
  "madvise",
  "msync",
  "mincore",
  "mlock",
  "mlock2",
  "munlock",
  "mlockall",
  "munlockall",
  "membarrier",
  "pkey_alloc",
  "pkey_free",
  "pkey_mprotect",
  "get_mempolicy",
  "map_shadow_stack",
  "mseal",

  /* Processes and threads (clone is allowed below, without namespace
   * flags). */
  "fork",
  "vfork",
  "execve",
  "execveat",
  "exit",
  "exit_group",
  "wait4",
  "waitid",
  "waitpid",
  "getpid",
  "getppid",
  "gettid",
  "getpgid",
  "setpgid",
  "getpgrp",
  "getsid",
  "setsid",
  "set_tid_address",
  "set_robust_list",
  "get_robust_list",
  "rseq",
  "futex",
  "futex_time64",
  "futex_waitv",
  "futex_wake",
  "futex_wait",
  "futex_requeue",
  "prctl",
  "arch_prctl",
  "set_thread_area",
  "get_thread_area",
  "set_tls",
  "cacheflush",
  "breakpoint",
  "capget",
  "capset",
  "getrusage",
  "times",
  "getrlimit",
  "ugetrlimit",
  "setrlimit",
  "prlimit64",
  "uname",
  "sysinfo",
  "getrandom",
  "getcpu",
  "seccomp",
  "landlock_create_ruleset",
  "landlock_add_rule",
  "landlock_restrict_self",
  "pidfd_open",
  "pidfd_send_signal",
  "kill",
  "tkill",
  "tgkill",
  "rt_sigqueueinfo",
  "rt_tgsigqueueinfo",

  /* Scheduling; raising priority still needs CAP_SYS_NICE. */
  "sched_yield",
  "sched_getaffinity",
  "sched_setaffinity",
  "sched_getparam",
  "sched_setparam",
  "sched_getscheduler",
  "sched_setscheduler",
  "sched_get_priority_max",
  "sched_get_priority_min",
  "sched_rr_get_interval",
  "sched_rr_get_interval_time64",
  "sched_getattr",
  "sched_setattr",
  "getpriority",
  "setpriority",
  "ioprio_get",
  "ioprio_set",

  /* Credentials; changing them still needs CAP_SETUID/CAP_SETGID. */
  "getuid",
  "geteuid",
  "getgid",
  "getegid",
  "getresuid",
  "getresgid",
  "getgroups",
  "setuid",
  "setgid",
  "setreuid",
  "setregid",
  "setresuid",
  "setresgid",
  "setgroups",
  "setfsuid",
  "setfsgid",
  "getuid32",
  "geteuid32",
  "getgid32",
  "getegid32",
  "getresuid32",
  "getresgid32",
  "getgroups32",
  "setuid32",
  "setgid32",
  "setreuid32",
  "setregid32",
  "setresuid32",
  "setresgid32",
  "setgroups32",
  "setfsuid32",
  "setfsgid32",

  /* Signals and timers. */
  "rt_sigaction",
  "rt_sigprocmask",
  "rt_sigreturn",
  "rt_sigpending",
  "rt_sigsuspend",
  "rt_sigtimedwait",
  "rt_sigtimedwait_time64",
  "sigaltstack",
  "signalfd",
  "signalfd4",
  "sigaction",
  "sigprocmask",
  "sigreturn",
  "sigpending",
  "sigsuspend",
  "signal",
  "pause",
  "alarm",
  "getitimer",
  "setitimer",
  "timer_create",
  "timer_settime",
  "timer_settime64",
  "timer_gettime",
  "timer_gettime64",
  "timer_getoverrun",
  "timer_delete",
  "timerfd_create",
  "timerfd_settime",
  "timerfd_settime64",
  "timerfd_gettime",
  "timerfd_gettime64",
  "restart_syscall",

  /* Reading the clocks and sleeping (setting them is not allowed). */
  "clock_gettime",
  "clock_gettime64",
  "clock_getres",
  "clock_getres_time64",
  "clock_nanosleep",
  "clock_nanosleep_time64",
  "gettimeofday",
  "time",
  "nanosleep",

  /* Waiting for events. */
  "select",
  "_newselect",
  "pselect6",
  "pselect6_time64",
  "poll",
  "ppoll",
  "ppoll_time64",
  "epoll_create",
  "epoll_create1",
  "epoll_ctl",
  "epoll_wait",
  "epoll_pwait",
  "epoll_pwait2",

  /* Asynchronous I/O (the old interface; io_uring is not allowed). */
  "io_setup",
  "io_destroy",
  "io_submit",
  "io_cancel",
  "io_getevents",
  "io_pgetevents",
  "io_pgetevents_time64",

  /* System V and POSIX IPC, scoped by the IPC namespace. */
  "ipc",
  "shmget",
  "shmat",
  "shmdt",
  "shmctl",
  "semget",
  "semop",
  "semctl",
  "semtimedop",
  "semtimedop_time64",
  "msgget",
  "msgsnd",
  "msgrcv",
  "msgctl",
  "mq_open",
  "mq_unlink",
  "mq_timedsend",
  "mq_timedsend_time64",
  "mq_timedreceive",
  "mq_timedreceive_time64",
  "mq_notify",
  "mq_getsetattr",

  /* Sockets; raw sockets still need CAP_NET_RAW, and the network
   * namespace is the container's own. */
  "socket",
  "socketpair",
  "socketcall",
  "bind",
  "connect",
  "listen",
  "accept",
  "accept4",
  "getsockname",
  "getpeername",
  "sendto",
  "recvfrom",
  "send",
  "recv",
  "sendmsg",
  "recvmsg",
  "sendmmsg",
  "recvmmsg",
  "recvmmsg_time64",
  "shutdown",
  "setsockopt",
  "getsockopt",
};

/* Namespace-creating clone flags (<linux/sched.h>): a new namespace is a
 * kernel attack surface the container has no business reaching. */
#define NEW_NAMESPACE_FLAGS                                                    \
  (0x00020000ull /* NEWNS */ | 0x02000000ull     /* NEWCGROUP */               \
   | 0x04000000ull /* NEWUTS */ | 0x08000000ull  /* NEWIPC */                  \
   | 0x10000000ull /* NEWUSER */ | 0x20000000ull /* NEWPID */                  \
   | 0x40000000ull /* NEWNET */)

/* personality(2) values that only change how Linux itself looks: plain
 * Linux, 32-bit uname, the 2.6-style version number, and the query. */
static const uint64_t allowed_personalities[]
    = { 0x0, 0x0008 /* PER_LINUX32 */, 0x20000 /* UNAME26 */, 0x20008,
        0xffffffff /* query */ };

/* TIOCSTI pushes bytes into a terminal's input: from a container that
 * shares a terminal it would type commands into the user's shell. The
 * kernel reads the request as 32 bits, so a plain "!= TIOCSTI" test on
 * the 64-bit register is bypassed by setting a high bit; "the low 32 bits
 * differ from TIOCSTI in some bit" is exact: 32 alternatives. */
#define IOCTL_TIOCSTI 0x5412u
#define IOCTL_REQUEST_BITS 32

static char **
strv_dup (const char *const *names, size_t n)
{
  char **items = xcalloc (n + 1, sizeof *items);
  for (size_t i = 0; i < n; i++)
    items[i] = xstrdup (names[i]);
  return items;
}

static void
set_names (oci_syscall *sc, const char *const *names, size_t n,
           const char *action)
{
  sc->names = (oci_strv){ strv_dup (names, n), n };
  sc->action = xstrdup (action);
}

static void
set_arg (oci_seccomp_arg *arg, uint32_t index, const char *op, uint64_t value,
         uint64_t value_two)
{
  *arg = (oci_seccomp_arg){
    .index = index, .value = value, .value_two = value_two, .op = xstrdup (op)
  };
}

static void
set_clone_rule (oci_syscall *sc)
{
  static const char *const names[] = { "clone" };
  set_names (sc, names, 1, "SCMP_ACT_ALLOW");
  sc->args = xcalloc (1, sizeof *sc->args);
  sc->n_args = 1;
  /* For MASKED_EQ, value is the mask and valueTwo the wanted result. */
  set_arg (&sc->args[0], 0, "SCMP_CMP_MASKED_EQ", NEW_NAMESPACE_FLAGS, 0);
}

static void
set_personality_rule (oci_syscall *sc)
{
  static const char *const names[] = { "personality" };
  set_names (sc, names, 1, "SCMP_ACT_ALLOW");
  size_t n = N_ELEMENTS (allowed_personalities);
  sc->args = xcalloc (n, sizeof *sc->args);
  sc->n_args = n;
  /* Comparisons of one argument are alternatives (see src/core/seccomp.c). */
  for (size_t i = 0; i < n; i++)
    set_arg (&sc->args[i], 0, "SCMP_CMP_EQ", allowed_personalities[i], 0);
}

/* One rule per bit: rules for a syscall are alternatives, and the loader
 * takes at most six comparisons in one rule. */
static void
set_ioctl_rule (oci_syscall *sc, unsigned bit)
{
  static const char *const names[] = { "ioctl" };
  set_names (sc, names, 1, "SCMP_ACT_ALLOW");
  sc->args = xcalloc (1, sizeof *sc->args);
  sc->n_args = 1;
  uint64_t mask = 1ull << bit;
  set_arg (&sc->args[0], 1, "SCMP_CMP_MASKED_EQ", mask,
           ~(uint64_t) IOCTL_TIOCSTI & mask);
}

/* glibc and others try clone3 first and fall back to clone when it is
 * missing; EPERM would be taken as a real failure. clone3's flags live in
 * memory where seccomp cannot see them, so it cannot be filtered like
 * clone. */
static void
set_clone3_rule (oci_syscall *sc)
{
  static const char *const names[] = { "clone3" };
  set_names (sc, names, 1, "SCMP_ACT_ERRNO");
  sc->errno_ret = (oci_opt_u32){ true, ENOSYS };
}

/* The native architecture only: a 32-bit (x86, x32, arm) syscall is
 * refused outright, the kernel's compat entry points (a known way out,
 * e.g. CVE-2021-22555 through 32-bit setsockopt) out of reach. It also
 * keeps the filter a third of the size, quicker to load and to run. An
 * empty list is the native one, which every filter includes. */
static void
set_architectures (oci_seccomp *s)
{
  s->architectures = (oci_strv){ xcalloc (1, sizeof (char *)), 0 };
}

oci_seccomp *
ar_seccomp_default_new (void)
{
  oci_seccomp *s = xcalloc (1, sizeof *s);
  s->default_action = xstrdup ("SCMP_ACT_ERRNO");
  s->default_errno_ret = (oci_opt_u32){ true, EPERM };
  set_architectures (s);

  s->n_syscalls = 4 + IOCTL_REQUEST_BITS;
  s->syscalls = xcalloc (s->n_syscalls, sizeof *s->syscalls);
  oci_syscall *sc = s->syscalls;
  set_names (sc++, allowed_syscalls, N_ELEMENTS (allowed_syscalls),
             "SCMP_ACT_ALLOW");
  set_clone_rule (sc++);
  set_personality_rule (sc++);
  set_clone3_rule (sc++);
  for (unsigned bit = 0; bit < IOCTL_REQUEST_BITS; bit++)
    set_ioctl_rule (sc++, bit);
  return s;
}

/* oci/ frees a filter only as part of a spec; lend it one rather than
 * keep a second copy of that code in step with spec.h. */
void
ar_seccomp_free (oci_seccomp *seccomp)
{
  if (seccomp == NULL)
    return;
  oci_spec *holder = xcalloc (1, sizeof *holder);
  holder->linux_cfg = xcalloc (1, sizeof *holder->linux_cfg);
  holder->linux_cfg->seccomp = seccomp;
  oci_spec_free (holder);
}
