/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "cmd.h"
#include "../core/events.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const ar_option options[]
    = { { "stats", 0, false, "print the statistics once and exit" },
        { "interval", 0, true, "time between statistics (default 5s)" },
        { 0 } };
enum
{
  OPT_STATS,
  OPT_INTERVAL
};
AR_OPTIONS_MATCH (options, OPT_INTERVAL);

static const ar_command_doc doc = {
  "events", "[OPTIONS] CONTAINER_ID",
  "Print the container's statistics every interval and its OOM events, as "
  "JSON lines, until it stops."
};

/* A duration as runc takes it: "5s", "500ms", "1m30s", "1.5s". */
static int
parse_interval (const char *text, long *ms, ar_error_t **err)
{
  static const struct
  {
    const char *unit;
    double ms;
  } units[] = { { "ns", 1e-6 }, { "us", 1e-3 }, { "µs", 1e-3 }, { "ms", 1 },
                { "s", 1e3 },   { "m", 60e3 },  { "h", 3600e3 } };
  double total = 0;
  const char *p = text;
  do
    {
      char *end;
      errno = 0;
      double v = strtod (p, &end);
      size_t u = 0, best = sizeof units / sizeof units[0];
      /* The longest unit that matches: "ms" before "m". */
      for (; u < sizeof units / sizeof units[0]; u++)
        if (strncmp (end, units[u].unit, strlen (units[u].unit)) == 0
            && (best == sizeof units / sizeof units[0]
                || strlen (units[u].unit) > strlen (units[best].unit)))
          best = u;
      if (end == p || errno != 0 || v < 0 || *p == '-' || *p == '+'
          || best == sizeof units / sizeof units[0])
        return ar_error_set (err, 0,
                             "--interval: invalid duration \"%s\" (e.g. 5s, "
                             "500ms, 1m)",
                             text);
      total += v * units[best].ms;
      p = end + strlen (units[best].unit);
    }
  while (*p);
  if (total < 1 || total > 86400e3 * 365)
    return ar_error_set (
        err, 0, "--interval: \"%s\" is not between 1ms and a year", text);
  *ms = (long) (total + 0.5);
  return 0;
}

int
ar_cmd_events (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (ar_require_args ("events", &p, 1, "CONTAINER_ID", err) < 0)
    return -1;
  long interval_ms = 5000;
  if (p.present[OPT_INTERVAL]
      && parse_interval (p.value[OPT_INTERVAL], &interval_ms, err) < 0)
    return -1;
  return ar_container_events (g->root, p.args[0], ar_flag (&p, OPT_STATS),
                              interval_ms, err)
                 < 0
             ? -1
             : 0;
}
