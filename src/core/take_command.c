/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "take_command.h"
#include "../../oci/oci.h"
#include "../util/cleanup.h"

#include <stdlib.h>
#include <string.h>

void
ar_take_command_free (ar_take_command *cmd)
{
  for (size_t i = 0; i < cmd->args.len; i++)
    free (cmd->args.items[i]);
  free (cmd->args.items);
  for (size_t i = 0; i < cmd->env.len; i++)
    free (cmd->env.items[i]);
  free (cmd->env.items);
  free (cmd->cwd);
  *cmd = (ar_take_command){ 0 };
}

static void
append (char **buf, size_t *len, char kind, const char *s)
{
  size_t n = strlen (s);
  *buf = xrealloc (*buf, *len + n + 2);
  (*buf)[*len] = kind;
  memcpy (*buf + *len + 1, s, n + 1);
  *len += n + 2;
}

char *
ar_take_command_encode (const ar_take_command *cmd, size_t *len)
{
  char *buf = NULL;
  *len = 0;
  for (size_t i = 0; i < cmd->args.len; i++)
    append (&buf, len, 'a', cmd->args.items[i]);
  for (size_t i = 0; i < cmd->env.len; i++)
    append (&buf, len, 'e', cmd->env.items[i]);
  if (cmd->cwd)
    append (&buf, len, 'c', cmd->cwd);
  return buf;
}

static int
decode_entry (const char *entry, size_t n, ar_take_command *cmd,
              ar_error_t **err)
{
  switch (entry[0])
    {
    case 'a':
      oci_strv_push (&cmd->args, entry + 1);
      return 0;
    case 'e':
      if (strchr (entry + 1, '=') == NULL)
        return ar_error_set (err, 0, "entry %zu: expected NAME=VALUE", n);
      oci_strv_push (&cmd->env, entry + 1);
      return 0;
    case 'c':
      if (cmd->cwd || entry[1] == '\0')
        return ar_error_set (err, 0, "entry %zu: expected one cwd", n);
      cmd->cwd = xstrdup (entry + 1);
      return 0;
    default:
      return ar_error_set (err, 0, "entry %zu: unknown kind", n);
    }
}

int
ar_take_command_decode (const char *buf, size_t len, ar_take_command *cmd,
                        ar_error_t **err)
{
  *cmd = (ar_take_command){ 0 };
  if (len > AR_TAKE_COMMAND_MAX)
    return ar_error_set (err, 0, "take: the command is over %u bytes",
                         AR_TAKE_COMMAND_MAX);
  if (len > 0 && buf[len - 1] != '\0')
    return ar_error_set (err, 0, "take: the command's last entry has no end");
  size_t n = 0;
  for (size_t at = 0; at < len; at += strlen (buf + at) + 1)
    if (decode_entry (buf + at, ++n, cmd, err) < 0)
      {
        ar_take_command_free (cmd);
        return ar_error_prefix (err, "take: the command");
      }
  if (cmd->args.len == 0)
    {
      ar_take_command_free (cmd);
      return ar_error_set (err, 0, "take: the command has no argument");
    }
  return 0;
}
