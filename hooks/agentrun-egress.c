/* SPDX-License-Identifier: Apache-2.0 */
/* agentrun-egress: default-deny egress for a container, as an OCI hook
 * any runtime can register (egress_hook.c has the verbs, egress.h what
 * is made where). agentrun runs the same code in-process.
 *
 *   createRuntime: agentrun-egress create --mode none|allowlist|open
 *                    [--allow ENTRY]... [--upstream ADDR[:PORT]]
 *                    [--audit FILE] [--pool CIDR] [--state-dir DIR]
 *                    [--netns-owned]   (the netns dies with the container)
 *   poststop:      agentrun-egress delete [--state-dir DIR]
 *
 * The container's state (id, pid) comes on stdin. */
#include "config.h"
#include "egress.h"
#include "../src/util/cleanup.h"
#include "../src/util/fs.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#define MAX_STATE_SIZE (1u << 20)

/* A hook runs with the environment its spec gives, usually none: in the
 * sanitizer build (--enable-sanitizers) the leak check would run at every
 * exit, which the runtime's own runs turn off with ASAN_OPTIONS. */
const char *__asan_default_options (void);
const char *
__asan_default_options (void)
{
  return "detect_leaks=0";
}

int
main (int argc, char **argv)
{
  cleanup_free char *state = xmalloc (MAX_STATE_SIZE + 1);
  ar_error_t *err = NULL;
  ssize_t n = ar_read_all (STDIN_FILENO, state, MAX_STATE_SIZE);
  int r = -1;
  if (n < 0)
    ar_error_set (&err, errno, "read the container state from stdin");
  else
    {
      state[n] = '\0';
      r = egress_hook_run (argc, argv, state, false, &err);
    }
  if (r < 0)
    fprintf (stderr, "agentrun-egress: %s\n",
             err ? ar_error_text (err) : "failed");
  ar_error_free (err);
  return r < 0 ? 1 : 0;
}
