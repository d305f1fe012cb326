/* SPDX-License-Identifier: Apache-2.0 */
/* The egress hook's two verbs, for hooks/agentrun-egress.c (any runtime)
 * and for agentrun itself, which runs its own hook in-process.
 *
 *   createRuntime: agentrun-egress create --mode none|allowlist|open|ask
 *                    [--allow ENTRY]... [--ingress PORT[/udp]]...
 *                    [--upstream ADDR[:PORT]]
 *                    [--approver SOCKET] [--ask-timeout SECONDS]
 *                    [--audit FILE] [--pool CIDR] [--state-dir DIR]
 *   poststop:      agentrun-egress delete [--state-dir DIR]
 *
 * The container's state (id, pid) comes as the runtime-spec says (on
 * the hook's stdin). createRuntime runs after the container's namespaces exist and
 * before its process does anything, so the first connect() of the
 * workload is already filtered. See egress.h for what is made where. */
#include "config.h"
#include "egress.h"
#include "egress_gate.h"
#include "../src/util/cleanup.h"
#include "../src/util/userns.h"
#include "../src/util/fs.h"
#include "../src/util/proc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yajl/yajl_tree.h>

#define DEFAULT_POOL "10.213.0.0/16"

typedef struct
{
  const char *action;
  egress_mode mode;
  egress_allowlist allow;
  egress_ingress *ingress; /* ports let in */
  size_t n_ingress;
  bool ask;             /* mode ask: allowlist, and the approver decides */
  const char *approver; /* its socket */
  unsigned ask_timeout; /* seconds */
  const char *upstream;
  const char *audit;
  const char *pool;
  const char *state_dir;
  bool netns_owned;
  bool resolver_in_thread; /* not an option: the in-process caller's say */
} options;

typedef struct
{
  char *id;
  pid_t pid;
} container_state;

/* ---- helpers shared with the other modules ---------------------------- */

char *
egress_state_dir (const char *base, const char *id)
{
  /* Without root, beside the user's other runtime state. */
  const char *xdg = getenv ("XDG_RUNTIME_DIR");
  if (base == NULL && ar_userns_unprivileged () && xdg && xdg[0] == '/')
    return xasprintf ("%s/agentrun-egress/%s", xdg, id);
  return base ? xstrdup (base) : xasprintf ("%s/%s", EGRESS_RUN_DIR, id);
}

/* ---- input ------------------------------------------------------------ */

/* "ask" is an allowlist whose other names go to the approver. */
static int
parse_mode (const char *text, options *o, ar_error_t **err)
{
  static const char *const names[] = { "none", "allowlist", "open" };
  o->ask = strcmp (text, "ask") == 0;
  if (o->ask)
    text = "allowlist";
  for (int i = 0; i < 3; i++)
    if (strcmp (text, names[i]) == 0)
      {
        o->mode = (egress_mode) i;
        return 0;
      }
  return ar_error_set (err, 0, "--mode `%s`: want none, allowlist, open or ask",
                       text);
}

static int
parse_ask_timeout (const char *text, unsigned *out, ar_error_t **err)
{
  char *end = NULL;
  errno = 0;
  unsigned long n = strtoul (text, &end, 10);
  if (errno || end == text || *end || n == 0 || n > EGRESS_ASK_TIMEOUT_MAX)
    return ar_error_set (err, 0, "--ask-timeout `%s`: want seconds, 1 to %d",
                         text, EGRESS_ASK_TIMEOUT_MAX);
  *out = (unsigned) n;
  return 0;
}

static int
add_entry (options *o, const char *text, ar_error_t **err)
{
  egress_entry e;
  if (egress_entry_parse ("--allow", text, &e, err) < 0)
    return -1;
  o->allow.items = xrealloc (o->allow.items, (o->allow.len + 1) * sizeof e);
  o->allow.items[o->allow.len++] = e;
  return 0;
}

static int
add_ingress (options *o, const char *text, ar_error_t **err)
{
  egress_ingress in;
  if (egress_ingress_parse ("--ingress", text, &in, err) < 0)
    return -1;
  o->ingress = xrealloc (o->ingress, (o->n_ingress + 1) * sizeof in);
  o->ingress[o->n_ingress++] = in;
  return 0;
}

static int
set_option (options *o, const char *name, const char *value, ar_error_t **err)
{
  if (strcmp (name, "mode") == 0)
    return parse_mode (value, o, err);
  if (strcmp (name, "ask-timeout") == 0)
    return parse_ask_timeout (value, &o->ask_timeout, err);
  if (strcmp (name, "allow") == 0)
    return add_entry (o, value, err);
  if (strcmp (name, "ingress") == 0)
    return add_ingress (o, value, err);
  const char **slot = strcmp (name, "upstream") == 0    ? &o->upstream
                      : strcmp (name, "audit") == 0     ? &o->audit
                      : strcmp (name, "pool") == 0      ? &o->pool
                      : strcmp (name, "state-dir") == 0 ? &o->state_dir
                      : strcmp (name, "approver") == 0  ? &o->approver
                                                        : NULL;
  if (slot == NULL)
    return ar_error_set (err, 0, "unknown option `--%s`", name);
  *slot = value;
  return 0;
}

/* "--name value" or "--name=value" pairs after the verb. Parsed by hand:
 * the runtime calls this in-process, where getopt's global state and its
 * reordering of argv are not welcome. */
static int
parse_options (int argc, char **argv, options *o, ar_error_t **err)
{
  *o = (options){ .mode = EGRESS_MODE_NONE,
                  .pool = DEFAULT_POOL,
                  .ask_timeout = EGRESS_ASK_TIMEOUT_DEFAULT };
  if (argc < 2
      || (strcmp (argv[1], "create") != 0 && strcmp (argv[1], "delete") != 0))
    return ar_error_set (
        err, 0,
        "usage: agentrun-egress create|delete [--mode none|allowlist|open|ask] [--allow ENTRY]... [--ingress PORT[/udp]]... [--approver SOCKET] [--ask-timeout SECONDS] [--upstream ADDR] [--audit FILE] [--pool CIDR] [--state-dir DIR] [--netns-owned] < state.json");
  o->action = argv[1];
  for (int i = 2; i < argc; i++)
    {
      if (strcmp (argv[i], "--netns-owned") == 0)
        {
          o->netns_owned = true; /* the one option without a value */
          continue;
        }
      if (strncmp (argv[i], "--", 2) != 0)
        return ar_error_set (err, 0, "unexpected argument `%s`", argv[i]);
      cleanup_free char *name = xstrdup (argv[i] + 2);
      char *eq = strchr (name, '=');
      const char *value = eq ? argv[i] + 2 + (eq - name) + 1 : argv[i + 1];
      if (eq)
        *eq = '\0';
      else if (++i >= argc)
        return ar_error_set (err, 0, "option `--%s` needs a value", name);
      if (set_option (o, name, value, err) < 0)
        return -1;
    }
  if (o->ask != (o->approver != NULL))
    return ar_error_set (err, 0,
                         o->ask ? "--mode ask needs --approver SOCKET"
                                : "--approver needs --mode ask");
  if (o->approver && o->approver[0] != '/')
    return ar_error_set (err, 0, "--approver `%s`: want an absolute path",
                         o->approver);
  /* Tests and hosts whose resolv.conf is no use name the upstream here. */
  if (o->upstream == NULL)
    o->upstream = secure_getenv ("AGENTRUN_EGRESS_UPSTREAM");
  return 0;
}

/* Names end up in paths and link names: the runtime-spec leaves ids to
 * the runtime, so refuse what could escape the state dir. */
static int
check_id (const char *id, ar_error_t **err)
{
  if (*id == '\0' || strlen (id) > 1024 || strchr (id, '/')
      || strcmp (id, ".") == 0 || strcmp (id, "..") == 0 || strchr (id, ' '))
    return ar_error_set (err, 0, "container id `%s` is not usable as a name",
                         id);
  return 0;
}

static int
parse_state (const char *json, container_state *st, bool need_pid,
             ar_error_t **err)
{
  char msg[256];
  yajl_val tree = yajl_tree_parse (json, msg, sizeof msg);
  if (tree == NULL)
    return ar_error_set (err, 0, "container state on stdin: %s", msg);
  const char *id_path[] = { "id", NULL };
  const char *pid_path[] = { "pid", NULL };
  yajl_val id = yajl_tree_get (tree, id_path, yajl_t_string);
  yajl_val pid = yajl_tree_get (tree, pid_path, yajl_t_number);
  int r = 0;
  if (id == NULL)
    r = ar_error_set (err, 0, "container state on stdin: no \"id\"");
  else if (need_pid
           && (pid == NULL || !YAJL_IS_INTEGER (pid)
               || YAJL_GET_INTEGER (pid) <= 0))
    r = ar_error_set (
        err, 0, "container state on stdin: no \"pid\" of a running container");
  else
    {
      st->id = xstrdup (YAJL_GET_STRING (id));
      st->pid
          = pid && YAJL_IS_INTEGER (pid) ? (pid_t) YAJL_GET_INTEGER (pid) : 0;
    }
  yajl_tree_free (tree);
  return r < 0 ? r : check_id (st->id, err);
}

/* ---- create ----------------------------------------------------------- */

typedef struct
{
  const options *o;
  const container_state *st;
  char hash[9];
  char host_link[16];
  char *dir;
  int host_ns, ctr_ns;
  bool engine_netns;
  egress_lease lease;
  bool leased;
  egress_filter filter;
  int gate_fds[EGRESS_GATE_FDS]; /* the name gate's, until the resolver */
} create_ctx;

static bool
same_netns (int a, int b)
{
  struct stat sa, sb;
  return fstat (a, &sa) == 0 && fstat (b, &sb) == 0 && sa.st_ino == sb.st_ino
         && sa.st_dev == sb.st_dev;
}

/* Whether the container's init is in a user namespace other than ours. */
static bool
in_own_userns (pid_t pid)
{
  struct stat ours, theirs;
  cleanup_free char *path = xasprintf ("/proc/%d/ns/user", (int) pid);
  return stat ("/proc/self/ns/user", &ours) == 0 && stat (path, &theirs) == 0
         && (ours.st_ino != theirs.st_ino || ours.st_dev != theirs.st_dev);
}

/* A container in a user namespace of its own holds CAP_NET_BIND_SERVICE
 * there, but a netns it joins that an engine made (a pod's, by CNI)
 * belongs to the host's: ports below 1024 would refuse the pod's web
 * server. They guard nothing in a netns of the pod's own, so they are
 * opened there, as Docker does for its containers and containerd's
 * enable_unprivileged_ports for pods; a sysctl in the spec still wins
 * (the runtime writes it later). */
static void
open_low_ports (const create_ctx *c)
{
  if (c->o->netns_owned || !in_own_userns (c->st->pid))
    return;
  /* A web server that cannot bind is the pod's to report; the filter
   * must not fail for it. */
  cleanup_error ar_error_t *e = NULL;
  if (ar_proc_write (AT_FDCWD, "/proc/sys/net/ipv4/ip_unprivileged_port_start",
                     "0", 1, &e)
      < 0)
    fprintf (stderr, "agentrun: warning: egress: ports below 1024: %s\n",
             ar_error_text (e));
}

/* lo up for every mode; note whether an engine already wired the netns. */
static int
inspect_in_netns (void *arg, ar_error_t **err)
{
  create_ctx *c = arg;
  int r = egress_link_up ("lo", err);
  if (r == 0)
    open_low_ports (c);
  c->engine_netns = egress_netns_has_links ();
  if (c->engine_netns)
    c->filter.has_gateway = egress_default_gateway (&c->filter.gateway);
  return r;
}

/* A fresh netns with only lo is "none" now, but an engine may wire it
 * later: its filter is all it gets (no state dir, no veth, no resolver),
 * and it goes with the netns. */
static bool
filter_only (const create_ctx *c)
{
  return c->o->mode == EGRESS_MODE_NONE && !c->engine_netns;
}

/* lo up and, when that is all the netns gets, its filter: one visit (one
 * thread) instead of two. */
static int
inspect_in_netns_and_filter (void *arg, ar_error_t **err)
{
  create_ctx *c = arg;
  if (inspect_in_netns (c, err) < 0)
    return -1;
  if (!filter_only (c))
    return 0;
  c->filter.nflog_group = -1;
  c->filter.fresh_netns = c->o->netns_owned;
  return egress_nft_container_filter (&c->filter, err);
}

static int
inspect_container_netns (create_ctx *c, ar_error_t **err)
{
  return egress_in_netns (c->ctr_ns, inspect_in_netns_and_filter, c, err);
}

static int
enable_forwarding (ar_error_t **err)
{
  cleanup_free char *now = NULL;
  const char *path = "/proc/sys/net/ipv4/ip_forward";
  if (ar_read_file_at (AT_FDCWD, path, 16, &now, NULL, NULL) == 0
      && now[0] == '1')
    return 0;
  return ar_proc_write (AT_FDCWD, path, "1", 1, err);
}

static int
configure_in_netns (void *arg, ar_error_t **err)
{
  const create_ctx *c = arg;
  return egress_addr_add ("eth0", c->lease.container, 30, err) == 0
                 && egress_link_up ("eth0", err) == 0
                 && egress_route_default ("eth0", c->lease.host, err) == 0
             ? 0
             : -1;
}

static int
configure_container_side (create_ctx *c, ar_error_t **err)
{
  return egress_in_netns (c->ctr_ns, configure_in_netns, c, err);
}

/* A veth to the host, addressed from the pool, NAT and forwarding. */
static int
connect_to_host (create_ctx *c, ar_error_t **err)
{
  if (egress_lease_take (c->o->pool, c->st->id, c->st->pid, c->hash, &c->lease,
                         err)
      < 0)
    return -1;
  c->leased = true;
  /* "<index>", and "owned" when the netns lives and dies with the
   * container: its veth then goes with it, nobody has to wait for that. */
  cleanup_free char *index
      = xasprintf ("%u%s\n", c->lease.index, c->o->netns_owned ? " owned" : "");
  cleanup_free char *lease_path = xasprintf ("%s/lease", c->dir);
  if (ar_write_file_atomic_at (AT_FDCWD, lease_path, index, strlen (index),
                               0600, err)
          < 0
      || egress_veth_create (c->host_link, c->ctr_ns, err) < 0
      || egress_addr_add (c->host_link, c->lease.host, 30, err) < 0
      || egress_link_up (c->host_link, err) < 0 || enable_forwarding (err) < 0)
    return -1;
  c->filter.has_host_addr = true;
  c->filter.host_addr = c->lease.host;
  return configure_container_side (c, err);
}

/* Names open addresses, and TCP to those goes through the name gate:
 * in allowlist mode with name entries, and in mode ask. */
static bool
wants_gate (const create_ctx *c)
{
  return c->o->mode != EGRESS_MODE_OPEN
         && (c->o->ask || egress_allowlist_has_domains (&c->o->allow));
}

static int
filter_in_netns (void *arg, ar_error_t **err)
{
  create_ctx *c = arg;
  c->filter.gate = wants_gate (c);
  if (c->filter.gate
      && egress_gate_open (c->gate_fds, &c->filter.gate_queue, err) < 0)
    return -1;
  return egress_nft_container_filter (&c->filter, err);
}

static int
install_filter (create_ctx *c, ar_error_t **err)
{
  return egress_in_netns (c->ctr_ns, filter_in_netns, c, err);
}

static int
start_resolver (create_ctx *c, ar_error_t **err)
{
  bool open = c->o->mode == EGRESS_MODE_OPEN;
  /* Without names to answer and no audit log to write refusals to, no
   * process: resolv.conf still points at lo and lookups fail at once. */
  if (!open && !c->o->ask && !egress_allowlist_has_domains (&c->o->allow)
      && c->o->audit == NULL)
    return 0;
  egress_resolver_config cfg = {
    .id = c->st->id,
    .container_pid = c->st->pid,
    .allow = &c->o->allow,
    .forward_all = open,
    .upstream = c->o->upstream,
    .audit_path = c->o->audit,
    .approver = c->o->approver,
    .ask_timeout = c->o->ask_timeout,
    .state_dir = c->dir,
    .container_netns_fd = c->ctr_ns,
    .log_refusals = c->filter.nflog_group >= 0,
    .in_thread = c->o->resolver_in_thread,
    .gate_queue = c->filter.gate_queue,
  };
  for (int i = 0; i < EGRESS_GATE_FDS; i++)
    cfg.gate_fds[i] = steal_fd (&c->gate_fds[i]); /* the resolver's now */
  return egress_resolver_start (&cfg, err);
}

static int
write_resolv_conf (const create_ctx *c, ar_error_t **err)
{
  cleanup_free char *path = xasprintf ("%s/resolv.conf", c->dir);
  return ar_write_file_atomic_at (AT_FDCWD, path, EGRESS_RESOLV_CONF,
                                  strlen (EGRESS_RESOLV_CONF), 0644, err);
}

/* A fresh netns gets a way out: a veth to the host, or without root (no
 * veth, no NAT, no shared lease pool) pasta. */
static int
connect_fresh_netns (create_ctx *c, ar_error_t **err)
{
  if (ar_userns_unprivileged ())
    {
      /* Reached through pasta as the user's own connections: refused in
       * the filter, as the veth's host table refuses them with root. */
      c->filter.host_addrs = egress_local_addresses (&c->filter.n_host_addrs);
      return egress_pasta_connect (c->st->pid, c->dir, err);
    }
  if (ar_mkdir_p (EGRESS_RUN_DIR, 0711, err) < 0)
    return -1;
  return connect_to_host (c, err);
}

static int
set_up (create_ctx *c, ar_error_t **err)
{
  if (ar_mkdir_p (c->dir, 0711, err) < 0)
    return -1;
  if (!c->engine_netns && connect_fresh_netns (c, err) < 0)
    return -1;
  if (install_filter (c, err) < 0 || start_resolver (c, err) < 0)
    return -1;
  return write_resolv_conf (c, err);
}

static void
undo_create (create_ctx *c)
{
  egress_cleanup_host (c->o->pool, c->st->id, c->o->state_dir,
                       c->leased ? (long) c->lease.index : -1);
  if (c->leased)
    egress_lease_release (c->st->id, c->lease.index);
}

static int
cmd_create (const options *o, const container_state *st, ar_error_t **err)
{
  create_ctx c
      = { .o = o,
          .st = st,
          .host_ns = -1,
          .ctr_ns = -1,
          .gate_fds = { -1, -1, -1 },
          .filter = { .mode = o->mode,
                      .allow = &o->allow,
                      .ingress = o->ingress,
                      .n_ingress = o->n_ingress,
                      .nflog_group = o->audit ? EGRESS_NFLOG_GROUP : -1,
                      .ask = o->ask } };
  egress_id_hash (st->id, c.hash);
  snprintf (c.host_link, sizeof c.host_link, "ar%s", c.hash);
  c.host_ns = open ("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (c.host_ns < 0)
    return ar_error_set (err, errno, "open /proc/self/ns/net");
  int r = -1;
  if (egress_open_netns (st->pid, &c.ctr_ns, err) < 0)
    goto out;
  if (same_netns (c.host_ns, c.ctr_ns))
    {
      if (o->mode == EGRESS_MODE_OPEN)
        r = 0;
      else
        ar_error_set (
            err, 0,
            "the container shares the host's network namespace: mode %s needs one of its own",
            o->mode == EGRESS_MODE_NONE ? "none" : "allowlist");
      goto out;
    }
  /* After a visit that installed the filter too, nothing is left. */
  r = inspect_container_netns (&c, err);
  if (r < 0 || filter_only (&c))
    goto out;
  c.dir = egress_state_dir (o->state_dir, st->id);
  if (access (c.dir, F_OK) == 0)
    egress_cleanup_host (o->pool, st->id, o->state_dir,
                         -1); /* a previous container of this id */
  r = set_up (&c, err);
  if (r < 0)
    undo_create (&c);
out:
  ar_closep (&c.host_ns);
  ar_closep (&c.ctr_ns);
  for (int i = 0; i < EGRESS_GATE_FDS; i++)
    ar_closep (&c.gate_fds[i]);
  free (c.dir);
  ar_strv_freep (&c.filter.host_addrs);
  return r;
}

/* ---- delete ----------------------------------------------------------- */

static int
cmd_delete (const options *o, const container_state *st)
{
  long index = egress_cleanup_host (o->pool, st->id, o->state_dir, -1);
  if (index >= 0)
    egress_lease_release (st->id, (unsigned) index);
  return 0;
}

int
egress_hook_run (int argc, char **argv, const char *state_json,
                 bool caller_stays, ar_error_t **err)
{
  options o;
  container_state st = { 0 };
  int r = -1;
  if (parse_options (argc, argv, &o, err) == 0
      && parse_state (state_json, &st, strcmp (o.action, "create") == 0, err)
             == 0)
    {
      o.resolver_in_thread = caller_stays;
      r = strcmp (o.action, "create") == 0 ? cmd_create (&o, &st, err)
                                           : cmd_delete (&o, &st);
    }
  egress_allowlist_free (&o.allow);
  free (o.ingress);
  free (st.id);
  return r;
}
