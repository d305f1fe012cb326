/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "diff_withhold.h"
#include "../util/cleanup.h"
#include "../util/path.h"

#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void
ar_diff_withheld_list_clear (ar_diff_withheld_list *list)
{
  for (size_t i = 0; i < list->n; i++)
    {
      free (list->withheld[i].path);
      free (list->withheld[i].reason);
    }
  free (list->withheld);
  *list = (ar_diff_withheld_list){ 0 };
}

static const ar_output_withheld *
withhold (ar_diff_withheld_list *l, const char *path, bool name_shown,
          char *reason)
{
  l->withheld = xrealloc (l->withheld, (l->n + 1) * sizeof *l->withheld);
  l->withheld[l->n] = (ar_output_withheld){
    .path = xstrdup (name_shown ? path : "[withheld name]"),
    .reason = reason,
  };
  return &l->withheld[l->n++];
}

const ar_output_withheld *
ar_diff_withhold_named (ar_diff_withheld_list *list, const char *name,
                        char *reason)
{
  return withhold (list, name, true, reason);
}

/* The secret in one side's file or symlink target; NULL when it holds
 * none or is not there. */
static char *
entry_secret (const ar_secret_set *secrets, int fd)
{
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return NULL;
  const char *found = NULL;
  if (S_ISLNK (st.st_mode))
    {
      char target[PATH_MAX];
      ssize_t n = readlinkat (fd, "", target, sizeof target);
      found = n > 0 ? ar_secret_set_find (secrets, target, (size_t) n) : NULL;
      return found ? xasprintf ("link target contains secret %s", found) : NULL;
    }
  if (!S_ISREG (st.st_mode))
    return NULL;
  char proc[AR_FD_PATH_MAX];
  ar_fd_path (fd, proc);
  cleanup_close int in = open (proc, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  cleanup_error ar_error_t *ignored = NULL;
  if (in < 0 || ar_secret_scan_fd (secrets, in, &found, &ignored) < 0)
    return xstrdup ("could not be read to look for secrets");
  return found ? xasprintf ("contains secret %s", found) : NULL;
}

const ar_output_withheld *
ar_diff_withhold_path (const ar_secret_set *secrets, const char *path, int a_fd,
                       int b_fd, ar_diff_withheld_list *list)
{
  if (secrets->n == 0)
    return NULL;
  char *reason = ar_secret_name_problem (secrets, path);
  if (reason)
    return withhold (list, path, false, reason);
  if ((reason = entry_secret (secrets, b_fd)) != NULL
      || (reason = entry_secret (secrets, a_fd)) != NULL)
    return withhold (list, path, true, reason);
  return NULL;
}
