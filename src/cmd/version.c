/* SPDX-License-Identifier: Apache-2.0 */
/* agentrun version (and --version): runc's lines, which tools parse
 * (`agentrun version X`, `commit:`, `spec:`, `libseccomp:`), then the
 * other libraries agentrun is built with. */
#include "config.h"
#include "src/build_commit.h"
#include "cmd.h"
#include "../core/seccomp.h"

#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <yajl/yajl_version.h>
#include <zlib.h>

static const ar_option options[] = { { 0 } };
AR_OPTIONS_FIT (options);

static const ar_command_doc doc = {
  "version", "",
  "Print the version, the commit it was built from, the runtime-spec\n"
  "version, and each library's version: libseccomp, yajl and zlib as the\n"
  "library reports it at run time, followed by (built with X) when the\n"
  "headers were another version; libcap, libselinux and libsystemd have\n"
  "no call that reports it, so theirs is what pkg-config said at build time."
};

/* Both the run-time version and the headers' in one line: a shared
 * library upgraded under the binary shows as the difference. */
static void
print_library (const char *name, const char *running, const char *built)
{
  printf ("%s: %s", name, running);
  if (strcmp (running, built) != 0)
    printf (" (built with %s)", built);
  putchar ('\n');
}

static const char *
dotted (char *buf, size_t len, int major, int minor, int micro)
{
  snprintf (buf, len, "%d.%d.%d", major, minor, micro);
  return buf;
}

void
ar_print_version (void)
{
  char running[32], built[32];
  printf ("agentrun version %s\ncommit: %s\nspec: %s\n", PACKAGE_VERSION,
          AR_BUILD_COMMIT, AR_OCI_VERSION);
  print_library ("libseccomp", ar_seccomp_library_version (),
                 dotted (built, sizeof built, SCMP_VER_MAJOR, SCMP_VER_MINOR,
                         SCMP_VER_MICRO));
  int yajl = yajl_version ();
  print_library (
      "yajl",
      dotted (running, sizeof running, yajl / 10000, yajl / 100 % 100,
              yajl % 100),
      dotted (built, sizeof built, YAJL_MAJOR, YAJL_MINOR, YAJL_MICRO));
  print_library ("zlib", zlibVersion (), ZLIB_VERSION);
  printf ("libcap: %s (at build time)\n", AR_LIBCAP_VERSION);
  printf ("libselinux: %s (at build time)\n", AR_LIBSELINUX_VERSION);
  /* Only its headers are used at build time; sdbus.c loads the library. */
  printf (
      "libsystemd: %s (headers at build time; loaded only for --systemd-cgroup)\n",
      AR_LIBSYSTEMD_VERSION);
#ifdef AR_SANITIZERS
  /* Tests read this: some seccomp profiles starve the sanitizers' own
   * runtime (it needs futex after the filter is loaded). */
  printf ("build: sanitizers\n");
#endif
}

int
ar_cmd_version (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  (void) g;
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (ar_require_args ("version", &p, 0, "no arguments", err) < 0)
    return -1;
  ar_print_version ();
  return 0;
}
