/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "cleanup.h"

#include <stdarg.h>
#include <string.h>

static void *
check (void *p)
{
  if (p == NULL)
    {
      fputs ("agentrun: out of memory\n", stderr);
      abort ();
    }
  return p;
}

void *
xmalloc (size_t size)
{
  return check (malloc (size ? size : 1));
}

void *
xcalloc (size_t n, size_t size)
{
  return check (calloc (n ? n : 1, size ? size : 1));
}

void *
xrealloc (void *p, size_t size)
{
  return check (realloc (p, size ? size : 1));
}

char *
xstrdup (const char *s)
{
  return s ? check (strdup (s)) : NULL;
}

char *
xstrndup (const char *s, size_t n)
{
  return check (strndup (s, n));
}

char *
xvasprintf (const char *fmt, va_list ap)
{
  char *s = NULL;
  if (vasprintf (&s, fmt, ap) < 0)
    check (NULL);
  return s;
}

char *
xasprintf (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *s = xvasprintf (fmt, ap);
  va_end (ap);
  return s;
}

void
xappend (char **list, const char *sep, const char *item)
{
  char *longer = *list && **list ? xasprintf ("%s%s%s", *list, sep, item)
                                 : xstrdup (item);
  free (*list);
  *list = longer;
}
