/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the reader of a client's first bytes
 * (hooks/peek_name.c): the whole input is what a client sent. Seeds:
 * tests/fuzz/corpus/fuzz_peek_name (ClientHellos of curl and openssl,
 * split over records; HTTP requests).
 *
 * Checked: a name is one the resolver would take, unchanged when taken
 * again; a refusal is one line; "more" only below PEEK_BYTES_MAX; and the
 * answer only ever moves forward as bytes come: a prefix of input that
 * gave a name or a refusal never gives either of the other two. */
#include "config.h"
#include "fuzz.h"
#include "../../hooks/peek_name.h"
#include "../../src/util/cleanup.h"

#include <stdint.h>

static peek_result
read_checked (const uint8_t *data, size_t size)
{
  peek_name out;
  cleanup_error ar_error_t *err = NULL;
  peek_result r = peek_name_read (data, size, &out, &err);
  char again[DNS_NAME_TEXT_MAX + 1];
  switch (r)
    {
    case PEEK_NAME:
      if (err || !dns_name_from_text (out.name, strlen (out.name), again)
          || strcmp (again, out.name) != 0)
        abort ();
      break;
    case PEEK_REFUSE:
      fuzz_check_one_line (err);
      if (out.name[0] != '\0')
        abort ();
      break;
    case PEEK_MORE:
      if (err || size >= PEEK_BYTES_MAX)
        abort ();
      break;
    }
  return r;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  peek_result whole = read_checked (data, size);
  /* A few prefixes: each must still be waiting, or already have the
   * answer the whole has. */
  size_t cuts[] = { size / 2, size > 0 ? size - 1 : 0, size / 3, 5, 9 };
  for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++)
    {
      if (cuts[i] >= size)
        continue;
      peek_result part = read_checked (data, cuts[i]);
      if (part != PEEK_MORE && part != whole)
        abort ();
    }
  return 0;
}
