/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the egress resolver's DNS wire parser
 * (hooks/dns_wire.c). The whole input is read as a client's query; it is
 * also split into a question (first byte: 0 asks A, else AAAA; second:
 * the name's length; then the name's text) and an upstream answer to it,
 * the rest. Seeds: tests/fuzz/corpus/fuzz_dns.
 *
 * Checked: a query that parses re-encodes to one that parses to the same
 * question, and a refusal echoes exactly its question; an answer that
 * parses gives only addresses of the type asked, no more than it has
 * answer records; whatever fails, fails with one line and no output. */
#include "config.h"
#include "fuzz.h"
#include "../../hooks/dns_wire.h"
#include "../../src/util/cleanup.h"

#include <stdint.h>
#include <stdio.h>

static void
fuzz_query (const uint8_t *data, size_t size)
{
  dns_query q;
  cleanup_error ar_error_t *err = NULL;
  uint8_t out[DNS_HEADER_LEN + DNS_NAME_WIRE_MAX + 4 + 11];
  if (dns_parse_query (data, size, &q, &err) < 0)
    {
      fuzz_check_one_line (err);
      if (q.end
          && dns_encode_refusal (data, size, q.end, out, sizeof out) != q.end)
        abort ();
      return;
    }
  size_t n = dns_encode_query (&q, 0x5a5a, out, sizeof out);
  dns_query again;
  if (n == 0 || dns_parse_query (out, n, &again, NULL) < 0 || again.id != 0x5a5a
      || strcmp (again.name, q.name) != 0 || again.qtype != q.qtype
      || again.qclass != q.qclass || again.edns != q.edns
      || again.dnssec_ok != q.dnssec_ok)
    abort ();
  uint8_t refusal[DNS_HEADER_LEN + DNS_NAME_WIRE_MAX + 4];
  if (q.end <= sizeof refusal
      && dns_encode_refusal (data, size, q.end, refusal, sizeof refusal)
             != q.end)
    abort ();
}

static void
fuzz_answer (const uint8_t *data, size_t size)
{
  if (size < 2 || (size_t) data[1] + 2 > size || data[1] > DNS_NAME_TEXT_MAX)
    return;
  dns_query asked = { .qtype = data[0] ? DNS_TYPE_AAAA : DNS_TYPE_A,
                      .qclass = DNS_CLASS_IN };
  memcpy (asked.name, data + 2, data[1]);
  asked.name[data[1]] = '\0';
  const uint8_t *msg = data + 2 + data[1];
  size_t len = size - 2 - data[1];
  uint16_t id = len >= 2 ? (uint16_t) (msg[0] << 8 | msg[1]) : 0;
  dns_addresses found;
  cleanup_error ar_error_t *err = NULL;
  if (dns_parse_answers (msg, len, &asked, id, &found, &err) < 0)
    {
      fuzz_check_one_line (err);
      if (found.len || found.items)
        abort ();
      return;
    }
  if (found.len > (size_t) (msg[6] << 8 | msg[7]))
    abort ();
  for (size_t i = 0; i < found.len; i++)
    if (found.items[i].type != asked.qtype)
      abort ();
  dns_addresses_free (&found);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_query (data, size);
  fuzz_answer (data, size);
  return 0;
}
