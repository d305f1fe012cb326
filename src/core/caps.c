/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "caps.h"
#include "../util/cleanup.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>

/* A capability set as a bit mask, which is what the kernel works with;
 * 64 bits cover every capability Linux defines (CAP_LAST_CAP is 40). */
typedef uint64_t cap_mask;

#define CAP_MASK_BITS 64

static void
cap_freep (cap_t *caps)
{
  if (*caps)
    cap_free (*caps);
  *caps = NULL;
}
#define cleanup_cap __attribute__ ((cleanup (cap_freep)))

/* How many capabilities the running kernel has, clamped to our mask. */
static int
kernel_cap_count (void)
{
  int n = (int) cap_max_bits ();
  if (n <= 0 || n > CAP_MASK_BITS)
    n = CAP_MASK_BITS;
  return n;
}

/* The spec spells names like runc does: "CAP_" and upper case only.
 * cap_from_name alone would also accept "chown", "12" or "CAP_KILL=ep". */
static bool
is_well_formed_cap_name (const char *name)
{
  if (strncmp (name, "CAP_", 4) != 0 || name[4] == '\0')
    return false;
  for (const char *p = name + 4; *p; p++)
    if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
      return false;
  return true;
}

static int
parse_cap_name (const char *name, cap_value_t *value, ar_error_t **err)
{
  if (!is_well_formed_cap_name (name) || cap_from_name (name, value) < 0)
    return ar_error_set (err, 0, "unknown capability \"%s\"", name);
  return 0;
}

static int
validate_set (const oci_strv *set, ar_error_t **err)
{
  for (size_t i = 0; i < set->len; i++)
    {
      cap_value_t value;
      if (parse_cap_name (set->items[i], &value, err) < 0)
        return -1;
    }
  return 0;
}

int
ar_caps_validate (const oci_capabilities *caps, ar_error_t **err)
{
  if (caps == NULL)
    return 0;
  const oci_strv *sets[]
      = { &caps->bounding, &caps->effective, &caps->inheritable,
          &caps->permitted, &caps->ambient };
  for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
    if (validate_set (sets[i], err) < 0)
      return -1;
  return 0;
}

/* Names become bits; capabilities this kernel does not have are left out
 * silently, so one config works across kernel versions (as with runc). */
static int
mask_of (const oci_strv *set, cap_mask *mask, ar_error_t **err)
{
  int count = kernel_cap_count ();
  *mask = 0;
  for (size_t i = 0; i < set->len; i++)
    {
      cap_value_t value;
      if (parse_cap_name (set->items[i], &value, err) < 0)
        return -1;
      if (value >= 0 && value < count)
        *mask |= (cap_mask) 1 << value;
    }
  return 0;
}

typedef struct
{
  cap_mask bounding, effective, permitted, inheritable, ambient;
} cap_masks;

static int
masks_of (const oci_capabilities *caps, cap_masks *masks, ar_error_t **err)
{
  memset (masks, 0, sizeof *masks);
  if (caps == NULL)
    return 0;
  if (mask_of (&caps->bounding, &masks->bounding, err) < 0
      || mask_of (&caps->effective, &masks->effective, err) < 0
      || mask_of (&caps->permitted, &masks->permitted, err) < 0
      || mask_of (&caps->inheritable, &masks->inheritable, err) < 0
      || mask_of (&caps->ambient, &masks->ambient, err) < 0)
    return -1;
  return 0;
}

static void
add_flags (cap_t state, cap_flag_t flag, cap_mask mask)
{
  for (int v = 0; v < CAP_MASK_BITS; v++)
    if (mask & ((cap_mask) 1 << v))
      {
        cap_value_t value = v;
        cap_set_flag (state, flag, 1, &value, CAP_SET);
      }
}

static cap_mask
current_mask (cap_flag_t flag)
{
  cleanup_cap cap_t state = cap_get_proc ();
  cap_mask mask = 0;
  if (state == NULL)
    return 0;
  for (int v = 0; v < kernel_cap_count (); v++)
    {
      cap_flag_value_t on = CAP_CLEAR;
      if (cap_get_flag (state, v, flag, &on) == 0 && on == CAP_SET)
        mask |= (cap_mask) 1 << v;
    }
  return mask;
}

/* Name the first capability in `mask`, to explain an EPERM. */
static char *
first_cap_name (cap_mask mask)
{
  for (int v = 0; v < CAP_MASK_BITS; v++)
    if (mask & ((cap_mask) 1 << v))
      {
        /* libcap answers "cap_chown"; the spec says "CAP_CHOWN". */
        char *name = cap_to_name (v);
        char *copy = xstrdup (name ? name : "?");
        cap_free (name);
        for (char *p = copy; *p; p++)
          *p = (char) toupper ((unsigned char) *p);
        return copy;
      }
  return xstrdup ("?");
}

static int
set_proc (cap_mask effective, cap_mask permitted, cap_mask inheritable)
{
  cleanup_cap cap_t state = cap_init ();
  if (state == NULL)
    return -1;
  add_flags (state, CAP_EFFECTIVE, effective);
  add_flags (state, CAP_PERMITTED, permitted);
  add_flags (state, CAP_INHERITABLE, inheritable);
  return cap_set_proc (state);
}

/* After setresuid with PR_SET_KEEPCAPS the effective set is empty while
 * the permitted set survives; dropping bounding capabilities needs
 * CAP_SETPCAP effective, so make everything we hold effective first. */
static int
raise_effective_to_permitted (ar_error_t **err)
{
  cap_mask permitted = current_mask (CAP_PERMITTED);
  if (set_proc (permitted, permitted, current_mask (CAP_INHERITABLE)) < 0)
    return ar_error_set (err, errno, "raise effective capabilities");
  return 0;
}

static int
drop_bounding_except (cap_mask keep, ar_error_t **err)
{
  for (int v = 0; v < kernel_cap_count (); v++)
    {
      if (keep & ((cap_mask) 1 << v))
        continue;
      /* Already gone (e.g. the runtime itself runs without it): nothing
       * to drop, and dropping again would need CAP_SETPCAP for nothing. */
      if (prctl (PR_CAPBSET_READ, v, 0, 0, 0) == 0)
        continue;
      if (prctl (PR_CAPBSET_DROP, v, 0, 0, 0) < 0)
        {
          int saved = errno;
          cleanup_free char *name = first_cap_name ((cap_mask) 1 << v);
          return ar_error_set (err, saved, "drop %s from the bounding set",
                               name);
        }
    }
  return 0;
}

/* capset only says EPERM; say which rule of the kernel the spec broke. */
static int
explain_capset_failure (const cap_masks *want, int saved_errno,
                        ar_error_t **err)
{
  cap_mask held = current_mask (CAP_PERMITTED);
  cap_mask bounding = want->bounding;
  cleanup_free char *name = NULL;

  if (want->permitted & ~held)
    {
      name = first_cap_name (want->permitted & ~held);
      return ar_error_set (err, saved_errno,
                           "set capabilities: %s is requested as permitted "
                           "but the runtime itself does not hold it",
                           name);
    }
  if (want->effective & ~want->permitted)
    {
      name = first_cap_name (want->effective & ~want->permitted);
      return ar_error_set (err, saved_errno,
                           "set capabilities: %s is effective but not "
                           "permitted",
                           name);
    }
  cap_mask not_inheritable
      = want->inheritable & ~bounding & ~current_mask (CAP_INHERITABLE);
  if (not_inheritable)
    {
      name = first_cap_name (not_inheritable);
      return ar_error_set (err, saved_errno,
                           "set capabilities: %s is inheritable but not in "
                           "the bounding set",
                           name);
    }
  return ar_error_set (err, saved_errno, "set capabilities");
}

static int
set_ambient (cap_mask ambient, ar_error_t **err)
{
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0
      && errno != EINVAL) /* EINVAL: a kernel without ambient capabilities */
    return ar_error_set (err, errno, "clear ambient capabilities");
  for (int v = 0; v < CAP_MASK_BITS; v++)
    if (ambient & ((cap_mask) 1 << v))
      if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, v, 0, 0) < 0)
        {
          int saved = errno;
          cleanup_free char *name = first_cap_name ((cap_mask) 1 << v);
          return ar_error_set (err, saved, "raise ambient capability %s", name);
        }
  return 0;
}

int
ar_caps_apply (const oci_capabilities *caps, ar_error_t **err)
{
  cap_masks want;
  if (masks_of (caps, &want, err) < 0)
    return -1;

  if (raise_effective_to_permitted (err) < 0
      || drop_bounding_except (want.bounding, err) < 0)
    return -1;

  if (set_proc (want.effective, want.permitted, want.inheritable) < 0)
    return explain_capset_failure (&want, errno, err);

  /* The kernel only allows ambient capabilities that are both permitted
   * and inheritable; others are skipped rather than failing the start. */
  return set_ambient (want.ambient & want.permitted & want.inheritable, err);
}
