/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "destination.h"
#include "../util/cleanup.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
ar_cmd_file_destination (const char *flag, const char *given, char **out,
                         ar_error_t **err)
{
  cleanup_free char *dir = xstrdup (given);
  char *slash = strrchr (dir, '/');
  const char *base = slash ? slash + 1 : given;
  if (slash)
    slash[slash == dir ? 1 : 0] = '\0'; /* "/x" keeps "/" */
  if (*base == '\0' || strcmp (base, ".") == 0 || strcmp (base, "..") == 0)
    return ar_error_set (err, 0, "sandbox: %s `%s`: expected a file name", flag,
                         given);
  char buf[PATH_MAX];
  struct stat st;
  if (realpath (slash ? dir : ".", buf) == NULL || stat (buf, &st) < 0)
    return ar_error_set (err, errno, "sandbox: %s `%s`", flag, given);
  if (!S_ISDIR (st.st_mode))
    return ar_error_set (err, ENOTDIR, "sandbox: %s `%s`", flag, given);
  if (access (buf, W_OK | X_OK) < 0)
    return ar_error_set (err, errno, "sandbox: %s `%s`: directory `%s`", flag,
                         given, buf);
  cleanup_free char *path
      = xasprintf ("%s/%s", strcmp (buf, "/") == 0 ? "" : buf, base);
  if (stat (path, &st) == 0
      && (S_ISDIR (st.st_mode) || access (path, W_OK) < 0))
    return ar_error_set (err, S_ISDIR (st.st_mode) ? EISDIR : errno,
                         "sandbox: %s `%s`", flag, given);
  *out = steal_pointer (&path);
  return 0;
}
