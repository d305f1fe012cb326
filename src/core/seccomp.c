#include "config.h"
#include "seccomp.h"
#include "../util/cleanup.h"
#include "../util/fs.h"

#include <errno.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

/* Every error names the place in config.json, as the oci/ parser does. */
#define JSON_PREFIX "config.json: .linux.seccomp"

/* The name tables are searched linearly: they are short, and a profile
 * names each entry at most a few hundred times. */

typedef enum
{
  ACTION_KILL_THREAD,
  ACTION_KILL_PROCESS,
  ACTION_TRAP,
  ACTION_ERRNO,
  ACTION_TRACE,
  ACTION_ALLOW,
  ACTION_LOG,
  ACTION_NOTIFY,
} action_kind;

static const struct
{
  const char *name;
  action_kind kind;
} action_names[] = {
  { "SCMP_ACT_KILL", ACTION_KILL_THREAD },
  { "SCMP_ACT_KILL_THREAD", ACTION_KILL_THREAD },
  { "SCMP_ACT_KILL_PROCESS", ACTION_KILL_PROCESS },
  { "SCMP_ACT_TRAP", ACTION_TRAP },
  { "SCMP_ACT_ERRNO", ACTION_ERRNO },
  { "SCMP_ACT_TRACE", ACTION_TRACE },
  { "SCMP_ACT_ALLOW", ACTION_ALLOW },
  { "SCMP_ACT_LOG", ACTION_LOG },
  { "SCMP_ACT_NOTIFY", ACTION_NOTIFY },
};

static const struct
{
  const char *name;
  uint32_t token;
} arch_names[] = {
  { "SCMP_ARCH_X86", SCMP_ARCH_X86 },
  { "SCMP_ARCH_X86_64", SCMP_ARCH_X86_64 },
  { "SCMP_ARCH_X32", SCMP_ARCH_X32 },
  { "SCMP_ARCH_ARM", SCMP_ARCH_ARM },
  { "SCMP_ARCH_AARCH64", SCMP_ARCH_AARCH64 },
  { "SCMP_ARCH_MIPS", SCMP_ARCH_MIPS },
  { "SCMP_ARCH_MIPS64", SCMP_ARCH_MIPS64 },
  { "SCMP_ARCH_MIPS64N32", SCMP_ARCH_MIPS64N32 },
  { "SCMP_ARCH_MIPSEL", SCMP_ARCH_MIPSEL },
  { "SCMP_ARCH_MIPSEL64", SCMP_ARCH_MIPSEL64 },
  { "SCMP_ARCH_MIPSEL64N32", SCMP_ARCH_MIPSEL64N32 },
  { "SCMP_ARCH_PPC", SCMP_ARCH_PPC },
  { "SCMP_ARCH_PPC64", SCMP_ARCH_PPC64 },
  { "SCMP_ARCH_PPC64LE", SCMP_ARCH_PPC64LE },
  { "SCMP_ARCH_S390", SCMP_ARCH_S390 },
  { "SCMP_ARCH_S390X", SCMP_ARCH_S390X },
  { "SCMP_ARCH_PARISC", SCMP_ARCH_PARISC },
  { "SCMP_ARCH_PARISC64", SCMP_ARCH_PARISC64 },
  { "SCMP_ARCH_RISCV64", SCMP_ARCH_RISCV64 },
#ifdef SCMP_ARCH_LOONGARCH64
  { "SCMP_ARCH_LOONGARCH64", SCMP_ARCH_LOONGARCH64 },
#endif
};

static const struct
{
  const char *name;
  enum scmp_compare op;
} operator_names[] = {
  { "SCMP_CMP_NE", SCMP_CMP_NE },
  { "SCMP_CMP_LT", SCMP_CMP_LT },
  { "SCMP_CMP_LE", SCMP_CMP_LE },
  { "SCMP_CMP_EQ", SCMP_CMP_EQ },
  { "SCMP_CMP_GE", SCMP_CMP_GE },
  { "SCMP_CMP_GT", SCMP_CMP_GT },
  { "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
};

/* Filter flags map to libseccomp attributes; `attr` < 0 marks a flag we
 * know but this libseccomp cannot set. */
static const struct
{
  const char *name;
  int attr;
} flag_names[] = {
  { "SECCOMP_FILTER_FLAG_TSYNC", SCMP_FLTATR_CTL_TSYNC },
  { "SECCOMP_FILTER_FLAG_LOG", SCMP_FLTATR_CTL_LOG },
  { "SECCOMP_FILTER_FLAG_SPEC_ALLOW", SCMP_FLTATR_CTL_SSB },
#if SCMP_VER_MAJOR > 2 || (SCMP_VER_MAJOR == 2 && SCMP_VER_MINOR >= 6)
  { "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", SCMP_FLTATR_CTL_WAITKILL },
#else
  { "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", -1 },
#endif
};

#define N_ELEMENTS(a) (sizeof (a) / sizeof ((a)[0]))

/* A syscall rule has at most six arguments. */
#define MAX_SYSCALL_ARGS 6

static int
lookup_action (const char *name, action_kind *kind)
{
  for (size_t i = 0; name && i < N_ELEMENTS (action_names); i++)
    if (strcmp (action_names[i].name, name) == 0)
      {
        *kind = action_names[i].kind;
        return 0;
      }
  return -1;
}

static int
lookup_arch (const char *name, uint32_t *token)
{
  for (size_t i = 0; i < N_ELEMENTS (arch_names); i++)
    if (strcmp (arch_names[i].name, name) == 0)
      {
        *token = arch_names[i].token;
        return 0;
      }
  return -1;
}

static int
lookup_operator (const char *name, enum scmp_compare *op)
{
  for (size_t i = 0; name && i < N_ELEMENTS (operator_names); i++)
    if (strcmp (operator_names[i].name, name) == 0)
      {
        *op = operator_names[i].op;
        return 0;
      }
  return -1;
}

static int
lookup_flag (const char *name, int *attr)
{
  for (size_t i = 0; i < N_ELEMENTS (flag_names); i++)
    if (strcmp (flag_names[i].name, name) == 0)
      {
        *attr = flag_names[i].attr;
        return 0;
      }
  return -1;
}

/* `where` is the JSON path below .linux.seccomp, e.g. ".syscalls[3]". */
static int
check_action (const char *name, bool is_default, const char *where,
              ar_error_t **err)
{
  action_kind kind;
  if (name == NULL)
    return ar_error_set (err, 0, JSON_PREFIX "%s: missing action", where);
  if (lookup_action (name, &kind) < 0)
    return ar_error_set (err, 0, JSON_PREFIX "%s: unknown action \"%s\"",
                         where, name);
  /* The listener could never be told about the process that the default
   * action would stop at its very first unlisted syscall. */
  if (is_default && kind == ACTION_NOTIFY)
    return ar_error_set (err, 0,
                         JSON_PREFIX "%s: SCMP_ACT_NOTIFY cannot be the "
                                     "default action",
                         where);
  return 0;
}

static int
check_syscall (const oci_syscall *sc, size_t index, bool *uses_notify,
               ar_error_t **err)
{
  char where[64];
  snprintf (where, sizeof where, ".syscalls[%zu].action", index);
  if (check_action (sc->action, false, where, err) < 0)
    return -1;
  action_kind kind;
  lookup_action (sc->action, &kind);
  if (kind == ACTION_NOTIFY)
    *uses_notify = true;

  for (size_t a = 0; a < sc->n_args; a++)
    {
      enum scmp_compare op;
      if (sc->args[a].index >= MAX_SYSCALL_ARGS)
        return ar_error_set (err, 0,
                             JSON_PREFIX ".syscalls[%zu].args[%zu].index: "
                                         "%u is out of range (0-5)",
                             index, a, sc->args[a].index);
      if (lookup_operator (sc->args[a].op, &op) < 0)
        return ar_error_set (err, 0,
                             JSON_PREFIX ".syscalls[%zu].args[%zu].op: "
                                         "unknown operator \"%s\"",
                             index, a,
                             sc->args[a].op ? sc->args[a].op : "");
    }
  return 0;
}

int
ar_seccomp_validate (const oci_seccomp *seccomp, ar_error_t **err)
{
  if (seccomp == NULL)
    return 0;
  if (check_action (seccomp->default_action, true, ".defaultAction", err) < 0)
    return -1;

  for (size_t i = 0; i < seccomp->architectures.len; i++)
    {
      uint32_t token;
      if (lookup_arch (seccomp->architectures.items[i], &token) < 0)
        return ar_error_set (err, 0,
                             JSON_PREFIX ".architectures[%zu]: unknown "
                                         "architecture \"%s\"",
                             i, seccomp->architectures.items[i]);
    }

  for (size_t i = 0; i < seccomp->flags.len; i++)
    {
      int attr;
      const char *flag = seccomp->flags.items[i];
      if (lookup_flag (flag, &attr) < 0)
        return ar_error_set (err, 0,
                             JSON_PREFIX ".flags[%zu]: unknown flag \"%s\"",
                             i, flag);
      if (attr < 0)
        return ar_error_set (err, 0,
                             JSON_PREFIX ".flags[%zu]: \"%s\" is not "
                                         "supported by this libseccomp",
                             i, flag);
    }

  bool uses_notify = false;
  for (size_t i = 0; i < seccomp->n_syscalls; i++)
    if (check_syscall (&seccomp->syscalls[i], i, &uses_notify, err) < 0)
      return -1;

  if (uses_notify
      && (seccomp->listener_path == NULL || seccomp->listener_path[0] == '\0'))
    return ar_error_set (err, 0,
                         JSON_PREFIX ".listenerPath: required when an action "
                                     "is SCMP_ACT_NOTIFY");
  return 0;
}

/* runc's defaults: errnoRet absent means EPERM, for TRACE too. */
static uint32_t
action_value (action_kind kind, const oci_opt_u32 *errno_ret)
{
  uint32_t ret = errno_ret->set ? errno_ret->value : EPERM;
  switch (kind)
    {
    case ACTION_KILL_THREAD:
      return SCMP_ACT_KILL_THREAD;
    case ACTION_KILL_PROCESS:
      return SCMP_ACT_KILL_PROCESS;
    case ACTION_TRAP:
      return SCMP_ACT_TRAP;
    case ACTION_ERRNO:
      return SCMP_ACT_ERRNO (ret);
    case ACTION_TRACE:
      return SCMP_ACT_TRACE (ret);
    case ACTION_ALLOW:
      return SCMP_ACT_ALLOW;
    case ACTION_LOG:
      return SCMP_ACT_LOG;
    case ACTION_NOTIFY:
      return SCMP_ACT_NOTIFY;
    }
  return SCMP_ACT_KILL_PROCESS;
}

static void
release_filter (scmp_filter_ctx *ctx)
{
  if (*ctx)
    seccomp_release (*ctx);
  *ctx = NULL;
}
#define cleanup_filter __attribute__ ((cleanup (release_filter)))

static int
add_architectures (scmp_filter_ctx ctx, const oci_seccomp *seccomp,
                   ar_error_t **err)
{
  for (size_t i = 0; i < seccomp->architectures.len; i++)
    {
      uint32_t token;
      const char *name = seccomp->architectures.items[i];
      if (lookup_arch (name, &token) < 0)
        return ar_error_set (err, 0,
                             JSON_PREFIX ".architectures[%zu]: unknown "
                                         "architecture \"%s\"",
                             i, name);
      /* The native architecture is in every new filter already. */
      int r = seccomp_arch_add (ctx, token);
      if (r < 0 && r != -EEXIST)
        return ar_error_set (err, -r, JSON_PREFIX ".architectures[%zu]: add "
                                      "\"%s\"",
                             i, name);
    }
  return 0;
}

static int
set_flags (scmp_filter_ctx ctx, const oci_seccomp *seccomp, ar_error_t **err)
{
  for (size_t i = 0; i < seccomp->flags.len; i++)
    {
      int attr;
      const char *flag = seccomp->flags.items[i];
      if (lookup_flag (flag, &attr) < 0 || attr < 0)
        return ar_error_set (err, 0,
                             JSON_PREFIX ".flags[%zu]: unsupported flag "
                                         "\"%s\"",
                             i, flag);
      int r = seccomp_attr_set (ctx, (enum scmp_filter_attr) attr, 1);
      if (r < 0)
        return ar_error_set (err, -r, JSON_PREFIX ".flags[%zu]: set \"%s\"",
                             i, flag);
    }
  return 0;
}

static int
build_conditions (const oci_syscall *sc, size_t index,
                  struct scmp_arg_cmp conds[MAX_SYSCALL_ARGS],
                  bool *same_index_twice, ar_error_t **err)
{
  bool seen[MAX_SYSCALL_ARGS] = { false };
  *same_index_twice = false;
  for (size_t a = 0; a < sc->n_args; a++)
    {
      const oci_seccomp_arg *arg = &sc->args[a];
      enum scmp_compare op;
      if (arg->index >= MAX_SYSCALL_ARGS || lookup_operator (arg->op, &op) < 0)
        return ar_error_set (err, 0,
                             JSON_PREFIX ".syscalls[%zu].args[%zu]: invalid "
                                         "index or operator",
                             index, a);
      if (seen[arg->index])
        *same_index_twice = true;
      seen[arg->index] = true;
      /* For MASKED_EQ, value is the mask and valueTwo the expected value. */
      conds[a] = (struct scmp_arg_cmp){ .arg = arg->index,
                                        .op = op,
                                        .datum_a = arg->value,
                                        .datum_b = arg->value_two };
    }
  return 0;
}

static int
add_rule_for (scmp_filter_ctx ctx, int nr, uint32_t action,
              const oci_syscall *sc, size_t index,
              const struct scmp_arg_cmp *conds, bool same_index_twice,
              const char *name, ar_error_t **err)
{
  int r = 0;
  if (sc->n_args == 0)
    r = seccomp_rule_add_array (ctx, action, nr, 0, NULL);
  else if (!same_index_twice)
    r = seccomp_rule_add_array (ctx, action, nr, (unsigned) sc->n_args,
                                conds);
  else
    /* libseccomp refuses two comparisons of one argument in a rule, so such
     * conditions become alternatives: one rule each (runc does the same). */
    for (size_t a = 0; a < sc->n_args && r == 0; a++)
      r = seccomp_rule_add_array (ctx, action, nr, 1, &conds[a]);
  if (r < 0)
    return ar_error_set (err, -r,
                         JSON_PREFIX ".syscalls[%zu]: add rule for \"%s\"",
                         index, name);
  return 0;
}

static int
add_syscall (scmp_filter_ctx ctx, const oci_syscall *sc, size_t index,
             uint32_t default_action, ar_error_t **err)
{
  action_kind kind;
  if (lookup_action (sc->action, &kind) < 0)
    return ar_error_set (err, 0,
                         JSON_PREFIX ".syscalls[%zu].action: unknown action "
                                     "\"%s\"",
                         index, sc->action ? sc->action : "");
  uint32_t action = action_value (kind, &sc->errno_ret);
  /* libseccomp rejects rules that repeat the default action. */
  if (action == default_action)
    return 0;

  if (sc->n_args > MAX_SYSCALL_ARGS)
    return ar_error_set (err, 0,
                         JSON_PREFIX ".syscalls[%zu].args: more than %d "
                                     "arguments",
                         index, MAX_SYSCALL_ARGS);
  struct scmp_arg_cmp conds[MAX_SYSCALL_ARGS];
  bool same_index_twice;
  if (build_conditions (sc, index, conds, &same_index_twice, err) < 0)
    return -1;

  for (size_t n = 0; n < sc->names.len; n++)
    {
      const char *name = sc->names.items[n];
      int nr = seccomp_syscall_resolve_name (name);
      /* Profiles list syscalls of newer kernels and other architectures. */
      if (nr == __NR_SCMP_ERROR)
        continue;
      if (add_rule_for (ctx, nr, action, sc, index, conds, same_index_twice,
                        name, err)
          < 0)
        return -1;
    }
  return 0;
}

static int
build_filter (const oci_seccomp *seccomp, scmp_filter_ctx *out,
              ar_error_t **err)
{
  action_kind default_kind;
  if (lookup_action (seccomp->default_action, &default_kind) < 0)
    return ar_error_set (err, 0,
                         JSON_PREFIX ".defaultAction: unknown action \"%s\"",
                         seccomp->default_action ? seccomp->default_action
                                                 : "");
  uint32_t default_action
      = action_value (default_kind, &seccomp->default_errno_ret);

  cleanup_filter scmp_filter_ctx ctx = seccomp_init (default_action);
  if (ctx == NULL)
    return ar_error_set (err, 0, JSON_PREFIX ": seccomp_init failed");

  /* The caller sets no_new_privs itself, exactly when the spec asks. */
  int r = seccomp_attr_set (ctx, SCMP_FLTATR_CTL_NNP, 0);
  if (r < 0)
    return ar_error_set (err, -r, "seccomp: clear SCMP_FLTATR_CTL_NNP");

  if (add_architectures (ctx, seccomp, err) < 0
      || set_flags (ctx, seccomp, err) < 0)
    return -1;

  for (size_t i = 0; i < seccomp->n_syscalls; i++)
    if (add_syscall (ctx, &seccomp->syscalls[i], i, default_action, err) < 0)
      return -1;

  *out = steal_pointer (&ctx);
  return 0;
}

static bool
uses_notify (const oci_seccomp *seccomp)
{
  for (size_t i = 0; i < seccomp->n_syscalls; i++)
    {
      action_kind kind;
      if (lookup_action (seccomp->syscalls[i].action, &kind) == 0
          && kind == ACTION_NOTIFY)
        return true;
    }
  return false;
}

/* Hand the listener fd to the agent at listenerPath, with the container
 * state as the message body so it knows whose fd this is. */
static int
send_notify_fd (const char *listener_path, int notify_fd,
                const char *state_json, ar_error_t **err)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  if (strlen (listener_path) >= sizeof addr.sun_path)
    return ar_error_set (err, 0,
                         JSON_PREFIX ".listenerPath: `%s` is too long",
                         listener_path);
  strcpy (addr.sun_path, listener_path);

  cleanup_close int sock = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0)
    return ar_error_set (err, errno, "seccomp: socket");
  if (connect (sock, (struct sockaddr *) &addr, sizeof addr) < 0)
    return ar_error_set (err, errno, "seccomp: connect to listener `%s`",
                         listener_path);

  const char *payload = state_json && *state_json ? state_json : "{}";
  struct iovec iov = { .iov_base = (void *) payload,
                       .iov_len = strlen (payload) };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } control;
  memset (&control, 0, sizeof control);
  struct msghdr msg = { .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = control.buf,
                        .msg_controllen = sizeof control.buf };
  struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (c), &notify_fd, sizeof notify_fd);

  ssize_t n;
  do
    n = sendmsg (sock, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return ar_error_set (err, errno, "seccomp: send listener fd to `%s`",
                         listener_path);
  /* The fd went out with the first byte; the rest is plain stream data. */
  if ((size_t) n < iov.iov_len
      && ar_write_all (sock, payload + n, iov.iov_len - (size_t) n) < 0)
    return ar_error_set (err, errno, "seccomp: send state to `%s`",
                         listener_path);
  return 0;
}

int
ar_seccomp_load (const oci_seccomp *seccomp, const char *state_json,
                 ar_error_t **err)
{
  if (seccomp == NULL)
    return 0;

  cleanup_filter scmp_filter_ctx ctx = NULL;
  if (build_filter (seccomp, &ctx, err) < 0)
    return -1;

  int r = seccomp_load (ctx);
  if (r < 0)
    return ar_error_set (err, -r, "seccomp: load filter");

  if (!uses_notify (seccomp))
    return 0;

  /* libseccomp keeps the listener fd in process-wide state and never closes
   * it; we close it once sent so the container keeps no listener. */
  cleanup_close int notify_fd = seccomp_notify_fd (ctx);
  if (notify_fd < 0)
    return ar_error_set (err, -notify_fd, "seccomp: get notify fd");
  return send_notify_fd (seccomp->listener_path, notify_fd, state_json, err);
}
