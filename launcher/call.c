/* SPDX-License-Identifier: Apache-2.0 */
#include "call.h"
#include "sys.h"

enum
{
  ROOT,
  LOG,
  LOG_FORMAT,
  SYSTEMD_CGROUP,
  KNOWN
};

static const struct
{
  const char *name;
  int takes_value;
} known[KNOWN] = { [ROOT] = { "root", 1 },
                   [LOG] = { "log", 1 },
                   [LOG_FORMAT] = { "log-format", 1 },
                   [SYSTEMD_CGROUP] = { "systemd-cgroup", 0 } };

/* Which known option `arg` is (-1: none), and its value (after `=`, or
 * the next argument, *i then moved past it). */
static int
option (int argc, char **argv, int *i, const char **value)
{
  const char *arg = argv[*i] + 1 + (argv[*i][1] == '-');
  for (int k = 0; k < KNOWN; k++)
    {
      const char *rest = after (arg, known[k].name);
      if (!rest || (*rest != '\0' && *rest != '='))
        continue;
      if (!known[k].takes_value)
        return *rest == '\0' ? k : -1;
      if (*rest == '=')
        *value = rest + 1;
      else if (*i + 1 < argc)
        *value = argv[++*i];
      else
        return -1;
      return **value ? k : -1;
    }
  return -1;
}

int
call_command (int argc, char **argv, const char **root)
{
  int seen[KNOWN] = { 0 };
  *root = 0;
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++)
    {
      const char *value = "";
      int k = option (argc, argv, &i, &value);
      if (k < 0 || seen[k]++)
        return 0;
      if (k == ROOT)
        *root = value;
      if (k == LOG_FORMAT && !same (value, "text") && !same (value, "json"))
        return 0;
    }
  return i < argc ? i : 0;
}
