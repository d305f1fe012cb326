/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "outcome.h"
#include "../util/cleanup.h"
#include "../util/signals.h"

#include <stdio.h>

const char *
ar_end_reason_name (ar_end_reason reason)
{
  switch (reason)
    {
    case AR_END_TIMEOUT:
      return "timeout";
    case AR_END_OOM:
      return "oom";
    case AR_END_SIGNAL:
      return "signal";
    case AR_END_PIDS:
      return "pids";
    case AR_END_EXITED:
      break;
    }
  return "exited";
}

/* 600 -> "10m", 90 -> "90s", 7200 -> "2h". */
static char *
format_duration (int64_t seconds)
{
  if (seconds % 3600 == 0)
    return xasprintf ("%lldh", (long long) (seconds / 3600));
  if (seconds % 60 == 0)
    return xasprintf ("%lldm", (long long) (seconds / 60));
  return xasprintf ("%llds", (long long) seconds);
}

/* 536870912 -> "512M"; a number of bytes when no suffix divides it. */
static char *
format_size (uint64_t bytes)
{
  static const char suffix[] = "KMGT";
  int i = -1;
  while (i < 3 && bytes >= 1024 && bytes % 1024 == 0)
    {
      bytes /= 1024;
      i++;
    }
  if (i < 0)
    return xasprintf ("%llu", (unsigned long long) bytes);
  return xasprintf ("%llu%c", (unsigned long long) bytes, suffix[i]);
}

void
ar_run_outcome_say_limits (const ar_run_outcome *o, const char *who)
{
  if (o->reason == AR_END_TIMEOUT)
    {
      cleanup_free char *d = format_duration (o->wall_clock_seconds);
      fprintf (stderr, "agentrun: %s: wall-clock limit %s reached, killed\n",
               who, d);
    }
  if (o->oom_kills)
    {
      cleanup_free char *limit = format_size (o->memory_limit);
      fprintf (stderr, "agentrun: %s: out of memory (limit %s), killed\n", who,
               limit);
    }
  if (o->refused_forks)
    fprintf (stderr,
             "agentrun: %s: pids limit %llu reached, %llu fork(s) refused\n",
             who, (unsigned long long) o->pids_limit,
             (unsigned long long) o->refused_forks);
}

void
ar_run_outcome_say_signal (const ar_run_outcome *o, const char *who)
{
  cleanup_free char *got = o->passed_on ? ar_signal_name (o->passed_on) : NULL;
  cleanup_free char *killer = o->signal ? ar_signal_name (o->signal) : NULL;
  if (got && killer)
    fprintf (stderr, "agentrun: %s: %s received and passed on; killed by %s\n",
             who, got, killer);
  else if (got)
    fprintf (stderr,
             "agentrun: %s: %s received and passed on; the command exited %d\n",
             who, got, o->exit_code);
  else if (o->reason == AR_END_SIGNAL)
    fprintf (stderr, "agentrun: %s: killed by %s\n", who, killer);
}
