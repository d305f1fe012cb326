/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "timings.h"

#include "cleanup.h"
#include "clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* More phases than any command marks; later marks are dropped. */
#define MAX_PHASES 24
#define MAX_NAME 24

typedef struct
{
  char name[MAX_NAME];
  long long us;
  int first_inner; /* the init's phases shown inside this one: */
  int n_inner;     /* indexes into `inner` */
} phase;

static bool recording;
static long long origin_us, last_us;
static phase phases[MAX_PHASES];
static int n_phases;
/* The init's report, waiting for the phase it belongs to. */
static phase inner[MAX_PHASES];
static int n_inner, n_inner_claimed;

void
ar_timings_begin (void)
{
  recording = true;
  origin_us = last_us = ar_now_us ();
  n_phases = n_inner = n_inner_claimed = 0;
}

bool
ar_timings_on (void)
{
  return recording;
}

static void
set_name (phase *p, const char *name, size_t len)
{
  if (len >= MAX_NAME)
    len = MAX_NAME - 1;
  memcpy (p->name, name, len);
  p->name[len] = '\0';
}

void
ar_timings_mark (const char *name)
{
  if (!recording || n_phases == MAX_PHASES)
    return;
  long long t = ar_now_us ();
  phase *p = &phases[n_phases++];
  set_name (p, name, strlen (name));
  p->us = t - last_us;
  p->first_inner = n_inner_claimed;
  p->n_inner = n_inner - n_inner_claimed;
  n_inner_claimed = n_inner;
  last_us = t;
}

/* The text `put` writes; NULL when not recording (or out of memory: it is
 * only ever shown). */
static char *
print_to_string (void (*put) (FILE *))
{
  if (!recording)
    return NULL;
  cleanup_free char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  if (f == NULL)
    return NULL;
  put (f);
  if (fclose (f) != 0)
    return NULL;
  return steal_pointer (&buf);
}

static void
put_encoded (FILE *f)
{
  for (int i = 0; i < n_phases; i++)
    fprintf (f, "%s%s=%lld", i ? " " : "", phases[i].name, phases[i].us);
}

char *
ar_timings_encode (void)
{
  return print_to_string (put_encoded);
}

void
ar_timings_attach (const char *encoded)
{
  const char *s = encoded;
  while (recording && s && *s && n_inner < MAX_PHASES)
    {
      size_t name_len = strcspn (s, " =");
      const char *eq = s + name_len;
      if (name_len == 0 || *eq != '=')
        return;
      char *end;
      long long us = strtoll (eq + 1, &end, 10);
      if (end == eq + 1 || (*end != ' ' && *end != '\0'))
        return;
      phase *p = &inner[n_inner++];
      set_name (p, s, name_len);
      p->us = us;
      s = *end ? end + 1 : end;
    }
}

static void
put_summary (FILE *f)
{
  for (int i = 0; i < n_phases; i++)
    {
      const phase *p = &phases[i];
      fprintf (f, "%s %.2f ms", p->name, p->us / 1e3);
      for (int j = 0; j < p->n_inner; j++)
        {
          const phase *q = &inner[p->first_inner + j];
          fprintf (f, "%s%s %.2f", j ? ", " : " (", q->name, q->us / 1e3);
        }
      fputs (p->n_inner ? "), " : ", ", f);
    }
  fprintf (f, "total %.2f ms", (last_us - origin_us) / 1e3);
}

char *
ar_timings_summary (void)
{
  return print_to_string (put_summary);
}
