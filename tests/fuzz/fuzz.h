/* SPDX-License-Identifier: Apache-2.0 */
/* What every libFuzzer target here checks of a failure: an error object
 * with a message of one line. */
#ifndef AR_TESTS_FUZZ_H
#define AR_TESTS_FUZZ_H

#include "../../src/util/error.h"

#include <stdlib.h>
#include <string.h>

static inline void
fuzz_check_one_line (const ar_error_t *err)
{
  if (err == NULL || ar_error_text (err) == NULL
      || ar_error_text (err)[0] == '\0'
      || strchr (ar_error_text (err), '\n') != NULL)
    abort ();
}

#endif
