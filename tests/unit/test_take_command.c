/* SPDX-License-Identifier: Apache-2.0 */
/* A pooled sandbox's command on the wire: args, env and cwd come back as
 * they went, and a buffer that is not one is refused with its reason. */
#include "config.h"
#include "unit.h"
#include "../../oci/oci.h"
#include "../../src/core/take_command.h"
#include "../../src/util/cleanup.h"

#include <string.h>

static void
test_round_trip (void)
{
  ar_take_command in = { 0 };
  char *args[] = { "sh", "-c", "", "echo \"$X\"" };
  char *env[] = { "PATH=/bin", "X=a=b", "EMPTY=" };
  oci_strv_set (&in.args, args, 4);
  oci_strv_set (&in.env, env, 3);
  in.cwd = xstrdup ("/work space");
  size_t len = 0;
  cleanup_free char *buf = ar_take_command_encode (&in, &len);
  cleanup_take_command ar_take_command out = { 0 };
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (ar_take_command_decode (buf, len, &out, &err), 0);
  CHECK_INT ((int) out.args.len, 4);
  CHECK_STR (out.args.items[2], "");
  CHECK_STR (out.args.items[3], "echo \"$X\"");
  CHECK (out.args.items[4] == NULL);
  CHECK_INT ((int) out.env.len, 3);
  CHECK_STR (out.env.items[1], "X=a=b");
  CHECK_STR (out.cwd, "/work space");
  ar_take_command_free (&in);
}

/* Env and cwd are optional; a relative cwd is kept as it is. */
static void
test_only_args (void)
{
  static const char buf[] = "atrue\0csub/dir\0";
  cleanup_take_command ar_take_command out = { 0 };
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (ar_take_command_decode (buf, sizeof buf - 1, &out, &err), 0);
  CHECK_INT ((int) out.env.len, 0);
  CHECK_STR (out.cwd, "sub/dir");
  static const char bare[] = "atrue\0";
  cleanup_take_command ar_take_command none = { 0 };
  CHECK_INT (ar_take_command_decode (bare, sizeof bare - 1, &none, &err), 0);
  CHECK (none.cwd == NULL);
}

static void
refused (const char *buf, size_t len, const char *want)
{
  ar_take_command out = { 0 };
  cleanup_error ar_error_t *err = NULL;
  CHECK_INT (ar_take_command_decode (buf, len, &out, &err), -1);
  CHECK (err && strstr (ar_error_text (err), want) != NULL);
  CHECK (out.args.items == NULL && out.cwd == NULL);
}

#define REFUSED(lit, want) refused (lit, sizeof lit - 1, want)

static void
test_malformed_refused (void)
{
  REFUSED ("", "has no argument");
  REFUSED ("c/\0", "has no argument");
  REFUSED ("atrue\0c\0", "entry 2: expected one cwd");
  REFUSED ("atrue\0c/\0csub\0", "entry 3: expected one cwd");
  REFUSED ("atrue\0eNOEQUALS\0c/\0", "entry 2: expected NAME=VALUE");
  REFUSED ("atrue\0x\0c/\0", "entry 2: unknown kind");
  REFUSED ("atrue\0\0c/\0", "entry 2: unknown kind");
  REFUSED ("atrue\0c/", "last entry has no end");
}

int
main (void)
{
  RUN (test_round_trip);
  RUN (test_only_args);
  RUN (test_malformed_refused);
  return unit_finish ();
}
