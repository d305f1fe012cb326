/* SPDX-License-Identifier: Apache-2.0 */
/* Cleanup attributes for every owned resource. A variable declared with one
 * of these is released when it goes out of scope; to hand ownership on,
 * take it with steal_pointer()/steal_fd(). */
#ifndef AR_UTIL_CLEANUP_H
#define AR_UTIL_CLEANUP_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

static inline void
ar_freep (void *p)
{
  void **pp = (void **) p;
  free (*pp);
  *pp = NULL;
}

static inline void
ar_closep (int *fd)
{
  if (*fd >= 0)
    {
      int saved = errno;
      close (*fd);
      errno = saved;
    }
  *fd = -1;
}

static inline void
ar_fclosep (FILE **f)
{
  if (*f)
    fclose (*f);
  *f = NULL;
}

static inline void
ar_closedirp (DIR **d)
{
  if (*d)
    closedir (*d);
  *d = NULL;
}

/* NULL-terminated array of strings. */
static inline void
ar_strv_freep (char ***v)
{
  if (*v)
    for (char **s = *v; *s; s++)
      free (*s);
  free (*v);
  *v = NULL;
}

#define cleanup_free __attribute__ ((cleanup (ar_freep)))
#define cleanup_close __attribute__ ((cleanup (ar_closep)))
#define cleanup_file __attribute__ ((cleanup (ar_fclosep)))
#define cleanup_dir __attribute__ ((cleanup (ar_closedirp)))
#define cleanup_strv __attribute__ ((cleanup (ar_strv_freep)))

static inline void *
ar_steal_pointer (void *pp)
{
  void **p = (void **) pp;
  void *v = *p;
  *p = NULL;
  return v;
}
#define steal_pointer(pp) ar_steal_pointer (pp)

static inline int
steal_fd (int *fd)
{
  int v = *fd;
  *fd = -1;
  return v;
}

/* Aborting allocators: out-of-memory is not an error we try to survive. */
void *xmalloc (size_t size);
void *xcalloc (size_t n, size_t size);
void *xrealloc (void *p, size_t size);
char *xstrdup (const char *s);
char *xstrndup (const char *s, size_t n);
char *xasprintf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
/* `item` added to the list *list (NULL or "": empty), after `sep` when
 * the list has something already. */
void xappend (char **list, const char *sep, const char *item);
char *xvasprintf (const char *fmt, va_list ap)
    __attribute__ ((format (printf, 1, 0)));

#endif
