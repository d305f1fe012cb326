/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "text.h"
#include "cleanup.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

size_t
ar_utf8_sequence (const unsigned char *s, size_t n)
{
  if (n == 0)
    return 0;
  if (s[0] < 0x80)
    return 1;
  size_t need = s[0] >= 0xF0 && s[0] <= 0xF4   ? 4
                : s[0] >= 0xE0 && s[0] <= 0xEF ? 3
                : s[0] >= 0xC2 && s[0] <= 0xDF ? 2
                                               : 0;
  if (need == 0 || need > n)
    return 0;
  for (size_t i = 1; i < need; i++)
    if ((s[i] & 0xC0) != 0x80)
      return 0;
  if ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] > 0x9F)
      || (s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] > 0x8F))
    return 0;
  return need;
}

/* A character a terminal acts on, or one that reorders what it shows. */
static bool
hides_text (const unsigned char *s, size_t len)
{
  if (len == 1)
    return s[0] < 0x20 || s[0] == 0x7f;
  if (len == 2)
    return s[0] == 0xC2 && s[1] < 0xA0; /* U+0080-U+009F */
  return len == 3 && s[0] == 0xE2
         && ((s[1] == 0x80 && s[2] >= 0xAA && s[2] <= 0xAE)
             || (s[1] == 0x81 && s[2] >= 0xA6 && s[2] <= 0xA9));
}

char *
ar_text_printable (const char *s)
{
  const unsigned char *u = (const unsigned char *) s;
  size_t len = strlen (s);
  char *out = xmalloc (len * 4 + 1);
  char *o = out;
  for (size_t i = 0; i < len;)
    {
      size_t seq = ar_utf8_sequence (u + i, len - i);
      if (seq == 0 || hides_text (u + i, seq))
        {
          size_t bytes = seq ? seq : 1;
          for (size_t k = 0; k < bytes; k++)
            o += sprintf (o, "\\x%02x", u[i + k]);
          i += bytes;
          continue;
        }
      if (u[i] == '\\')
        *o++ = '\\';
      memcpy (o, s + i, seq);
      o += seq;
      i += seq;
    }
  *o = '\0';
  return out;
}
