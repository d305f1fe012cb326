#include "config.h"
#include "error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *
vformat (const char *fmt, va_list ap)
{
  char *s = NULL;
  if (vasprintf (&s, fmt, ap) < 0)
    return NULL;
  return s;
}

int
ar_error_set (ar_error_t **err, int errno_value, const char *fmt, ...)
{
  if (err == NULL || *err != NULL)
    return -1;

  ar_error_t *e = calloc (1, sizeof *e);
  if (e == NULL)
    abort ();

  va_list ap;
  va_start (ap, fmt);
  char *msg = vformat (fmt, ap);
  va_end (ap);
  if (msg == NULL)
    abort ();

  if (errno_value != 0)
    {
      char *full = NULL;
      if (asprintf (&full, "%s: %s", msg, strerror (errno_value)) < 0)
        abort ();
      free (msg);
      msg = full;
    }
  e->errno_value = errno_value;
  e->msg = msg;
  *err = e;
  return -1;
}

int
ar_error_prefix (ar_error_t **err, const char *fmt, ...)
{
  if (err == NULL || *err == NULL)
    return -1;

  va_list ap;
  va_start (ap, fmt);
  char *prefix = vformat (fmt, ap);
  va_end (ap);
  if (prefix == NULL)
    abort ();

  char *full = NULL;
  if (asprintf (&full, "%s: %s", prefix, (*err)->msg) < 0)
    abort ();
  free (prefix);
  free ((*err)->msg);
  (*err)->msg = full;
  return -1;
}

void
ar_error_free (ar_error_t *err)
{
  if (err == NULL)
    return;
  free (err->msg);
  free (err);
}

void
ar_error_freep (ar_error_t **err)
{
  ar_error_free (*err);
  *err = NULL;
}

ar_error_t *
ar_error_keep_first (ar_error_t **first, ar_error_t **step)
{
  ar_error_t *e = *step;
  *step = NULL;
  if (e == NULL || *first != NULL)
    return e;
  *first = e;
  return NULL;
}

int
ar_error_pass (ar_error_t **err, ar_error_t *e)
{
  if (e == NULL)
    return 0;
  if (err && *err == NULL)
    *err = e;
  else
    ar_error_free (e);
  return -1;
}
