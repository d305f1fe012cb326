/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "subid.h"
#include "cleanup.h"

#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
parse_u32 (const char *s, uint32_t *out)
{
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno || end == s || *end != '\0' || v > UINT32_MAX || s[0] == '-')
    return false;
  *out = (uint32_t) v;
  return true;
}

/* "NAME:START:COUNT" for `user` or its uid `uid_text`. */
static bool
line_range (char *line, const char *user, const char *uid_text,
            ar_subid_range *out)
{
  line[strcspn (line, "\n")] = '\0';
  char *start = strchr (line, ':');
  char *count = start ? strchr (start + 1, ':') : NULL;
  if (count == NULL)
    return false;
  *start++ = '\0';
  *count++ = '\0';
  if (strcmp (line, user) != 0
      && (uid_text == NULL || strcmp (line, uid_text) != 0))
    return false;
  return parse_u32 (start, &out->start) && parse_u32 (count, &out->count)
         && out->count > 0 && UINT32_MAX - out->start >= out->count;
}

int
ar_subid_find (const char *file, const char *user, ar_subid_range *out,
               ar_error_t **err)
{
  cleanup_file FILE *f = fopen (file, "re");
  if (f == NULL && errno != ENOENT)
    return ar_error_set (err, errno, "%s: cannot read", file);
  struct passwd *pw = getpwnam (user);
  cleanup_free char *uid_text
      = pw ? xasprintf ("%u", (unsigned) pw->pw_uid) : NULL;
  cleanup_free char *line = NULL;
  size_t cap = 0;
  while (f && getline (&line, &cap, f) >= 0)
    if (line_range (line, user, uid_text, out))
      return 0;
  return ar_error_set (
      err, 0,
      "%s: no range for user `%s`: add one (contrib/agentrun-ids.sh %s does, as make install does for agentrun)",
      file, user, user);
}
