/* SPDX-License-Identifier: Apache-2.0 */
/* A take from a pool, done by the launcher up to the command's start: the
 * runtime's own take (src/cmd/sandbox.c, src/core/take.c) would first
 * pay for the runtime's start, a dynamically linked program's, and the
 * command waits for that. What happens after the start (the audit
 * records, poststart hooks, the wait, the report, the delete, the refill)
 * is the runtime's, which is executed next and told what was done. */
#include "take.h"
#include "call.h"
#include "sys.h"
#include "text.h"
#include "../src/core/launcher_wire.h"

#include <linux/fcntl.h>
#include <linux/memfd.h>
#include <linux/signal.h>
#include <linux/un.h>

/* The socket ABI, the same on x86_64 and aarch64 (<sys/socket.h> has it;
 * the launcher includes no libc header). */
#define AF_UNIX 1
#define SOCK_SEQPACKET 5
#define SOL_SOCKET 1
#define SCM_RIGHTS 1
#define MSG_PEEK 2
#define MSG_NOSIGNAL 0x4000

struct io_vector
{
  void *base;
  unsigned long len;
};

struct message_header
{
  void *name;
  int name_len;
  struct io_vector *iov;
  unsigned long iov_len;
  void *control;
  unsigned long control_len;
  int flags;
};

/* One SCM_RIGHTS fd: CMSG_LEN (4) is 20, CMSG_SPACE (4) 24. */
struct one_fd_control
{
  unsigned long len;
  int level;
  int type;
  int fd;
  int pad;
};

/* A wire message (launcher_wire.h). */
struct wire
{
  int type;
  int value;
  char text[AR_TAKE_WIRE_TEXT_MAX];
};

#define ENV_MAX 8192

/* Is this call `[GLOBAL OPTIONS] sandbox --pool NAME | --pool=NAME --
 * COMMAND...` (call.h's options), with any number of `--no-tty` (a pooled
 * sandbox never has a terminal) before the `--`? Then *root (0: the
 * default), *pool and *command (its index). */
static int
parse_call (int argc, char **argv, const char **root, const char **pool,
            int *command)
{
  int i = call_command (argc, argv, root);
  if (i == 0 || !same (argv[i++], "sandbox"))
    return 0;
  *pool = 0;
  for (; i < argc && !same (argv[i], "--"); i++)
    {
      const char *name = after (argv[i], "--pool=");
      if (!name && same (argv[i], "--pool") && i + 1 < argc)
        name = argv[++i];
      if (name && !*pool)
        *pool = name;
      else if (!same (argv[i], "--no-tty"))
        return 0;
    }
  if (i + 1 >= argc || !*pool || !plain_name (*pool))
    return 0;
  *command = i + 1;
  return 1;
}

/* The pool's ready/ and taken/, open; 0 when it has none. */
static int
open_pool (const char *root, const char *pool, long *ready, long *taken)
{
  char path[PATH_BYTES], *at = path;
  if (!append (&at, path + sizeof path, root ? root : AR_DEFAULT_ROOT)
      || !append (&at, path + sizeof path, "/" AR_POOLS_DIR "/")
      || !append (&at, path + sizeof path, pool))
    return 0;
  long pool_fd = open_dir (AT_FDCWD, path);
  if (pool_fd < 0)
    return 0;
  *ready = open_dir (pool_fd, AR_POOL_READY_DIR);
  *taken = open_dir (pool_fd, AR_POOL_TAKEN_DIR);
  sys (__NR_close, pool_fd, 0, 0, 0, 0);
  return *ready >= 0 && *taken >= 0;
}

/* linux_dirent64 */
struct dir_entry
{
  unsigned long long ino;
  long long off;
  unsigned short record_length;
  unsigned char type;
  char name[];
};

/* Rename the first ready socket into taken/, as src/cmd/pool.c's
 * claim_ready does: it is ours. Its name (the container's id) in id. */
static int
claim (long ready, long taken, char id[NAME_MAX_BYTES + 1])
{
  /* Static, as every buffer the kernel fills here: zeroed before, so
   * that the analyzer, which cannot see into a system call, sees it
   * written. */
  static char buf[4096] __attribute__ ((aligned (8)));
  long n;
  while ((n = sys (__NR_getdents64, ready, (long) buf, sizeof buf, 0, 0)) > 0)
    for (long at = 0; at < n;)
      {
        struct dir_entry *e = (struct dir_entry *) (buf + at);
        at += e->record_length;
        if (!plain_name (e->name)
            || sys (__NR_renameat2, ready, (long) e->name, taken,
                    (long) e->name, 0)
                   != 0)
          continue;
        char *to = id;
        append (&to, id + NAME_MAX_BYTES + 1, e->name);
        return 1;
      }
  return 0;
}

/* A seqpacket connection to taken/ID, without FD_CLOEXEC: it goes on to
 * the runtime. -1 when it cannot be made. */
static long
connect_to (long taken, const char *id)
{
  struct sockaddr_un addr;
  addr.sun_family = AF_UNIX;
  char *at = addr.sun_path;
  if (!append (&at, addr.sun_path + sizeof addr.sun_path, "/proc/self/fd/")
      || !append_number (&at, addr.sun_path + sizeof addr.sun_path, taken)
      || !append (&at, addr.sun_path + sizeof addr.sun_path, "/")
      || !append (&at, addr.sun_path + sizeof addr.sun_path, id))
    return -1;
  long sock = sys (__NR_socket, AF_UNIX, SOCK_SEQPACKET, 0, 0, 0);
  if (sock >= 0
      && sys (__NR_connect, sock, (long) &addr, sizeof addr, 0, 0) != 0)
    {
      sys (__NR_close, sock, 0, 0, 0, 0);
      sock = -1;
    }
  return sock;
}

/* A message without text, with `fd` (-1: none). */
static int
send_message (long sock, int type, int value, long fd)
{
  struct wire w;
  w.type = type;
  w.value = value;
  w.text[0] = '\0';
  struct io_vector iov = { &w, 9 };
  struct one_fd_control control = { 20, SOL_SOCKET, SCM_RIGHTS, (int) fd, 0 };
  struct message_header mh = { 0, 0, &iov, 1, 0, 0, 0 };
  if (fd >= 0)
    {
      mh.control = &control;
      mh.control_len = sizeof control;
    }
  return sys (__NR_sendmsg, sock, (long) &mh, MSG_NOSIGNAL, 0, 0) == 9;
}

/* The command (src/core/take_command.c's encoding: an 'a' entry per
 * word) in a memfd, then it and fds 0, 1 and 2. */
static int
send_command (long sock, char **command)
{
  long fd = sys (__NR_memfd_create, (long) "agentrun-command", MFD_CLOEXEC, 0,
                 0, 0);
  int ok = fd >= 0;
  for (; ok && *command; command++)
    ok = sys (__NR_write, fd, (long) "a", 1, 0, 0) == 1
         && sys (__NR_write, fd, (long) *command, (long) length (*command) + 1,
                 0, 0)
                == (long) length (*command) + 1;
  ok = ok && send_message (sock, AR_TAKE_WIRE_COMMAND, 0, fd);
  for (int i = 0; ok && i < 3; i++)
    ok = send_message (sock, AR_TAKE_WIRE_STDIO, i, i);
  if (fd >= 0)
    sys (__NR_close, fd, 0, 0, 0, 0);
  return ok;
}

static long
receive (long sock, struct wire *w, int flags)
{
  struct io_vector iov = { w, sizeof *w };
  struct message_header mh = { 0, 0, &iov, 1, 0, 0, 0 };
  return sys (__NR_recvmsg, sock, (long) &mh, flags, 0, 0);
}

/* The signals the runtime passes on to the command
 * (AR_FORWARDED_SIGNALS), blocked from the start until the runtime,
 * executed next, has its handlers: one sent meanwhile waits, pending
 * across the exec, instead of ending this process. */
static void
block_forwarded_signals (void)
{
  unsigned long set = 0;
  static const int forwarded[] = { AR_FORWARDED_SIGNALS };
  for (unsigned i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
    set |= 1UL << (forwarded[i] - 1);
  sys (__NR_rt_sigprocmask, SIG_BLOCK, (long) &set, 0, sizeof set, 0);
}

/* The init's READY: a pidfd of its host pid, opened while it waits for the
 * start (so the pid is still its own), and whether it has poststart
 * hooks; then the start. 0, having read nothing, when its answer is not
 * READY (an error the runtime is to read and report) or no pidfd could
 * be had. Once READY is read the start is sent: should that fail, the
 * connection is gone, and with it the init, which the runtime sees. */
static int
start (long sock, long *pidfd, int *poststart)
{
  static struct wire w;
  long n = receive (sock, &w, MSG_PEEK);
  if (n < 9 || w.type != AR_TAKE_WIRE_READY || w.value <= 0)
    return 0;
  *pidfd = sys (__NR_pidfd_open, w.value, 0, 0, 0, 0);
  if (*pidfd < 0)
    return 0;
  *poststart = !(w.text[0] == '0' && w.text[1] == '\0');
  /* Across the exec, to the runtime. */
  sys (__NR_fcntl, *pidfd, F_SETFD, 0, 0, 0);
  receive (sock, &w, 0);
  block_forwarded_signals ();
  send_message (sock, AR_TAKE_WIRE_START, 0, -1);
  return 1;
}

/* How many entries envp has; ENV_MAX when it has that many or more. */
static unsigned long
env_count (char **envp)
{
  unsigned long n = 0;
  while (envp[n] && n < ENV_MAX)
    n++;
  return n;
}

/* Executes the runtime with envp (fewer than ENV_MAX entries) and
 * `handover`, AR_TAKE_HANDOVER_ENV's entry (one the caller had is
 * dropped); returns if it cannot. */
static void
exec_runtime (const char *runtime, char **argv, char **envp,
              const char *handover)
{
  unsigned long n = env_count (envp), kept = 0;
  char *env[n + 2];
  for (unsigned long i = 0; i < n; i++)
    if (!after (envp[i], AR_TAKE_HANDOVER_ENV "="))
      env[kept++] = envp[i];
  env[kept++] = (char *) handover;
  env[kept] = 0;
  sys (__NR_execve, (long) runtime, (long) argv, (long) env, 0, 0);
}

void
take_from_pool (int argc, char **argv, char **envp, const char *runtime)
{
  const char *root, *pool;
  int command;
  long ready = -1, taken = -1;
  char id[NAME_MAX_BYTES + 1];
  int claimed = parse_call (argc, argv, &root, &pool, &command)
                && env_count (envp) < ENV_MAX
                && open_pool (root, pool, &ready, &taken)
                && claim (ready, taken, id);
  if (ready >= 0)
    sys (__NR_close, ready, 0, 0, 0, 0);
  if (!claimed)
    {
      if (taken >= 0)
        sys (__NR_close, taken, 0, 0, 0, 0);
      return;
    }
  long sock = connect_to (taken, id);
  sys (__NR_close, taken, 0, 0, 0, 0);
  long pidfd = -1;
  int poststart = 0;
  int sent = sock >= 0 && send_command (sock, argv + command);
  int started = sent && start (sock, &pidfd, &poststart);
  if (sock >= 0 && !sent)
    {
      sys (__NR_close, sock, 0, 0, 0, 0);
      sock = -1;
    }
  /* "ID", "ID SOCK" or "ID SOCK PIDFD POSTSTART" (src/core/take.h). */
  char handover[256], *at = handover, *end = handover + sizeof handover;
  append (&at, end, AR_TAKE_HANDOVER_ENV "=");
  append (&at, end, id);
  if (sent)
    {
      append (&at, end, " ");
      append_number (&at, end, sock);
    }
  if (started)
    {
      append (&at, end, " ");
      append_number (&at, end, pidfd);
      append (&at, end, poststart ? " 1" : " 0");
    }
  exec_runtime (runtime, argv, envp, handover);
}
