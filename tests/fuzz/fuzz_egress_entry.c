/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the egress allow-entry parser
 * (hooks/egress_entries.c egress_entry_parse), and the name match that
 * uses its entries. Seeds: tests/fuzz/corpus/fuzz_egress_entry.
 *
 * Checked: a failure is one line and leaves no entry; an entry that
 * parses is normalised text that parses again to itself (as the same
 * kind), and its own name is allowed by it. */
#include "config.h"
#include "fuzz.h"
#include "../../hooks/egress.h"
#include "../../src/util/cleanup.h"

#include <stdint.h>

static void
check_normalised (const egress_entry *e)
{
  cleanup_free char *again_text = e->kind == ENTRY_WILDCARD
                                      ? xasprintf ("*.%s", e->text)
                                      : xstrdup (e->text);
  egress_entry again;
  if (egress_entry_parse ("entry", again_text, &again, NULL) < 0)
    abort ();
  bool same = again.kind == e->kind && strcmp (again.text, e->text) == 0
              && again.port == 0;
  free (again.text);
  if (!same)
    abort ();
}

/* A name entry allows exactly its name; a wildcard only names below. */
static void
check_matches (egress_entry *e)
{
  if (e->kind != ENTRY_DOMAIN && e->kind != ENTRY_WILDCARD)
    return;
  egress_allowlist list = { .items = e, .len = 1 };
  uint16_t ports[2];
  size_t n = 0;
  bool own = egress_name_allowed (&list, e->text, ports, 2, &n);
  if (own != (e->kind == ENTRY_DOMAIN)
      || (own && (n != 1 || ports[0] != e->port)))
    abort ();
  cleanup_free char *below = xasprintf ("x.%s", e->text);
  if (egress_name_allowed (&list, below, ports, 2, &n)
      != (e->kind == ENTRY_WILDCARD))
    abort ();
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  cleanup_free char *text = xcalloc (1, size + 1);
  memcpy (text, data, size);
  egress_entry e;
  cleanup_error ar_error_t *err = NULL;
  if (egress_entry_parse ("entry", text, &e, &err) < 0)
    {
      fuzz_check_one_line (err);
      if (e.text != NULL)
        abort ();
      return 0;
    }
  check_normalised (&e);
  check_matches (&e);
  free (e.text);
  return 0;
}
