/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "cmd.h"
#include "../core/features.h"
#include "../util/cleanup.h"

#include <stdio.h>

static const ar_option options[] = { { 0 } };
AR_OPTIONS_FIT (options);

static const ar_command_doc doc
    = { "features", "",
        "Print what this build of agentrun supports, as runtime-spec "
        "features.json." };

int
ar_cmd_features (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  (void) g;
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (ar_require_args ("features", &p, 0, "no arguments", err) < 0)
    return -1;
  cleanup_free char *json = ar_features_json ();
  puts (json);
  return 0;
}
