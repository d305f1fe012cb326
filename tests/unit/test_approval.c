/* SPDX-License-Identifier: Apache-2.0 */
/* oci/approval: the approver protocol's lines, both ways; what is not a
 * well-formed line is an error that says what is wrong. */
#include "config.h"
#include "unit.h"
#include "../../oci/approval.h"
#include "../../src/util/cleanup.h"
#include "../../src/util/text.h"

static void
test_request_round_trip (void)
{
  const ar_approval_request req = { .container = (char *) "c1",
                                    .what = (char *) "dns",
                                    .where = (char *) "pypi.org",
                                    .detail = (char *) "AAAA" };
  cleanup_free char *line = ar_approval_request_encode (&req);
  CHECK_STR (line, "{\"container\":\"c1\",\"what\":\"dns\",\"where\":"
                   "\"pypi.org\",\"detail\":\"AAAA\"}\n");
  ar_approval_request got;
  ar_error_t *err = NULL;
  CHECK_INT (ar_approval_request_decode (line, strlen (line), &got, &err), 0);
  CHECK_STR (got.container, "c1");
  CHECK_STR (got.where, "pypi.org");
  CHECK_STR (got.detail, "AAAA");
  ar_approval_request_clear (&got);
  /* A name with quotes and control bytes stays one line. */
  const ar_approval_request odd = { .container = (char *) "c\"1",
                                    .what = (char *) "dns",
                                    .where = (char *) "a\nb" };
  cleanup_free char *odd_line = ar_approval_request_encode (&odd);
  CHECK (strchr (odd_line, '\n') == odd_line + strlen (odd_line) - 1);
  CHECK_INT (
      ar_approval_request_decode (odd_line, strlen (odd_line), &got, &err), 0);
  CHECK_STR (got.where, "a\nb");
  CHECK (got.detail == NULL);
  ar_approval_request_clear (&got);
}

static void
test_replies (void)
{
  static const struct
  {
    const char *line;
    int decision; /* -1: an error, `want` its text */
    const char *want;
  } cases[] = {
    { "{\"decision\":\"allow-once\"}\n", AR_APPROVAL_ALLOW_ONCE, NULL },
    { "{\"decision\":\"allow\"}", AR_APPROVAL_ALLOW, NULL },
    { "{\"decision\":\"deny\",\"note\":\"no\"}\r\n", AR_APPROVAL_DENY, NULL },
    { "{\"decision\":\"yes\"}\n", -1,
      "reply: .decision: `yes`: want allow-once, allow or deny" },
    { "{\"decision\":1}\n", -1,
      "reply: .decision: expected a non-empty string" },
    { "[\"allow\"]\n", -1, "reply: expected a JSON object" },
    { "\n", -1, "reply: empty" },
    { "{\"decision\":\"allow\"}\n{\"decision\":\"deny\"}\n", -1,
      "reply: more than one line" },
    { "{\"decision\":\"al\\u0000low\"}\n", -1,
      "reply: .decision: expected a non-empty string" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      ar_approval_decision d = AR_APPROVAL_DENY;
      ar_error_t *err = NULL;
      int r = ar_approval_reply_decode (cases[i].line, strlen (cases[i].line),
                                        &d, &err);
      if (cases[i].decision >= 0)
        {
          CHECK_INT (r, 0);
          CHECK_INT ((int) d, cases[i].decision);
        }
      else
        {
          CHECK_INT (r, -1);
          CHECK_STR (err ? ar_error_text (err) : NULL, cases[i].want);
        }
      ar_error_free (err);
    }
  cleanup_free char *reply = ar_approval_reply_encode (AR_APPROVAL_ALLOW_ONCE);
  CHECK_STR (reply, "{\"decision\":\"allow-once\"}\n");
}

static void
test_bad_requests (void)
{
  static const struct
  {
    const char *line;
    const char *want;
  } cases[] = {
    { "{\"what\":\"dns\",\"where\":\"a\"}\n",
      "request: .container: expected a non-empty string" },
    { "{\"container\":\"c\",\"what\":\"dns\",\"where\":\"\"}\n",
      "request: .where: expected a non-empty string" },
    { "{\"container\":\"c\",\"what\":\"dns\",\"where\":\"a\",\"detail\":2}\n",
      "request: .detail: expected a non-empty string" },
    { "not json\n", NULL },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      ar_approval_request got;
      ar_error_t *err = NULL;
      CHECK_INT (ar_approval_request_decode (
                     cases[i].line, strlen (cases[i].line), &got, &err),
                 -1);
      CHECK (got.container == NULL && got.where == NULL);
      if (cases[i].want)
        CHECK_STR (err ? ar_error_text (err) : NULL, cases[i].want);
      else
        CHECK (err != NULL && strncmp (ar_error_text (err), "request", 7) == 0);
      ar_error_free (err);
    }
}

/* What agentrun approve shows a person: a command line from the container
 * cannot move the cursor, clear the line or reorder what is shown. */
static void
test_printable (void)
{
  static const struct
  {
    const char *in, *want;
  } cases[] = {
    { "git status", "git status" },
    { "git push\x1b[2K\rgit status", "git push\\x1b[2K\\x0dgit status" },
    { "a\\b", "a\\\\b" },
    { "caf\xc3\xa9", "caf\xc3\xa9" },
    { "\xc2\x9b"
      "31m",
      "\\xc2\\x9b31m" },
    { "x\xe2\x80\xaey", "x\\xe2\\x80\\xaey" },
    { "\xe2\x81\xa6", "\\xe2\\x81\\xa6" },
    { "\xff\xc3", "\\xff\\xc3" },
    { "\x7f", "\\x7f" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      cleanup_free char *got = ar_text_printable (cases[i].in);
      CHECK_STR (got, cases[i].want);
    }
}

int
main (void)
{
  RUN (test_request_round_trip);
  RUN (test_replies);
  RUN (test_bad_requests);
  RUN (test_printable);
  return unit_finish ();
}
