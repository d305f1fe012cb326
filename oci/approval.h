/* SPDX-License-Identifier: Apache-2.0 */
/* The approver protocol: what agentrun asks a program outside the
 * container before it lets a risky operation through (egress mode
 * `ask`), and the answer. One connection per question to the approver's
 * Unix stream socket; one JSON line each way:
 *
 *   → {"container":"ID","what":"dns","where":"example.com","detail":"A"}
 *   ← {"decision":"allow-once"}   (or "allow": for the rest of the
 *                                  container's life; or "deny")
 *
 * Anything but a well-formed answer within the timeout is a deny. */
#ifndef AR_OCI_APPROVAL_H
#define AR_OCI_APPROVAL_H

#include "../src/util/error.h"

#include <stdbool.h>
#include <stddef.h>

/* Longest line either side sends or takes. */
#define AR_APPROVAL_LINE_MAX 4096

typedef enum
{
  AR_APPROVAL_DENY,
  AR_APPROVAL_ALLOW_ONCE,
  AR_APPROVAL_ALLOW,
} ar_approval_decision;

typedef struct
{
  char *container;
  char *what;   /* "dns" */
  char *where;  /* the name */
  char *detail; /* the query type; NULL: none */
} ar_approval_request;

const char *ar_approval_decision_name (ar_approval_decision d);
bool ar_approval_decision_parse (const char *text, ar_approval_decision *out);

/* The request as one line, '\n' included. */
char *ar_approval_request_encode (const ar_approval_request *req);
/* One line (its '\n' optional); errors say what is wrong with it. */
int ar_approval_request_decode (const char *line, size_t len,
                                ar_approval_request *out, ar_error_t **err);
void ar_approval_request_clear (ar_approval_request *req);

char *ar_approval_reply_encode (ar_approval_decision d);
int ar_approval_reply_decode (const char *line, size_t len,
                              ar_approval_decision *out, ar_error_t **err);

#endif
