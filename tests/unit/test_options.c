/* SPDX-License-Identifier: Apache-2.0 */
/* The subcommands' flag parser (src/cmd/options.c), without a command:
 * long and short forms, inline values, repeatable flags, where options
 * end, help, and the one-line errors. */
#include "config.h"
#include "unit.h"
#include "../../src/cmd/cmd.h"
#include "../../src/util/cleanup.h"

enum
{
  O_ROOT,
  O_DETACH,
  O_ENV,
  O_TTY
};
static const ar_option opts[] = { { "root", 0, true, "state dir" },
                                  { "detach", 'd', false, "detach" },
                                  { "env", 'e', true, "NAME=VALUE", true },
                                  { "tty", 't', false, "a terminal" },
                                  { 0 } };
AR_OPTIONS_MATCH (opts, O_TTY);

/* Parse a NULL-ended word list (argv[0] is the verb) into *p. */
static int
parse (bool end_at_first_arg, ar_parsed *p, char **words, ar_error_t **err)
{
  int argc = 0;
  while (words[argc])
    argc++;
  return ar_parse_options ("verb", opts, argc, words, end_at_first_arg, p, err);
}

static void
test_forms (void)
{
  char *w[] = { "verb", "--root",    "/r",   "-d", "ID", "-e",
                "A=1",  "--env=B=2", "-tty", "x",  NULL };
  cleanup_parsed ar_parsed p;
  cleanup_error ar_error_t *err = NULL;
  CHECK (parse (false, &p, w, &err) == 0);
  CHECK_STR (p.value[O_ROOT], "/r");
  CHECK (ar_flag (&p, O_DETACH) && ar_flag (&p, O_TTY));
  /* Repeatable: every value in order; the last is also value[]. */
  if (CHECK (p.n_multi[O_ENV] == 2))
    {
      CHECK_STR (p.multi[O_ENV][0], "A=1");
      CHECK_STR (p.multi[O_ENV][1], "B=2");
      CHECK (p.multi[O_ENV][2] == NULL);
    }
  CHECK (p.n_args == 2);
  CHECK_STR (p.args[0], "ID");
  CHECK_STR (p.args[1], "x");
}

static void
test_where_options_end (void)
{
  /* exec ID ls -l: with options_end_at_first_arg, -l is the command's. */
  char *exec_words[] = { "verb", "-d", "ID", "ls", "-d", NULL };
  cleanup_parsed ar_parsed p;
  cleanup_error ar_error_t *err = NULL;
  CHECK (parse (true, &p, exec_words, &err) == 0);
  CHECK (p.n_args == 3);
  CHECK_STR (p.args[2], "-d");
  /* "--" ends them everywhere; "-" alone is an argument. */
  char *dashes[] = { "verb", "--", "--root", "-", NULL };
  cleanup_parsed ar_parsed q;
  CHECK (parse (false, &q, dashes, &err) == 0);
  CHECK (q.n_args == 2 && !q.present[O_ROOT]);
  CHECK_STR (q.args[0], "--root");
  CHECK_STR (q.args[1], "-");
  /* --detach=false is present but not set. */
  char *off[] = { "verb", "--detach=false", NULL };
  cleanup_parsed ar_parsed r;
  CHECK (parse (false, &r, off, &err) == 0);
  CHECK (r.present[O_DETACH] && !ar_flag (&r, O_DETACH));
}

static void
test_help_and_errors (void)
{
  char *help[] = { "verb", "-h", NULL };
  cleanup_parsed ar_parsed p;
  cleanup_error ar_error_t *err = NULL;
  CHECK (parse (false, &p, help, &err) == 0 && p.help == AR_HELP_TEXT);

  char *unknown[] = { "verb", "--frobnicate", NULL };
  cleanup_parsed ar_parsed q;
  CHECK (parse (false, &q, unknown, &err) < 0);
  CHECK_STR (ar_error_text (err), "verb: unknown flag `--frobnicate`");
  ar_error_freep (&err);

  char *missing[] = { "verb", "--root", NULL };
  cleanup_parsed ar_parsed r;
  CHECK (parse (false, &r, missing, &err) < 0);
  CHECK_STR (ar_error_text (err), "verb: flag `--root` needs a value");
  ar_error_freep (&err);

  char *args[] = { "verb", "a", "b", NULL };
  cleanup_parsed ar_parsed s;
  CHECK (parse (false, &s, args, &err) == 0);
  CHECK (ar_require_args ("verb", &s, 1, "CONTAINER_ID", &err) < 0);
  CHECK_STR (ar_error_text (err),
             "verb: expected CONTAINER_ID, got 2 arguments");
}

int
main (void)
{
  RUN (test_forms);
  RUN (test_where_options_end);
  RUN (test_help_and_errors);
  return unit_finish ();
}
