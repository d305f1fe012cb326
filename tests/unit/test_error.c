/* SPDX-License-Identifier: Apache-2.0 */
/* The error object: the errno kept apart from the message and rendered
 * only when the text is asked for, context prepended, codes to branch on,
 * the first of several failures kept. */
#include "config.h"
#include "unit.h"
#include "../../src/util/error.h"
#include "../../src/util/cleanup.h"

#include <errno.h>

static void
test_rendering (void)
{
  cleanup_error ar_error_t *err = NULL;
  CHECK (ar_error_set (&err, ENOENT, "open `%s`", "/x") == -1);
  CHECK_STR (err->message, "open `/x`");
  CHECK (err->errno_value == ENOENT && err->code == AR_ERR_FAILED);
  CHECK_STR (ar_error_text (err), "open `/x`: No such file or directory");
  /* Context goes before the message; the errno's text stays last, once. */
  ar_error_prefix (&err, "create %s", "c1");
  CHECK_STR (ar_error_text (err),
             "create c1: open `/x`: No such file or directory");
  ar_error_prefix (&err, "run");
  CHECK_STR (ar_error_text (err),
             "run: create c1: open `/x`: No such file or directory");
  CHECK_STR (ar_error_text (NULL), "");
}

static void
test_codes_and_own_words (void)
{
  cleanup_error ar_error_t *gone = NULL, *plain = NULL, *said = NULL;
  ar_error_set_code (&gone, AR_ERR_NO_CONTAINER, 0,
                     "container does not exist: `%s`", "c");
  CHECK (ar_error_is (gone, AR_ERR_NO_CONTAINER));
  ar_error_prefix (&gone, "delete");
  CHECK (ar_error_is (gone, AR_ERR_NO_CONTAINER));
  ar_error_set (&plain, 0, "container does not exist: `c`");
  CHECK (!ar_error_is (plain, AR_ERR_NO_CONTAINER));
  CHECK (!ar_error_is (NULL, AR_ERR_FAILED));
  ar_error_set_errno_said (&said, ENOENT,
                           "exec: \"x\": no such file or directory");
  CHECK (said->errno_value == ENOENT);
  CHECK_STR (ar_error_text (said), "exec: \"x\": no such file or directory");
}

static void
test_first_failure_kept (void)
{
  cleanup_error ar_error_t *err = NULL, *first = NULL, *step = NULL;
  ar_error_set (&err, EIO, "first");
  ar_error_set (&err, EPERM, "second");
  CHECK_STR (ar_error_text (err), "first: Input/output error");
  ar_error_set (&step, 0, "step one");
  CHECK (ar_error_keep_first (&first, &step) == NULL && step == NULL);
  ar_error_set (&step, 0, "step two");
  ar_error_t *later = ar_error_keep_first (&first, &step);
  CHECK (later != NULL && strcmp (later->message, "step two") == 0);
  ar_error_free (later);
  CHECK_STR (first->message, "step one");
}

int
main (void)
{
  RUN (test_rendering);
  RUN (test_codes_and_own_words);
  RUN (test_first_failure_kept);
  return unit_finish ();
}
