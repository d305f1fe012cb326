/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "cmd.h"
#include "../../oci/oci.h"
#include "../util/cleanup.h"
#include "../util/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

static const ar_option options[] = {
  { "bundle", 'b', true, "directory to write config.json into (default: .)" },
  { "rootless", 0, false, "a config for running as an unprivileged user" },
  { 0 }
};
AR_OPTIONS_FIT (options);

static const ar_command_doc doc
    = { "spec", "[OPTIONS]", "Write a default config.json for a new bundle." };

int
ar_cmd_spec (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  (void) g;
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (ar_require_args ("spec", &p, 0, "no arguments", err) < 0)
    return -1;
  const char *dir = p.value[0] ? p.value[0] : ".";
  cleanup_free char *path = xasprintf ("%s/config.json", dir);
  cleanup_free char *json
      = oci_spec_default_json (ar_flag (&p, 1), geteuid (), getegid ());
  cleanup_close int fd
      = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST)
    return ar_error_set (err, 0, "spec: `%s` exists: remove it first", path);
  if (fd < 0)
    return ar_error_set (err, errno, "spec: create `%s`", path);
  if (ar_write_all (fd, json, strlen (json)) < 0
      || ar_write_all (fd, "\n", 1) < 0)
    return ar_error_set (err, errno, "spec: write `%s`", path);
  return 0;
}
