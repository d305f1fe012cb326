/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#define AR_ERROR_DEFINING
#include "error.h"

#include <errno.h>
#include <stdbool.h>
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

static int
set_v (ar_error_t **err, ar_error_code code, int errno_value, const char *fmt,
       va_list ap)
{
  if (err == NULL || *err != NULL)
    return -1;
  ar_error_t *e = calloc (1, sizeof *e);
  char *message = vformat (fmt, ap);
  if (e == NULL || message == NULL)
    abort ();
  e->errno_value = errno_value;
  e->code = code;
  e->message = message;
  *err = e;
  return -1;
}

int
ar_error_set (ar_error_t **err, int errno_value, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  set_v (err, AR_ERR_FAILED, errno_value, fmt, ap);
  va_end (ap);
  return -1;
}

int
ar_error_set_code (ar_error_t **err, ar_error_code code, int errno_value,
                   const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  set_v (err, code, errno_value, fmt, ap);
  va_end (ap);
  return -1;
}

int
ar_error_set_errno_said (ar_error_t **err, int errno_value, const char *fmt,
                         ...)
{
  bool was_set = err && *err;
  va_list ap;
  va_start (ap, fmt);
  set_v (err, AR_ERR_FAILED, errno_value, fmt, ap);
  va_end (ap);
  if (err && *err && !was_set)
    (*err)->errno_said = 1;
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
  if (asprintf (&full, "%s: %s", prefix, (*err)->message) < 0)
    abort ();
  free (prefix);
  free ((*err)->message);
  (*err)->message = full;
  free ((*err)->text);
  (*err)->text = NULL;
  return -1;
}

const char *
ar_error_text (const ar_error_t *err)
{
  if (err == NULL)
    return "";
  if (err->errno_value == 0 || err->errno_said)
    return err->message;
  if (err->text == NULL)
    {
      /* Logically const: the rendering is a cache of what the error says. */
      ar_error_t *e = (ar_error_t *) err;
      if (asprintf (&e->text, "%s: %s", err->message,
                    strerror (err->errno_value))
          < 0)
        abort ();
    }
  return err->text;
}

void
ar_error_free (ar_error_t *err)
{
  if (err == NULL)
    return;
  free (err->message);
  free (err->text);
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
