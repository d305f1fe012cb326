/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "terminal.h"
#include "../util/fdpass.h"
#include "../util/cleanup.h"
#include "../util/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

/* What travels with the master fd on the console socket. runc sends the
 * name of the master's device; consumers read it and ignore it. */
#define CONSOLE_SOCKET_PAYLOAD "/dev/ptmx"

int
ar_terminal_open_pty (const char *ptmx_path, const char *devpts_dir,
                      int *master_fd, char **slave_path, ar_error_t **err)
{
  cleanup_close int master = open (ptmx_path, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0)
    return ar_error_set (err, errno, "open `%s`", ptmx_path);
  int unlock = 0;
  if (ioctl (master, TIOCSPTLCK, &unlock) < 0)
    return ar_error_set (err, errno, "unlock pty `%s`", ptmx_path);
  unsigned int number;
  if (ioctl (master, TIOCGPTN, &number) < 0)
    return ar_error_set (err, errno, "pty number of `%s`", ptmx_path);
  *slave_path = xasprintf ("%s/%u", devpts_dir, number);
  *master_fd = steal_fd (&master);
  return 0;
}

int
ar_terminal_become_stdio (const char *slave_path, unsigned rows, unsigned cols,
                          ar_error_t **err)
{
  /* A new session has no controlling terminal, so TIOCSCTTY can give it
   * this one. */
  if (setsid () < 0)
    return ar_error_set (err, errno, "setsid");
  cleanup_close int slave = open (slave_path, O_RDWR | O_NOCTTY);
  if (slave < 0)
    return ar_error_set (err, errno, "open `%s`", slave_path);
  if (ioctl (slave, TIOCSCTTY, 0) < 0)
    return ar_error_set (err, errno, "make `%s` the controlling tty",
                         slave_path);
  if (rows > 0 && cols > 0)
    {
      struct winsize ws = { .ws_row = (unsigned short) rows,
                            .ws_col = (unsigned short) cols };
      if (ioctl (slave, TIOCSWINSZ, &ws) < 0)
        return ar_error_set (err, errno, "set console size");
    }
  for (int target = 0; target <= 2; target++)
    if (dup2 (slave, target) < 0)
      return ar_error_set (err, errno, "dup2 tty onto %d", target);
  /* The slave now lives on as 0, 1 and 2; don't keep a fourth copy. */
  if (slave <= 2)
    steal_fd (&slave);
  return 0;
}

int
ar_terminal_send_to_socket (const char *socket_path, int fd, ar_error_t **err)
{
  if (ar_fd_send_to_path (socket_path, fd, CONSOLE_SOCKET_PAYLOAD, err) < 0)
    return ar_error_prefix (err, "console socket");
  return 0;
}

/* ---------------------------------------------------------------------
 * The foreground proxy for `run` with a terminal.
 * --------------------------------------------------------------------- */

typedef struct
{
  bool saved;
  struct termios attrs;
} saved_tty;

static void
restore_tty (saved_tty *t)
{
  if (t->saved)
    tcsetattr (STDIN_FILENO, TCSANOW, &t->attrs);
  t->saved = false;
}
#define cleanup_tty __attribute__ ((cleanup (restore_tty)))

static void
restore_sigmask (sigset_t *old)
{
  sigprocmask (SIG_SETMASK, old, NULL);
}
#define cleanup_sigmask __attribute__ ((cleanup (restore_sigmask)))

/* Raw mode so that keys (^C included) reach the container's tty, which
 * does its own line discipline. */
static int
make_stdin_raw (saved_tty *t, ar_error_t **err)
{
  if (!isatty (STDIN_FILENO))
    return 0;
  if (tcgetattr (STDIN_FILENO, &t->attrs) < 0)
    return ar_error_set (err, errno, "tcgetattr stdin");
  struct termios raw = t->attrs;
  /* Fully raw, output too: the container's tty already turned "\n" into
   * "\r\n". */
  cfmakeraw (&raw);
  if (tcsetattr (STDIN_FILENO, TCSANOW, &raw) < 0)
    return ar_error_set (err, errno, "make stdin raw");
  t->saved = true;
  return 0;
}

static void
copy_window_size (int master_fd)
{
  struct winsize ws;
  /* A 0x0 terminal (a pty nobody sized) would wipe process.consoleSize. */
  if (ioctl (STDIN_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0
      && ws.ws_col > 0)
    ioctl (master_fd, TIOCSWINSZ, &ws);
}

/* Move what is readable on `from` to `to`. Returns bytes moved, 0 at EOF,
 * -1 on error (errno set). */
static ssize_t
pump (int from, int to)
{
  char buf[8192];
  ssize_t n;
  do
    n = read (from, buf, sizeof buf);
  while (n < 0 && errno == EINTR);
  if (n <= 0)
    return n;
  if (ar_write_all (to, buf, (size_t) n) < 0)
    return -1;
  return n;
}

enum
{
  POLL_MASTER,
  POLL_STDIN,
  POLL_SIGNAL,
  POLL_COUNT
};

static int
proxy_loop (int master_fd, int sig_fd, ar_error_t **err)
{
  struct pollfd fds[POLL_COUNT] = {
    [POLL_MASTER] = { .fd = master_fd, .events = POLLIN },
    [POLL_STDIN] = { .fd = STDIN_FILENO, .events = POLLIN },
    [POLL_SIGNAL] = { .fd = sig_fd, .events = POLLIN },
  };
  for (;;)
    {
      if (poll (fds, POLL_COUNT, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          return ar_error_set (err, errno, "poll");
        }
      if (fds[POLL_SIGNAL].revents & POLLIN)
        {
          struct signalfd_siginfo si;
          if (read (sig_fd, &si, sizeof si) > 0)
            copy_window_size (master_fd);
        }
      if (fds[POLL_STDIN].revents & (POLLIN | POLLHUP | POLLERR))
        {
          /* stdin at EOF: stop reading it but keep showing output. */
          if (pump (STDIN_FILENO, master_fd) <= 0)
            fds[POLL_STDIN].fd = -1;
        }
      if (fds[POLL_MASTER].revents & (POLLIN | POLLHUP | POLLERR))
        {
          ssize_t n = pump (master_fd, STDOUT_FILENO);
          /* EIO is how a master reports that every slave is closed. */
          if (n == 0 || (n < 0 && errno == EIO))
            return 0;
          if (n < 0)
            return ar_error_set (err, errno, "copy terminal output");
        }
    }
}

int
ar_terminal_proxy (int master_fd, ar_error_t **err)
{
  /* SIGWINCH is read from a signalfd, so it must stay blocked while we
   * proxy; the caller's mask comes back on return. */
  cleanup_sigmask sigset_t old;
  sigprocmask (SIG_BLOCK, NULL, &old);
  sigset_t winch;
  sigemptyset (&winch);
  sigaddset (&winch, SIGWINCH);
  if (sigprocmask (SIG_BLOCK, &winch, NULL) < 0)
    return ar_error_set (err, errno, "block SIGWINCH");
  cleanup_close int sig_fd = signalfd (-1, &winch, SFD_CLOEXEC);
  if (sig_fd < 0)
    return ar_error_set (err, errno, "signalfd");

  cleanup_tty saved_tty tty = { 0 };
  if (make_stdin_raw (&tty, err) < 0)
    return -1;
  if (isatty (STDIN_FILENO))
    copy_window_size (master_fd);
  return proxy_loop (master_fd, sig_fd, err);
}
