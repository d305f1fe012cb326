/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "cmd.h"
#include "../core/container.h"
#include "../core/state.h"
#include "../agent/hostfs.h"
#include "../util/cleanup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <string.h>

static const ar_option options[]
    = { { "format", 'f', true, "table (default) or json" },
        { "quiet", 'q', false, "print only the container ids" },
        { 0 } };
AR_OPTIONS_FIT (options);

static const ar_command_doc doc
    = { "list", "[OPTIONS]", "List the containers under the state root." };

/* runc's column and JSON key: the owner's name, "#UID" when it has none. */
static char *
owner_name (uid_t uid)
{
  struct passwd *pw = getpwuid (uid);
  return pw ? xstrdup (pw->pw_name) : xasprintf ("#%u", (unsigned) uid);
}

/* The table as runc prints it (through a Go tabwriter): every column but
 * the last as wide as its widest cell plus 3 spaces, and at least 12, so
 * that containerd's and Docker's 64-character ids line up too. */
enum
{
  LIST_COLUMNS = 6,
  LIST_MIN_WIDTH = 12,
  LIST_PADDING = 3
};

/* The cells, row by row, LIST_COLUMNS to a row; NULL after the last. */
typedef struct
{
  char **cells;
  size_t n;
} list_table;

static void
list_table_free (list_table *t)
{
  ar_strv_freep (&t->cells);
}
#define cleanup_table __attribute__ ((cleanup (list_table_free)))

static void
table_add_row (list_table *t, char *id, char *pid, char *status, char *bundle,
               char *created, char *owner)
{
  char *row[LIST_COLUMNS] = { id, pid, status, bundle, created, owner };
  t->cells = xrealloc (t->cells, (t->n + LIST_COLUMNS + 1) * sizeof *t->cells);
  memcpy (t->cells + t->n, row, sizeof row);
  t->n += LIST_COLUMNS;
  t->cells[t->n] = NULL;
}

static void
table_add_state (list_table *t, const ar_state *st, ar_status status)
{
  table_add_row (
      t, xstrdup (st->id),
      xasprintf ("%d", status == AR_STATUS_STOPPED ? 0 : (int) st->pid),
      xstrdup (ar_status_name (status)), xstrdup (st->bundle),
      xstrdup (st->created), owner_name (st->owner));
}

/* Characters, not bytes (a bundle path may be UTF-8), as the tabwriter
 * counts them. */
static size_t
text_width (const char *s)
{
  size_t width = 0;
  for (; *s; s++)
    width += ((unsigned char) *s & 0xC0) != 0x80;
  return width;
}

static void
table_print (const list_table *t)
{
  size_t width[LIST_COLUMNS - 1];
  for (size_t c = 0; c < LIST_COLUMNS - 1; c++)
    {
      width[c] = LIST_MIN_WIDTH;
      for (size_t i = c; i < t->n; i += LIST_COLUMNS)
        {
          size_t w = text_width (t->cells[i]) + LIST_PADDING;
          if (w > width[c])
            width[c] = w;
        }
    }
  for (size_t i = 0; i < t->n; i++)
    {
      size_t c = i % LIST_COLUMNS;
      if (c == LIST_COLUMNS - 1)
        printf ("%s\n", t->cells[i]);
      else
        printf ("%s%*s", t->cells[i],
                (int) (width[c] - text_width (t->cells[i])), "");
    }
}

static void
print_json (const ar_state *st, ar_status status, bool first)
{
  cleanup_free char *owner = owner_name (st->owner);
  oci_state s = ar_state_to_oci (st, status);
  s.owner = owner;
  cleanup_free char *json = oci_state_to_json (&s, false);
  printf ("%s%s", first ? "" : ",", json);
}

int
ar_cmd_list (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  const char *format = p.value[0] ? p.value[0] : "table";
  bool json = strcmp (format, "json") == 0;
  if (!json && strcmp (format, "table") != 0)
    return ar_error_set (err, 0, "list: unknown format `%s` (table or json)",
                         format);
  bool quiet = ar_flag (&p, 1);
  ar_container_reap_abandoned (g->root);

  cleanup_dir DIR *dir = opendir (g->root);
  if (dir == NULL && errno != ENOENT)
    return ar_error_set (err, errno, "open state root `%s`", g->root);
  /* The table is printed once every row is known: its widths depend on
   * them all. */
  cleanup_table list_table table = { 0 };
  if (json)
    fputs ("[", stdout);
  else if (!quiet)
    table_add_row (&table, xstrdup ("ID"), xstrdup ("PID"), xstrdup ("STATUS"),
                   xstrdup ("BUNDLE"), xstrdup ("CREATED"), xstrdup ("OWNER"));
  /* By id, as runc lists them (Go reads a directory sorted by name). */
  size_t n_names = 0;
  cleanup_strv char **names
      = dir ? ar_hostfs_sorted_names (dirfd (dir), &n_names) : NULL;
  bool first = true;
  for (size_t i = 0; i < n_names; i++)
    {
      if (names[i][0] == '.')
        continue;
      cleanup_close int fd
          = openat (dirfd (dir), names[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      cleanup_state ar_state *st = NULL;
      cleanup_error ar_error_t *ignored = NULL;
      if (fd < 0 || ar_state_load (fd, &st, &ignored) < 0)
        continue; /* a container being created or deleted right now */
      ar_status status = ar_state_status (fd, st);
      if (quiet)
        puts (st->id);
      else if (json)
        print_json (st, status, first);
      else
        table_add_state (&table, st, status);
      first = false;
    }
  if (json)
    puts ("]");
  else if (!quiet)
    table_print (&table);
  return 0;
}
