/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "update.h"
#include "container.h"
#include "state.h"
#include "cgroups/cgroups.h"
#include "../util/cleanup.h"

int
ar_container_update (const char *root, const char *id, const oci_resources *r,
                     ar_error_t **err)
{
  cleanup_close int state_fd = -1;
  cleanup_state ar_state *st = NULL;
  if (ar_container_load (root, id, &state_fd, &st, err) < 0)
    return -1;
  /* A stopped container's cgroup is empty and about to be removed. */
  ar_status status = ar_state_status (state_fd, st);
  if (status == AR_STATUS_STOPPED || status == AR_STATUS_CREATING)
    return ar_error_set (err, 0, "cannot update container `%s`: it is %s", id,
                         ar_status_name (status));
  ar_cgroup *cg = NULL;
  if (ar_container_cgroup_for (st, "to update", &cg, err) < 0)
    return -1;
  int ret = ar_cgroup_update (cg, r, err);
  ar_cgroup_free (cg);
  if (ret < 0)
    return ar_error_prefix (err, "update container `%s`", id);
  return 0;
}
