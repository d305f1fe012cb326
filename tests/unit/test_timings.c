/* SPDX-License-Identifier: Apache-2.0 */
/* --debug's phase timings: off until begun, the init's report shown
 * inside the phase marked after it arrived, malformed reports ignored. */
#include "config.h"
#include "unit.h"
#include "../../src/util/cleanup.h"
#include "../../src/util/timings.h"

#include <regex.h>
#include <stdbool.h>

static bool
matches (const char *text, const char *pattern)
{
  regex_t re;
  if (regcomp (&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
    return false;
  bool ok = regexec (&re, text, 0, NULL, 0) == 0;
  regfree (&re);
  return ok;
}

#define MS "[0-9]+\\.[0-9]{2}"

static void
test_off_until_begun (void)
{
  CHECK (!ar_timings_on ());
  ar_timings_mark ("parse");
  CHECK (ar_timings_encode () == NULL);
  CHECK (ar_timings_summary () == NULL);
}

static void
test_phases_in_order_with_the_inits_inside (void)
{
  ar_timings_begin ();
  ar_timings_mark ("parse");
  ar_timings_attach ("go=1500 mounts=250");
  ar_timings_mark ("init");
  ar_timings_mark ("start");
  cleanup_free char *line = ar_timings_summary ();
  CHECK (matches (line, "^parse " MS " ms, init " MS
                        " ms \\(go 1\\.50, mounts 0\\.25\\), start " MS
                        " ms, total " MS " ms$"));
  cleanup_free char *encoded = ar_timings_encode ();
  CHECK (matches (encoded, "^parse=[0-9]+ init=[0-9]+ start=[0-9]+$"));
}

static void
test_malformed_report_ignored (void)
{
  const char *bad[] = { "go", "=5", "go=", "go=5x", "go=5  mounts=1" };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      ar_timings_begin ();
      ar_timings_attach (bad[i]);
      ar_timings_mark ("init");
      cleanup_free char *line = ar_timings_summary ();
      /* "go=5  mounts=1" keeps what came before the fault. */
      CHECK (matches (line, "^init " MS " ms( \\(go 0\\.01\\))?, total "));
    }
}

static void
test_a_new_begin_forgets (void)
{
  ar_timings_begin ();
  ar_timings_mark ("parse");
  ar_timings_begin (); /* the init, just after the fork */
  ar_timings_mark ("go");
  cleanup_free char *encoded = ar_timings_encode ();
  CHECK (matches (encoded, "^go=[0-9]+$"));
}

int
main (void)
{
  RUN (test_off_until_begun);
  RUN (test_phases_in_order_with_the_inits_inside);
  RUN (test_malformed_report_ignored);
  RUN (test_a_new_begin_forgets);
  return unit_finish ();
}
