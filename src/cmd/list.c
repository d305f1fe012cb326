#include "config.h"
#include "cmd.h"
#include "../core/container.h"
#include "../core/state.h"
#include "../util/cleanup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <string.h>

static const ar_option options[] = {
  { "format", 'f', true, "table (default) or json" },
  { "quiet", 'q', false, "print only the container ids" },
  { 0 }
};

static const ar_command_doc doc = { "list", "[OPTIONS]",
                                    "List the containers under the state root." };

/* runc's column and JSON key: the owner's name, "#UID" when it has none. */
static char *
owner_name (uid_t uid)
{
  struct passwd *pw = getpwuid (uid);
  return pw ? xstrdup (pw->pw_name) : xasprintf ("#%u", (unsigned) uid);
}

static void
print_row (const ar_state *st, ar_status status)
{
  cleanup_free char *owner = owner_name (st->owner);
  printf ("%-12s %-8d %-10s %-40s %-32s %s\n", st->id,
          status == AR_STATUS_STOPPED ? 0 : (int) st->pid,
          ar_status_name (status), st->bundle, st->created, owner);
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
    return ar_error_set (err, 0, "list: unknown format `%s` (table or json)", format);
  bool quiet = ar_flag (&p, 1);
  ar_container_reap_abandoned (g->root);

  cleanup_dir DIR *dir = opendir (g->root);
  if (dir == NULL && errno != ENOENT)
    return ar_error_set (err, errno, "open state root `%s`", g->root);
  if (json)
    fputs ("[", stdout);
  else if (!quiet)
    printf ("%-12s %-8s %-10s %-40s %-32s %s\n", "ID", "PID", "STATUS",
            "BUNDLE", "CREATED", "OWNER");
  bool first = true;
  for (struct dirent *e; dir && (e = readdir (dir));)
    {
      if (e->d_name[0] == '.')
        continue;
      cleanup_close int fd = openat (dirfd (dir), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
        print_row (st, status);
      first = false;
    }
  if (json)
    puts ("]");
  return 0;
}
