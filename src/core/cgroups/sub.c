/* SPDX-License-Identifier: Apache-2.0 */
/* `exec --cgroup [<controller>:]<path>`: the new process goes into a
 * sub-cgroup the container (or its owner) made inside the container's
 * cgroup, instead of the container's cgroup itself. Nothing is created
 * here: the sub-cgroup must exist. */
#include "config.h"
#include "internal.h"
#include "../../util/cleanup.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

typedef struct
{
  char *controllers; /* "cpu,cpuacct"; NULL: every hierarchy */
  char *sub;         /* normalised: no "", ".", ".." components */
} sub_request;

/* "a//b/./c/" -> "a/b/c". ".." would reach a cgroup that is not the
 * container's, so it is refused rather than resolved. */
static int
normalize_sub (const char *sub, char **out, ar_error_t **err)
{
  cleanup_free char *copy = xstrdup (sub);
  char *joined = xcalloc (1, strlen (sub) + 1), *o = joined;
  for (char *save = NULL, *p = strtok_r (copy, "/", &save); p;
       p = strtok_r (NULL, "/", &save))
    {
      if (strcmp (p, ".") == 0)
        continue;
      if (strcmp (p, "..") == 0)
        {
          free (joined);
          return ar_error_set (err, 0,
                               "sub-cgroup \"%s\": \"..\" is not allowed, "
                               "the sub-cgroup must be inside the "
                               "container's cgroup",
                               sub);
        }
      o = stpcpy (stpcpy (o, o == joined ? "" : "/"), p);
    }
  if (*joined == '\0')
    {
      free (joined);
      return ar_error_set (err, 0, "sub-cgroup \"%s\": empty path", sub);
    }
  *out = joined;
  return 0;
}

static void
request_clear (sub_request *r)
{
  free (r->controllers);
  free (r->sub);
}

static int
make_request (const char *controllers, const char *sub, sub_request *out,
              ar_error_t **err)
{
  if (controllers && *controllers == '\0')
    controllers = NULL; /* ":path" is the plain form */
  if (normalize_sub (sub, &out->sub, err) < 0)
    return -1;
  out->controllers = controllers ? xstrdup (controllers) : NULL;
  return 0;
}

/* The mounted hierarchy holding `dir`, longest mount point first so that
 * /sys/fs/cgroup (pure v2) does not shadow /sys/fs/cgroup/pids. */
static const ar_cg_hierarchy *
hierarchy_of (const ar_cg_hierarchies *all, const char *dir)
{
  const ar_cg_hierarchy *best = NULL;
  for (size_t i = 0; i < all->len; i++)
    {
      const char *mp = all->items[i].mount_point;
      size_t n = strlen (mp);
      if (strncmp (dir, mp, n) == 0 && dir[n] == '/'
          && (best == NULL || n > strlen (best->mount_point)))
        best = &all->items[i];
    }
  return best;
}

/* `word` as a whole word of the space-separated `list`. */
static bool
word_in (const char *list, const char *word)
{
  size_t n = strlen (word);
  for (const char *p = list; (p = strstr (p, word)); p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
      return true;
  return false;
}

/* Whether the container's cgroup `dir` has one of `names` (comma list):
 * v1 by the hierarchy's controllers, v2 by what reaches the leaf. */
static bool
dir_has_controller (const ar_cg_hierarchies *all, const char *dir,
                    const char *names)
{
  const ar_cg_hierarchy *h = hierarchy_of (all, dir);
  if (h == NULL)
    return false;
  cleanup_free char *leaf_list = NULL;
  cleanup_error ar_error_t *ignored = NULL;
  if (h->version == AR_CG_V2
      && ar_cg_read (dir, "cgroup.controllers", &leaf_list, &ignored) < 0)
    return false;
  cleanup_free char *copy = xstrdup (names);
  for (char *save = NULL, *c = strtok_r (copy, ",", &save); c;
       c = strtok_r (NULL, ",", &save))
    {
      if (h->version == AR_CG_V1 && ar_cg_has_controller (h, c))
        return true;
      if (h->version == AR_CG_V2 && word_in (leaf_list, c))
        return true;
    }
  return false;
}

static int
sub_exists (const char *target, const sub_request *r, ar_error_t **err)
{
  struct stat st;
  if (stat (target, &st) == 0 && S_ISDIR (st.st_mode))
    return 0;
  return ar_error_set (err, 0,
                       "sub-cgroup \"%s\" does not exist in the container's "
                       "cgroup: no `%s`",
                       r->sub, target);
}

/* Decide, for every directory of the container, where the process goes:
 * plain requests first (they apply everywhere), then controller-specific
 * ones, which override them. targets[i] stays NULL where nothing asks. */
static int
resolve_targets (const ar_cgroup *cg, const sub_request *reqs, size_t n,
                 char **targets, ar_error_t **err)
{
  ar_cg_hierarchies all __attribute__ ((cleanup (ar_cg_hierarchies_clear)))
  = { 0 };
  for (int pass = 0; pass < 2; pass++)
    for (size_t j = 0; j < n; j++)
      {
        const sub_request *r = &reqs[j];
        if ((r->controllers != NULL) != (pass == 1))
          continue;
        if (r->controllers && all.len == 0 && ar_cg_discover (&all, err) < 0)
          return -1;
        bool matched = false;
        for (size_t i = 0; i < cg->n_paths; i++)
          {
            if (r->controllers
                && !dir_has_controller (&all, cg->paths[i], r->controllers))
              continue;
            matched = true;
            free (targets[i]);
            targets[i] = xasprintf ("%s/%s", cg->paths[i], r->sub);
            if (sub_exists (targets[i], r, err) < 0)
              return -1;
          }
        if (!matched)
          return ar_error_set (err, 0,
                               "sub-cgroup \"%s:%s\": the container has no "
                               "cgroup with the %s controller",
                               r->controllers ? r->controllers : "", r->sub,
                               r->controllers ? r->controllers : "any");
      }
  return 0;
}

/* Every target is checked before the first write, so a bad request leaves
 * the process where it was. Directories without a target get `fallback`
 * (the container's cgroup) or are left alone. */
static int
enter_targets (const ar_cgroup *cg, const sub_request *reqs, size_t n,
               bool fallback, pid_t pid, ar_error_t **err)
{
  char **targets = xcalloc (cg->n_paths + 1, sizeof *targets);
  int ret = resolve_targets (cg, reqs, n, targets, err);
  for (size_t i = 0; ret == 0 && i < cg->n_paths; i++)
    {
      const char *dir = targets[i] ? targets[i]
                        : fallback ? cg->paths[i]
                                   : NULL;
      if (dir)
        ret = ar_cg_writef (dir, "cgroup.procs", err, "%d", (int) pid);
    }
  for (size_t i = 0; i < cg->n_paths; i++)
    free (targets[i]);
  free (targets);
  return ret;
}

int
ar_cgroup_enter_subs (const ar_cgroup *cg, char *const *specs, size_t n,
                      pid_t pid, ar_error_t **err)
{
  sub_request *reqs = xcalloc (n + 1, sizeof *reqs);
  int ret = 0;
  for (size_t i = 0; i < n && ret == 0; i++)
    {
      /* "[<controller>[,<controller>...]:]<path>" */
      const char *colon = strchr (specs[i], ':');
      cleanup_free char *controllers
          = colon ? xstrndup (specs[i], (size_t) (colon - specs[i])) : NULL;
      ret = make_request (controllers, colon ? colon + 1 : specs[i], &reqs[i],
                          err);
    }
  if (ret == 0)
    ret = enter_targets (cg, reqs, n, true, pid, err);
  for (size_t i = 0; i < n; i++)
    request_clear (&reqs[i]);
  free (reqs);
  return ret;
}
