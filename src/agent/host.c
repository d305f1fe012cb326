/* SPDX-License-Identifier: Apache-2.0 */
/* The host side of the agent profile: what a plan asks for is made under
 * the container's state dir at create, and exported, logged and removed at
 * delete. Every step checks what is actually mounted, so a delete after a
 * failed or partial create, or a second delete, does only what is left. */
#include "config.h"
#include "agent.h"
#include "egress.h"
#include "hide.h"
#include "hostfs.h"
#include "output.h"
#include "overlay.h"
#include "policy_internal.h"
#include "secrets.h"
#include "userns.h"
#include "workspace.h"
#include "../../oci/oci.h"
#include "../util/cleanup.h"

#include <string.h>

static void
undo_prepare (const char *state_dir)
{
  ar_egress_teardown (state_dir);
  ar_output_teardown (state_dir, NULL);
  ar_secrets_teardown (state_dir, NULL);
  ar_overlay_teardown (state_dir, NULL);
  ar_agent_userns_release (state_dir);
}

/* Mount what the plan asks for; the spec is not touched yet. */
static int
prepare_host (const ar_agent_plan *plan, const char *state_dir,
              const char *rootfs, const ar_userns_lease *lease, uid_t uid,
              gid_t gid, char **merged, ar_error_t **err)
{
  if (plan->overlay
      && ar_overlay_prepare (state_dir, rootfs, lease, plan->overlay_size_bytes,
                             plan->overlay_inodes, plan->overlay_from, merged,
                             err)
             < 0)
    return -1;
  if (plan->n_secrets > 0
      && ar_secrets_prepare (plan, state_dir, uid, gid, err) < 0)
    return -1;
  if (plan->output_path && plan->output_host_dir
      && ar_output_prepare (state_dir, plan->output_max_bytes,
                            plan->output_max_files, uid, gid, err)
             < 0)
    return -1;
  return 0;
}

/* Only after everything is mounted: the spec then points at it. */
/* Nothing is exported: the same quota'd tmpfs, mounted by the container
 * itself, costs no host mount to make and to undo. */
static void
append_private_output (oci_spec *spec, const ar_agent_plan *plan, uid_t uid,
                       gid_t gid)
{
  /* 0 leaves tmpfs's own default, as the host-side output tmpfs does */
  cleanup_free char *size
      = plan->output_max_bytes ? xasprintf (
            ",size=%llu", (unsigned long long) plan->output_max_bytes)
                               : xstrdup ("");
  cleanup_free char *inodes
      = plan->output_max_files ? xasprintf (
            ",nr_inodes=%llu", (unsigned long long) plan->output_max_files + 8)
                               : xstrdup ("");
  cleanup_free char *mode
      = xasprintf ("mode=0755,uid=%u,gid=%u%s%s", (unsigned) uid,
                   (unsigned) gid, size, inodes);
  const char *const options[] = { "nosuid", "nodev", "noexec", mode, NULL };
  oci_spec_append_mount (spec, "tmpfs", "tmpfs", plan->output_path, options);
}

static void
rewrite_spec (const ar_agent_plan *plan, const char *state_dir, char *merged,
              uid_t uid, gid_t gid, oci_spec *spec)
{
  static const char *const secrets_options[]
      = { "rbind", "ro", "nosuid", "nodev", "noexec", NULL };
  static const char *const output_options[]
      = { "rbind", "rw", "nosuid", "nodev", "noexec", NULL };
  if (merged)
    {
      free (spec->root_path);
      spec->root_path = merged;
    }
  if (plan->n_secrets > 0)
    {
      cleanup_free char *source = ar_hostfs_join (state_dir, AR_SECRETS_DIR);
      oci_spec_append_mount (spec, "bind", source,
                             plan->secrets_path ? plan->secrets_path
                                                : AR_SECRETS_DEFAULT_PATH,
                             secrets_options);
    }
  if (plan->output_path && plan->output_host_dir)
    {
      cleanup_free char *source = ar_hostfs_join (state_dir, AR_OUTPUT_DIR);
      oci_spec_append_mount (spec, "bind", source, plan->output_path,
                             output_options);
    }
  else if (plan->output_path)
    append_private_output (spec, plan, uid, gid);
}

int
ar_agent_prepare (const ar_agent_plan *plan, const char *state_dir,
                  const char *rootfs, oci_spec *spec, ar_error_t **err)
{
  if (plan == NULL)
    return 0;
  uid_t uid;
  gid_t gid;
  char *merged = NULL;
  ar_userns_lease lease;
  bool leased = false;
  /* Read before anything is made: a failure leaves nothing to undo. */
  cleanup_hide_list ar_hide_list hidden = { 0 };
  if (ar_hide_resolve (plan, rootfs, &hidden, err) < 0)
    return ar_error_prefix (err, "agent");
  if (ar_agent_userns_prepare (plan, state_dir, spec, &lease, &leased, err) < 0
      || ar_hostfs_process_owner (spec, &uid, &gid, err) < 0)
    {
      ar_agent_userns_release (state_dir);
      return ar_error_prefix (err, "agent");
    }
  bool host_root = strcmp (rootfs, "/") == 0;
  if (leased && host_root)
    ar_hide_cover_closed_parents (plan, &hidden);
  if (prepare_host (plan, state_dir, rootfs, leased ? &lease : NULL, uid, gid,
                    &merged, err)
      < 0)
    {
      free (merged);
      undo_prepare (state_dir);
      return ar_error_prefix (err, "agent");
    }
  /* The container mounts its private /output itself: in a user
   * namespace of its own, with the ids as it sees them. */
  uid_t inner_uid = uid;
  gid_t inner_gid = gid;
  if (leased && spec->process)
    {
      inner_uid = spec->process->user.uid;
      inner_gid = spec->process->user.gid;
    }
  rewrite_spec (plan, state_dir, merged, inner_uid, inner_gid, spec);
  /* A directory emptied around the workspace is mounted before it. */
  ar_hide_apply (&hidden, spec);
  if (ar_workspace_prepare (plan, state_dir, leased ? &lease : NULL, spec, err)
          < 0
      || ar_egress_prepare (plan, state_dir, spec, err) < 0
      || (leased && host_root
          && ar_hostfs_make_mount_points (spec->root_path, spec, err) < 0))
    {
      undo_prepare (state_dir);
      return ar_error_prefix (err, "agent");
    }
  return 0;
}

/* ---- at delete -------------------------------------------------------- */

/* Teardown goes on after a failure; the first error is the one reported. */
static void
audit_changes (const ar_agent_plan *plan, const char *state_dir,
               const char *container_id, const ar_secret_set *secrets,
               ar_error_t **first)
{
  ar_error_t *step = NULL;
  cleanup_free char *fields = NULL;
  const char *mount_points[3] = { NULL };
  size_t n = 0;
  if (plan->n_secrets > 0)
    mount_points[n++]
        = plan->secrets_path ? plan->secrets_path : AR_SECRETS_DEFAULT_PATH;
  if (plan->output_path)
    mount_points[n++] = plan->output_path;
  if (ar_overlay_changes_json (state_dir, plan->workspace_host_dir, secrets,
                               mount_points, &fields, &step)
          == 0
      && fields)
    ar_agent_audit (plan, container_id, "fs-changes", fields, &step);
  ar_error_free (ar_error_keep_first (first, &step));
}

static void
audit_output (const ar_agent_plan *plan, const char *container_id,
              const ar_output_report *report, ar_error_t **first)
{
  if (report->destination == NULL)
    return;
  ar_error_t *step = NULL;
  cleanup_free char *fields = ar_output_report_fields_json (report);
  ar_agent_audit (plan, container_id, "output", fields, &step);
  ar_error_free (ar_error_keep_first (first, &step));
}

/* Secrets are read before anything is exported or unmounted: without
 * them /output cannot be checked, and then it is not exported at all. */
static void
export_and_audit (const ar_agent_plan *plan, const char *state_dir,
                  const char *container_id, ar_error_t **first)
{
  ar_error_t *step = NULL;
  ar_secret_set secrets = { 0 };
  ar_output_report report = { 0 };
  bool secrets_known = ar_secrets_load (plan, state_dir, &secrets, &step) == 0;
  ar_error_free (ar_error_keep_first (first, &step));

  if (secrets_known && plan->output_host_dir)
    {
      /* A destination that refuses even the export's own directory
       * (made read-only, or removed, while the container ran) does not
       * take the artifacts with it: they are kept under the state root,
       * which the sandbox names (ar_output_export_kept). */
      if (ar_output_export (state_dir, plan->output_host_dir, container_id,
                            plan->output_max_bytes, plan->output_max_files,
                            &secrets, &report, &step)
              < 0
          && report.destination == NULL)
        {
          cleanup_error ar_error_t *kept_err = NULL;
          if (ar_output_export_kept (
                  state_dir, container_id, plan->output_max_bytes,
                  plan->output_max_files, &secrets, step, &report, &kept_err)
              == 0)
            ar_error_freep (&step);
        }
      ar_error_free (ar_error_keep_first (first, &step));
    }
  if (plan->audit_path)
    {
      audit_changes (plan, state_dir, container_id, &secrets, first);
      audit_output (plan, container_id, &report, first);
    }
  ar_output_report_clear (&report);
  ar_secret_set_clear (&secrets);
}

int
ar_agent_finish (const ar_agent_plan *plan, const char *state_dir,
                 const char *container_id, ar_error_t **err)
{
  if (plan == NULL)
    return 0;
  ar_error_t *first = NULL, *step = NULL;
  export_and_audit (plan, state_dir, container_id, &first);

  ar_output_teardown (state_dir, &step);
  ar_error_free (ar_error_keep_first (&first, &step));
  ar_secrets_teardown (state_dir, &step);
  ar_error_free (ar_error_keep_first (&first, &step));
  ar_overlay_teardown (state_dir, &step);
  ar_error_free (ar_error_keep_first (&first, &step));
  ar_egress_teardown (state_dir);
  ar_agent_userns_release (state_dir);

  if (first)
    ar_error_prefix (&first, "agent");
  return ar_error_pass (err, first);
}
