/* SPDX-License-Identifier: Apache-2.0 */
/* agentrun: global flags, then one subcommand. */
#include "config.h"
#include "cmd/cmd.h"
#include "cmd/failure_status.h"
#include "core/container.h"
#include "core/state.h"
#include "core/launcher_wire.h"
#include "util/cleanup.h"
#include "util/sealed_exe.h"
#include "util/timings.h"
#include "util/userns.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

/* What agentrun is, in --help and in agentrun(8). */
#define SUMMARY "OCI container runtime for the untrusted work of AI agents"

static int help (const ar_globals *g, int argc, char **argv, ar_error_t **err);

static const struct
{
  const char *name;
  ar_cmd_fn fn;
  bool enters_container; /* runs a process of ours inside a container */
  const char *what;
} commands[] = {
  { "create", ar_cmd_create, true, "create a container" },
  { "start", ar_cmd_start, false, "start a created container" },
  { "run", ar_cmd_run, true, "create and start a container, and wait for it" },
  { "exec", ar_cmd_exec, true, "run a new process in a running container" },
  { "state", ar_cmd_state, false, "print the state of a container" },
  { "kill", ar_cmd_kill, false, "send a signal to a container" },
  { "delete", ar_cmd_delete, false, "delete a container" },
  { "list", ar_cmd_list, false, "list containers" },
  { "ps", ar_cmd_ps, false, "list the processes of a container" },
  { "pause", ar_cmd_pause, false, "freeze a container" },
  { "resume", ar_cmd_resume, false, "thaw a paused container" },
  { "spec", ar_cmd_spec, false, "write a new config.json" },
  /* Sealed by itself, unless it takes one made ahead (--pool). */
  { "sandbox", ar_cmd_sandbox, false,
    "run a command in a fresh agent sandbox, no bundle needed" },
  { "pool", ar_cmd_pool, true,
    "keep agent sandboxes made ahead, for sandbox --pool" },
  { "snapshot", ar_cmd_snapshot, false,
    "save, list and remove copies of an agent container's layers" },
  /* Sealed: its new init is a clone of this process. */
  { "rollback", ar_cmd_rollback, true,
    "put an agent container back to one of its snapshots" },
  { "update", ar_cmd_update, false,
    "change the resource limits of a container" },
  { "events", ar_cmd_events, false,
    "print container statistics and OOM events" },
  { "features", ar_cmd_features, false,
    "print the features this build supports" },
  { "audit", ar_cmd_audit, false, "verify the hash chain of an audit log" },
  { "approve", ar_cmd_approve, false,
    "answer agent sandboxes' questions (egress mode ask): rules, or a prompt" },
  { "checkpoint", ar_cmd_checkpoint, false,
    "checkpoint a running container with CRIU" },
  { "restore", ar_cmd_restore, false,
    "restore a container from a CRIU checkpoint" },
  { "help", help, false, "print the help of agentrun or of a command" },
  { "version", ar_cmd_version, false,
    "print the version and the libraries' versions" },
};

static const ar_option global_options[] = {
  { "root", 0, true,
    "state directory (default " AR_DEFAULT_ROOT
    ", without root $XDG_RUNTIME_DIR/agentrun)" },
  { "profile", 0, true,
    "agent policy profile: oci, agent, or NAME for "
    "/etc/agentrun/profiles/NAME.json ($AGENTRUN_CONFIG_DIR/profiles)" },
  { "log", 0, true, "also write errors and debug output to this file" },
  { "log-format", 0, true, "text (default) or json" },
  { "debug", 0, false, "verbose log" },
  { "systemd-cgroup", 0, false,
    "make cgroups as systemd transient units (cgroupsPath slice:prefix:name)" },
  { "rootless", 0, true,
    "run as an unprivileged user: true, false or auto (default: not real root)" },
  { "rootless-limits", 0, true,
    "without root and without a delegated cgroup: refuse (default) or ignore (warn and run without) linux.resources limits" },
  { "criu", 0, true, "accepted for runc compatibility; unused" },
  { "version", 'v', false, "print the version" },
  { 0 }
};
enum
{
  G_ROOT,
  G_PROFILE,
  G_LOG,
  G_LOG_FORMAT,
  G_DEBUG,
  G_SYSTEMD_CGROUP,
  G_ROOTLESS,
  G_ROOTLESS_LIMITS,
  G_CRIU,
  G_VERSION
};
AR_OPTIONS_MATCH (global_options, G_VERSION);

/* .TH and NAME of agentrun(8) (verb NULL) or agentrun-VERB(8). No date:
 * every build of one version makes the same page. */
static void
print_man_header (const char *verb, const char *what)
{
  printf (".TH AGENTRUN%s", verb ? "\\-" : "");
  for (const char *c = verb; c && *c; c++)
    putchar (toupper ((unsigned char) *c));
  printf (" 8 \"\" \"agentrun %s\" \"System Administration\"\n.SH NAME\n"
          "agentrun%s%s \\- ",
          PACKAGE_VERSION, verb ? "\\-" : "", verb ? verb : "");
  ar_put_roff (what);
  putchar ('\n');
}

static void
print_commands (ar_help_format format)
{
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (format == AR_HELP_MAN)
      {
        printf (".TP\n\\fB%s\\fR\n", commands[i].name);
        ar_put_roff (commands[i].what);
        printf (": \\fBagentrun\\-%s\\fR(8)\n", commands[i].name);
      }
    else if (format == AR_HELP_COMPLETION)
      printf ("command\t%s\t%s\n", commands[i].name, commands[i].what);
    else
      printf ("  %-10s %s\n", commands[i].name, commands[i].what);
}

static void
usage (ar_help_format format)
{
  if (format == AR_HELP_MAN)
    {
      print_man_header (NULL, SUMMARY);
      printf (
          ".SH SYNOPSIS\n\\fBagentrun\\fR [\\fIGLOBAL OPTIONS\\fR] \\fICOMMAND\\fR "
          "[\\fIOPTIONS\\fR] [\\fIARGS\\fR]\n"
          ".SH DESCRIPTION\nAn " SUMMARY ".\n"
          ".SH COMMANDS\n");
    }
  else if (format == AR_HELP_TEXT)
    printf ("Usage: agentrun [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]\n\n"
            "An " SUMMARY ".\n\n"
            "Commands:\n");
  print_commands (format);
  if (format == AR_HELP_MAN)
    printf (".SH GLOBAL OPTIONS\n");
  else if (format == AR_HELP_TEXT)
    printf ("\nGlobal options:\n");
  ar_print_options (global_options, format);
  if (format == AR_HELP_TEXT)
    printf ("\n`agentrun help COMMAND` (or `agentrun COMMAND --help`) shows a "
            "command's options.\n");
}

/* logrus's text form of a value: quoted, with \ and " escaped. */
static void
put_logrus_value (FILE *f, const char *v)
{
  fputc ('"', f);
  for (; *v; v++)
    {
      if (*v == '"' || *v == '\\')
        fputc ('\\', f);
      if (*v == '\n')
        fputs ("\\n", f);
      else
        fputc (*v, f);
    }
  fputc ('"', f);
}

/* One log line as runc writes it: logrus text (time="..." level=debug
 * msg="...") or JSON {"level","msg","time"}, which containerd's shim
 * reads back from the --log file. Without --log, debug lines go to
 * stderr as runc's do; errors are printed there anyway. */
static void
log_line (const ar_globals *g, const char *level, const char *msg)
{
  bool to_stderr = g->log_path == NULL;
  if (to_stderr && strcmp (level, "debug") != 0)
    return;
  cleanup_file FILE *file = to_stderr ? NULL : fopen (g->log_path, "ae");
  FILE *f = to_stderr ? stderr : file;
  if (f == NULL)
    return;
  cleanup_free char *now = ar_now_rfc3339 ();
  if (!g->log_json)
    {
      fputs ("time=", f);
      put_logrus_value (f, now);
      fprintf (f, " level=%s msg=", level);
      put_logrus_value (f, msg);
      fputc ('\n', f);
      return;
    }
  yajl_gen gen = yajl_gen_alloc (NULL);
  yajl_gen_map_open (gen);
  const char *kv[] = { "level", level, "msg", msg, "time", now };
  for (size_t i = 0; i < 6; i++)
    yajl_gen_string (gen, (const unsigned char *) kv[i], strlen (kv[i]));
  yajl_gen_map_close (gen);
  const unsigned char *buf;
  size_t len;
  yajl_gen_get_buf (gen, &buf, &len);
  fprintf (f, "%.*s\n", (int) len, buf);
  yajl_gen_free (gen);
}

/* runc opens --log as it starts, so a log it cannot write fails every
 * command, not only one that logs; it is made as runc makes it (0644).
 * Not kept open: the container's init is forked from this process. */
static int
check_log_file (const char *path, ar_error_t **err)
{
  int fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return ar_error_set (err, errno, "--log: open `%s`", path);
  close (fd);
  return 0;
}

/* Global flags stop at the first word that is not one: the command. */
/* Invoked as agentrun-NAME (a link to agentrun), the profile is NAME
 * unless --profile says otherwise: engines that take only a binary path
 * (containerd's BinaryName, a Kubernetes RuntimeClass) choose it so. */
static const char *
profile_of_name (const char *argv0)
{
  const char *base = strrchr (argv0, '/');
  base = base ? base + 1 : argv0;
  const char *prefix = "agentrun-";
  if (strncmp (base, prefix, strlen (prefix)) != 0
      || base[strlen (prefix)] == '\0')
    return NULL;
  return base + strlen (prefix);
}

/* runc's --rootless: "auto" (the default) is rootless unless this is real
 * root, i.e. uid 0 of the initial user namespace. */
static int
parse_rootless (const char *mode, const char *limits, ar_globals *g,
                ar_error_t **err)
{
  if (mode == NULL || strcmp (mode, "auto") == 0)
    g->rootless = ar_userns_unprivileged ();
  else if (strcmp (mode, "true") == 0 || strcmp (mode, "false") == 0)
    g->rootless = strcmp (mode, "true") == 0;
  else
    return ar_error_set (err, 0, "--rootless: `%s` is not true, false or auto",
                         mode);
  if (limits && strcmp (limits, "refuse") != 0
      && strcmp (limits, "ignore") != 0)
    return ar_error_set (
        err, 0, "--rootless-limits: `%s` is not refuse or ignore", limits);
  g->ignore_unenforced_limits = limits && strcmp (limits, "ignore") == 0;
  return 0;
}

/* An ordinary user cannot write /run, nor can uid 0 of a user namespace
 * (rootless Podman's runtime): state goes where the user's other runtime
 * state lives, as runc keeps it. */
static const char *
default_root (const ar_globals *g, char *buf, size_t len)
{
  const char *xdg = getenv ("XDG_RUNTIME_DIR");
  if (!g->rootless || !ar_userns_unprivileged () || xdg == NULL || xdg[0] != '/'
      || (size_t) snprintf (buf, len, "%s/agentrun", xdg) >= len)
    return AR_DEFAULT_ROOT;
  return buf;
}

/* Returns 0 when a command follows, 1 when --help or --version was all
 * there is to do (*help says which), -1 on error. */
static int
parse_globals (int argc, char **argv, ar_globals *g, int *command_index,
               ar_help_format *help, char *root_buf, size_t root_len,
               ar_error_t **err)
{
  /* Find the command word: skip flags and the values of those that take
   * one, so `--root /x create` finds `create`, not `/x`. */
  int end = 1;
  while (end < argc && argv[end][0] == '-')
    {
      const char *name = argv[end] + 1 + (argv[end][1] == '-');
      bool has_inline = strchr (name, '=') != NULL;
      bool takes_value = false;
      for (int o = 0; global_options[o].long_name; o++)
        if (strcmp (name, global_options[o].long_name) == 0)
          takes_value = global_options[o].takes_value;
      end += (takes_value && !has_inline) ? 2 : 1;
    }
  if (end > argc)
    end = argc;
  cleanup_parsed ar_parsed p = { 0 };
  char *saved = argv[0];
  if (ar_parse_options (NULL, global_options, end, argv, false, &p, err) < 0)
    return -1;
  argv[0] = saved;
  *help = p.help;
  if (p.help || ar_flag (&p, G_VERSION))
    return 1;
  g->systemd_cgroup = ar_flag (&p, G_SYSTEMD_CGROUP);
  if (parse_rootless (p.value[G_ROOTLESS], p.value[G_ROOTLESS_LIMITS], g, err)
      < 0)
    return -1;
  g->root = p.value[G_ROOT] ? p.value[G_ROOT]
                            : default_root (g, root_buf, root_len);
  g->log_path = p.value[G_LOG];
  if (g->log_path && check_log_file (g->log_path, err) < 0)
    return -1;
  g->profile
      = p.value[G_PROFILE] ? p.value[G_PROFILE] : profile_of_name (argv[0]);
  g->debug = ar_flag (&p, G_DEBUG);
  const char *format = p.value[G_LOG_FORMAT] ? p.value[G_LOG_FORMAT] : "text";
  if (strcmp (format, "json") != 0 && strcmp (format, "text") != 0)
    return ar_error_set (
        err, 0, "--log-format: unknown format `%s` (text or json)", format);
  g->log_json = strcmp (format, "json") == 0;
  *command_index = end;
  return 0;
}

static int
find_command (const char *name)
{
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp (commands[i].name, name) == 0)
      return (int) i;
  return -1;
}

enum
{
  H_MAN,
  H_COMPLETION
};
static const ar_option help_options[] = {
  { "man", 0, false,
    "print it as a man page (roff): agentrun help --man COMMAND | man -l -" },
  { "completion", 0, false,
    "print the commands, or COMMAND's usage, and the flags as tab-separated lines, for shell completion" },
  { 0 }
};
AR_OPTIONS_MATCH (help_options, H_COMPLETION);

static const ar_command_doc help_doc = {
  "help", "[--man | --completion] [COMMAND]",
  "Print the help of agentrun, or of COMMAND (what `agentrun COMMAND --help`\n"
  "prints), as text, as a man page or for shell completion."
};

/* `help` alone is --help; `help VERB` is `VERB --help`; --man and
 * --completion ask for the same tables in those forms (for make and for
 * contrib/completion). */
static int
help (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&help_doc, help_options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (ar_flag (&p, H_MAN) && ar_flag (&p, H_COMPLETION))
    return ar_error_set (err, 0,
                         "help: --man and --completion exclude each other");
  if (p.n_args > 1)
    return ar_error_set (err, 0, "help: expected at most one COMMAND, got %d",
                         p.n_args);
  ar_help_format format = ar_flag (&p, H_MAN)          ? AR_HELP_MAN
                          : ar_flag (&p, H_COMPLETION) ? AR_HELP_COMPLETION
                                                       : AR_HELP_TEXT;
  if (p.n_args == 0)
    {
      usage (format);
      return 0;
    }
  int c = find_command (p.args[0]);
  if (c < 0)
    return ar_error_set (
        err, 0, "help: unknown command `%s` (see agentrun --help)", p.args[0]);
  static const char *const help_flag[]
      = { [AR_HELP_TEXT] = "--help",
          [AR_HELP_MAN] = "--help=man",
          [AR_HELP_COMPLETION] = "--help=completion" };
  if (format == AR_HELP_MAN)
    print_man_header (commands[c].name, commands[c].what);
  char *args[]
      = { (char *) commands[c].name, (char *) help_flag[format], NULL };
  return commands[c].fn (g, 2, args, err);
}

/* Where the command's time went, phase by phase (util/timings.h). */
static void
log_timings (const ar_globals *g, const char *name)
{
  ar_timings_mark ("rest");
  cleanup_free char *phases = ar_timings_summary ();
  cleanup_free char *line = xasprintf ("%s: timings: %s", name, phases);
  log_line (g, "debug", line);
}

int
main (int argc, char **argv, char **envp)
{
  ar_globals g = { .root = AR_DEFAULT_ROOT, .argv = argv, .envp = envp };
  cleanup_error ar_error_t *err = NULL;
  /* The launcher's word is for this process alone: no process of ours,
   * nor a container's, inherits it. */
  const char *handover = getenv (AR_TAKE_HANDOVER_ENV);
  cleanup_free char *take_handover = handover ? xstrdup (handover) : NULL;
  unsetenv (AR_TAKE_HANDOVER_ENV);
  g.take_handover = take_handover;
  int command_index = 0;
  int status = 1;

  ar_cmd_install_agent_stage ();
  char root_buf[PATH_MAX];
  ar_help_format help_format = AR_HELP_NONE;
  int r = parse_globals (argc, argv, &g, &command_index, &help_format, root_buf,
                         sizeof root_buf, &err);
  if (r == 1 && help_format == AR_HELP_NONE) /* --version */
    {
      ar_print_version ();
      return 0;
    }
  if (r == 1 || (r == 0 && command_index >= argc))
    {
      usage (help_format ? help_format : AR_HELP_TEXT);
      return r == 1 ? 0 : 1;
    }
  if (r == 0)
    {
      const char *name = argv[command_index];
      int c = find_command (name);
      if (c < 0)
        ar_error_set (&err, 0, "unknown command `%s` (see agentrun --help)",
                      name);
      else if (!commands[c].enters_container
               || ar_prepare_container_command (NULL, 0, argv, envp, &err) == 0)
        {
          /* The verb and its result only: arguments (an exec command
           * line) may hold what must never reach a log. */
          if (g.debug)
            {
              log_line (&g, "debug", name);
              ar_timings_begin ();
            }
          status = commands[c].fn (&g, argc - command_index,
                                   argv + command_index, &err);
          if (g.debug)
            log_timings (&g, name);
          if (g.debug && err == NULL)
            {
              cleanup_free char *done
                  = xasprintf ("%s: exit status %d", name, status);
              log_line (&g, "debug", done);
            }
        }
    }
  if (err)
    {
      fprintf (stderr, "agentrun: %s\n", ar_error_text (err));
      log_line (&g, "error", ar_error_text (err));
      return ar_cmd_failure_status (r == 0 ? argv[command_index] : NULL, err);
    }
  return status;
}
