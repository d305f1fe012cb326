/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "mountinfo.h"
#include "cleanup.h"

#include <stdlib.h>
#include <string.h>

char *
ar_mountinfo_decode (const char *s)
{
  char *out = xmalloc (strlen (s) + 1), *o = out;
  while (*s)
    if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7'
        && s[3] >= '0' && s[3] <= '7')
      {
        *o++
            = (char) (((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
        s += 4;
      }
    else
      *o++ = *s++;
  *o = '\0';
  return out;
}

bool
ar_mountinfo_parse (const char *line, ar_mountinfo_entry *e)
{
  *e = (ar_mountinfo_entry){ 0 };
  cleanup_free char *copy = xstrdup (line);
  char *save = NULL, *field[64];
  size_t n = 0, dash = 0;
  for (char *w = strtok_r (copy, " \n", &save); w && n < 64;
       w = strtok_r (NULL, " \n", &save))
    {
      if (dash == 0 && n >= 6 && strcmp (w, "-") == 0)
        dash = n;
      field[n++] = w;
    }
  if (dash == 0 || n < dash + 4)
    return false;
  char *end;
  e->id = strtoull (field[0], &end, 10);
  if (*end != '\0')
    return false;
  e->dev = xstrdup (field[2]);
  e->root = ar_mountinfo_decode (field[3]);
  e->mount_point = ar_mountinfo_decode (field[4]);
  e->fstype = xstrdup (field[dash + 1]);
  e->super_opts = xstrdup (field[dash + 3]);
  return true;
}

void
ar_mountinfo_entry_clear (ar_mountinfo_entry *e)
{
  free (e->dev);
  free (e->root);
  free (e->mount_point);
  free (e->fstype);
  free (e->super_opts);
  *e = (ar_mountinfo_entry){ 0 };
}
