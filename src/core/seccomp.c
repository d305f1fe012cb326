/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "seccomp.h"
#include "../util/fdpass.h"
#include "seccomp_enosys.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/sha256.h"
#include "src/core/seccomp_build.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>

/* Flags newer than some kernel headers we may build against. */
#ifndef SECCOMP_FILTER_FLAG_SPEC_ALLOW
#define SECCOMP_FILTER_FLAG_SPEC_ALLOW (1UL << 2)
#endif
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

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

/* We load the compiled program with seccomp(2) ourselves, so filter flags
 * go straight to the kernel, whatever this libseccomp knows about. */
static const struct
{
  const char *name;
  unsigned long flag;
} flag_names[] = {
  { "SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC },
  { "SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG },
  { "SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW },
  { "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
    SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV },
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
lookup_flag (const char *name, unsigned long *flag)
{
  for (size_t i = 0; i < N_ELEMENTS (flag_names); i++)
    if (strcmp (flag_names[i].name, name) == 0)
      {
        *flag = flag_names[i].flag;
        return 0;
      }
  return -1;
}

/* The names each table accepts, for `features`. */
size_t
ar_seccomp_names (ar_seccomp_vocabulary which, const char **out, size_t max)
{
  size_t n = 0;
#define ADD_NAMES(table)                                                       \
  for (size_t i = 0; i < N_ELEMENTS (table); i++, n++)                         \
    if (n < max)                                                               \
      out[n] = table[i].name;
  switch (which)
    {
    case AR_SECCOMP_ACTIONS:
      ADD_NAMES (action_names)
      break;
    case AR_SECCOMP_OPERATORS:
      ADD_NAMES (operator_names)
      break;
    case AR_SECCOMP_ARCHS:
      ADD_NAMES (arch_names)
      break;
    case AR_SECCOMP_FLAGS:
      ADD_NAMES (flag_names)
      break;
    }
#undef ADD_NAMES
  return n;
}

/* The kernel checks the flags before it reads the program: a known flag
 * with no program fails with EFAULT, an unknown one with EINVAL. */
bool
ar_seccomp_flag_supported (const char *name)
{
  unsigned long flag;
  if (lookup_flag (name, &flag) < 0)
    return false;
  /* Only valid together with a notify listener. */
  if (flag == SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
    flag |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
  return syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, flag, NULL) < 0
         && errno == EFAULT;
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
    return ar_error_set (err, 0, JSON_PREFIX "%s: unknown action \"%s\"", where,
                         name);
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
  if (lookup_action (sc->action, &kind) == 0 && kind == ACTION_NOTIFY)
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
                             index, a, sc->args[a].op ? sc->args[a].op : "");
    }
  return 0;
}

static int
kernel_flags (const oci_seccomp *seccomp, unsigned long *flags,
              ar_error_t **err)
{
  *flags = 0;
  for (size_t i = 0; i < seccomp->flags.len; i++)
    {
      unsigned long flag;
      const char *name = seccomp->flags.items[i];
      if (lookup_flag (name, &flag) < 0)
        return ar_error_set (
            err, 0, JSON_PREFIX ".flags[%zu]: unknown flag \"%s\"", i, name);
      *flags |= flag;
    }
  return 0;
}

int
ar_seccomp_check_names_known (const oci_seccomp *seccomp, ar_error_t **err)
{
  for (size_t i = 0; seccomp && i < seccomp->n_syscalls; i++)
    for (size_t n = 0; n < seccomp->syscalls[i].names.len; n++)
      {
        const char *name = seccomp->syscalls[i].names.items[n];
        if (seccomp_syscall_resolve_name (name) == __NR_SCMP_ERROR)
          return ar_error_set (err, 0,
                               JSON_PREFIX ".syscalls[%zu].names[%zu]: "
                                           "unknown syscall \"%s\" (the "
                                           "annotation " AR_SECCOMP_FAIL_UNKNOWN
                                           " asks to refuse it)",
                               i, n, name);
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

  unsigned long flags;
  if (kernel_flags (seccomp, &flags, err) < 0)
    return -1;

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
        return ar_error_set (err, -r,
                             JSON_PREFIX ".architectures[%zu]: add "
                                         "\"%s\"",
                             i, name);
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
    r = seccomp_rule_add_array (ctx, action, nr, (unsigned) sc->n_args, conds);
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
    return ar_error_set (
        err, 0, JSON_PREFIX ".defaultAction: unknown action \"%s\"",
        seccomp->default_action ? seccomp->default_action : "");
  uint32_t default_action
      = action_value (default_kind, &seccomp->default_errno_ret);

  cleanup_filter scmp_filter_ctx ctx = seccomp_init (default_action);
  if (ctx == NULL)
    return ar_error_set (err, 0, JSON_PREFIX ": seccomp_init failed");

  if (add_architectures (ctx, seccomp, err) < 0)
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

/* ---- compiled programs ------------------------------------------------- */

struct ar_seccomp_program
{
  struct sock_filter *insns;
  size_t n_insns;
  unsigned long flags; /* SECCOMP_FILTER_FLAG_* from linux.seccomp.flags */
  char *listener_path; /* set when the filter has SCMP_ACT_NOTIFY rules */
};

void
ar_seccomp_program_free (ar_seccomp_program *prog)
{
  if (prog == NULL)
    return;
  free (prog->insns);
  free (prog->listener_path);
  free (prog);
}

static void
program_freep (ar_seccomp_program **prog)
{
  ar_seccomp_program_free (*prog);
  *prog = NULL;
}
#define cleanup_program __attribute__ ((cleanup (program_freep)))

/* The kernel's limit on one classic BPF program. */
#define BPF_MAX_INSNS 4096

static int
export_bpf (scmp_filter_ctx ctx, ar_seccomp_program *prog, ar_error_t **err)
{
  cleanup_close int fd = memfd_create ("agentrun-seccomp", MFD_CLOEXEC);
  if (fd < 0)
    return ar_error_set (err, errno, "seccomp: memfd_create");
  int r = seccomp_export_bpf (ctx, fd);
  if (r < 0)
    return ar_error_set (err, -r, "seccomp: generate BPF");
  struct stat st;
  if (fstat (fd, &st) < 0)
    return ar_error_set (err, errno, "seccomp: fstat memfd");
  size_t size = (size_t) st.st_size;
  if (size == 0 || size % sizeof (struct sock_filter) != 0
      || size / sizeof (struct sock_filter) > BPF_MAX_INSNS)
    return ar_error_set (err, 0,
                         "seccomp: filter of %zu bytes cannot be "
                         "loaded (at most %d instructions)",
                         size, BPF_MAX_INSNS);
  prog->insns = xmalloc (size);
  if (pread (fd, prog->insns, size, 0) != (ssize_t) size)
    return ar_error_set (err, errno, "seccomp: read generated BPF");
  prog->n_insns = size / sizeof (struct sock_filter);
  return 0;
}

/* A profile that denies by default would deny a syscall newer than
 * itself with its errno (EPERM), and libc falls back only on ENOSYS. */
static int
add_enosys_stub (const oci_seccomp *seccomp, ar_seccomp_program *prog,
                 ar_error_t **err)
{
  action_kind kind;
  if (lookup_action (seccomp->default_action, &kind) == 0
      && (kind == ACTION_ALLOW || kind == ACTION_LOG))
    return 0;
  uint32_t arches[1 + N_ELEMENTS (arch_names)];
  size_t n = 0;
  arches[n++] = seccomp_arch_native ();
  for (size_t i = 0; i < seccomp->architectures.len && n < N_ELEMENTS (arches);
       i++)
    {
      uint32_t token;
      if (lookup_arch (seccomp->architectures.items[i], &token) == 0
          && token != arches[0])
        arches[n++] = token;
    }
  return ar_seccomp_enosys_stub (seccomp, arches, n, &prog->insns,
                                 &prog->n_insns, BPF_MAX_INSNS, err);
}

/* ---- on-disk cache ------------------------------------------------------
 * Generating BPF for a Docker-size profile over three architectures costs
 * libseccomp ~10 ms, on every container start. The cache maps the exact
 * profile (plus libseccomp version, kernel API level and native arch) to
 * the generated program. A file is used only if its stored key equals ours
 * byte for byte, so a hash collision can never yield a different filter.
 *
 * The key also holds AR_SECCOMP_BUILD_ID, which make derives from this
 * file, seccomp.h and the version (Makefile.am): the translation from a
 * profile to BPF is this code, so a build that changes it must not load a
 * program an older one cached. Hashing the binary at run time would cost
 * more than the cache saves; a date-based id would change on every
 * rebuild of the same code. The id prefixes every file name, so the
 * programs of other builds are found and removed. */

#define BUILD_PREFIX AR_SECCOMP_BUILD_ID "-"
#define CACHE_MAGIC "agentrun-seccomp-bpf 2 " AR_SECCOMP_BUILD_ID
/* Programs of this build kept; the least recently used go first. */
#define CACHE_MAX_ENTRIES 64

static void
put_string (FILE *f, const char *s)
{
  if (s == NULL)
    fputs ("~\n", f);
  else
    fprintf (f, "%zu:%s\n", strlen (s), s);
}

static void
put_u32 (FILE *f, const oci_opt_u32 *v)
{
  fprintf (f, v->set ? "%" PRIu32 "\n" : "~\n", v->value);
}

static void
put_syscall (FILE *f, const oci_syscall *sc)
{
  put_string (f, sc->action);
  put_u32 (f, &sc->errno_ret);
  fprintf (f, "%zu names\n", sc->names.len);
  for (size_t n = 0; n < sc->names.len; n++)
    put_string (f, sc->names.items[n]);
  fprintf (f, "%zu args\n", sc->n_args);
  for (size_t a = 0; a < sc->n_args; a++)
    {
      fprintf (f, "%" PRIu32 " %" PRIu64 " %" PRIu64 " ", sc->args[a].index,
               sc->args[a].value, sc->args[a].value_two);
      put_string (f, sc->args[a].op);
    }
}

/* Everything the generated BPF depends on, unambiguously (strings are
 * length-prefixed). Flags and listenerPath only matter at load time. */
static char *
cache_key (const oci_seccomp *seccomp, size_t *len)
{
  char *buf = NULL;
  FILE *f = open_memstream (&buf, len);
  if (f == NULL)
    abort ();
  const struct scmp_version *v = seccomp_version ();
  fprintf (f,
           "agentrun-seccomp-key 2 build " AR_SECCOMP_BUILD_ID
           "\nlibseccomp %u.%u.%u api %u native %u\n",
           v->major, v->minor, v->micro, seccomp_api_get (),
           seccomp_arch_native ());
  put_string (f, seccomp->default_action);
  put_u32 (f, &seccomp->default_errno_ret);
  fprintf (f, "%zu architectures\n", seccomp->architectures.len);
  for (size_t i = 0; i < seccomp->architectures.len; i++)
    put_string (f, seccomp->architectures.items[i]);
  fprintf (f, "%zu syscalls\n", seccomp->n_syscalls);
  for (size_t i = 0; i < seccomp->n_syscalls; i++)
    put_syscall (f, &seccomp->syscalls[i]);
  if (fclose (f) != 0)
    abort ();
  return buf;
}

static char *
cache_file_name (const char *cache_dir, const char *key, size_t len)
{
  uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a: picks the file only */
  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char) key[i]) * 0x100000001b3ULL;
  return xasprintf ("%s/%s%016" PRIx64 ".bpf", cache_dir, BUILD_PREFIX, h);
}

/* Read a cache file back only when every part of it checks out: the
 * magic and this build, sizes that add up to the file's, the checksum,
 * and then the key byte for byte. A torn or damaged file, or another
 * build's, is a miss: the program is rebuilt and the file replaced, and
 * the damaged bytes are never loaded. */
static bool
cache_parse (const char *data, size_t len, const char *key, size_t key_len,
             ar_seccomp_program *prog)
{
  size_t stored_key_len, bpf_len;
  char sum[AR_SHA256_HEX_SIZE] = "";
  int header_len = 0;
  if (sscanf (data, CACHE_MAGIC " %zu %zu %64[0-9a-f]%n", &stored_key_len,
              &bpf_len, sum, &header_len)
          != 3
      || header_len == 0 || data[header_len] != '\n'
      || strlen (sum) != AR_SHA256_HEX_SIZE - 1)
    return false;
  size_t body = (size_t) header_len + 1;
  if (stored_key_len != key_len || body + key_len > len
      || bpf_len != len - body - key_len || bpf_len == 0
      || bpf_len % sizeof (struct sock_filter) != 0
      || bpf_len / sizeof (struct sock_filter) > BPF_MAX_INSNS)
    return false;
  char actual[AR_SHA256_HEX_SIZE];
  ar_sha256_hex (data + body, key_len + bpf_len, actual);
  if (strcmp (actual, sum) != 0 || memcmp (data + body, key, key_len) != 0)
    return false;
  prog->insns = xmalloc (bpf_len);
  memcpy (prog->insns, data + body + key_len, bpf_len);
  prog->n_insns = bpf_len / sizeof (struct sock_filter);
  return true;
}

/* True when the cache held our program; a missing, stale or damaged file
 * is just a miss. A hit marks the file used, for eviction. */
static bool
cache_lookup (const char *cache_dir, const char *key, size_t key_len,
              ar_seccomp_program *prog)
{
  cleanup_free char *path = cache_file_name (cache_dir, key, key_len);
  cleanup_free char *data = NULL;
  cleanup_error ar_error_t *ignored = NULL;
  size_t len = 0;
  if (ar_read_file_at (AT_FDCWD, path, 1024 * 1024, &data, &len, &ignored) < 0
      || !cache_parse (data, len, key, key_len, prog))
    return false;
  utimensat (AT_FDCWD, path, NULL, 0);
  return true;
}

typedef struct
{
  char *name;
  struct timespec used;
} cache_entry;

static int
least_recent_first (const void *a, const void *b)
{
  const struct timespec *x = &((const cache_entry *) a)->used;
  const struct timespec *y = &((const cache_entry *) b)->used;
  if (x->tv_sec != y->tv_sec)
    return x->tv_sec < y->tv_sec ? -1 : 1;
  return (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* After a store: another build's programs can never be used again and
 * go; of ours, the CACHE_MAX_ENTRIES most recently used stay. Only
 * "*.bpf" files are looked at: a store in progress (a temporary file) is
 * left alone. */
static void
cache_evict (const char *cache_dir)
{
  cleanup_dir DIR *dir = opendir (cache_dir);
  if (dir == NULL)
    return;
  int dir_fd = dirfd (dir);
  cache_entry *ours = NULL;
  size_t n = 0;
  struct dirent *de;
  while ((de = readdir (dir)) != NULL)
    {
      size_t len = strlen (de->d_name);
      struct stat st;
      if (len < 4 || strcmp (de->d_name + len - 4, ".bpf") != 0)
        continue;
      if (strncmp (de->d_name, BUILD_PREFIX, strlen (BUILD_PREFIX)) != 0)
        unlinkat (dir_fd, de->d_name, 0);
      else if (fstatat (dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        {
          ours = xrealloc (ours, (n + 1) * sizeof *ours);
          ours[n++] = (cache_entry){ xstrdup (de->d_name), st.st_mtim };
        }
    }
  if (n > CACHE_MAX_ENTRIES)
    qsort (ours, n, sizeof *ours, least_recent_first);
  for (size_t i = 0; i < n; i++)
    {
      if (i + CACHE_MAX_ENTRIES < n)
        unlinkat (dir_fd, ours[i].name, 0);
      free (ours[i].name);
    }
  free (ours);
}

/* Best effort: a cache that cannot be written only costs time. */
static void
cache_store (const char *cache_dir, const char *key, size_t key_len,
             const ar_seccomp_program *prog)
{
  cleanup_error ar_error_t *ignored = NULL;
  if (ar_mkdir_p (cache_dir, 0700, &ignored) < 0)
    return;
  size_t bpf_len = prog->n_insns * sizeof (struct sock_filter);
  cleanup_free char *payload = xmalloc (key_len + bpf_len);
  memcpy (payload, key, key_len);
  memcpy (payload + key_len, prog->insns, bpf_len);
  char sum[AR_SHA256_HEX_SIZE];
  ar_sha256_hex (payload, key_len + bpf_len, sum);
  cleanup_free char *header
      = xasprintf (CACHE_MAGIC " %zu %zu %s\n", key_len, bpf_len, sum);
  size_t header_len = strlen (header);
  cleanup_free char *data = xmalloc (header_len + key_len + bpf_len);
  memcpy (data, header, header_len);
  memcpy (data + header_len, payload, key_len + bpf_len);
  cleanup_free char *path = cache_file_name (cache_dir, key, key_len);
  ar_write_file_atomic_at (AT_FDCWD, path, data, header_len + key_len + bpf_len,
                           0600, &ignored);
  cache_evict (cache_dir);
}

int
ar_seccomp_compile (const oci_seccomp *seccomp, const char *cache_dir,
                    ar_seccomp_program **out, ar_error_t **err)
{
  *out = NULL;
  if (seccomp == NULL)
    return 0;
  if (ar_seccomp_validate (seccomp, err) < 0)
    return -1;

  cleanup_program ar_seccomp_program *prog = xcalloc (1, sizeof *prog);
  if (kernel_flags (seccomp, &prog->flags, err) < 0)
    return -1;
  if (uses_notify (seccomp))
    prog->listener_path = xstrdup (seccomp->listener_path);

  size_t key_len = 0;
  cleanup_free char *key = cache_dir ? cache_key (seccomp, &key_len) : NULL;
  if (cache_dir && cache_lookup (cache_dir, key, key_len, prog))
    {
      *out = steal_pointer (&prog);
      return 0;
    }

  cleanup_filter scmp_filter_ctx ctx = NULL;
  if (build_filter (seccomp, &ctx, err) < 0 || export_bpf (ctx, prog, err) < 0
      || add_enosys_stub (seccomp, prog, err) < 0)
    return -1;
  if (cache_dir)
    cache_store (cache_dir, key, key_len, prog);
  *out = steal_pointer (&prog);
  return 0;
}

/* ---- loading ------------------------------------------------------------ */

int
ar_seccomp_send_to_listener (const oci_seccomp *seccomp, int notify_fd,
                             pid_t pid, const oci_state *state,
                             ar_error_t **err)
{
  cleanup_free char *payload = oci_container_process_state_to_json (
      state, pid, seccomp->listener_metadata);
  if (ar_fd_send_to_path (seccomp->listener_path, notify_fd, payload, err) < 0)
    return ar_error_prefix (err, JSON_PREFIX ".listenerPath");
  return 0;
}

int
ar_seccomp_load_program (const ar_seccomp_program *prog, int *notify_fd,
                         ar_error_t **err)
{
  *notify_fd = -1;
  if (prog == NULL)
    return 0;
  struct sock_fprog fprog
      = { .len = (unsigned short) prog->n_insns, .filter = prog->insns };
  unsigned long flags = prog->flags;
  /* The kernel takes WAIT_KILLABLE_RECV only along with a listener; without
   * one it means nothing, so a profile may carry it regardless. */
  if (prog->listener_path == NULL)
    flags &= ~SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
  if (prog->listener_path)
    {
      flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
      /* With TSYNC, a plain failure return would be ambiguous with the
       * listener fd; ESRCH makes it an ordinary error. */
      if (flags & SECCOMP_FILTER_FLAG_TSYNC)
        flags |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
    }
  /* No no_new_privs here: the caller sets it exactly when the spec asks,
   * and loading without it needs CAP_SYS_ADMIN, as it should. */
  long r = syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fprog);
  if (r < 0)
    return ar_error_set (err, errno, "seccomp: load filter");
  if (prog->listener_path)
    *notify_fd = (int) r;
  return 0;
}

const char *
ar_seccomp_library_version (void)
{
  static char text[48];
  const struct scmp_version *v = seccomp_version ();
  if (v == NULL)
    return "unknown";
  snprintf (text, sizeof text, "%u.%u.%u", v->major, v->minor, v->micro);
  return text;
}
