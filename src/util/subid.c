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

/* "NAME:START:COUNT" for `name`. */
static bool
line_range (char *line, const char *name, ar_subid_range *out)
{
  line[strcspn (line, "\n")] = '\0';
  char *start = strchr (line, ':');
  char *count = start ? strchr (start + 1, ':') : NULL;
  if (count == NULL)
    return false;
  *start++ = '\0';
  *count++ = '\0';
  if (strcmp (line, name) != 0)
    return false;
  return parse_u32 (start, &out->start) && parse_u32 (count, &out->count)
         && out->count > 0 && UINT32_MAX - out->start >= out->count;
}

/* The first line of `f` naming `name`. */
static bool
find_line (FILE *f, const char *name, ar_subid_range *out)
{
  cleanup_free char *line = NULL;
  size_t cap = 0;
  rewind (f);
  while (getline (&line, &cap, f) >= 0)
    if (line_range (line, name, out))
      return true;
  return false;
}

int
ar_subid_find (const char *file, const char *user, ar_subid_range *out,
               ar_error_t **err)
{
  cleanup_file FILE *f = fopen (file, "re");
  if (f == NULL && errno != ENOENT)
    return ar_error_set (err, errno, "%s: cannot read", file);
  if (f && find_line (f, user, out))
    return 0;
  /* A line may name the user by its uid: asked only then (NSS). */
  struct passwd *pw = f ? getpwnam (user) : NULL;
  if (pw)
    {
      char uid_text[16];
      snprintf (uid_text, sizeof uid_text, "%u", (unsigned) pw->pw_uid);
      if (find_line (f, uid_text, out))
        return 0;
    }
  return ar_error_set (
      err, 0,
      "%s: no range for user `%s`: add one (contrib/agentrun-ids.sh %s does, as make install does for agentrun)",
      file, user, user);
}
