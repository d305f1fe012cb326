/* SPDX-License-Identifier: Apache-2.0 */
/* The resolver's DNS wire parser (hooks/dns_wire.c): hostile queries and
 * answers are refused, good ones give exactly the name, question and
 * addresses they carry, and what goes upstream is the checked name only. */
#define _GNU_SOURCE
#include "config.h"
#include "unit.h"
#include "../../hooks/dns_wire.h"

/* ---- a message builder ------------------------------------------------ */

typedef struct
{
  uint8_t b[2048];
  size_t n;
} msg;

static void
put (msg *m, const void *p, size_t len)
{
  memcpy (m->b + m->n, p, len);
  m->n += len;
}

static void
u8 (msg *m, uint8_t v)
{
  m->b[m->n++] = v;
}

static void
u16 (msg *m, uint16_t v)
{
  u8 (m, (uint8_t) (v >> 8));
  u8 (m, (uint8_t) v);
}

static void
u32 (msg *m, uint32_t v)
{
  u16 (m, (uint16_t) (v >> 16));
  u16 (m, (uint16_t) v);
}

static void
header (msg *m, uint16_t id, uint8_t f2, uint8_t f3, uint16_t qd, uint16_t an,
        uint16_t ar)
{
  m->n = 0;
  u16 (m, id);
  u8 (m, f2);
  u8 (m, f3);
  u16 (m, qd);
  u16 (m, an);
  u16 (m, 0);
  u16 (m, ar);
}

static void
label (msg *m, const char *bytes, size_t len)
{
  u8 (m, (uint8_t) len);
  put (m, bytes, len);
}

/* "a.b.c" as labels and the root; no checks (tests make bad ones). */
static void
name (msg *m, const char *dotted)
{
  for (const char *p = dotted; *p;)
    {
      size_t l = strcspn (p, ".");
      label (m, p, l);
      p += l + (p[l] == '.');
    }
  u8 (m, 0);
}

static void
pointer (msg *m, uint16_t to)
{
  u16 (m, (uint16_t) (0xc000 | to));
}

static void
type_in (msg *m, uint16_t type)
{
  u16 (m, type);
  u16 (m, DNS_CLASS_IN);
}

/* A query for `qname` (type A, class IN), RD set. */
static void
query (msg *m, const char *qname)
{
  header (m, 0x1234, 0x01, 0, 1, 0, 0);
  name (m, qname);
  type_in (m, DNS_TYPE_A);
}

/* A query whose first label is `raw` (any bytes), then `rest`. */
static void
raw_query (msg *m, uint16_t id, const char *raw, size_t raw_len,
           const char *rest, uint16_t qtype)
{
  header (m, id, 0x01, 0, 1, 0, 0);
  label (m, raw, raw_len);
  name (m, rest);
  type_in (m, qtype);
}

/* Parse and expect a refusal with a one-line reason. */
static bool
query_refused (const msg *m, dns_query *q)
{
  ar_error_t *err = NULL;
  int r = dns_parse_query (m->b, m->n, q, &err);
  bool ok = r == -1 && err && ar_error_text (err)
            && !strchr (ar_error_text (err), '\n');
  ar_error_free (err);
  return ok;
}

static bool
query_ok (const msg *m, dns_query *q)
{
  ar_error_t *err = NULL;
  int r = dns_parse_query (m->b, m->n, q, &err);
  if (err)
    fprintf (stderr, "  unexpected: %s\n", ar_error_text (err));
  ar_error_free (err);
  return r == 0;
}

/* ---- queries ---------------------------------------------------------- */

static void
test_query_good (void)
{
  msg m;
  dns_query q;
  query (&m, "Pypi.ORG");
  CHECK (query_ok (&m, &q));
  CHECK_STR (q.name, "pypi.org");
  CHECK_INT (q.qtype, DNS_TYPE_A);
  CHECK_INT (q.qclass, DNS_CLASS_IN);
  CHECK_INT (q.id, 0x1234);
  CHECK_INT (q.end, m.n);
  CHECK (!q.edns);

  query (&m, "_dmarc.x-1.example.com");
  CHECK (query_ok (&m, &q));
  CHECK_STR (q.name, "_dmarc.x-1.example.com");

  /* The longest name: 253 characters in labels of 63, 63, 63, 61. */
  char longest[254];
  memset (longest, 'a', 253);
  longest[253] = '\0';
  longest[63] = longest[127] = longest[191] = '.';
  query (&m, longest);
  CHECK (query_ok (&m, &q));
  CHECK_STR (q.name, longest);

  /* EDNS: the OPT record is read, its DO bit kept. */
  query (&m, "pypi.org");
  m.b[11] = 1;
  u8 (&m, 0);
  u16 (&m, DNS_TYPE_OPT);
  u16 (&m, 4096);
  u32 (&m, 0x00008000);
  u16 (&m, 4);
  u32 (&m, 0xdeadbeef); /* an option: never sent on */
  CHECK (query_ok (&m, &q));
  CHECK (q.edns);
  CHECK (q.dnssec_ok);
  CHECK_INT (q.end, 12 + 10 + 4);
}

static void
test_query_bad_bytes (void)
{
  msg m;
  dns_query q;
  /* "exa\0mple.com": checked as "exa" before, would go up as itself. */
  raw_query (&m, 1, "exa\0mple", 8, "com", DNS_TYPE_A);
  CHECK (query_refused (&m, &q));
  CHECK_INT (q.end, m.n); /* the question can still be echoed */

  /* A dot inside a label: would read as secret.evil.pypi.org, which
   * *.pypi.org allows, and go up as a two-label name under another. */
  raw_query (&m, 1, "secret.evil", 11, "pypi.org", DNS_TYPE_A);
  CHECK (query_refused (&m, &q));

  const char *bad[]
      = { "a b.org", "a*.org", "a/b.org", "caf\xc3\xa9.org", "a\x01.org" };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      query (&m, bad[i]);
      CHECK (query_refused (&m, &q));
    }
}

static void
test_query_lengths (void)
{
  msg m;
  dns_query q;
  char label64[65];
  memset (label64, 'a', 64);
  label64[64] = '\0';
  query (&m, label64); /* length byte 0x40: not a label */
  CHECK (query_refused (&m, &q));
  CHECK_INT (q.end, 0);

  /* 254 characters: one too many. */
  char name254[255];
  memset (name254, 'a', 254);
  name254[254] = '\0';
  name254[63] = name254[127] = name254[191] = '.';
  query (&m, name254);
  CHECK (query_refused (&m, &q));

  /* Truncated: header, name, type/class, and a byte too many. */
  query (&m, "pypi.org");
  msg cut = m;
  cut.n = 11;
  CHECK (query_refused (&cut, &q));
  cut.n = 16;
  CHECK (query_refused (&cut, &q));
  cut.n = m.n - 1;
  CHECK (query_refused (&cut, &q));
  CHECK_INT (q.end, 0);
  u8 (&m, 0);
  CHECK (query_refused (&m, &q));
}

static void
test_query_pointers (void)
{
  msg m;
  dns_query q;
  /* To itself: a loop. */
  header (&m, 1, 0x01, 0, 1, 0, 0);
  pointer (&m, 12);
  type_in (&m, DNS_TYPE_A);
  CHECK (query_refused (&m, &q));
  /* Forward, into the question's own type. */
  header (&m, 1, 0x01, 0, 1, 0, 0);
  label (&m, "a", 1);
  pointer (&m, 17);
  type_in (&m, DNS_TYPE_A);
  CHECK (query_refused (&m, &q));
  /* Past the end. */
  header (&m, 1, 0x01, 0, 1, 0, 0);
  pointer (&m, 0x3fff);
  type_in (&m, DNS_TYPE_A);
  CHECK (query_refused (&m, &q));
  /* Cut in the middle of a pointer. */
  header (&m, 1, 0x01, 0, 1, 0, 0);
  u8 (&m, 0xc0);
  CHECK (query_refused (&m, &q));
}

/* One byte of a good query's header or question changed. */
static void
test_query_header (void)
{
  static const struct
  {
    int at; /* < 0: from the end */
    uint8_t value;
    const char *what;
  } changes[] = {
    { 5, 0, "qdcount 0" },        { 2, 0x81, "a response" },
    { 2, 0x29, "opcode 5" },      { 2, 0x03, "TC set" },
    { 7, 1, "an answer record" }, { 9, 1, "an authority record" },
    { 11, 2, "2 additional" },    { -1, 3, "class CH" },
  };
  msg m;
  dns_query q;
  for (size_t i = 0; i < sizeof changes / sizeof *changes; i++)
    {
      query (&m, "pypi.org");
      m.b[changes[i].at < 0 ? (int) m.n + changes[i].at : changes[i].at]
          = changes[i].value;
      unit_current_test = changes[i].what;
      CHECK (query_refused (&m, &q));
    }
  unit_current_test = "test_query_header";
  query (&m, "pypi.org");
  m.b[5] = 2;
  name (&m, "evil.org");
  type_in (&m, DNS_TYPE_A);
  CHECK (query_refused (&m, &q)); /* qdcount 2 */
  /* An additional record that is not OPT. */
  query (&m, "pypi.org");
  m.b[11] = 1;
  name (&m, "x.org");
  type_in (&m, 16);
  u32 (&m, 0);
  u16 (&m, 0);
  CHECK (query_refused (&m, &q));
}

/* ---- what goes upstream, and refusals --------------------------------- */

static void
test_encode (void)
{
  msg m;
  dns_query q;
  query (&m, "PyPI.org");
  m.b[2] |= 0x04; /* AA: not a query's, not sent on */
  m.b[3] = 0x70;  /* Z, AD, CD: AD and CD kept */
  CHECK (query_ok (&m, &q));
  uint8_t out[512];
  size_t n = dns_encode_query (&q, 0xbeef, out, sizeof out);
  msg want;
  header (&want, 0xbeef, 0x01, 0x30, 1, 0, 0);
  name (&want, "pypi.org");
  u16 (&want, DNS_TYPE_A);
  u16 (&want, DNS_CLASS_IN);
  CHECK_INT (n, want.n);
  CHECK (n == want.n && memcmp (out, want.b, n) == 0);

  /* With EDNS: our own OPT, none of the client's options. */
  q.edns = true;
  q.dnssec_ok = true;
  n = dns_encode_query (&q, 0xbeef, out, sizeof out);
  want.b[11] = 1;
  u8 (&want, 0);
  u16 (&want, DNS_TYPE_OPT);
  u16 (&want, DNS_EDNS_PAYLOAD);
  u32 (&want, 0x00008000);
  u16 (&want, 0);
  CHECK_INT (n, want.n);
  CHECK (n == want.n && memcmp (out, want.b, n) == 0);
  CHECK_INT (dns_encode_query (&q, 1, out, 20), 0);

  /* A name that is not clean labels never encodes. */
  const char *bad[] = { "a..b", "a.", ".a", "a b", "a\x01" };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      snprintf (q.name, sizeof q.name, "%s", bad[i]);
      CHECK_INT (dns_encode_query (&q, 1, out, sizeof out), 0);
    }
}

static void
test_refusal (void)
{
  msg m;
  dns_query q;
  raw_query (&m, 0x4242, "exa\0mple", 8, "com", DNS_TYPE_AAAA);
  CHECK (query_refused (&m, &q));
  uint8_t out[512];
  size_t n = dns_encode_refusal (m.b, m.n, q.end, out, sizeof out);
  CHECK_INT (n, m.n);
  CHECK_INT (out[0] << 8 | out[1], 0x4242);
  CHECK_INT (out[2], 0x81); /* QR, RD */
  CHECK_INT (out[3] & 0x0f, DNS_RCODE_NXDOMAIN);
  CHECK_INT (out[5], 1);
  CHECK_INT (out[7] | out[9] | out[11], 0);
  CHECK (memcmp (out + 12, m.b + 12, m.n - 12) == 0);

  n = dns_encode_refusal (m.b, m.n, 0, out, sizeof out);
  CHECK_INT (n, 12);
  CHECK_INT (out[3] & 0x0f, DNS_RCODE_FORMERR);
  CHECK_INT (out[5], 0);
  CHECK_INT (dns_encode_refusal (m.b, 11, 0, out, sizeof out), 0);
  CHECK_INT (dns_encode_refusal (m.b, m.n, m.n + 1, out, sizeof out), 0);
}

/* ---- answers ---------------------------------------------------------- */

static dns_query asked;

static void
ask (const char *qname, uint16_t qtype)
{
  msg m;
  query (&m, qname);
  m.b[m.n - 3] = (uint8_t) qtype;
  m.b[m.n - 4] = (uint8_t) (qtype >> 8);
  dns_parse_query (m.b, m.n, &asked, NULL);
}

/* A response to `asked` with id 7 and `an` answers to follow. */
static void
response (msg *m, const char *qname, uint16_t qtype, uint16_t an)
{
  header (m, 7, 0x81, 0x80, 1, an, 0);
  name (m, qname);
  u16 (m, qtype);
  u16 (m, DNS_CLASS_IN);
}

static void
a_record (msg *m, uint16_t owner_ptr, const char *owner, uint8_t last)
{
  if (owner)
    name (m, owner);
  else
    pointer (m, owner_ptr);
  type_in (m, DNS_TYPE_A);
  u32 (m, 300);
  u16 (m, 4);
  const uint8_t addr[4] = { 192, 0, 2, last };
  put (m, addr, 4);
}

static void
cname_record (msg *m, uint16_t owner_ptr, const char *owner, const char *target)
{
  if (owner)
    name (m, owner);
  else
    pointer (m, owner_ptr);
  type_in (m, DNS_TYPE_CNAME);
  u32 (m, 300);
  size_t at = m->n;
  u16 (m, 0);
  size_t start = m->n;
  name (m, target);
  m->b[at + 1] = (uint8_t) (m->n - start);
}

/* Parse against `asked` with id 7: the number of addresses, -1 refused. */
static long
answers (const msg *m, dns_addresses *out)
{
  ar_error_t *err = NULL;
  int r = dns_parse_answers (m->b, m->n, &asked, 7, out, &err);
  bool one_line = r == 0 || (err && !strchr (ar_error_text (err), '\n'));
  ar_error_free (err);
  if (!one_line)
    return -2;
  if (r < 0)
    return out->len == 0 ? -1 : -3;
  return (long) out->len;
}

static void
test_answer_good (void)
{
  msg m;
  dns_addresses a;
  ask ("pypi.org", DNS_TYPE_A);
  /* Mixed case in the echoed question, owners compressed to it. */
  response (&m, "PyPI.Org", DNS_TYPE_A, 2);
  a_record (&m, 12, NULL, 1);
  a_record (&m, 12, NULL, 2);
  CHECK_INT (answers (&m, &a), 2);
  CHECK (a.len == 2 && a.items[0].type == DNS_TYPE_A && a.items[0].addr[3] == 1
         && a.items[1].addr[3] == 2 && a.items[0].ttl == 300);
  dns_addresses_free (&a);

  /* AAAA, owner spelt out. */
  ask ("pypi.org", DNS_TYPE_AAAA);
  response (&m, "pypi.org", DNS_TYPE_AAAA, 1);
  name (&m, "pypi.org");
  type_in (&m, DNS_TYPE_AAAA);
  u32 (&m, 60);
  u16 (&m, 16);
  const uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 9 };
  put (&m, v6, 16);
  CHECK_INT (answers (&m, &a), 1);
  CHECK (a.len == 1 && a.items[0].type == DNS_TYPE_AAAA
         && memcmp (a.items[0].addr, v6, 16) == 0);
  dns_addresses_free (&a);

  /* A CNAME chain: pypi.org → dualstack.python.map.fastly.net → A. */
  ask ("pypi.org", DNS_TYPE_A);
  response (&m, "pypi.org", DNS_TYPE_A, 2);
  size_t target_at = m.n + 12; /* the CNAME's target, for the pointer */
  cname_record (&m, 12, NULL, "dualstack.python.map.fastly.net");
  a_record (&m, (uint16_t) target_at, NULL, 5);
  CHECK_INT (answers (&m, &a), 1);
  CHECK (a.len == 1 && a.items[0].addr[3] == 5);
  dns_addresses_free (&a);

  /* A CNAME loop ends; the question's own record still counts. */
  response (&m, "pypi.org", DNS_TYPE_A, 3);
  cname_record (&m, 12, NULL, "b.org");
  cname_record (&m, 0, "b.org", "pypi.org");
  a_record (&m, 12, NULL, 6);
  CHECK_INT (answers (&m, &a), 1);
  dns_addresses_free (&a);
}

static void
test_answer_mismatch (void)
{
  msg m;
  dns_addresses a;
  ask ("pypi.org", DNS_TYPE_A);
  response (&m, "evil.org", DNS_TYPE_A, 1);
  a_record (&m, 12, NULL, 1);
  CHECK_INT (answers (&m, &a), -1); /* another name */
  response (&m, "pypi.org", DNS_TYPE_AAAA, 1);
  a_record (&m, 12, NULL, 1);
  CHECK_INT (answers (&m, &a), -1); /* another type */
  response (&m, "pypi.org", DNS_TYPE_A, 1);
  m.b[m.n - 1] = 3;
  a_record (&m, 12, NULL, 1);
  CHECK_INT (answers (&m, &a), -1); /* another class */
  response (&m, "pypi.org", DNS_TYPE_A, 1);
  a_record (&m, 12, NULL, 1);
  m.b[1] = 8;
  CHECK_INT (answers (&m, &a), -1); /* another id */
  response (&m, "pypi.org", DNS_TYPE_A, 1);
  a_record (&m, 12, NULL, 1);
  m.b[2] = 0x01;
  CHECK_INT (answers (&m, &a), -1); /* not a response */
  response (&m, "pypi.org", DNS_TYPE_A, 1);
  m.b[5] = 0;
  CHECK_INT (answers (&m, &a), -1); /* no question */
  /* The question with a NUL in a label: never the name asked. */
  header (&m, 7, 0x81, 0x80, 1, 1, 0);
  label (&m, "pypi\0x", 6);
  name (&m, "org");
  type_in (&m, DNS_TYPE_A);
  a_record (&m, 12, NULL, 1);
  CHECK_INT (answers (&m, &a), -1);
}

static void
test_answer_learns_nothing_else (void)
{
  msg m;
  dns_addresses a;
  ask ("pypi.org", DNS_TYPE_A);
  /* An owner that is not the question. */
  response (&m, "pypi.org", DNS_TYPE_A, 2);
  a_record (&m, 0, "evil.org", 1);
  a_record (&m, 12, NULL, 2);
  CHECK_INT (answers (&m, &a), 1);
  CHECK (a.len == 1 && a.items[0].addr[3] == 2);
  dns_addresses_free (&a);
  /* A CNAME chain that leaves the question: b.org is not reached. */
  response (&m, "pypi.org", DNS_TYPE_A, 2);
  cname_record (&m, 12, NULL, "a.org");
  a_record (&m, 0, "b.org", 1);
  CHECK_INT (answers (&m, &a), 0);
  /* A CNAME whose owner is not the question starts no chain. */
  response (&m, "pypi.org", DNS_TYPE_A, 2);
  cname_record (&m, 0, "other.org", "b.org");
  a_record (&m, 0, "b.org", 1);
  CHECK_INT (answers (&m, &a), 0);
  /* A records for an AAAA question, and an owner spelt with a NUL. */
  ask ("pypi.org", DNS_TYPE_AAAA);
  response (&m, "pypi.org", DNS_TYPE_AAAA, 1);
  a_record (&m, 12, NULL, 1);
  CHECK_INT (answers (&m, &a), 0);
  ask ("pypi.org", DNS_TYPE_A);
  response (&m, "pypi.org", DNS_TYPE_A, 1);
  label (&m, "pypi\0", 5);
  name (&m, "org");
  type_in (&m, DNS_TYPE_A);
  u32 (&m, 300);
  u16 (&m, 4);
  u32 (&m, 0x01020304);
  CHECK_INT (answers (&m, &a), 0);
  /* NXDOMAIN: nothing, whatever records came with it. */
  response (&m, "pypi.org", DNS_TYPE_A, 1);
  m.b[3] |= DNS_RCODE_NXDOMAIN;
  a_record (&m, 12, NULL, 1);
  CHECK_INT (answers (&m, &a), 0);
}

/* An answer whose A record's owner reaches the question's name through
 * `hops` pointers. */
static msg *
pointer_chain (msg *m, int hops)
{
  response (m, "pypi.org", DNS_TYPE_A, 2);
  name (m, "txt.org");
  type_in (m, 16);
  u32 (m, 0);
  u16 (m, (uint16_t) (2 * (hops - 1)));
  pointer (m, 12);
  for (int i = 2; i < hops; i++)
    pointer (m, (uint16_t) (m->n - 2));
  a_record (m, (uint16_t) (m->n - 2), NULL, 1);
  return m;
}

static void
test_answer_malformed (void)
{
  msg m;
  dns_addresses a;
  ask ("pypi.org", DNS_TYPE_A);
  response (&m, "pypi.org", DNS_TYPE_A, 1);
  a_record (&m, 12, NULL, 1);
  msg cut = m;
  cut.n = m.n - 2;
  CHECK_INT (answers (&cut, &a), -1); /* address cut */
  cut.n = m.n - 8;
  CHECK_INT (answers (&cut, &a), -1); /* record header cut */
  cut.n = 11;
  CHECK_INT (answers (&cut, &a), -1); /* header cut */
  cut.n = 20;
  CHECK_INT (answers (&cut, &a), -1); /* question cut */
  /* More answers counted than there are. */
  m.b[7] = 2;
  CHECK_INT (answers (&m, &a), -1);
  /* An owner pointing forward, and one pointing to itself. */
  response (&m, "pypi.org", DNS_TYPE_A, 1);
  pointer (&m, (uint16_t) (m.n + 2));
  a_record (&m, 0, "pypi.org", 1);
  CHECK_INT (answers (&m, &a), -1);
  response (&m, "pypi.org", DNS_TYPE_A, 1);
  a_record (&m, (uint16_t) m.n, NULL, 1);
  CHECK_INT (answers (&m, &a), -1);
  /* An A record of 5 bytes. */
  response (&m, "pypi.org", DNS_TYPE_A, 1);
  a_record (&m, 12, NULL, 1);
  m.b[m.n - 5] = 5;
  u8 (&m, 0);
  CHECK_INT (answers (&m, &a), -1);
  /* A CNAME with bytes after its target. */
  response (&m, "pypi.org", DNS_TYPE_A, 1);
  cname_record (&m, 12, NULL, "a.org");
  m.b[m.n - 8]++;
  u8 (&m, 0);
  CHECK_INT (answers (&m, &a), -1);
  /* Pointer chains kept in a TXT record's data, each pointer to the one
   * before: an owner at the end of 8 hops is the question's name, one at
   * the end of DNS_MAX_HOPS + 2 is refused. */
  CHECK_INT (answers (pointer_chain (&m, 8), &a), 1);
  dns_addresses_free (&a);
  CHECK_INT (answers (pointer_chain (&m, DNS_MAX_HOPS + 2), &a), -1);
}

/* The text rule the first-bytes reader shares (peek_name.c). */
static void
test_name_from_text (void)
{
  char out[DNS_NAME_TEXT_MAX + 1];
  CHECK (dns_name_from_text ("Good.Test.", 10, out));
  CHECK_STR (out, "good.test");
  CHECK (dns_name_from_text ("a_b-c.d", 7, out));
  static const char *const bad[] = { "", ".", "a..b", ".a", "a b", "a\0b" };
  static const size_t len[] = { 0, 1, 4, 2, 3, 3 };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    CHECK (!dns_name_from_text (bad[i], len[i], out) && out[0] == '\0');
  char label[DNS_LABEL_MAX + 2];
  memset (label, 'x', sizeof label - 1);
  label[sizeof label - 1] = '\0';
  CHECK (!dns_name_from_text (label, DNS_LABEL_MAX + 1, out));
  CHECK (dns_name_from_text (label, DNS_LABEL_MAX, out));
  /* "a.a. ... a": 253 bytes is the most, one final dot not counted. */
  char name[DNS_NAME_TEXT_MAX + 3];
  for (size_t i = 0; i < sizeof name; i++)
    name[i] = i % 2 ? '.' : 'a';
  CHECK (dns_name_from_text (name, DNS_NAME_TEXT_MAX, out));
  CHECK (dns_name_from_text (name, DNS_NAME_TEXT_MAX + 1, out));
  CHECK (!dns_name_from_text (name, DNS_NAME_TEXT_MAX + 2, out));
}

int
main (void)
{
  RUN (test_query_good);
  RUN (test_query_bad_bytes);
  RUN (test_query_lengths);
  RUN (test_query_pointers);
  RUN (test_query_header);
  RUN (test_encode);
  RUN (test_refusal);
  RUN (test_answer_good);
  RUN (test_answer_mismatch);
  RUN (test_answer_learns_nothing_else);
  RUN (test_answer_malformed);
  RUN (test_name_from_text);
  return unit_finish ();
}
