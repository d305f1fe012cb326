/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for a pooled sandbox's command on the wire
 * (src/core/take_command.c), which a container's init decodes.
 * Seeds: tests/fuzz/corpus/fuzz_take_command.
 *
 * Checked: a failure is one line and leaves nothing decoded; a command
 * that decodes encodes back to the same bytes. */
#include "config.h"
#include "fuzz.h"
#include "../../src/core/take_command.h"
#include "../../src/util/cleanup.h"

#include <stdint.h>

static bool
same_strv (const oci_strv *a, const oci_strv *b)
{
  if (a->len != b->len)
    return false;
  for (size_t i = 0; i < a->len; i++)
    if (strcmp (a->items[i], b->items[i]) != 0)
      return false;
  return true;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  ar_take_command cmd = { 0 };
  cleanup_error ar_error_t *err = NULL;
  if (ar_take_command_decode ((const char *) data, size, &cmd, &err) < 0)
    {
      fuzz_check_one_line (err);
      if (cmd.args.items || cmd.env.items || cmd.cwd)
        abort ();
      return 0;
    }
  size_t len = 0;
  cleanup_free char *again = ar_take_command_encode (&cmd, &len);
  ar_take_command back = { 0 };
  if (ar_take_command_decode (again, len, &back, NULL) < 0
      || !same_strv (&cmd.args, &back.args) || !same_strv (&cmd.env, &back.env)
      || (cmd.cwd == NULL) != (back.cwd == NULL)
      || (cmd.cwd && strcmp (cmd.cwd, back.cwd) != 0))
    abort ();
  ar_take_command_free (&back);
  ar_take_command_free (&cmd);
  return 0;
}
