/* SPDX-License-Identifier: Apache-2.0 */
/* The cgroup v2 device program: its shape, what it decides (by running it
 * in a tiny interpreter for the few instructions the generator emits), and,
 * as root, whether the kernel's verifier takes it. */
#include "config.h"
#include "unit.h"
#include "../../src/core/cgroups/devices_bpf.h"
#include "../../src/util/cleanup.h"

#include <errno.h>
#include <unistd.h>

#define R_ 1 /* read */
#define W_ 2
#define M_ 4

static oci_device_rule
dev_rule (bool allow, const char *type, int64_t major, int64_t minor,
          const char *access)
{
  return (oci_device_rule){
    .allow = allow,
    .type = (char *) type,
    .major = { .set = major >= 0, .value = major },
    .minor = { .set = minor >= 0, .value = minor },
    .access = (char *) access,
  };
}

/* Runs the subset of eBPF the generator emits; -1 on anything else. */
static int
interpret (const struct bpf_insn *p, size_t n, int type, int access,
           uint32_t major, uint32_t minor)
{
  uint32_t ctx[3]
      = { (uint32_t) type | ((uint32_t) access << 16), major, minor };
  uint64_t r[11] = { 0 };
  for (size_t pc = 0; pc < n; pc++)
    {
      const struct bpf_insn *i = &p[pc];
      uint64_t imm = (uint64_t) (int64_t) i->imm;
      switch (i->code)
        {
        case BPF_LDX | BPF_MEM | BPF_W:
          if (i->src_reg != BPF_REG_1 || i->off % 4 || i->off < 0 || i->off > 8)
            return -1;
          r[i->dst_reg] = ctx[i->off / 4];
          break;
        case BPF_ALU64 | BPF_MOV | BPF_K:
          r[i->dst_reg] = imm;
          break;
        case BPF_ALU64 | BPF_MOV | BPF_X:
          r[i->dst_reg] = r[i->src_reg];
          break;
        case BPF_ALU64 | BPF_AND | BPF_K:
          r[i->dst_reg] &= imm;
          break;
        case BPF_ALU64 | BPF_RSH | BPF_K:
          r[i->dst_reg] >>= imm;
          break;
        case BPF_JMP | BPF_JNE | BPF_K:
          if (r[i->dst_reg] != imm)
            pc += (size_t) i->off;
          break;
        case BPF_JMP | BPF_JEQ | BPF_K:
          if (r[i->dst_reg] == imm)
            pc += (size_t) i->off;
          break;
        case BPF_JMP | BPF_EXIT:
          return (int) r[0];
        default:
          return -1;
        }
    }
  return -1; /* fell off the end */
}

/* The kernel's access bits from the test's r/w/m shorthand. */
static int
acc (int bits)
{
  return ((bits & R_) ? BPF_DEVCG_ACC_READ : 0)
         | ((bits & W_) ? BPF_DEVCG_ACC_WRITE : 0)
         | ((bits & M_) ? BPF_DEVCG_ACC_MKNOD : 0);
}

typedef struct
{
  struct bpf_insn *insns;
  size_t n;
} program;

static program
build (const oci_device_rule *rules, size_t n)
{
  program p = { 0 };
  ar_error_t *err = NULL;
  CHECK (ar_devices_bpf_build (rules, n, &p.insns, &p.n, &err) == 0);
  if (err)
    fprintf (stderr, "%s\n", ar_error_text (err));
  ar_error_free (err);
  return p;
}

static int
decide (const program *p, char type, int bits, uint32_t major, uint32_t minor)
{
  int t = type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR;
  return interpret (p->insns, p->n, t, acc (bits), major, minor);
}

/* Every jump lands inside the program, and the last instruction exits. */
static bool
well_formed (const program *p)
{
  for (size_t i = 0; i < p->n; i++)
    if (BPF_CLASS (p->insns[i].code) == BPF_JMP
        && BPF_OP (p->insns[i].code) != BPF_EXIT
        && (p->insns[i].off < 0 || i + 1 + (size_t) p->insns[i].off >= p->n))
      return false;
  return p->n > 0 && p->insns[p->n - 1].code == (BPF_JMP | BPF_EXIT);
}

static void
test_allowlist (void)
{
  oci_device_rule rules[] = {
    dev_rule (false, "a", -1, -1, "rwm"), /* deny all */
    dev_rule (true, "c", 1, 3, "rwm"),    /* /dev/null */
    dev_rule (true, "c", 136, -1, "rw"),  /* pty slaves, no mknod */
    dev_rule (true, "b", 8, 0, "r"),      /* sda read-only */
  };
  program p = build (rules, 4);
  CHECK (well_formed (&p));
  /* prologue 7, null 3+4, pts 2+4, sda 3+4, deny-all 2: no default exit */
  CHECK_INT (p.n, 7 + 7 + 6 + 7 + 2);
  CHECK_INT (decide (&p, 'c', R_ | W_, 1, 3), 1);
  CHECK_INT (decide (&p, 'c', R_, 1, 5), 0);
  CHECK_INT (decide (&p, 'b', R_, 1, 3), 0); /* type matters */
  CHECK_INT (decide (&p, 'c', R_ | W_, 136, 7), 1);
  CHECK_INT (decide (&p, 'c', M_, 136, 7), 0);
  CHECK_INT (decide (&p, 'b', R_, 8, 0), 1);
  CHECK_INT (decide (&p, 'b', R_ | W_, 8, 0), 0); /* w not allowed */
  CHECK_INT (decide (&p, 'b', R_, 8, 1), 0);
  free (p.insns);
}

static void
test_last_match_wins (void)
{
  /* Allowed by default, then /dev/zero denied, then allowed again for
   * reading only: reads pass, writes do not. */
  oci_device_rule rules[] = {
    dev_rule (false, "c", 1, 5, "rwm"),
    dev_rule (true, "c", 1, 5, "r"),
  };
  program p = build (rules, 2);
  CHECK (well_formed (&p));
  CHECK_INT (decide (&p, 'c', R_, 1, 5), 1);
  CHECK_INT (decide (&p, 'c', W_, 1, 5), 0);
  CHECK_INT (decide (&p, 'c', R_ | W_, 1, 5), 0);
  CHECK_INT (decide (&p, 'c', R_ | W_, 1, 7), 1); /* no rule: allowed */
  free (p.insns);

  /* A later deny-all overrides earlier allows; an allow-all after it ends
   * the walk at once. */
  oci_device_rule rules2[] = {
    dev_rule (true, "c", 1, 3, "rwm"),
    dev_rule (false, NULL, -1, -1, NULL),
  };
  p = build (rules2, 2);
  CHECK_INT (p.n, 7 + 2);
  CHECK_INT (decide (&p, 'c', R_, 1, 3), 0);
  free (p.insns);

  oci_device_rule rules3[] = {
    dev_rule (false, "a", -1, -1, "rwm"),
    dev_rule (true, "a", -1, -1, "rwm"),
  };
  p = build (rules3, 2);
  CHECK_INT (p.n, 7 + 2);
  CHECK_INT (decide (&p, 'b', R_ | W_ | M_, 8, 0), 1);
  free (p.insns);
}

static void
test_partial_deny (void)
{
  /* Deny mknod everywhere: other access is still allowed by default. */
  oci_device_rule rules[] = { dev_rule (false, "a", -1, -1, "m") };
  program p = build (rules, 1);
  CHECK (well_formed (&p));
  CHECK_INT (decide (&p, 'c', M_, 1, 3), 0);
  CHECK_INT (decide (&p, 'c', R_ | W_, 1, 3), 1);
  free (p.insns);
}

static void
test_invalid (void)
{
  struct bpf_insn *insns = NULL;
  size_t n = 0;
  ar_error_t *err = NULL;
  oci_device_rule bad_type[] = { dev_rule (true, "x", 1, 3, "rwm") };
  CHECK (ar_devices_bpf_build (bad_type, 1, &insns, &n, &err) < 0);
  CHECK (err && strstr (ar_error_text (err), "devices[0]: invalid type \"x\""));
  ar_error_free (err);
  err = NULL;
  /* runc reads only r, w and m: "rwa" is "rw", not an error. */
  oci_device_rule rwa[] = { dev_rule (true, "c", 1, 3, "rwa") };
  oci_device_rule rw[] = { dev_rule (true, "c", 1, 3, "rw") };
  struct bpf_insn *rw_insns = NULL;
  size_t rw_n = 0;
  CHECK (ar_devices_bpf_build (rwa, 1, &insns, &n, &err) == 0);
  CHECK (ar_devices_bpf_build (rw, 1, &rw_insns, &rw_n, &err) == 0);
  CHECK (n == rw_n && memcmp (insns, rw_insns, n * sizeof *insns) == 0);
  free (insns);
  free (rw_insns);
  insns = NULL;
  oci_device_rule big[] = { dev_rule (true, "c", 1, 1LL << 40, "r") };
  CHECK (ar_devices_bpf_build (big, 1, &insns, &n, &err) < 0);
  CHECK (err && strstr (ar_error_text (err), "out of range"));
  ar_error_free (err);
}

/* The kernel's verifier is the real judge; it needs CAP_BPF (root). */
static void
test_kernel_accepts (void)
{
  if (geteuid () != 0)
    {
      printf ("skip test_kernel_accepts: not root\n");
      return;
    }
  oci_device_rule rules[] = {
    dev_rule (false, "a", -1, -1, "rwm"), dev_rule (true, "c", 1, 3, "rwm"),
    dev_rule (true, "c", 136, -1, "rw"),  dev_rule (false, "b", 8, 0, "w"),
    dev_rule (true, "a", -1, -1, "m"),
  };
  program p = build (rules, 5);
  ar_error_t *err = NULL;
  int fd = ar_devices_bpf_load (p.insns, p.n, &err);
  if (fd < 0 && err && err->errno_value == EPERM)
    printf ("skip test_kernel_accepts: BPF_PROG_LOAD not permitted: %s\n",
            ar_error_text (err));
  else
    {
      CHECK (fd >= 0);
      if (err)
        fprintf (stderr, "%s\n", ar_error_text (err));
    }
  ar_error_free (err);
  err = NULL;
  if (fd >= 0)
    close (fd);

  /* A broken program comes back with the verifier's own words. */
  if (fd >= 0)
    {
      struct bpf_insn bad[] = { p.insns[0] }; /* no exit */
      CHECK (ar_devices_bpf_load (bad, 1, &err) < 0);
      CHECK (err && strstr (ar_error_text (err), "verifier"));
      if (err)
        printf ("verifier said: %s\n", ar_error_text (err));
      ar_error_free (err);
    }
  free (p.insns);
}

int
main (void)
{
  RUN (test_allowlist);
  RUN (test_last_match_wins);
  RUN (test_partial_deny);
  RUN (test_invalid);
  RUN (test_kernel_accepts);
  return unit_finish ();
}
