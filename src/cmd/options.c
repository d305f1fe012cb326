/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "cmd.h"

#include <stdio.h>
#include <string.h>

#include "../util/cleanup.h"

static int
find_long (const ar_option *opts, const char *name, size_t len)
{
  for (int i = 0; opts[i].long_name; i++)
    if (strlen (opts[i].long_name) == len
        && strncmp (opts[i].long_name, name, len) == 0)
      return i;
  return -1;
}

static int
find_short (const ar_option *opts, char c)
{
  for (int i = 0; opts[i].long_name; i++)
    if (opts[i].short_name == c)
      return i;
  return -1;
}

/* Resolve one "-x", "-name", "--name" or "--name=value" word. */
static int
lookup (const ar_option *opts, const char *word, const char **inline_value)
{
  const char *name = word + 1 + (word[1] == '-');
  const char *eq = strchr (name, '=');
  size_t len = eq ? (size_t) (eq - name) : strlen (name);
  *inline_value = eq ? eq + 1 : NULL;
  int i = find_long (opts, name, len);
  if (i < 0 && word[1] != '-' && len == 1)
    i = find_short (opts, name[0]);
  return i;
}

static bool
is_help_flag (const char *word)
{
  return strcmp (word, "-h") == 0 || strcmp (word, "--help") == 0
         || strncmp (word, "--help=", strlen ("--help=")) == 0;
}

/* --help=man and --help=completion are how `agentrun help --man VERB`
 * reaches a verb's own tables. */
static int
parse_help_format (const char *verb, const char *word, ar_help_format *format,
                   ar_error_t **err)
{
  const char *eq = strchr (word, '=');
  if (eq == NULL || strcmp (eq + 1, "text") == 0)
    *format = AR_HELP_TEXT;
  else if (strcmp (eq + 1, "man") == 0)
    *format = AR_HELP_MAN;
  else if (strcmp (eq + 1, "completion") == 0)
    *format = AR_HELP_COMPLETION;
  else
    return ar_error_set (
        err, 0, "%s%s--help: unknown format `%s` (text, man or completion)",
        verb ? verb : "", verb ? ": " : "", eq + 1);
  return 0;
}

static void
keep_value (ar_parsed *out, int o, const char *value)
{
  out->multi[o]
      = xrealloc (out->multi[o], (out->n_multi[o] + 2) * sizeof (char *));
  out->multi[o][out->n_multi[o]++] = (char *) value;
  out->multi[o][out->n_multi[o]] = NULL;
}

void
ar_parsed_free (ar_parsed *p)
{
  for (int i = 0; i < AR_MAX_OPTIONS; i++)
    free (p->multi[i]);
}

/* The global flags, parsed first (verb NULL): a verb's error for one of
 * them given after it says where it goes. */
static const ar_option *global_opts;

static int
unknown_flag (const char *verb, const char *word, ar_error_t **err)
{
  const char *value;
  int g = verb && global_opts ? lookup (global_opts, word, &value) : -1;
  if (g >= 0)
    return ar_error_set (
        err, 0,
        "%s: `%s` is a global flag: give it before the verb (agentrun %s%s %s …)",
        verb, word, word,
        global_opts[g].takes_value && value == NULL ? " VALUE" : "", verb);
  return ar_error_set (err, 0, "%s%sunknown flag `%s`", verb ? verb : "",
                       verb ? ": " : "", word);
}

/* A value that starts with '-' (but for a negative number) is a flag the
 * user gave after one that needs a value: `--allow-net -- true`. */
static bool
looks_like_flag (const char *value)
{
  return value[0] == '-' && value[1] != '\0'
         && !(value[1] >= '0' && value[1] <= '9');
}

int
ar_parse_options (const char *verb, const ar_option *opts, int argc,
                  char **argv, bool options_end_at_first_arg, ar_parsed *out,
                  ar_error_t **err)
{
  memset (out, 0, sizeof *out);
  if (verb == NULL)
    global_opts = opts;
  out->args = argv + 1;
  int n = 0;
  bool only_args = false;
  for (int i = 1; i < argc; i++)
    {
      const char *w = argv[i];
      if (only_args || w[0] != '-' || w[1] == '\0')
        {
          argv[1 + n++] = argv[i];
          only_args = only_args || options_end_at_first_arg;
          continue;
        }
      if (strcmp (w, "--") == 0)
        {
          only_args = true;
          continue;
        }
      const char *inline_value;
      int o = lookup (opts, w, &inline_value);
      if (o < 0 && is_help_flag (w))
        {
          if (parse_help_format (verb, w, &out->help, err) < 0)
            return -1;
          continue;
        }
      if (o < 0)
        return unknown_flag (verb, w, err);
      out->present[o] = true;
      if (!opts[o].takes_value)
        out->value[o] = inline_value ? inline_value : "true";
      else if (inline_value)
        out->value[o] = inline_value;
      else if (i + 1 < argc && looks_like_flag (argv[i + 1]))
        return ar_error_set (
            err, 0,
            "%s%sflag `%s` needs a value, not the flag `%s` (write %s=VALUE for a value that starts with -)",
            verb ? verb : "", verb ? ": " : "", w, argv[i + 1], w);
      else if (i + 1 < argc)
        out->value[o] = argv[++i];
      else
        return ar_error_set (err, 0, "%s%sflag `%s` needs a value",
                             verb ? verb : "", verb ? ": " : "", w);
      if (opts[o].repeatable)
        keep_value (out, o, out->value[o]);
    }
  out->n_args = n;
  return 0;
}

bool
ar_flag (const ar_parsed *p, int index)
{
  return p->present[index] && strcmp (p->value[index], "false") != 0;
}

int
ar_require_args (const char *verb, const ar_parsed *p, int n, const char *names,
                 ar_error_t **err)
{
  if (p->n_args != n)
    return ar_error_set (err, 0, "%s: expected %s, got %d argument%s", verb,
                         names, p->n_args, p->n_args == 1 ? "" : "s");
  return 0;
}

int
ar_cmd_parse (const ar_command_doc *doc, const ar_option *opts, int argc,
              char **argv, ar_parsed *p, ar_error_t **err)
{
  if (ar_parse_options (doc->verb, opts, argc, argv,
                        doc->options_end_at_first_arg, p, err)
      < 0)
    return -1;
  if (p->help)
    {
      ar_print_usage (doc, opts, p->help);
      return 1;
    }
  return 0;
}
