/* SPDX-License-Identifier: Apache-2.0 */
#include "text.h"
#include "sys.h"

int
plain_name (const char *s)
{
  unsigned long n = length (s);
  if (n == 0 || n > NAME_MAX_BYTES || s[0] == '.' || s[0] == '-')
    return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')
          || (*s >= '0' && *s <= '9') || *s == '_' || *s == '.' || *s == '-'))
      return 0;
  return 1;
}

int
append (char **at, const char *end, const char *s)
{
  for (; *s; s++)
    {
      if (*at >= end - 1)
        return 0;
      *(*at)++ = *s;
    }
  **at = '\0';
  return 1;
}

int
append_number (char **at, const char *end, long v)
{
  char digits[24], text[24];
  int n = 0, i = 0;
  if (v < 0)
    text[i++] = '-', v = -v;
  do
    digits[n++] = (char) ('0' + v % 10);
  while ((v /= 10) > 0);
  while (n > 0)
    text[i++] = digits[--n];
  text[i] = '\0';
  return append (at, end, text);
}

int
read_number (const char **p, unsigned long long *value)
{
  while (**p == ' ' || **p == '\t')
    (*p)++;
  if (**p < '0' || **p > '9')
    return 0;
  *value = 0;
  while (**p >= '0' && **p <= '9')
    *value = *value * 10 + (unsigned long long) (*(*p)++ - '0');
  return 1;
}
