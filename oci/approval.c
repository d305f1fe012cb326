/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "approval.h"
#include "json.h"
#include "../src/util/cleanup.h"

#include <string.h>

static const char *const decision_names[] = {
  [AR_APPROVAL_DENY] = "deny",
  [AR_APPROVAL_ALLOW_ONCE] = "allow-once",
  [AR_APPROVAL_ALLOW] = "allow",
};

const char *
ar_approval_decision_name (ar_approval_decision d)
{
  return decision_names[d];
}

bool
ar_approval_decision_parse (const char *text, ar_approval_decision *out)
{
  for (size_t i = 0; i < sizeof decision_names / sizeof *decision_names; i++)
    if (strcmp (text, decision_names[i]) == 0)
      {
        *out = (ar_approval_decision) i;
        return true;
      }
  return false;
}

char *
ar_approval_request_encode (const ar_approval_request *req)
{
  yajl_gen g = oj_gen_new (false, NULL);
  yajl_gen_map_open (g);
  oj_gen_kv_string (g, "container", req->container);
  oj_gen_kv_string (g, "what", req->what);
  oj_gen_kv_string (g, "where", req->where);
  if (req->detail)
    oj_gen_kv_string (g, "detail", req->detail);
  yajl_gen_map_close (g);
  cleanup_free char *json = oj_gen_finish (g);
  return xasprintf ("%s\n", json);
}

/* The line as a JSON object; its trailing newline is not part of it. */
static int
parse_line (const char *line, size_t len, const char *what, oj_value *out,
            ar_error_t **err)
{
  while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
    len--;
  if (len == 0 || len > AR_APPROVAL_LINE_MAX)
    return ar_error_set (err, 0, "%s: %s", what,
                         len ? "longer than a line may be" : "empty");
  if (memchr (line, '\n', len))
    return ar_error_set (err, 0, "%s: more than one line", what);
  if (oj_parse (line, len, what, out, err) < 0)
    return -1;
  if (out->type != OJ_OBJECT)
    return ar_error_set (err, 0, "%s: expected a JSON object", what);
  return 0;
}

/* A string member without NULs, or NULL when `optional` and absent. */
static int
string_member (const oj_value *obj, const char *what, const char *key,
               bool optional, char **out, ar_error_t **err)
{
  const oj_value *v = oj_get (obj, key);
  if (v == NULL && optional)
    return 0;
  if (v == NULL || v->type != OJ_STRING || v->len == 0
      || memchr (v->text, '\0', v->len))
    return ar_error_set (err, 0, "%s: .%s: expected a non-empty string", what,
                         key);
  *out = xstrndup (v->text, v->len);
  return 0;
}

int
ar_approval_request_decode (const char *line, size_t len,
                            ar_approval_request *out, ar_error_t **err)
{
  *out = (ar_approval_request){ 0 };
  oj_value v = { 0 };
  int r = parse_line (line, len, "request", &v, err);
  if (r == 0)
    r = string_member (&v, "request", "container", false, &out->container, err);
  if (r == 0)
    r = string_member (&v, "request", "what", false, &out->what, err);
  if (r == 0)
    r = string_member (&v, "request", "where", false, &out->where, err);
  if (r == 0)
    r = string_member (&v, "request", "detail", true, &out->detail, err);
  oj_value_clear (&v);
  if (r < 0)
    ar_approval_request_clear (out);
  return r;
}

void
ar_approval_request_clear (ar_approval_request *req)
{
  free (req->container);
  free (req->what);
  free (req->where);
  free (req->detail);
  *req = (ar_approval_request){ 0 };
}

char *
ar_approval_reply_encode (ar_approval_decision d)
{
  return xasprintf ("{\"decision\":\"%s\"}\n", ar_approval_decision_name (d));
}

int
ar_approval_reply_decode (const char *line, size_t len,
                          ar_approval_decision *out, ar_error_t **err)
{
  oj_value v = { 0 };
  cleanup_free char *text = NULL;
  int r = parse_line (line, len, "reply", &v, err);
  if (r == 0)
    r = string_member (&v, "reply", "decision", false, &text, err);
  oj_value_clear (&v);
  if (r == 0 && !ar_approval_decision_parse (text, out))
    r = ar_error_set (
        err, 0, "reply: .decision: `%s`: want allow-once, allow or deny", text);
  return r;
}
