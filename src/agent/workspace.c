/* SPDX-License-Identifier: Apache-2.0 */
/* The sandbox's workspace: a host directory the container sees at the same
 * path through an overlay of its own, whose upper layer lives in the
 * ephemeral tmpfs. The real directory is never written; what the agent
 * changed comes back as a diff in git's format (and its commits as a
 * git bundle). */
#include "config.h"
#include "agent.h"
#include "diff_withhold.h"
#include "hostfs.h"
#include "overlay.h"
#include "snapshot.h"
#include "workspace.h"
#include "ws_changes.h"
#include "ws_diff.h"
#include "ws_git.h"
#include "../../oci/oci.h"
#include "../util/cleanup.h"
#include "../util/idmount.h"
#include "../util/path.h"
#include "../util/userns.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#define WS_WORK "ws-work"
#define WS_DIFF "ws-diff"
#define GIT_SHADOW_A "diff-git-a" /* below the state dir */
#define GIT_SHADOW_B "diff-git-b"

/* Without root overlayfs keeps its marks (opaque directories) in user.*
 * xattrs, and only with this option; a mount that must read the layer
 * again needs it too. */
static const char *
userxattr_option (void)
{
  return ar_userns_unprivileged () ? ",userxattr" : "";
}

static char *
overlay_child (const char *state_dir, const char *name)
{
  cleanup_free char *dir = ar_hostfs_join (state_dir, AR_OVERLAY_DIR);
  return ar_hostfs_join (dir, name);
}

/* In a user namespace of its own the container's root is a host uid
 * that owns nothing of the workspace: the overlay is made here, on an
 * idmapped copy of the workspace in which its owner's files are the
 * process user's, and bound into the container. Copy-up runs as the
 * runtime (host root), so a file the container may write it can change;
 * the real workspace is still never written. */
static int
mount_idmapped (const ar_agent_plan *plan, const char *state_dir,
                const char *upper, const char *work, uid_t uid, gid_t gid,
                oci_spec *spec, ar_error_t **err)
{
  struct stat st;
  if (stat (plan->workspace_host_dir, &st) < 0)
    return ar_error_set (err, errno, "workspace: stat `%s`",
                         plan->workspace_host_dir);
  const ar_id_shift map = { .uid_from = st.st_uid,
                            .uid_to = uid,
                            .gid_from = st.st_gid,
                            .gid_to = gid,
                            .count = 1 };
  cleanup_free char *lower = overlay_child (state_dir, AR_OVERLAY_WS_LOWER);
  cleanup_free char *merged = overlay_child (state_dir, AR_OVERLAY_WS_MERGED);
  if ((mkdir (lower, 0700) < 0 && errno != EEXIST)
      || (mkdir (merged, 0700) < 0 && errno != EEXIST))
    return ar_error_set (err, errno, "workspace: mkdir under `%s`", state_dir);
  /* Attached, not a detached layer: see layers.h. */
  if (ar_idmount_attach_copy (plan->workspace_host_dir, &map, lower, err) < 0)
    return ar_error_prefix (err, "workspace");
  cleanup_free char *data
      = xasprintf ("lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work);
  unsigned long flags = plan->workspace_read_only ? MS_RDONLY : 0;
  if (mount ("overlay", merged, "overlay", flags, data) < 0)
    return ar_error_set (err, errno, "workspace: mount its overlay on `%s`",
                         merged);
  const char *const options[]
      = { "rbind", plan->workspace_read_only ? "ro" : "rw", NULL };
  oci_spec_append_mount (spec, "bind", merged, plan->workspace_host_dir,
                         options);
  return 0;
}

int
ar_workspace_prepare (const ar_agent_plan *plan, const char *state_dir,
                      const ar_userns_lease *lease, oci_spec *spec,
                      ar_error_t **err)
{
  if (plan->workspace_host_dir == NULL)
    return 0;
  cleanup_free char *upper = overlay_child (state_dir, AR_OVERLAY_WS_UPPER);
  cleanup_free char *work = overlay_child (state_dir, WS_WORK);
  if ((mkdir (upper, 0755) < 0 && errno != EEXIST)
      || (mkdir (work, 0700) < 0 && errno != EEXIST))
    return ar_error_set (err, errno, "workspace: mkdir under `%s`", state_dir);
  /* The upper layer's root is the workspace directory as the container
   * sees it: owned by the process user (sandbox --user), who can then
   * always make files in it; the files below keep their host owners. */
  uid_t uid;
  gid_t gid;
  if (ar_hostfs_process_owner (spec, &uid, &gid, err) < 0)
    return ar_error_prefix (err, "workspace");
  if (chown (upper, uid, gid) < 0)
    return ar_error_set (err, errno, "workspace: chown `%s` to %u:%u", upper,
                         uid, gid);
  if (plan->overlay_from
      && ar_snapshot_seed (plan->overlay_from, AR_SNAPSHOT_WORKSPACE_LAYER,
                           upper, false, lease, err)
             < 0)
    return ar_error_prefix (err, "workspace");

  if (lease)
    return mount_idmapped (plan, state_dir, upper, work, uid, gid, spec, err);

  cleanup_free char *lower
      = xasprintf ("lowerdir=%s", plan->workspace_host_dir);
  cleanup_free char *upper_option = xasprintf ("upperdir=%s", upper);
  cleanup_free char *work_option
      = xasprintf ("workdir=%s%s", work, userxattr_option ());
  const char *const options[]
      = { lower, upper_option, work_option,
          plan->workspace_read_only ? "ro" : NULL, NULL };
  oci_spec_append_mount (spec, "overlay", "overlay", plan->workspace_host_dir,
                         options);
  return 0;
}

/* A read-only view needs no work dir: the upper layer becomes the top
 * lower layer, and its whiteouts hide what the agent deleted. */
static int
mount_views (const char *workspace, const char *upper, const char *a,
             const char *b, ar_error_t **err)
{
  if ((mkdir (a, 0700) < 0 && errno != EEXIST)
      || (mkdir (b, 0700) < 0 && errno != EEXIST))
    return ar_error_set (err, errno, "workspace diff: mkdir `%s`", a);
  if (mount (workspace, a, NULL, MS_BIND | MS_REC, NULL) < 0
      || mount (NULL, a, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) < 0)
    return ar_error_set (err, errno, "workspace diff: bind `%s`", workspace);
  cleanup_free char *data
      = xasprintf ("lowerdir=%s:%s%s", upper, workspace, userxattr_option ());
  if (mount ("overlay", b, "overlay", MS_RDONLY, data) < 0)
    return ar_error_set (err, errno, "workspace diff: mount the changed view");
  return 0;
}

/* What the audit log's "diff" event says. */
typedef struct
{
  size_t changed;
  ar_diff_withheld_list withheld; /* the paths, then the bundle */
  size_t withheld_paths;
  char *bundle; /* NULL: none written */
} diff_outcome;

static void
diff_outcome_clear (diff_outcome *o)
{
  ar_diff_withheld_list_clear (&o->withheld);
  free (o->bundle);
}

/* The git side of a workspace that is a repository: the agent's view
 * (for what it ignores and its commits) and, for the commits, the
 * original's HEAD. */
typedef struct
{
  bool repo;
  ar_git_shadow changed, original;
} git_views;

static void
git_views_clear (git_views *g)
{
  ar_git_shadow_clear (&g->changed);
  ar_git_shadow_clear (&g->original);
}

static int
git_views_make (git_views *g, const char *state_dir, const char *a, int a_fd,
                const char *b, int b_fd, ar_error_t **err)
{
  g->repo = ar_ws_git_is_repo (a_fd) || ar_ws_git_is_repo (b_fd);
  if (!g->repo)
    return 0;
  if (!ar_ws_git_available ())
    {
      g->repo = false;
      fprintf (
          stderr,
          "agentrun: warning: --diff: git not found: ignored files kept, commits not exported\n");
      return 0;
    }
  cleanup_free char *dir_a = ar_hostfs_join (state_dir, GIT_SHADOW_A);
  cleanup_free char *dir_b = ar_hostfs_join (state_dir, GIT_SHADOW_B);
  if (ar_git_shadow_make (dir_b, b, b_fd, &g->changed, err) < 0
      || (ar_ws_git_is_repo (a_fd)
          && ar_git_shadow_make (dir_a, a, a_fd, &g->original, err) < 0))
    {
      g->repo = false;
      return ar_error_prefix (err, "--diff");
    }
  return 0;
}

static bool
has_entry (int view_fd, const char *path)
{
  cleanup_close int fd = ar_path_open_entry (view_fd, path);
  return fd >= 0;
}

/* Whether git ignores a path is asked where the path is: in the agent's
 * view (its .gitignore files and index) when it is still there, else in
 * the original (a deleted build output of the original is no file of a
 * clean checkout either). */
static int
drop_ignored (const git_views *g, int a_fd, int b_fd, ar_path_list *paths,
              ar_error_t **err)
{
  cleanup_free bool *ask = xcalloc (paths->n + 1, sizeof *ask);
  for (size_t i = 0; i < paths->n; i++)
    ask[i] = has_entry (b_fd, paths->paths[i]);
  if (ar_git_drop_ignored (&g->changed, paths, ask, err) < 0)
    return -1;
  if (g->original.dir == NULL)
    return 0;
  for (size_t i = 0; i < paths->n; i++)
    ask[i] = !has_entry (b_fd, paths->paths[i])
             && has_entry (a_fd, paths->paths[i]);
  return ar_git_drop_ignored (&g->original, paths, ask, err);
}

/* Whether there are commits since the original HEAD, and which secret
 * what they carry that is new holds. */
static int
new_commits (const git_views *g, const ar_secret_set *secrets, char *since,
             bool *ahead, const char **secret, ar_error_t **err)
{
  if ((g->original.dir && ar_git_head (&g->original, since, err) < 0)
      || ar_git_moved_ahead (&g->changed, since, ahead, err) < 0
      || (*ahead
          && ar_git_find_secret (&g->changed, since, secrets, secret, err) < 0))
    return ar_error_prefix (err, "--diff: commits");
  return 0;
}

/* The commits since the original HEAD, as FILE.bundle. When what they
 * carry holds a secret there is none: it is withheld (listed with the
 * withheld paths) and the diff is not whole. An older FILE.bundle goes
 * whenever none is written, so it never belongs to an earlier run. */
static int
export_commits (const git_views *g, const ar_secret_set *secrets,
                const char *bundle, ar_diff_withheld_list *withheld,
                bool *written, ar_error_t **err)
{
  char since[AR_GIT_ID_SIZE] = "";
  bool ahead = false;
  const char *secret = NULL;
  int r = g->repo ? new_commits (g, secrets, since, &ahead, &secret, err) : 0;
  if (r == 0 && secret)
    {
      const ar_output_withheld *w = ar_diff_withhold_named (
          withheld, bundle,
          xasprintf ("a new commit contains secret %s", secret));
      r = ar_error_set (err, 0, "--diff: withheld `%s` (%s)", bundle,
                        w->reason);
    }
  else if (r == 0 && ahead
           && ar_git_bundle (&g->changed, since, bundle, err) < 0)
    r = ar_error_prefix (err, "--diff: commits");
  *written = r == 0 && ahead;
  if (!*written && unlink (bundle) < 0 && errno != ENOENT)
    r = ar_error_set (err, errno, "--diff: remove the old `%s`", bundle);
  return r;
}

static int
write_patches (ar_ws_diff *d, const ar_path_list *paths, const char *diff_path,
               ar_error_t **err)
{
  cleanup_close int fd
      = open (diff_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return ar_error_set (err, errno, "--diff: create `%s`", diff_path);
  d->sink.out = fdopen (fd, "w");
  if (d->sink.out == NULL)
    return ar_error_set (err, errno, "--diff: `%s`", diff_path);
  steal_fd (&fd);
  ar_ws_diff_paths (d, paths);
  bool write_failed = ferror (d->sink.out) != 0;
  if (fclose (d->sink.out) != 0 || write_failed)
    return ar_error_set (err, errno, "--diff: write `%s`", diff_path);
  if (d->first_error)
    return ar_error_set (err, d->first_error->errno_value,
                         "--diff: %zu path(s) left out, the first: %s",
                         d->failed, d->first_error->message);
  return 0;
}

/* Every step runs, whatever failed before it (a diff without the ignored
 * files dropped is still a diff); the first failure is returned. */
static int
diff_views (const ar_diff_request *req, const char *state_dir,
            const ar_secret_set *secrets, const char *upper, const char *a,
            const char *b, diff_outcome *outcome, ar_error_t **err)
{
  cleanup_close int upper_fd = ar_hostfs_open_dir (upper, err);
  cleanup_close int a_fd = upper_fd < 0 ? -1 : ar_hostfs_open_dir (a, err);
  cleanup_close int b_fd = a_fd < 0 ? -1 : ar_hostfs_open_dir (b, err);
  if (b_fd < 0)
    return ar_error_prefix (err, "--diff");
  cleanup_error ar_error_t *first = NULL, *step = NULL;
  cleanup_path_list ar_path_list paths = { 0 };
  if (ar_ws_changed_paths (upper_fd, a_fd, &paths, &step) < 0)
    ar_error_prefix (&step, "--diff");
  ar_error_free (ar_error_keep_first (&first, &step));
  __attribute__ ((cleanup (git_views_clear))) git_views git = { 0 };
  git_views_make (&git, state_dir, a, a_fd, b, b_fd, &step);
  ar_error_free (ar_error_keep_first (&first, &step));
  if (git.repo && !req->include_ignored
      && drop_ignored (&git, a_fd, b_fd, &paths, &step) < 0)
    ar_error_prefix (&step, "--diff: ignored files kept");
  ar_error_free (ar_error_keep_first (&first, &step));

  ar_ws_diff d = { .a_fd = a_fd,
                   .b_fd = b_fd,
                   .secrets = secrets,
                   .sink = { .secrets = secrets } };
  write_patches (&d, &paths, req->path, &step);
  ar_error_free (ar_error_keep_first (&first, &step));
  outcome->changed = d.changed;
  outcome->withheld = d.withheld;
  outcome->withheld_paths = d.withheld.n;
  d.withheld = (ar_diff_withheld_list){ 0 };
  cleanup_free char *bundle = xasprintf ("%s.bundle", req->path);
  bool written = false;
  export_commits (&git, secrets, bundle, &outcome->withheld, &written, &step);
  ar_error_free (ar_error_keep_first (&first, &step));
  outcome->bundle = written ? steal_pointer (&bundle) : NULL;
  ar_ws_diff_clear (&d);
  return ar_error_pass (err, steal_pointer (&first));
}

/* The "diff" event: how many paths changed, what was withheld, the
 * bundle, and the error when the diff is not whole. An error naming a
 * path that spells a secret is not shown. */
static void
audit_diff (const ar_agent_plan *plan, const char *container_id,
            const ar_secret_set *secrets, const diff_outcome *o,
            const ar_error_t *error)
{
  if (plan->audit_path == NULL)
    return;
  yajl_gen gen = yajl_gen_alloc (NULL);
  yajl_gen_map_open (gen);
  yajl_gen_string (gen, (const unsigned char *) "changed", 7);
  yajl_gen_integer (gen, (long long) o->changed);
  ar_output_gen_withheld (gen, o->withheld.withheld, o->withheld.n);
  if (o->bundle)
    {
      yajl_gen_string (gen, (const unsigned char *) "bundle", 6);
      ar_hostfs_gen_name (gen, o->bundle);
    }
  if (error)
    {
      bool secret = ar_secret_set_find (secrets, ar_error_text (error),
                                        strlen (ar_error_text (error)))
                    != NULL;
      yajl_gen_string (gen, (const unsigned char *) "error", 5);
      ar_hostfs_gen_name (gen, secret ? "[withheld: names a secret]"
                                      : ar_error_text (error));
    }
  yajl_gen_map_close (gen);
  cleanup_free char *fields = ar_hostfs_json_members (gen);
  ar_agent_audit_or_warn (plan, container_id, "diff", fields);
}

static int
export_diff (const ar_agent_plan *plan, const char *state_dir,
             const ar_diff_request *req, const ar_secret_set *secrets,
             diff_outcome *outcome, ar_error_t **err)
{
  cleanup_free char *upper = overlay_child (state_dir, AR_OVERLAY_WS_UPPER);
  cleanup_free char *dir = overlay_child (state_dir, WS_DIFF);
  cleanup_free char *a = ar_hostfs_join (dir, "a");
  cleanup_free char *b = ar_hostfs_join (dir, "b");
  if (mkdir (dir, 0700) < 0 && errno != EEXIST)
    return ar_error_set (err, errno, "--diff: mkdir `%s`", dir);
  int r = mount_views (plan->workspace_host_dir, upper, a, b, err);
  if (r == 0)
    r = diff_views (req, state_dir, secrets, upper, a, b, outcome, err);
  ar_hostfs_unmount_and_remove (b, NULL);
  ar_hostfs_unmount_and_remove (a, NULL);
  rmdir (dir);
  return r;
}

int
ar_workspace_export_diff (const ar_agent_plan *plan, const char *state_dir,
                          const char *container_id, const ar_diff_request *req,
                          ar_error_t **err)
{
  if (plan == NULL || plan->workspace_host_dir == NULL)
    return ar_error_set (err, 0, "--diff: the sandbox has no workspace");
  ar_secret_set secrets = { 0 };
  if (ar_secrets_load (plan, state_dir, &secrets, err) < 0)
    return ar_error_prefix (err, "--diff: secrets");
  __attribute__ ((cleanup (diff_outcome_clear))) diff_outcome outcome = { 0 };
  int r = export_diff (plan, state_dir, req, &secrets, &outcome, err);
  audit_diff (plan, container_id, &secrets, &outcome, r < 0 ? *err : NULL);
  ar_secret_set_clear (&secrets);
  if (req->result)
    *req->result
        = (ar_diff_result){ .changed = outcome.changed,
                            .withheld = outcome.withheld_paths,
                            .bundle = steal_pointer (&outcome.bundle) };
  return r;
}

void
ar_diff_result_clear (ar_diff_result *result)
{
  free (result->bundle);
  *result = (ar_diff_result){ 0 };
}
