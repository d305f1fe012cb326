/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "seccomp_enosys.h"
#include "../util/cleanup.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stddef.h>
#include <string.h>

/* x32 calls arrive with the x86_64 audit arch and this bit in the number:
 * they are not numbered like x86_64's, so the stub leaves them alone. */
#define X32_SYSCALL_BIT 0x40000000u

#define ARCH_OFFSET offsetof (struct seccomp_data, arch)
#define NR_OFFSET offsetof (struct seccomp_data, nr)

/* Per architecture: load arch, compare, load nr, compare; x86_64 also
 * tests the x32 bit. */
static size_t
block_len (uint32_t arch)
{
  return arch == SCMP_ARCH_X86_64 ? 5 : 4;
}

/* The highest number of a syscall the profile names on this arch, or -1. */
static int
highest_known (const oci_seccomp *seccomp, uint32_t arch)
{
  int highest = -1;
  for (size_t i = 0; i < seccomp->n_syscalls; i++)
    for (size_t n = 0; n < seccomp->syscalls[i].names.len; n++)
      {
        int nr = seccomp_syscall_resolve_name_arch (
            arch, seccomp->syscalls[i].names.items[n]);
        if (nr > highest)
          highest = nr;
      }
  return highest;
}

static struct sock_filter
stmt (uint16_t code, uint32_t k)
{
  return (struct sock_filter) BPF_STMT (code, k);
}

static struct sock_filter
jump (uint16_t code, uint32_t k, size_t from, size_t to_true, size_t to_false)
{
  return (struct sock_filter) BPF_JUMP (code, k, (uint8_t) (to_true - from - 1),
                                        (uint8_t) (to_false - from - 1));
}

int
ar_seccomp_enosys_stub (const oci_seccomp *seccomp, const uint32_t *arches,
                        size_t n_arches, struct sock_filter **insns,
                        size_t *n_insns, size_t max_insns, ar_error_t **err)
{
  /* Blocks first, then "ja main", "ret ENOSYS", then the program. Every
   * jump is forward and short (a few blocks), within the 8-bit offsets. */
  int highest[n_arches > 0 ? n_arches : 1];
  size_t len = 0;
  for (size_t a = 0; a < n_arches; a++)
    {
      highest[a] = arches[a] == SCMP_ARCH_X32
                       ? -1
                       : highest_known (seccomp, arches[a]);
      if (highest[a] >= 0)
        len += block_len (arches[a]);
    }
  if (len == 0)
    return 0;
  size_t enosys = len + 1, main_start = len + 2;
  if (main_start + *n_insns > max_insns)
    return ar_error_set (
        err, 0,
        "seccomp: filter too large for the ENOSYS check (%zu instructions)",
        main_start + *n_insns);
  cleanup_free struct sock_filter *stub = xcalloc (main_start, sizeof *stub);

  size_t i = 0;
  for (size_t a = 0; a < n_arches; a++)
    {
      if (highest[a] < 0)
        continue;
      size_t next = i + block_len (arches[a]);
      stub[i] = stmt (BPF_LD | BPF_W | BPF_ABS, ARCH_OFFSET);
      i++;
      stub[i] = jump (BPF_JMP | BPF_JEQ | BPF_K, arches[a], i, i + 1, next);
      i++;
      stub[i] = stmt (BPF_LD | BPF_W | BPF_ABS, NR_OFFSET);
      i++;
      if (arches[a] == SCMP_ARCH_X86_64)
        {
          stub[i] = jump (BPF_JMP | BPF_JSET | BPF_K, X32_SYSCALL_BIT, i,
                          main_start, i + 1);
          i++;
        }
      stub[i] = jump (BPF_JMP | BPF_JGT | BPF_K, (uint32_t) highest[a], i,
                      enosys, main_start);
      i++;
    }
  stub[i++] = stmt (BPF_JMP | BPF_JA, 1);
  stub[i++] = stmt (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);

  struct sock_filter *joined = xcalloc (i + *n_insns, sizeof *joined);
  memcpy (joined, stub, i * sizeof *joined);
  memcpy (joined + i, *insns, *n_insns * sizeof *joined);
  free (*insns);
  *insns = joined;
  *n_insns += i;
  return 0;
}
