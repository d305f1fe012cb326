/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "devices_bpf.h"
#include "internal.h"
#include "../../util/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- instruction encoding ---------------------------------------------- */

/* Registers the program keeps its request in; r1 is the context. */
enum
{
  R_RET = BPF_REG_0,
  R_CTX = BPF_REG_1,
  R_TMP = BPF_REG_2,
  R_TYPE = BPF_REG_3,    /* BPF_DEVCG_DEV_CHAR or _BLOCK */
  R_PENDING = BPF_REG_4, /* access bits no rule has allowed yet */
  R_MAJOR = BPF_REG_5,
  R_MINOR = BPF_REG_6,
  R_HIT = BPF_REG_7,
};

typedef struct
{
  struct bpf_insn *v;
  size_t len, cap;
} insn_buf;

static void
emit (insn_buf *b, uint8_t code, uint8_t dst, uint8_t src, int16_t off,
      int32_t imm)
{
  if (b->len == b->cap)
    {
      b->cap = b->cap ? b->cap * 2 : 64;
      b->v = xrealloc (b->v, b->cap * sizeof *b->v);
    }
  b->v[b->len++] = (struct bpf_insn){
    .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm
  };
}

static void
emit_load_u32 (insn_buf *b, uint8_t dst, int16_t ctx_offset)
{
  emit (b, BPF_LDX | BPF_MEM | BPF_W, dst, R_CTX, ctx_offset, 0);
}

static void
emit_alu_imm (insn_buf *b, uint8_t op, uint8_t dst, int32_t imm)
{
  emit (b, BPF_ALU64 | op | BPF_K, dst, 0, 0, imm);
}

static void
emit_mov_reg (insn_buf *b, uint8_t dst, uint8_t src)
{
  emit (b, BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0);
}

static void
emit_jump_imm (insn_buf *b, uint8_t op, uint8_t reg, int32_t imm, int16_t off)
{
  emit (b, BPF_JMP | op | BPF_K, reg, 0, off, imm);
}

static void
emit_return (insn_buf *b, int32_t verdict)
{
  emit_alu_imm (b, BPF_MOV, R_RET, verdict);
  emit (b, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

/* ---- rules -------------------------------------------------------------- */

/* One rule, checked and in the program's terms. */
typedef struct
{
  bool allow;
  int32_t type;         /* 0: any */
  int64_t major, minor; /* -1: any */
  int32_t access;       /* AR_DEVBPF_* bits */
} rule;

static void
parse_access (const char *s, int32_t *out)
{
  *out = 0;
  if (s == NULL || *s == '\0')
    s = "rwm"; /* as the v1 writer does */
  for (; *s; s++)
    switch (*s)
      {
      case 'r':
        *out |= AR_DEVBPF_READ;
        break;
      case 'w':
        *out |= AR_DEVBPF_WRITE;
        break;
      case 'm':
        *out |= AR_DEVBPF_MKNOD;
        break;
      default:
        break; /* runc reads only r, w and m ("rwa" is "rw") */
      }
}

/* Negative or absent is the wildcard, as in the v1 writer. Jumps compare
 * against a sign-extended 32-bit immediate: real device numbers (12-bit
 * major, 20-bit minor) are far below that limit. */
static int
parse_number (const oci_opt_i64 *v, int64_t *out)
{
  *out = !v->set || v->value < 0 ? -1 : v->value;
  return *out > INT32_MAX ? -1 : 0;
}

static int
parse_rule (const oci_device_rule *d, size_t index, rule *out, ar_error_t **err)
{
  const char *type = d->type && *d->type ? d->type : "a";
  out->allow = d->allow;
  if (strcmp (type, "a") == 0)
    out->type = 0;
  else if (strcmp (type, "c") == 0)
    out->type = BPF_DEVCG_DEV_CHAR;
  else if (strcmp (type, "b") == 0)
    out->type = BPF_DEVCG_DEV_BLOCK;
  else
    return ar_error_set (err, 0,
                         "linux.resources.devices[%zu]: invalid type \"%s\"",
                         index, type);
  parse_access (d->access, &out->access);
  if (parse_number (&d->major, &out->major) < 0
      || parse_number (&d->minor, &out->minor) < 0)
    return ar_error_set (err, 0,
                         "linux.resources.devices[%zu]: major or minor out "
                         "of range",
                         index);
  return 0;
}

static bool
matches_everything (const rule *r)
{
  return r->type == 0 && r->major < 0 && r->minor < 0;
}

#define ALL_ACCESS (AR_DEVBPF_MKNOD | AR_DEVBPF_READ | AR_DEVBPF_WRITE)

/* A rule that matches every device for every access ends the walk: the
 * rules before it can never decide anything. */
static bool
is_final (const rule *r)
{
  return matches_everything (r) && r->access == ALL_ACCESS;
}

/* The action part of a rule block, after its match conditions. */
static size_t
action_length (const rule *r)
{
  if (is_final (r))
    return 2;
  return r->allow ? 4 : 5;
}

static void
emit_action (insn_buf *b, const rule *r)
{
  if (is_final (r))
    {
      emit_return (b, r->allow);
      return;
    }
  if (r->allow)
    {
      /* These bits are decided: allowed. Allow the request once none is
       * left undecided. */
      emit_alu_imm (b, BPF_AND, R_PENDING, ~r->access & ALL_ACCESS);
      emit_jump_imm (b, BPF_JNE, R_PENDING, 0, 2);
      emit_return (b, 1);
      return;
    }
  /* Any undecided bit this rule denies denies the request. */
  emit_mov_reg (b, R_HIT, R_PENDING);
  emit_alu_imm (b, BPF_AND, R_HIT, r->access);
  emit_jump_imm (b, BPF_JEQ, R_HIT, 0, 2);
  emit_return (b, 0);
}

/* Conditions first, each jumping past the whole block when it fails. */
static void
emit_rule (insn_buf *b, const rule *r)
{
  size_t n_cond = (r->type != 0) + (r->major >= 0) + (r->minor >= 0);
  size_t rest = n_cond + action_length (r);
  if (r->type != 0)
    emit_jump_imm (b, BPF_JNE, R_TYPE, r->type, (int16_t) --rest);
  if (r->major >= 0)
    emit_jump_imm (b, BPF_JNE, R_MAJOR, (int32_t) r->major, (int16_t) --rest);
  if (r->minor >= 0)
    emit_jump_imm (b, BPF_JNE, R_MINOR, (int32_t) r->minor, (int16_t) --rest);
  emit_action (b, r);
}

static void
emit_prologue (insn_buf *b)
{
  emit_load_u32 (b, R_TMP, offsetof (struct bpf_cgroup_dev_ctx, access_type));
  emit_mov_reg (b, R_TYPE, R_TMP);
  emit_alu_imm (b, BPF_AND, R_TYPE, 0xffff);
  emit_mov_reg (b, R_PENDING, R_TMP);
  emit_alu_imm (b, BPF_RSH, R_PENDING, 16);
  emit_load_u32 (b, R_MAJOR, offsetof (struct bpf_cgroup_dev_ctx, major));
  emit_load_u32 (b, R_MINOR, offsetof (struct bpf_cgroup_dev_ctx, minor));
}

/* Last match wins, so the program walks the rules backwards and stops at
 * the first that settles the request. Blocks are short (at most 8
 * instructions) and every jump is forward, within its block. */
int
ar_devices_bpf_build (const oci_device_rule *rules, size_t n_rules,
                      struct bpf_insn **out, size_t *n_out, ar_error_t **err)
{
  cleanup_free rule *parsed = xcalloc (n_rules + 1, sizeof *parsed);
  for (size_t i = 0; i < n_rules; i++)
    if (parse_rule (&rules[i], i, &parsed[i], err) < 0)
      return -1;

  insn_buf b = { 0 };
  emit_prologue (&b);
  bool ended = false;
  for (size_t i = n_rules; i-- > 0 && !ended;)
    {
      emit_rule (&b, &parsed[i]);
      ended = is_final (&parsed[i]);
    }
  if (!ended)
    emit_return (&b, 1);
  *out = b.v;
  *n_out = b.len;
  return 0;
}

/* ---- the bpf() syscall --------------------------------------------------- */

static int
sys_bpf (int cmd, union bpf_attr *attr)
{
  return (int) syscall (SYS_bpf, cmd, attr, sizeof *attr);
}

static uint64_t
ptr_to_u64 (const void *p)
{
  return (uint64_t) (uintptr_t) p;
}

static int
prog_load (const struct bpf_insn *insns, size_t n, char *log, size_t log_size)
{
  union bpf_attr attr;
  memset (&attr, 0, sizeof attr);
  attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  attr.expected_attach_type = BPF_CGROUP_DEVICE;
  attr.insns = ptr_to_u64 (insns);
  attr.insn_cnt = (uint32_t) n;
  attr.license = ptr_to_u64 ("Apache-2.0");
  if (log)
    {
      attr.log_buf = ptr_to_u64 (log);
      attr.log_size = (uint32_t) log_size;
      attr.log_level = 1;
    }
  int fd;
  do
    fd = sys_bpf (BPF_PROG_LOAD, &attr);
  while (fd < 0 && errno == EAGAIN);
  return fd;
}

/* The verifier's verdict is its last line, but for the statistics it
 * appends ("processed N insns ...", "verification time ..."). */
static const char *
verdict_line (char *log)
{
  char *verdict = log;
  for (char *save = NULL, *l = strtok_r (log, "\n", &save); l;
       l = strtok_r (NULL, "\n", &save))
    if (*l && strncmp (l, "processed ", 10) != 0
        && strncmp (l, "verification time", 17) != 0
        && strncmp (l, "stack depth", 11) != 0)
      verdict = l;
  return verdict;
}

#define VERIFIER_LOG_SIZE (256 * 1024)

int
ar_devices_bpf_load (const struct bpf_insn *insns, size_t n, ar_error_t **err)
{
  /* No log on the first try: logging slows the verifier down, and most
   * loads succeed. */
  int fd = prog_load (insns, n, NULL, 0);
  if (fd >= 0)
    return fd;
  int saved = errno;
  if (saved != EINVAL && saved != EACCES)
    return ar_error_set (err, saved,
                         "load the cgroup v2 device program "
                         "(BPF_PROG_LOAD)");
  cleanup_free char *log = xcalloc (1, VERIFIER_LOG_SIZE);
  fd = prog_load (insns, n, log, VERIFIER_LOG_SIZE);
  if (fd >= 0)
    return fd; /* passed this time; nothing to report */
  return ar_error_set (err, saved,
                       "the kernel's verifier rejected the "
                       "cgroup v2 device program (%s)",
                       *log ? verdict_line (log) : "no log");
}

/* The ids of the device programs attached to the cgroup itself. */
static int
query_attached (int cgroup_fd, uint32_t *ids, uint32_t *n, ar_error_t **err)
{
  union bpf_attr attr;
  memset (&attr, 0, sizeof attr);
  attr.query.target_fd = (uint32_t) cgroup_fd;
  attr.query.attach_type = BPF_CGROUP_DEVICE;
  attr.query.prog_ids = ptr_to_u64 (ids);
  attr.query.prog_cnt = *n;
  if (sys_bpf (BPF_PROG_QUERY, &attr) < 0)
    return ar_error_set (err, errno,
                         "list the cgroup's device programs "
                         "(BPF_PROG_QUERY)");
  *n = attr.query.prog_cnt;
  return 0;
}

static int
attach (int cgroup_fd, int prog_fd, ar_error_t **err)
{
  union bpf_attr attr;
  memset (&attr, 0, sizeof attr);
  attr.target_fd = (uint32_t) cgroup_fd;
  attr.attach_bpf_fd = (uint32_t) prog_fd;
  attr.attach_type = BPF_CGROUP_DEVICE;
  attr.attach_flags = BPF_F_ALLOW_MULTI;
  if (sys_bpf (BPF_PROG_ATTACH, &attr) < 0)
    return ar_error_set (err, errno,
                         "attach the cgroup v2 device program "
                         "(BPF_PROG_ATTACH)");
  return 0;
}

static int
detach_id (int cgroup_fd, uint32_t id, ar_error_t **err)
{
  union bpf_attr attr;
  memset (&attr, 0, sizeof attr);
  attr.prog_id = id;
  cleanup_close int prog_fd = sys_bpf (BPF_PROG_GET_FD_BY_ID, &attr);
  if (prog_fd < 0)
    return errno == ENOENT
               ? 0
               : ar_error_set (err, errno, "open device program %u", id);
  memset (&attr, 0, sizeof attr);
  attr.target_fd = (uint32_t) cgroup_fd;
  attr.attach_bpf_fd = (uint32_t) prog_fd;
  attr.attach_type = BPF_CGROUP_DEVICE;
  if (sys_bpf (BPF_PROG_DETACH, &attr) < 0 && errno != ENOENT)
    return ar_error_set (err, errno,
                         "detach the previous device program "
                         "%u (BPF_PROG_DETACH)",
                         id);
  return 0;
}

/* The kernel caps a cgroup's programs per attach type at 64. */
#define MAX_ATTACHED 64

int
ar_devices_bpf_apply (const char *dir, const oci_device_rule *rules,
                      size_t n_rules, ar_error_t **err)
{
  cleanup_free struct bpf_insn *insns = NULL;
  size_t n_insns = 0;
  if (ar_devices_bpf_build (rules, n_rules, &insns, &n_insns, err) < 0)
    return -1;
  cleanup_close int cgroup_fd = ar_cg_open (dir, O_RDONLY | O_DIRECTORY);
  if (cgroup_fd < 0)
    return ar_error_set (err, errno, "open cgroup `%s`", dir);
  uint32_t old[MAX_ATTACHED], n_old = MAX_ATTACHED;
  if (query_attached (cgroup_fd, old, &n_old, err) < 0)
    return -1;
  cleanup_close int prog_fd = ar_devices_bpf_load (insns, n_insns, err);
  if (prog_fd < 0 || attach (cgroup_fd, prog_fd, err) < 0)
    return -1;
  /* The new rules are in force before the old ones go: no moment where
   * neither applies. */
  for (uint32_t i = 0; i < n_old && i < MAX_ATTACHED; i++)
    if (detach_id (cgroup_fd, old[i], err) < 0)
      return -1;
  return 0;
}
