/* SPDX-License-Identifier: Apache-2.0 */
/* util/idmount: the user namespace that carries an idmapping is a user
 * namespace with the maps asked for, owned by no process of ours once let
 * go (its holder reaped, no child left), and a bad map is one error with
 * nothing left. Needs real root. */
#include "config.h"
#include "unit.h"
#include "../../src/util/cleanup.h"
#include "../../src/util/idmount.h"

#include <errno.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

static bool
no_child_left (void)
{
  return waitpid (-1, NULL, WNOHANG) < 0 && errno == ECHILD;
}

static void
test_namespace_and_reap (void)
{
  for (int i = 0; i < 50; i++)
    {
      cleanup_error ar_error_t *err = NULL;
      cleanup_idmap_ns ar_idmap_ns ns = { .fd = -1 };
      CHECK (
          ar_idmount_userns ("0 300000 65536\n", "0 300000 65536\n", &ns, &err)
          == 0);
      CHECK (ioctl (ns.fd, NS_GET_NSTYPE) == CLONE_NEWUSER);
      /* NS_GET_OWNER_UID: made by us, root */
      uid_t owner = 1;
      CHECK (ioctl (ns.fd, NS_GET_OWNER_UID, &owner) == 0 && owner == 0);
    }
  CHECK (no_child_left ());
}

static void
test_bad_map (void)
{
  ar_error_t *err = NULL;
  ar_idmap_ns ns = { .fd = -1 };
  CHECK (ar_idmount_userns ("not a map\n", "0 300000 1\n", &ns, &err) < 0);
  CHECK (err != NULL && ns.fd == -1 && ns.holder == 0);
  ar_error_free (err);
  CHECK (no_child_left ());
}

int
main (void)
{
  if (!unit_real_root ())
    return 77; /* automake's "skipped" */
  RUN (test_namespace_and_reap);
  RUN (test_bad_map);
  return unit_finish ();
}
