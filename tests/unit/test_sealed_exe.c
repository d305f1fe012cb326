/* SPDX-License-Identifier: Apache-2.0 */
/* util/sealed_exe: whether a container could write the binary a process
 * runs from, given the host ids its user namespace holds (the promise a
 * sandbox that runs without a sealed copy makes, and create holds). This
 * test runs from its own file, unsealed. */
#include "config.h"
#include "unit.h"
#include "../../src/util/sealed_exe.h"
#include "../../src/util/userns.h"

#include <sys/stat.h>
#include <unistd.h>

static struct stat self;

static bool
writable_by_others (void)
{
  return (self.st_mode & (S_IWGRP | S_IWOTH)) != 0;
}

/* Ranges that hold the binary's owner reach it; ranges beside it do not. */
static void
test_held_ranges (void)
{
  if (!ar_userns_is_initial () || writable_by_others ())
    return; /* another namespace's ids, or anyone's binary */
  uint32_t owner = self.st_uid;
  ar_held_uids with[] = { { .first = 2147483648u, .count = 65536 },
                          { .first = owner, .count = 1 } };
  CHECK (ar_exe_reachable (with, 2));
  ar_held_uids around[] = { { .first = owner + 1, .count = 65536 },
                            { .first = owner > 0 ? 0 : 2, .count = owner } };
  CHECK (!ar_exe_reachable (around, owner > 0 ? 2 : 1));
  ar_held_uids range_end[] = { { .first = owner - 9, .count = 10 } };
  if (owner >= 9)
    CHECK (ar_exe_reachable (range_end, 1));
}

/* Without a namespace of its own the container holds the caller's ids:
 * real root's reach any binary; another user's only their own. */
static void
test_caller_ids (void)
{
  if (!ar_userns_is_initial ())
    return;
  bool expected = geteuid () == 0 || self.st_uid != 0 || writable_by_others ();
  CHECK (ar_exe_reachable (NULL, 0) == expected);
}

int
main (void)
{
  if (stat ("/proc/self/exe", &self) < 0)
    return 1;
  RUN (test_held_ranges);
  RUN (test_caller_ids);
  return unit_finish ();
}
