/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the oci/ parser and emitter (`make` builds it
 * when configure found a compiler for -fsanitize=fuzzer; tests/fuzz/run.sh
 * runs it). Seeds live in tests/fuzz/corpus/fuzz_oci and the dictionary
 * in tests/fuzz/fuzz_oci.dict.
 * Whatever parses must emit, and what is emitted must parse back to the
 * same text; whatever fails must fail with a one-line message. */
#include "config.h"
#include "fuzz.h"
#include "../../oci/oci.h"
#include "../../src/util/cleanup.h"

#include <stdint.h>
#include <string.h>

static void
fuzz_spec (const char *data, size_t size)
{
  oci_spec *spec = NULL;
  cleanup_error ar_error_t *err = NULL;
  if (oci_spec_parse (data, size, "config.json", &spec, &err) < 0)
    {
      fuzz_check_one_line (err);
      return;
    }

  cleanup_free char *compact = oci_spec_to_json (spec, false);
  cleanup_free char *pretty = oci_spec_to_json (spec, true);
  oci_spec_free (spec);

  /* The emitter's output always parses, to the same thing. */
  oci_spec *again = NULL;
  if (oci_spec_parse (pretty, strlen (pretty), "config.json", &again, &err) < 0)
    abort ();
  cleanup_free char *compact_again = oci_spec_to_json (again, false);
  oci_spec_free (again);
  if (strcmp (compact, compact_again) != 0)
    abort ();
}

static void
fuzz_process (const char *data, size_t size)
{
  oci_process *process = NULL;
  cleanup_error ar_error_t *err = NULL;
  if (oci_process_parse (data, size, "process.json", &process, &err) < 0)
    fuzz_check_one_line (err);
  oci_process_free (process);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_spec ((const char *) data, size);
  fuzz_process ((const char *) data, size);
  return 0;
}
