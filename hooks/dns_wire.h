/* SPDX-License-Identifier: Apache-2.0 */
/* The DNS wire format, as the egress resolver needs it: a client's query
 * read and checked, the question re-encoded for the upstream from what
 * was checked (so nothing else of the client's bytes goes out), the
 * upstream's answer matched against that question and its addresses
 * collected, and the error reply a refused query gets.
 *
 * Pure: no sockets, no globals; unit tests and tests/fuzz/fuzz_dns.c call
 * it. Names are the exact label bytes: a label may hold only letters,
 * digits, '-' and '_' (so never a NUL or a dot), at most 63 of them, the
 * whole name at most 255 bytes on the wire; a compression pointer may
 * only point to an earlier offset, at most DNS_MAX_HOPS times a name. */
#ifndef AR_HOOKS_DNS_WIRE_H
#define AR_HOOKS_DNS_WIRE_H

#include "../src/util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_HEADER_LEN 12
#define DNS_NAME_TEXT_MAX 253 /* dotted, without the final dot */
#define DNS_NAME_WIRE_MAX 255
#define DNS_LABEL_MAX 63
#define DNS_MAX_HOPS 16  /* compression pointers followed in one name */
#define DNS_MAX_CNAMES 8 /* links of a CNAME chain followed in an answer */

#define DNS_TYPE_A 1
#define DNS_TYPE_CNAME 5
#define DNS_TYPE_AAAA 28
#define DNS_TYPE_OPT 41
#define DNS_CLASS_IN 1

#define DNS_RCODE_FORMERR 1
#define DNS_RCODE_NXDOMAIN 3

typedef struct
{
  uint16_t id;
  uint8_t flags[2];                 /* the header's bytes 2 and 3 */
  char name[DNS_NAME_TEXT_MAX + 1]; /* lowercase, dotted; "" is the root */
  uint16_t qtype, qclass;
  bool edns;      /* an OPT record came with it */
  bool dnssec_ok; /* its DO bit */
  /* Offset just past the question in the message it was read from, or 0
   * when the question's extent is unknown (a reply cannot echo it). Set
   * also when the query is refused only for its name's bytes. */
  size_t end;
} dns_query;

/* `text` (`len` bytes, not NUL-terminated) as a name the resolver would
 * take: labels of 1 to DNS_LABEL_MAX label bytes (letters, digits, '-',
 * '_') joined by dots, one final dot allowed, DNS_NAME_TEXT_MAX at most
 * without it. Lowercased into `out`; false, `out` empty, when it is not. */
bool dns_name_from_text (const char *text, size_t len,
                         char out[DNS_NAME_TEXT_MAX + 1]);

/* A query with exactly one question, nothing in the answer and authority
 * sections, at most an OPT record in the additional one, no bytes after. */
int dns_parse_query (const uint8_t *msg, size_t len, dns_query *q,
                     ar_error_t **err);

/* The query to send upstream: header with `id`, the RD, AD and CD bits of
 * q, the question from q's fields and, when q had one, an OPT record of
 * our own (payload DNS_EDNS_PAYLOAD, q's DO bit, no options). Returns its
 * length, or 0 when q's name does not encode or `size` is too small. */
#define DNS_EDNS_PAYLOAD 1232
size_t
dns_encode_query (const dns_query *q, uint16_t id, uint8_t *out, size_t size);

/* What a refused query gets: NXDOMAIN with the question (the query's
 * bytes 12..question_end) echoed, or FORMERR without one when
 * question_end is 0. Returns the reply's length (0: does not fit). */
size_t dns_encode_refusal (const uint8_t *query, size_t len,
                           size_t question_end, uint8_t *out, size_t size);

typedef struct
{
  uint16_t type; /* DNS_TYPE_A (4 bytes of addr) or DNS_TYPE_AAAA (16) */
  uint8_t addr[16];
  uint32_t ttl;
} dns_address;

typedef struct
{
  dns_address *items;
  size_t len;
} dns_addresses;

/* An upstream answer to `asked`, sent with `id`: the header must be a
 * response with that id and one question equal to asked's (name compared
 * without case, type, class). Its answer records of asked's type and
 * class whose owner is asked's name, or a name a CNAME chain in the
 * answer section reaches from it, go to *out (which the caller frees with
 * dns_addresses_free); nothing when the rcode is not 0. Anything
 * malformed or mismatched: -1, and *out stays empty. */
int dns_parse_answers (const uint8_t *msg, size_t len, const dns_query *asked,
                       uint16_t id, dns_addresses *out, ar_error_t **err);
void dns_addresses_free (dns_addresses *a);

#endif
