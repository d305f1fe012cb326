/* agentrun audit FILE: check an audit log's hash chain. Each line carries
 * the sha256 of the line before it, so an edited, removed or cut line
 * shows at the first line whose "prev" no longer matches. */
#include "config.h"
#include "cmd.h"
#include "../agent/agent.h"
#include "../util/cleanup.h"

#include <errno.h>
#include <stdio.h>

static const ar_option options[] = { { 0 } };

static const ar_command_doc doc = {
  "audit", "FILE",
  "Verify the hash chain of an audit log: print \"ok N lines\", or the\n"
  "first line that does not follow from the one before and exit 1."
};

static int
count_lines (const char *path, size_t *n, ar_error_t **err)
{
  cleanup_file FILE *f = fopen (path, "re");
  if (f == NULL)
    return ar_error_set (err, errno, "audit: open `%s`", path);
  int c, last = '\n';
  *n = 0;
  while ((c = getc (f)) != EOF)
    {
      if (c == '\n')
        (*n)++;
      last = c;
    }
  if (ferror (f))
    return ar_error_set (err, errno, "audit: read `%s`", path);
  if (last != '\n')
    (*n)++;
  return 0;
}

int
ar_cmd_audit (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  (void) g;
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (ar_require_args ("audit", &p, 1, "FILE", err) < 0)
    return -1;
  size_t bad_line = 0, lines = 0;
  if (ar_audit_verify (p.args[0], &bad_line, err) < 0)
    return -1;
  if (bad_line > 0)
    {
      printf ("line %zu: chain broken\n", bad_line);
      return 1;
    }
  if (count_lines (p.args[0], &lines, err) < 0)
    return -1;
  printf ("ok %zu lines\n", lines);
  return 0;
}
