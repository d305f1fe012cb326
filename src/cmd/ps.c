/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "cmd.h"
#include "../core/container.h"
#include "../util/cleanup.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static const ar_option options[]
    = { { "format", 'f', true, "table (default: ps output) or json (pids)" },
        { 0 } };
AR_OPTIONS_FIT (options);

static const ar_command_doc doc = {
  "ps", "[OPTIONS] CONTAINER_ID [PS_ARGS...]",
  "List the container's processes: ps(1) output (default args -ef) or a JSON array of pids.",
  true
};

static void
print_json (const pid_t *pids, size_t n)
{
  fputs ("[", stdout);
  for (size_t i = 0; i < n; i++)
    printf ("%s%d", i ? "," : "", (int) pids[i]);
  puts ("]");
}

static bool
contains (const pid_t *pids, size_t n, long pid)
{
  for (size_t i = 0; i < n; i++)
    if (pids[i] == pid)
      return true;
  return false;
}

/* The header line tells which column holds the PID. */
static int
pid_column (const char *header)
{
  cleanup_free char *copy = xstrdup (header);
  int col = 0;
  for (char *save, *tok = strtok_r (copy, " \t\n", &save); tok;
       tok = strtok_r (NULL, " \t\n", &save), col++)
    if (strcmp (tok, "PID") == 0)
      return col;
  return -1;
}

static long
field_at (const char *line, int col)
{
  cleanup_free char *copy = xstrdup (line);
  char *save, *tok = strtok_r (copy, " \t\n", &save);
  for (int i = 0; tok && i < col; i++)
    tok = strtok_r (NULL, " \t\n", &save);
  return tok ? strtol (tok, NULL, 10) : -1;
}

static int
print_table (char **ps_args, int n_args, const pid_t *pids, size_t n,
             ar_error_t **err)
{
  cleanup_free char *cmd = xstrdup (n_args == 0 ? "ps -ef" : "ps");
  for (int i = 0; i < n_args; i++)
    {
      if (strchr (ps_args[i], '\'') || strchr (ps_args[i], '\\'))
        return ar_error_set (err, 0,
                             "ps: unsupported character in ps argument `%s`",
                             ps_args[i]);
      char *next = xasprintf ("%s '%s'", cmd, ps_args[i]);
      free (cmd);
      cmd = next;
    }
  FILE *ps = popen (cmd, "re");
  if (ps == NULL)
    return ar_error_set (err, errno, "run `%s`", cmd);
  char *line = NULL;
  size_t cap = 0;
  int col = -1;
  for (bool header = true; getline (&line, &cap, ps) > 0; header = false)
    {
      if (header)
        {
          col = pid_column (line);
          fputs (line, stdout);
        }
      else if (col >= 0 && contains (pids, n, field_at (line, col)))
        fputs (line, stdout);
    }
  free (line);
  int status = pclose (ps);
  if (col < 0)
    return ar_error_set (err, 0, "ps: no PID column in the output of `%s`",
                         cmd);
  if (status != 0)
    return ar_error_set (err, 0, "`%s` failed", cmd);
  return 0;
}

int
ar_cmd_ps (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (p.n_args < 1)
    return ar_error_set (err, 0, "ps: expected CONTAINER_ID [PS_ARGS...]");
  const char *format = p.value[0] ? p.value[0] : "table";
  if (strcmp (format, "json") != 0 && strcmp (format, "table") != 0)
    return ar_error_set (err, 0, "ps: unknown format `%s` (table or json)",
                         format);

  cleanup_free pid_t *pids = NULL;
  size_t n = 0;
  if (ar_container_pids (g->root, p.args[0], &pids, &n, err) < 0)
    return -1;
  if (strcmp (format, "json") == 0)
    {
      if (p.n_args > 1)
        return ar_error_set (
            err, 0, "ps: ps arguments cannot be combined with --format json");
      print_json (pids, n);
      return 0;
    }
  return print_table (p.args + 1, p.n_args - 1, pids, n, err) < 0 ? -1 : 0;
}
