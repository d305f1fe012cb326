/* SPDX-License-Identifier: Apache-2.0 */
/* approve: a small reference approver (oci/approval.h) for those who have
 * none. It listens on a Unix socket and answers each question by the
 * first rule that matches it, else by asking at its terminal, else by
 * --default. One question at a time: a person answers one at a time. */
#include "config.h"
#include "cmd.h"
#include "../../oci/approval.h"
#include "../util/cleanup.h"
#include "../util/fdpass.h"
#include "../util/text.h"
#include "../util/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* How long a connected asker has to send its line. */
#define REQUEST_SECONDS 5
#define MAX_RULES 4096

static const ar_option options[] = {
  { "socket", 0, true,
    "listen on SOCKET (made 0600; a stale one is replaced)" },
  { "rules", 0, true,
    "FILE of `DECISION WHAT PATTERN` lines (allow-once|allow|deny; dns, connect, secret, exec or *; a glob); the first match decides" },
  { "default", 0, true,
    "the decision when no rule matches and there is no terminal to ask at (default: deny)" },
  { 0 }
};
enum
{
  OPT_SOCKET,
  OPT_RULES,
  OPT_DEFAULT
};
AR_OPTIONS_MATCH (options, OPT_DEFAULT);

static const ar_command_doc doc = {
  "approve", "--socket SOCKET [--rules FILE] [--default DECISION]",
  "Answer an agent sandbox's questions (egress mode ask and secrets.ask: "
  "`sandbox --approver SOCKET`, or a profile's approver): by the first rule that "
  "matches, else by asking at this terminal, else by --default. Prints one "
  "line per decision. Ends on SIGINT or SIGTERM, removing the socket."
};

typedef struct
{
  ar_approval_decision decision;
  char *what; /* "*": any */
  char *pattern;
} rule;

typedef struct
{
  rule *items;
  size_t len;
} rules;

static void
rules_clear (rules *r)
{
  for (size_t i = 0; i < r->len; i++)
    {
      free (r->items[i].what);
      free (r->items[i].pattern);
    }
  free (r->items);
}

/* One line: DECISION WHAT PATTERN, the pattern the rest of the line (an
 * exec's command line has spaces); blank lines and # comments skipped. */
static int
parse_rule (const char *file, unsigned line_no, char *line, rules *out,
            ar_error_t **err)
{
  line[strcspn (line, "#\n")] = '\0';
  char *save = NULL;
  char *decision = strtok_r (line, " \t", &save);
  if (decision == NULL)
    return 0;
  char *what = strtok_r (NULL, " \t", &save);
  char *pattern = strtok_r (NULL, "", &save);
  if (pattern)
    {
      pattern += strspn (pattern, " \t");
      size_t len = strlen (pattern);
      while (len > 0 && (pattern[len - 1] == ' ' || pattern[len - 1] == '\t'))
        pattern[--len] = '\0';
    }
  rule r = { 0 };
  if (what == NULL || pattern == NULL || pattern[0] == '\0')
    return ar_error_set (err, 0, "%s:%u: expected DECISION WHAT PATTERN", file,
                         line_no);
  if (!ar_approval_decision_parse (decision, &r.decision))
    return ar_error_set (err, 0, "%s:%u: `%s`: want allow-once, allow or deny",
                         file, line_no, decision);
  static const char *const whats[]
      = { "dns", "connect", "secret", "exec", "*" };
  bool known = false;
  for (size_t i = 0; i < sizeof whats / sizeof *whats; i++)
    known = known || strcmp (what, whats[i]) == 0;
  if (!known)
    return ar_error_set (err, 0,
                         "%s:%u: `%s`: want dns, connect, secret, exec or *",
                         file, line_no, what);
  if (out->len == MAX_RULES)
    return ar_error_set (err, 0, "%s: more than %d rules", file, MAX_RULES);
  r.what = xstrdup (what);
  r.pattern = xstrdup (pattern);
  out->items = xrealloc (out->items, (out->len + 1) * sizeof *out->items);
  out->items[out->len++] = r;
  return 0;
}

static int
load_rules (const char *file, rules *out, ar_error_t **err)
{
  cleanup_file FILE *f = fopen (file, "re");
  if (f == NULL)
    return ar_error_set (err, errno, "approve: --rules `%s`", file);
  cleanup_free char *line = NULL;
  size_t cap = 0;
  unsigned line_no = 0;
  while (getline (&line, &cap, f) >= 0)
    if (parse_rule (file, ++line_no, line, out, err) < 0)
      return ar_error_prefix (err, "approve: --rules");
  return 0;
}

static const rule *
matching_rule (const rules *r, const ar_approval_request *req)
{
  for (size_t i = 0; i < r->len; i++)
    if ((strcmp (r->items[i].what, "*") == 0
         || strcmp (r->items[i].what, req->what) == 0)
        && fnmatch (r->items[i].pattern, req->where, FNM_CASEFOLD) == 0)
      return &r->items[i];
  return NULL;
}

/* Asked at the terminal; false when there is none (or it closed). `req`
 * is as shown: printable (a command line comes from the container, and
 * escape sequences in it could redraw the question). */
static bool
ask_terminal (const ar_approval_request *req, ar_approval_decision *out)
{
  if (!isatty (STDIN_FILENO))
    return false;
  cleanup_file FILE *tty = fopen ("/dev/tty", "r+e");
  if (tty == NULL)
    return false;
  for (;;)
    {
      fprintf (tty,
               "container %s asks: %s %s%s%s%s -- [o]nce, [a]lways, [d]eny? ",
               req->container, req->what, req->where, req->detail ? " (" : "",
               req->detail ? req->detail : "", req->detail ? ")" : "");
      fflush (tty);
      char answer[64];
      if (fgets (answer, sizeof answer, tty) == NULL)
        return false;
      switch (answer[0])
        {
        case 'o':
          *out = AR_APPROVAL_ALLOW_ONCE;
          return true;
        case 'a':
          *out = AR_APPROVAL_ALLOW;
          return true;
        case 'd':
          *out = AR_APPROVAL_DENY;
          return true;
        }
    }
}

/* The asker's one line, within REQUEST_SECONDS. */
static int
read_request (int conn, ar_approval_request *req, ar_error_t **err)
{
  struct timeval tv = { .tv_sec = REQUEST_SECONDS };
  setsockopt (conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[AR_APPROVAL_LINE_MAX + 1];
  size_t len = 0;
  while (len < sizeof buf && memchr (buf, '\n', len) == NULL)
    {
      ssize_t n = recv (conn, buf + len, sizeof buf - len, 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return ar_error_set (err, n < 0 ? errno : 0, "no request came");
      len += (size_t) n;
    }
  char *nl = memchr (buf, '\n', len);
  return ar_approval_request_decode (buf, nl ? (size_t) (nl - buf) + 1 : len,
                                     req, err);
}

typedef struct
{
  const rules *rules;
  ar_approval_decision fallback;
} policy;

static void
answer_one (const policy *pol, int conn)
{
  ar_approval_request req = { 0 };
  cleanup_error ar_error_t *err = NULL;
  if (read_request (conn, &req, &err) < 0)
    {
      fprintf (stderr, "agentrun: approve: %s\n", ar_error_text (err));
      return;
    }
  ar_approval_request shown = {
    .container = ar_text_printable (req.container),
    .what = ar_text_printable (req.what),
    .where = ar_text_printable (req.where),
    .detail = req.detail ? ar_text_printable (req.detail) : NULL,
  };
  const rule *r = matching_rule (pol->rules, &req);
  ar_approval_decision d = pol->fallback;
  const char *by = "default";
  if (r)
    {
      d = r->decision;
      by = "rule";
    }
  else if (ask_terminal (&shown, &d))
    by = "terminal";
  cleanup_free char *reply = ar_approval_reply_encode (d);
  bool sent = ar_write_all (conn, reply, strlen (reply)) == 0;
  printf ("%s %s %s: %s (%s%s%s)\n", shown.container, shown.what, shown.where,
          ar_approval_decision_name (d), by, r ? " " : "", r ? r->pattern : "");
  if (!sent)
    printf ("%s %s %s: the asker was gone\n", shown.container, shown.what,
            shown.where);
  fflush (stdout);
  ar_approval_request_clear (&shown);
  ar_approval_request_clear (&req);
}

static volatile sig_atomic_t stopping;

static void
on_stop (int sig)
{
  (void) sig;
  stopping = 1;
}

/* Replaces a socket nobody listens on; anything else at `path` is an
 * error. */
static int
listen_at (const char *path, ar_error_t **err)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof addr.sun_path)
    return ar_error_set (err, ENAMETOOLONG, "approve: --socket `%s`", path);
  strcpy (addr.sun_path, path);
  struct stat st;
  if (lstat (path, &st) == 0)
    {
      cleanup_close int probe = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (!S_ISSOCK (st.st_mode)
          || connect (probe, (struct sockaddr *) &addr, sizeof addr) == 0
          || errno != ECONNREFUSED)
        return ar_error_set (err, EEXIST,
                             "approve: --socket `%s`: in use, or not a socket",
                             path);
      unlink (path);
    }
  /* Named only once it listens: an asker started the moment the socket
   * appears is never refused (that would be a deny). */
  cleanup_free char *dir = xstrdup (path);
  char *slash = strrchr (dir, '/');
  const char *name = slash ? slash + 1 : path;
  if (slash)
    *slash = '\0';
  cleanup_close int dirfd = open (slash ? (dir[0] ? dir : "/") : ".",
                                  O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    return ar_error_set (err, errno, "approve: --socket `%s`", path);
  mode_t old = umask (0177);
  int fd = ar_socket_listen_at (dirfd, name, SOCK_STREAM, 64, err);
  umask (old);
  if (fd < 0)
    return ar_error_prefix (err, "approve: --socket `%s`", path);
  return fd;
}

static int
serve (const char *path, const policy *pol, ar_error_t **err)
{
  cleanup_close int listener = listen_at (path, err);
  if (listener < 0)
    return -1;
  struct sigaction sa = { .sa_handler = on_stop };
  sigaction (SIGINT, &sa, NULL);
  sigaction (SIGTERM, &sa, NULL);
  signal (SIGPIPE, SIG_IGN);
  while (!stopping)
    {
      int conn = accept4 (listener, NULL, NULL, SOCK_CLOEXEC);
      if (conn < 0)
        {
          if (errno == EINTR || errno == ECONNABORTED)
            continue;
          unlink (path);
          return ar_error_set (err, errno, "approve: accept");
        }
      answer_one (pol, conn);
      close (conn);
    }
  unlink (path);
  return 0;
}

int
ar_cmd_approve (const ar_globals *g, int argc, char **argv, ar_error_t **err)
{
  (void) g;
  cleanup_parsed ar_parsed p = { 0 };
  int r = ar_cmd_parse (&doc, options, argc, argv, &p, err);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (p.n_args != 0)
    return ar_error_set (err, 0, "approve: `%s`: takes no arguments",
                         p.args[0]);
  if (p.value[OPT_SOCKET] == NULL || p.value[OPT_SOCKET][0] == '\0')
    return ar_error_set (err, 0, "approve: --socket SOCKET is needed");
  policy pol = { .fallback = AR_APPROVAL_DENY };
  if (p.value[OPT_DEFAULT]
      && !ar_approval_decision_parse (p.value[OPT_DEFAULT], &pol.fallback))
    return ar_error_set (
        err, 0, "approve: --default `%s`: want allow-once, allow or deny",
        p.value[OPT_DEFAULT]);
  rules loaded = { 0 };
  pol.rules = &loaded;
  r = p.value[OPT_RULES] ? load_rules (p.value[OPT_RULES], &loaded, err) : 0;
  if (r == 0)
    r = serve (p.value[OPT_SOCKET], &pol, err);
  rules_clear (&loaded);
  return r;
}
