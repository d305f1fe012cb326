/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "cmd.h"
#include "../core/container.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const ar_option options[]
    = { { "all", 'a', false, "signal every process of the container" }, { 0 } };
AR_OPTIONS_FIT (options);

static const ar_command_doc doc = {
  "kill", "[OPTIONS] CONTAINER_ID [SIGNAL]",
  "Send a signal (default SIGTERM; a name like KILL or SIGKILL, or a number)."
};

static const struct
{
  const char *name;
  int number;
} signals[] = {
  { "HUP", SIGHUP },   { "INT", SIGINT },       { "QUIT", SIGQUIT },
  { "ILL", SIGILL },   { "TRAP", SIGTRAP },     { "ABRT", SIGABRT },
  { "IOT", SIGIOT },   { "BUS", SIGBUS },       { "FPE", SIGFPE },
  { "KILL", SIGKILL }, { "USR1", SIGUSR1 },     { "SEGV", SIGSEGV },
  { "USR2", SIGUSR2 }, { "PIPE", SIGPIPE },     { "ALRM", SIGALRM },
  { "TERM", SIGTERM }, { "STKFLT", SIGSTKFLT }, { "CHLD", SIGCHLD },
  { "CONT", SIGCONT }, { "STOP", SIGSTOP },     { "TSTP", SIGTSTP },
  { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU },     { "URG", SIGURG },
  { "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ },     { "VTALRM", SIGVTALRM },
  { "PROF", SIGPROF }, { "WINCH", SIGWINCH },   { "IO", SIGIO },
  { "POLL", SIGPOLL }, { "PWR", SIGPWR },       { "SYS", SIGSYS },
};

static int
parse_signal (const char *s, ar_error_t **err)
{
  char *end;
  long n = strtol (s, &end, 10);
  if (*s && *end == '\0')
    {
      if (n < 0 || n > SIGRTMAX) /* 0: runc's liveness check */
        return ar_error_set (err, 0, "kill: invalid signal number `%s`", s);
      return (int) n;
    }
  const char *name = strncasecmp (s, "SIG", 3) == 0 ? s + 3 : s;
  for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
    if (strcasecmp (name, signals[i].name) == 0)
      return signals[i].number;
  if (strncasecmp (name, "RTMIN", 5) == 0
      || strncasecmp (name, "RTMAX", 5) == 0)
    {
      long off = name[5] ? strtol (name + 5, &end, 10) : 0;
      int sig = strncasecmp (name, "RTMIN", 5) == 0 ? SIGRTMIN + (int) off
                                                    : SIGRTMAX + (int) off;
      if ((name[5] == '\0' || *end == '\0') && sig >= SIGRTMIN
          && sig <= SIGRTMAX)
        return sig;
    }
  return ar_error_set (err, 0, "kill: unknown signal `%s`", s);
}

int
ar_cmd_kill (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (p.n_args != 1 && p.n_args != 2)
    return ar_require_args ("kill", &p, 1, "CONTAINER_ID [SIGNAL]", err);
  int sig = p.n_args == 2 ? parse_signal (p.args[1], err) : SIGTERM;
  if (sig < 0)
    return -1;
  return ar_container_kill (g->root, p.args[0], sig, ar_flag (&p, 0), err) < 0
             ? -1
             : 0;
}
