/* SPDX-License-Identifier: Apache-2.0 */
/* The gate daemon's parts: gate.c holds events and asks the approver;
 * gate_secret.c and gate_exec.c mark what they watch and judge their
 * events. One fanotify group serves both: the kernel holds the open (of a
 * secret) or the exec (of a program) itself until the answer is written. */
#ifndef AR_AGENT_GATE_INTERNAL_H
#define AR_AGENT_GATE_INTERNAL_H

#include "agent.h"
#include "../../hooks/egress.h"

#include <stdbool.h>
#include <sys/fanotify.h>
#include <sys/types.h>

#define GATE_MAX_QUESTIONS 16
#define GATE_RECENT_DENIALS 8
/* A shell tries each PATH directory in turn (/usr/bin/id, then /bin/id,
 * the same file): one deny answers its retries for this long. */
#define GATE_DENIAL_HOLDS_MS 2000

typedef struct
{
  egress_question q; /* q.fd < 0: free */
  int event_fd;      /* the held file; answered through it */
  const char *what;  /* "secret", "exec" */
  char *where, *key;
  egress_approved *approved; /* where an "allow" remembers key */
  long long started_ms;
} gate_held;

typedef struct
{
  const ar_agent_plan *plan;
  const char *id;
  pid_t init_pid;
  ino_t mnt_ns; /* the container's mount namespace (programs.ask) */
  int fan_fd, pidfd;
  gate_held held[GATE_MAX_QUESTIONS];
  struct
  {
    char *key;
    long long until_ms;
  } denied[GATE_RECENT_DENIALS]; /* a ring */
  size_t next_denied;
  egress_approved secrets;  /* names allowed for the container */
  egress_approved programs; /* command lines allowed for it */
} gate;

/* Let the held open or exec go on, or fail it (EPERM), and close it. */
void gate_respond (const gate *g, int event_fd, bool allow);

/* Hold `event_fd` for the approver's answer on `what`/`where` (`detail`
 * shown beside); an "allow" puts `key` into `approved`. With every slot
 * taken, or no approver to reach, it is refused. */
void gate_ask (gate *g, int event_fd, const char *what, const char *where,
               const char *detail, egress_approved *approved, const char *key);

/* The command line of PID (/proc/PID/cmdline), words joined by spaces. */
char *gate_cmdline (pid_t pid);

/* gate_secret.c: mark the secrets tmpfs (FAN_OPEN_PERM); judge an open. */
bool gate_secret_wanted (const ar_agent_plan *plan);
int gate_secret_mark (gate *g, ar_error_t **err);
void gate_secret_on_open (gate *g, const struct fanotify_event_metadata *ev);

/* gate_exec.c: mark every mount of the container (FAN_OPEN_EXEC_PERM);
 * judge an exec. */
bool gate_exec_wanted (const ar_agent_plan *plan);
int gate_exec_mark (gate *g, ar_error_t **err);
void gate_exec_on_exec (gate *g, const struct fanotify_event_metadata *ev);

#endif
