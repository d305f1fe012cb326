/* The sandbox's workspace: a host directory the container sees at the same
 * path through an overlay of its own, whose upper layer lives in the
 * ephemeral tmpfs. The real directory is never written; what the agent
 * changed comes back as a unified diff. */
#include "config.h"
#include "agent.h"
#include "diff_withhold.h"
#include "hostfs.h"
#include "overlay.h"
#include "workspace.h"
#include "../util/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define WS_WORK "ws-work"
#define WS_DIFF "ws-diff"

static char *
overlay_child (const char *state_dir, const char *name)
{
  cleanup_free char *dir = ar_hostfs_join (state_dir, AR_OVERLAY_DIR);
  return ar_hostfs_join (dir, name);
}

int
ar_workspace_prepare (const ar_agent_plan *plan, const char *state_dir,
                      oci_spec *spec, ar_error_t **err)
{
  if (plan->workspace_host_dir == NULL)
    return 0;
  cleanup_free char *upper = overlay_child (state_dir, AR_OVERLAY_WS_UPPER);
  cleanup_free char *work = overlay_child (state_dir, WS_WORK);
  if ((mkdir (upper, 0755) < 0 && errno != EEXIST)
      || (mkdir (work, 0700) < 0 && errno != EEXIST))
    return ar_error_set (err, errno, "workspace: mkdir under `%s`", state_dir);

  char *options[] = {
    xasprintf ("lowerdir=%s", plan->workspace_host_dir),
    xasprintf ("upperdir=%s", upper),
    xasprintf ("workdir=%s", work),
    NULL,
  };
  char **items = xcalloc (4, sizeof *items);
  memcpy (items, options, sizeof options);
  spec->mounts = xrealloc (spec->mounts, (spec->n_mounts + 1) * sizeof *spec->mounts);
  spec->mounts[spec->n_mounts++] = (oci_mount){
    .destination = xstrdup (plan->workspace_host_dir),
    .source = xstrdup ("overlay"),
    .type = xstrdup ("overlay"),
    .options = { items, 3 },
  };
  return 0;
}

/* A read-only view needs no work dir: the upper layer becomes the top
 * lower layer, and its whiteouts hide what the agent deleted. */
static int
mount_views (const char *workspace, const char *upper, const char *a,
             const char *b, ar_error_t **err)
{
  if ((mkdir (a, 0700) < 0 && errno != EEXIST) || (mkdir (b, 0700) < 0 && errno != EEXIST))
    return ar_error_set (err, errno, "workspace diff: mkdir `%s`", a);
  if (mount (workspace, a, NULL, MS_BIND | MS_REC, NULL) < 0
      || mount (NULL, a, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) < 0)
    return ar_error_set (err, errno, "workspace diff: bind `%s`", workspace);
  cleanup_free char *data = xasprintf ("lowerdir=%s:%s", upper, workspace);
  if (mount ("overlay", b, "overlay", MS_RDONLY, data) < 0)
    return ar_error_set (err, errno, "workspace diff: mount the changed view");
  return 0;
}

/* diff(1) from diffutils (exit 0 same, 1 different, 2 trouble), its
 * output filtered on the way to the file. */
static int
run_diff (const char *cwd, const char *diff_path,
          const ar_secret_set *secrets, const ar_diff_withheld_list *withheld,
          ar_error_t **err)
{
  cleanup_close int out = open (diff_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0)
    return ar_error_set (err, errno, "--diff: create `%s`", diff_path);
  int fds[2];
  if (pipe2 (fds, O_CLOEXEC) < 0)
    return ar_error_set (err, errno, "--diff: pipe");
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (fds[0]);
      close (fds[1]);
      return ar_error_set (err, errno, "fork diff");
    }
  if (pid == 0)
    {
      if (chdir (cwd) < 0 || dup2 (fds[1], STDOUT_FILENO) < 0)
        _exit (2);
      execlp ("diff", "diff", "-urN", "--no-dereference", "a", "b", (char *) NULL);
      _exit (127);
    }
  close (fds[1]);
  int r = ar_diff_filter (fds[0], out, secrets, withheld, err);
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return ar_error_set (err, errno, "wait for diff");
  if (r == 0 && (!WIFEXITED (status) || WEXITSTATUS (status) > 1))
    return ar_error_set (err, 0, "--diff: diff(1) failed (status %d)",
                         WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status));
  return r;
}

/* What the export withholds from /output, the diff withholds too; the
 * audit log says what (as for /output). */
static int
diff_views (const ar_agent_plan *plan, const char *state_dir,
            const char *container_id, const char *upper, const char *dir, const char *diff_path,
            ar_error_t **err)
{
  cleanup_free char *a = ar_hostfs_join (dir, "a");
  cleanup_free char *b = ar_hostfs_join (dir, "b");
  ar_secret_set secrets = { 0 };
  if (ar_secrets_load (plan, state_dir, &secrets, err) < 0)
    return ar_error_prefix (err, "--diff: secrets");
  cleanup_diff_withheld ar_diff_withheld_list withheld = { 0 };
  cleanup_close int upper_fd = ar_hostfs_open_dir (upper, err);
  cleanup_close int a_fd = upper_fd < 0 ? -1 : ar_hostfs_open_dir (a, err);
  cleanup_close int b_fd = a_fd < 0 ? -1 : ar_hostfs_open_dir (b, err);
  int r = b_fd < 0 ? -1 : 0;
  if (r == 0)
    {
      ar_diff_find_withheld (&secrets, upper_fd, a_fd, b_fd, &withheld);
      r = run_diff (dir, diff_path, &secrets, &withheld, err);
    }
  ar_secret_set_clear (&secrets);
  if (r == 0 && withheld.n > 0 && plan->audit_path)
    {
      cleanup_free char *fields = ar_diff_withheld_fields_json (&withheld);
      r = ar_audit_append (plan->audit_path, container_id, "diff", fields, err);
    }
  return r;
}

int
ar_workspace_diff (const ar_agent_plan *plan, const char *state_dir,
                   const char *container_id, const char *diff_path,
                   ar_error_t **err)
{
  if (plan == NULL || plan->workspace_host_dir == NULL)
    return ar_error_set (err, 0, "--diff: the sandbox has no workspace");
  cleanup_free char *upper = overlay_child (state_dir, AR_OVERLAY_WS_UPPER);
  cleanup_free char *dir = overlay_child (state_dir, WS_DIFF);
  cleanup_free char *a = ar_hostfs_join (dir, "a");
  cleanup_free char *b = ar_hostfs_join (dir, "b");
  if (mkdir (dir, 0700) < 0 && errno != EEXIST)
    return ar_error_set (err, errno, "workspace diff: mkdir `%s`", dir);
  int r = mount_views (plan->workspace_host_dir, upper, a, b, err);
  if (r == 0)
    r = diff_views (plan, state_dir, container_id, upper, dir, diff_path, err);
  ar_hostfs_unmount_and_remove (b, NULL);
  ar_hostfs_unmount_and_remove (a, NULL);
  rmdir (dir);
  return r;
}
