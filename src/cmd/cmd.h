/* SPDX-License-Identifier: Apache-2.0 */
/* The subcommands. Each parses its own flags and calls into src/core. */
#ifndef AR_CMD_CMD_H
#define AR_CMD_CMD_H

#include "../util/error.h"
#include <stdbool.h>
#include <stddef.h>

typedef struct
{
  const char *root;
  const char *profile; /* --profile: agent policy profile, NULL: default */
  const char *log_path;
  bool log_json;
  bool debug;
  bool systemd_cgroup; /* --systemd-cgroup: cgroups as systemd units */
  bool rootless;       /* --rootless, resolved: not real root */
  bool ignore_unenforced_limits; /* --rootless-limits=ignore */
  /* main's own, for a command that re-executes itself sealed only on
   * some paths (ar_prepare_container_command). */
  char **argv;
  char **envp;
  /* The launcher's take, for `sandbox --pool` (core/take.h): what it
   * left in AR_TAKE_HANDOVER_ENV, gone from the environment. */
  const char *take_handover;
} ar_globals;

/* Returns the process exit status, or -1 with *err set. */
typedef int (*ar_cmd_fn) (const ar_globals *g, int argc, char **argv,
                          ar_error_t **err);

typedef struct
{
  const char *long_name; /* matched as --name, -name and --name=value */
  char short_name;       /* 0 when none */
  bool takes_value;
  const char *help;
  bool repeatable; /* every value is kept, in order, in ar_parsed.multi */
} ar_option;

#define AR_MAX_OPTIONS 32

/* An option table ends with { 0 }; its entries are indexed by an enum
 * whose last member is LAST (AR_OPTIONS_MATCH) or by position
 * (AR_OPTIONS_FIT), and must fit an ar_parsed. Checked when compiling:
 * a flag added to one and not the other would read another's value. */
#define AR_OPTIONS_FIT(table)                                                  \
  _Static_assert(sizeof (table) / sizeof (table)[0] <= AR_MAX_OPTIONS + 1,     \
                 #table " has more options than AR_MAX_OPTIONS")
#define AR_OPTIONS_MATCH(table, last)                                          \
  _Static_assert(sizeof (table) / sizeof (table)[0] == (size_t) (last) + 2,    \
                 #table " and its enum differ");                               \
  AR_OPTIONS_FIT (table)

/* What --help prints: the text people read, or (from `agentrun help --man`
 * and `--completion`, which pass --help=man and --help=completion) the
 * same tables as a man page and as the lines the shell completion reads. */
typedef enum
{
  AR_HELP_NONE,
  AR_HELP_TEXT,
  AR_HELP_MAN,
  AR_HELP_COMPLETION
} ar_help_format;

typedef struct
{
  const char *value[AR_MAX_OPTIONS]; /* last value given, or "true" */
  bool present[AR_MAX_OPTIONS];
  char **args; /* positional arguments; points into argv */
  int n_args;
  ar_help_format help;          /* --help, -h or --help=FORMAT was given */
  char **multi[AR_MAX_OPTIONS]; /* values of repeatable options, NULL-ended */
  size_t n_multi[AR_MAX_OPTIONS];
} ar_parsed;

void ar_parsed_free (ar_parsed *p);

/* The agent policy becomes the core's policy stage (agent_stage.c). */
void ar_cmd_install_agent_stage (void);
#define cleanup_parsed __attribute__ ((cleanup (ar_parsed_free)))

typedef struct
{
  const char *verb;
  const char *usage;             /* "[OPTIONS] CONTAINER_ID" */
  const char *what;              /* one sentence */
  bool options_end_at_first_arg; /* exec: `exec ID ls -l` keeps -l */
} ar_command_doc;

/* Parse; on --help print the usage and return 1; 0 when parsed; -1 on
 * error. Commands return early on non-zero. */
int ar_cmd_parse (const ar_command_doc *doc, const ar_option *opts, int argc,
                  char **argv, ar_parsed *p, ar_error_t **err);

/* Parse argv[1..] (argv[0] is the verb). Options and positionals may mix;
 * "--" ends options. Errors name the flag. */
int ar_parse_options (const char *verb, const ar_option *opts, int argc,
                      char **argv, bool options_end_at_first_arg,
                      ar_parsed *out, ar_error_t **err);

/* Boolean option: present and not "false". */
bool ar_flag (const ar_parsed *p, int index);

/* usage.c: print "Usage: agentrun VERB USAGE", the description and the
 * options to stdout, in the format asked for. */
void ar_print_usage (const ar_command_doc *doc, const ar_option *opts,
                     ar_help_format format);

/* The options alone and -h, --help, as ar_print_usage prints them (for
 * main's global options). */
void ar_print_options (const ar_option *opts, ar_help_format format);

/* Text for roff: \ and leading . and ' escaped, - as \- so that a flag
 * can be searched for and copied from the rendered page. */
void ar_put_roff (const char *text);

/* Require exactly `n` positionals (container id, ...). */
int ar_require_args (const char *verb, const ar_parsed *p, int n,
                     const char *names, ar_error_t **err);

/* Options create and run share, first in both tables, in this order. */
#define AR_CREATE_OPTIONS                                                      \
  { "bundle", 'b', true, "path to the bundle directory (default: .)" },        \
      { "console-socket", 0, true,                                             \
        "unix socket that receives the pty master (process.terminal)" },       \
      { "pid-file", 0, true, "write the container init's pid to this file" },  \
      { "no-pivot", 0, false, "use chroot instead of pivot_root" },            \
      { "no-new-keyring", 0, false, "keep the caller's session keyring" },     \
  {                                                                            \
    "preserve-fds", 0, true, "pass N extra fds (3, 4, ...) to the container"   \
  }
enum
{
  AR_OPT_BUNDLE,
  AR_OPT_CONSOLE_SOCKET,
  AR_OPT_PID_FILE,
  AR_OPT_NO_PIVOT,
  AR_OPT_NO_NEW_KEYRING,
  AR_OPT_PRESERVE_FDS,
  AR_CREATE_OPTIONS_COUNT
};

struct ar_create_options;
int ar_create_options_fill (const ar_globals *g, const ar_parsed *p,
                            struct ar_create_options *opts, ar_error_t **err);

int
ar_cmd_create (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int ar_cmd_start (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int ar_cmd_run (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int ar_cmd_exec (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int ar_cmd_state (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int ar_cmd_kill (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int
ar_cmd_delete (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int ar_cmd_list (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int ar_cmd_ps (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int ar_cmd_pause (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int
ar_cmd_resume (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int
ar_cmd_sandbox (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int
ar_cmd_snapshot (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int
ar_cmd_rollback (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int
ar_cmd_approve (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int ar_cmd_pool (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int ar_cmd_spec (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int
ar_cmd_update (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int
ar_cmd_events (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int
ar_cmd_features (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int ar_cmd_audit (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int ar_cmd_checkpoint (const ar_globals *g, int argc, char **argv,
                       ar_error_t **err);
int
ar_cmd_restore (const ar_globals *g, int argc, char **argv, ar_error_t **err);
int
ar_cmd_version (const ar_globals *g, int argc, char **argv, ar_error_t **err);

/* --version and `version`: runc's lines, then the libraries'. */
void ar_print_version (void);

#endif
