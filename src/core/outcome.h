/* SPDX-License-Identifier: Apache-2.0 */
/* How a foreground container (run, sandbox) ended: gathered when its init
 * is gone and before its delete, while the cgroup still holds the numbers,
 * for the one line on stderr that says why and for sandbox --json-status. */
#ifndef AR_CORE_OUTCOME_H
#define AR_CORE_OUTCOME_H

#include <stdbool.h>
#include <stdint.h>

/* What run and sandbox exit with when the wall-clock limit ended the
 * command: timeout(1)'s code, not the SIGKILL's 137 that a kill -9 or
 * the OOM killer gives. */
#define AR_EXIT_TIMEOUT 124

/* The first that applies, in this order. */
typedef enum
{
  AR_END_TIMEOUT, /* the wall-clock limit was reached: killed */
  AR_END_OOM,     /* the memory limit's OOM killer killed a process */
  AR_END_SIGNAL,  /* a signal killed the command */
  AR_END_PIDS,    /* forks were refused at the pids limit; it then exited */
  AR_END_EXITED,  /* the command exited by itself */
} ar_end_reason;

typedef struct ar_run_outcome
{
  int status; /* what the runtime exits with: the code, or 128 + signal */
  ar_end_reason reason;
  int exit_code;  /* -1 when a signal killed the command */
  int signal;     /* the signal that killed it; 0: none */
  int passed_on;  /* the first SIGTERM/INT/HUP/QUIT we got and passed on */
  int64_t run_ms; /* from the start of the command to its end */
  int64_t wall_clock_seconds; /* the limit; 0: none */
  bool has_cgroup;
  uint64_t memory_limit, oom_kills; /* limits: 0 is none */
  uint64_t pids_limit, refused_forks;
  bool has_memory_peak;
  uint64_t memory_peak;
} ar_run_outcome;

/* "timeout", "oom", "signal", "pids", "exited". */
const char *ar_end_reason_name (ar_end_reason reason);

/* The limits that ended or hampered the run, one line each on stderr:
 * "agentrun: WHO: wall-clock limit 10m reached, killed". */
void ar_run_outcome_say_limits (const ar_run_outcome *o, const char *who);

/* The signal that ended the run, when no limit did, and one we passed
 * on: "agentrun: WHO: killed by SIGSEGV", "agentrun: WHO: SIGTERM
 * received and passed on; the command exited 0". Nothing for a command
 * that exited by itself. */
void ar_run_outcome_say_signal (const ar_run_outcome *o, const char *who);

#endif
