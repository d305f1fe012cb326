/* SPDX-License-Identifier: Apache-2.0 */
/* A tiny assertion helper for the C unit tests. Each test program is one
 * translation unit: include this, write `static void test_x (void)`
 * functions using CHECK*, run them with RUN (test_x), and end main with
 * `return unit_finish ();`. At exit a summary line "N passed, N failed"
 * is printed; the exit status is 1 when anything failed. */
#ifndef AR_TESTS_UNIT_H
#define AR_TESTS_UNIT_H

#include "../../src/util/userns.h"
#include <inttypes.h>
#include <stdbool.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned unit_passed_count __attribute__ ((unused));
static unsigned unit_failed_count __attribute__ ((unused));
static const char *unit_current_test __attribute__ ((unused)) = "";

static void __attribute__ ((unused)) unit_print_summary (void)
{
  printf ("%u passed, %u failed\n", unit_passed_count, unit_failed_count);
  fflush (stdout);
}

/* Registered before main, so the summary shows up even when a test
 * exits early. */
static void __attribute__ ((constructor, unused)) unit_register_summary (void)
{
  atexit (unit_print_summary);
}

/* Root of the host's own user namespace, what a test that mounts, makes
 * device nodes or chowns to any id needs: root of a user namespace of
 * its own (in an agentrun sandbox) is uid 0 without it. */
static bool __attribute__ ((unused)) unit_real_root (void)
{
  return geteuid () == 0 && !ar_userns_unprivileged ();
}

static bool __attribute__ ((unused))
unit_record (bool ok, const char *file, int line, const char *what)
{
  if (ok)
    {
      unit_passed_count++;
      return true;
    }
  unit_failed_count++;
  fprintf (stderr, "FAIL %s (%s:%d): %s\n", unit_current_test, file, line,
           what);
  return false;
}

static bool __attribute__ ((unused))
unit_check_str (const char *got, const char *want, const char *file, int line,
                const char *expr)
{
  bool ok = (got == NULL && want == NULL)
            || (got != NULL && want != NULL && strcmp (got, want) == 0);
  if (!ok)
    fprintf (stderr, "  %s\n    got:  %s%s%s\n    want: %s%s%s\n", expr,
             got ? "\"" : "", got ? got : "NULL", got ? "\"" : "",
             want ? "\"" : "", want ? want : "NULL", want ? "\"" : "");
  return unit_record (ok, file, line, expr);
}

static bool __attribute__ ((unused))
unit_check_int (intmax_t got, intmax_t want, const char *file, int line,
                const char *expr)
{
  bool ok = got == want;
  if (!ok)
    fprintf (stderr, "  %s\n    got:  %jd\n    want: %jd\n", expr, got, want);
  return unit_record (ok, file, line, expr);
}

#define CHECK(expr) unit_record (!!(expr), __FILE__, __LINE__, #expr)
#define CHECK_STR(got, want)                                                   \
  unit_check_str ((got), (want), __FILE__, __LINE__, #got " == " #want)
#define CHECK_INT(got, want)                                                   \
  unit_check_int ((intmax_t) (got), (intmax_t) (want), __FILE__, __LINE__,     \
                  #got " == " #want)

#define RUN(fn)                                                                \
  do                                                                           \
    {                                                                          \
      unit_current_test = #fn;                                                 \
      fn ();                                                                   \
    }                                                                          \
  while (0)

static int __attribute__ ((unused)) unit_finish (void)
{
  return unit_failed_count == 0 ? 0 : 1;
}

#endif
