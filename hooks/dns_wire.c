/* SPDX-License-Identifier: Apache-2.0 */
/* The DNS wire format for the egress resolver (dns_wire.h). Every read is
 * bounded by the message's length; every name is read by read_name. */
#include "config.h"
#include "dns_wire.h"
#include "../src/util/bytes.h"
#include "../src/util/cleanup.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
label_byte (uint8_t c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
         || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

bool
dns_name_from_text (const char *text, size_t len,
                    char out[DNS_NAME_TEXT_MAX + 1])
{
  out[0] = '\0';
  if (len > 0 && text[len - 1] == '.')
    len--;
  if (len == 0 || len > DNS_NAME_TEXT_MAX)
    return false;
  size_t label = 0;
  for (size_t i = 0; i < len; i++)
    {
      uint8_t c = (uint8_t) text[i];
      if (c == '.')
        {
          if (label == 0)
            return false;
          label = 0;
        }
      else if (!label_byte (c) || ++label > DNS_LABEL_MAX)
        return false;
    }
  if (label == 0)
    return false;
  for (size_t i = 0; i < len; i++)
    out[i] = (char) tolower ((unsigned char) text[i]);
  out[len] = '\0';
  return true;
}

/* read_name: the name is well formed and its labels hold only label_byte
 * bytes; or it is well formed but some label byte is outside that set
 * (the text then has '?' in its place and must not be used as a name). */
enum
{
  NAME_CLEAN = 0,
  NAME_BAD_BYTES = 1,
};

/* The (possibly compressed) name at *off as lowercase dotted text; *off
 * moves past it. -1 when it is malformed: runs past the end, a label type
 * other than 0 and 0xc0, a pointer to its own or a later offset, more
 * than DNS_MAX_HOPS pointers, longer than DNS_NAME_WIRE_MAX. */
static int
read_name (const uint8_t *msg, size_t len, size_t *off,
           char out[DNS_NAME_TEXT_MAX + 1], ar_error_t **err)
{
  size_t start = *off, pos = *off, text = 0, wire = 0;
  unsigned hops = 0;
  bool jumped = false, clean = true;
  for (;;)
    {
      if (pos >= len)
        return ar_error_set (
            err, 0, "dns: name at offset %zu runs past the end of the message",
            start);
      uint8_t l = msg[pos];
      if ((l & 0xc0) == 0xc0)
        {
          if (pos + 1 >= len)
            return ar_error_set (
                err, 0,
                "dns: name at offset %zu runs past the end of the message",
                start);
          size_t target = (size_t) (l & 0x3f) << 8 | msg[pos + 1];
          if (target >= pos)
            return ar_error_set (
                err, 0,
                "dns: compression pointer at offset %zu points to %zu, not before it",
                pos, target);
          if (++hops > DNS_MAX_HOPS)
            return ar_error_set (
                err, 0,
                "dns: name at offset %zu follows more than %d compression pointers",
                start, DNS_MAX_HOPS);
          if (!jumped)
            *off = pos + 2;
          jumped = true;
          pos = target;
          continue;
        }
      if (l & 0xc0)
        return ar_error_set (err, 0, "dns: label type 0x%02x at offset %zu",
                             l & 0xc0, pos);
      wire += 1u + l;
      if (wire > DNS_NAME_WIRE_MAX)
        return ar_error_set (err, 0,
                             "dns: name at offset %zu is longer than %d bytes",
                             start, DNS_NAME_WIRE_MAX);
      pos++;
      if (l == 0)
        break;
      if (pos + l > len)
        return ar_error_set (
            err, 0, "dns: name at offset %zu runs past the end of the message",
            start);
      if (text)
        out[text++] = '.';
      for (size_t i = 0; i < l; i++)
        {
          uint8_t c = msg[pos + i];
          clean = clean && label_byte (c);
          out[text++] = !label_byte (c)
                            ? '?'
                            : (char) (c >= 'A' && c <= 'Z' ? c + 32 : c);
        }
      pos += l;
    }
  out[text] = '\0';
  if (!jumped)
    *off = pos;
  return clean ? NAME_CLEAN : NAME_BAD_BYTES;
}

/* The name as labels on the wire, from text that must be letters, digits,
 * '-' and '_' in labels of 1..63 joined by single dots ("" is the root).
 * 0 when it is anything else or does not fit in `size`. */
static size_t
encode_name (const char *name, uint8_t *out, size_t size)
{
  size_t n = 0;
  for (const char *p = name; *p;)
    {
      size_t l = strcspn (p, ".");
      if (l == 0 || l > DNS_LABEL_MAX || n + 1 + l + 1 > DNS_NAME_WIRE_MAX
          || n + 1 + l + 1 > size)
        return 0;
      out[n++] = (uint8_t) l;
      for (size_t i = 0; i < l; i++)
        {
          if (!label_byte ((uint8_t) p[i]))
            return 0;
          out[n++] = (uint8_t) p[i];
        }
      p += l;
      if (*p == '.' && *++p == '\0')
        return 0; /* a final dot: an empty label */
    }
  if (n + 1 > size)
    return 0;
  out[n++] = 0;
  return n;
}

/* ---- queries ---------------------------------------------------------- */

/* The additional section's one record, which must be an OPT of the root. */
static int
read_opt (const uint8_t *msg, size_t len, size_t *off, dns_query *q,
          ar_error_t **err)
{
  size_t o = *off;
  if (o + 11 > len)
    return ar_error_set (
        err, 0, "dns: additional record at offset %zu is truncated", o);
  if (msg[o] != 0 || ar_load_be16 (msg + o + 1) != DNS_TYPE_OPT)
    return ar_error_set (
        err, 0,
        "dns: query's additional record is not an OPT record of the root");
  size_t rdlen = ar_load_be16 (msg + o + 9);
  if (o + 11 + rdlen > len)
    return ar_error_set (err, 0, "dns: OPT record at offset %zu is truncated",
                         o);
  q->edns = true;
  q->dnssec_ok = (msg[o + 7] & 0x80) != 0;
  *off = o + 11 + rdlen;
  return 0;
}

static int
check_query_header (const uint8_t *msg, size_t len, ar_error_t **err)
{
  if (len < DNS_HEADER_LEN)
    return ar_error_set (
        err, 0, "dns: message of %zu bytes is shorter than a header", len);
  if (msg[2] & 0x80)
    return ar_error_set (err, 0, "dns: message is a response, not a query");
  if ((msg[2] >> 3) & 0x0f)
    return ar_error_set (err, 0, "dns: opcode %u is not QUERY",
                         (msg[2] >> 3) & 0x0f);
  if (msg[2] & 0x02)
    return ar_error_set (err, 0, "dns: query is truncated (TC set)");
  if (ar_load_be16 (msg + 4) != 1)
    return ar_error_set (err, 0, "dns: query has %u questions, want 1",
                         ar_load_be16 (msg + 4));
  if (ar_load_be16 (msg + 6) || ar_load_be16 (msg + 8))
    return ar_error_set (err, 0, "dns: query has answer or authority records");
  if (ar_load_be16 (msg + 10) > 1)
    return ar_error_set (
        err, 0, "dns: query has %u additional records, want at most an OPT",
        ar_load_be16 (msg + 10));
  return 0;
}

int
dns_parse_query (const uint8_t *msg, size_t len, dns_query *q, ar_error_t **err)
{
  *q = (dns_query){ 0 };
  if (check_query_header (msg, len, err) < 0)
    return -1;
  q->id = ar_load_be16 (msg);
  q->flags[0] = msg[2];
  q->flags[1] = msg[3];
  size_t off = DNS_HEADER_LEN;
  int name = read_name (msg, len, &off, q->name, err);
  if (name < 0)
    return -1;
  if (off + 4 > len)
    return ar_error_set (err, 0, "dns: question is truncated");
  q->qtype = ar_load_be16 (msg + off);
  q->qclass = ar_load_be16 (msg + off + 2);
  off += 4;
  q->end = off;
  if (name == NAME_BAD_BYTES)
    return ar_error_set (
        err, 0,
        "dns: query name `%s` has a byte other than a letter, digit, '-' or '_' in a label",
        q->name);
  if (q->qclass != DNS_CLASS_IN)
    return ar_error_set (err, 0, "dns: query class %u is not IN", q->qclass);
  if (ar_load_be16 (msg + 10) == 1 && read_opt (msg, len, &off, q, err) < 0)
    return -1;
  if (off != len)
    return ar_error_set (err, 0, "dns: %zu bytes after the query's last record",
                         len - off);
  return 0;
}

size_t
dns_encode_query (const dns_query *q, uint16_t id, uint8_t *out, size_t size)
{
  if (size < DNS_HEADER_LEN + 4)
    return 0;
  memset (out, 0, DNS_HEADER_LEN);
  ar_store_be16 (out, id);
  out[2] = q->flags[0] & 0x01; /* RD */
  out[3] = q->flags[1] & 0x30; /* AD, CD */
  ar_store_be16 (out + 4, 1);
  ar_store_be16 (out + 10, q->edns ? 1 : 0);
  size_t n
      = encode_name (q->name, out + DNS_HEADER_LEN, size - DNS_HEADER_LEN - 4);
  if (n == 0)
    return 0;
  n += DNS_HEADER_LEN;
  ar_store_be16 (out + n, q->qtype);
  ar_store_be16 (out + n + 2, q->qclass);
  n += 4;
  if (!q->edns)
    return n;
  if (n + 11 > size)
    return 0;
  memset (out + n, 0, 11); /* root name; ttl: rcode, version 0 */
  ar_store_be16 (out + n + 1, DNS_TYPE_OPT);
  ar_store_be16 (out + n + 3, DNS_EDNS_PAYLOAD);
  out[n + 7] = q->dnssec_ok ? 0x80 : 0;
  return n + 11;
}

size_t
dns_encode_refusal (const uint8_t *query, size_t len, size_t question_end,
                    uint8_t *out, size_t size)
{
  if (len < DNS_HEADER_LEN || question_end > len
      || (question_end != 0 && question_end <= DNS_HEADER_LEN))
    return 0;
  size_t n = question_end ? question_end : DNS_HEADER_LEN;
  if (n > size)
    return 0;
  memcpy (out, query, n);
  out[2] = (uint8_t) (0x80 | (query[2] & 0x79)); /* QR; opcode and RD kept */
  out[3] = question_end ? DNS_RCODE_NXDOMAIN : DNS_RCODE_FORMERR;
  ar_store_be16 (out + 4, question_end ? 1 : 0);
  memset (out + 6, 0, 6);
  return n;
}

/* ---- answers ---------------------------------------------------------- */

typedef struct
{
  char owner[DNS_NAME_TEXT_MAX + 1];
  bool owner_clean;
  uint16_t type, rclass;
  uint32_t ttl;
  size_t rdata, rdlen;
} record;

/* One resource record at *off; *off moves past it. */
static int
read_record (const uint8_t *msg, size_t len, size_t *off, record *rec,
             ar_error_t **err)
{
  int name = read_name (msg, len, off, rec->owner, err);
  if (name < 0)
    return -1;
  rec->owner_clean = name == NAME_CLEAN;
  if (*off + 10 > len)
    return ar_error_set (err, 0, "dns: record at offset %zu is truncated",
                         *off);
  rec->type = ar_load_be16 (msg + *off);
  rec->rclass = ar_load_be16 (msg + *off + 2);
  rec->ttl = ar_load_be32 (msg + *off + 4);
  rec->rdlen = ar_load_be16 (msg + *off + 8);
  rec->rdata = *off + 10;
  if (rec->rdata + rec->rdlen > len)
    return ar_error_set (
        err, 0,
        "dns: record data at offset %zu runs past the end of the message",
        rec->rdata);
  *off = rec->rdata + rec->rdlen;
  return 0;
}

/* A CNAME's target, which must fill its record data exactly; NAME_CLEAN
 * or NAME_BAD_BYTES as read_name. */
static int
read_cname_target (const uint8_t *msg, const record *rec,
                   char target[DNS_NAME_TEXT_MAX + 1], ar_error_t **err)
{
  size_t off = rec->rdata;
  int name = read_name (msg, rec->rdata + rec->rdlen, &off, target, err);
  if (name >= 0 && off != rec->rdata + rec->rdlen)
    return ar_error_set (err, 0,
                         "dns: CNAME at offset %zu has bytes after its target",
                         rec->rdata);
  return name;
}

static size_t
address_size (uint16_t type)
{
  return type == DNS_TYPE_A ? 4 : type == DNS_TYPE_AAAA ? 16 : 0;
}

/* Every answer record well formed: addresses of their size, CNAME
 * targets that fill their data. */
static int
check_answer_section (const uint8_t *msg, size_t len, size_t off,
                      unsigned count, uint16_t rclass, ar_error_t **err)
{
  for (unsigned i = 0; i < count; i++)
    {
      record rec;
      char target[DNS_NAME_TEXT_MAX + 1];
      if (read_record (msg, len, &off, &rec, err) < 0)
        return -1;
      if (rec.rclass != rclass)
        continue;
      if (address_size (rec.type) && rec.rdlen != address_size (rec.type))
        return ar_error_set (err, 0,
                             "dns: address record of type %u has %zu bytes",
                             rec.type, rec.rdlen);
      if (rec.type == DNS_TYPE_CNAME
          && read_cname_target (msg, &rec, target, err) < 0)
        return -1;
    }
  return 0;
}

typedef struct
{
  char names[DNS_MAX_CNAMES + 1][DNS_NAME_TEXT_MAX + 1];
  size_t len;
} name_chain;

static bool
chain_has (const name_chain *c, const char *name)
{
  for (size_t i = 0; i < c->len; i++)
    if (strcmp (c->names[i], name) == 0)
      return true;
  return false;
}

/* The CNAME in the answer section whose owner is `name`: its target, if
 * that is a clean name. */
static bool
cname_of (const uint8_t *msg, size_t len, size_t off, unsigned count,
          uint16_t rclass, const char *name, char target[DNS_NAME_TEXT_MAX + 1])
{
  for (unsigned i = 0; i < count; i++)
    {
      record rec;
      cleanup_error ar_error_t *err = NULL;
      read_record (msg, len, &off, &rec, &err); /* checked before */
      if (rec.type == DNS_TYPE_CNAME && rec.rclass == rclass && rec.owner_clean
          && strcmp (rec.owner, name) == 0)
        return read_cname_target (msg, &rec, target, &err) == NAME_CLEAN;
    }
  return false;
}

/* The question's name and the names a CNAME chain from it reaches. */
static void
follow_cnames (const uint8_t *msg, size_t len, size_t off, unsigned count,
               const dns_query *asked, name_chain *chain)
{
  snprintf (chain->names[0], sizeof chain->names[0], "%s", asked->name);
  chain->len = 1;
  char target[DNS_NAME_TEXT_MAX + 1];
  while (chain->len <= DNS_MAX_CNAMES
         && cname_of (msg, len, off, count, asked->qclass,
                      chain->names[chain->len - 1], target)
         && !chain_has (chain, target))
    memcpy (chain->names[chain->len++], target, sizeof target);
}

static void
collect_addresses (const uint8_t *msg, size_t len, size_t off, unsigned count,
                   const dns_query *asked, const name_chain *chain,
                   dns_addresses *out)
{
  size_t size = address_size (asked->qtype);
  for (unsigned i = 0; size && i < count; i++)
    {
      record rec;
      cleanup_error ar_error_t *err = NULL;
      read_record (msg, len, &off, &rec, &err); /* checked before */
      if (rec.type != asked->qtype || rec.rclass != asked->qclass
          || !rec.owner_clean || !chain_has (chain, rec.owner))
        continue;
      out->items = xrealloc (out->items, (out->len + 1) * sizeof *out->items);
      dns_address *a = &out->items[out->len++];
      *a = (dns_address){ .type = rec.type, .ttl = rec.ttl };
      memcpy (a->addr, msg + rec.rdata, size);
    }
}

static int
check_answer_header (const uint8_t *msg, size_t len, uint16_t id,
                     ar_error_t **err)
{
  if (len < DNS_HEADER_LEN)
    return ar_error_set (
        err, 0, "dns: message of %zu bytes is shorter than a header", len);
  if (ar_load_be16 (msg) != id)
    return ar_error_set (err, 0, "dns: answer has id %u, want %u",
                         ar_load_be16 (msg), id);
  if (!(msg[2] & 0x80) || ((msg[2] >> 3) & 0x0f))
    return ar_error_set (err, 0, "dns: message is not a response to a query");
  if (ar_load_be16 (msg + 4) != 1)
    return ar_error_set (err, 0, "dns: answer has %u questions, want 1",
                         ar_load_be16 (msg + 4));
  return 0;
}

int
dns_parse_answers (const uint8_t *msg, size_t len, const dns_query *asked,
                   uint16_t id, dns_addresses *out, ar_error_t **err)
{
  *out = (dns_addresses){ 0 };
  if (check_answer_header (msg, len, id, err) < 0)
    return -1;
  size_t off = DNS_HEADER_LEN;
  char name[DNS_NAME_TEXT_MAX + 1];
  int clean = read_name (msg, len, &off, name, err);
  if (clean < 0)
    return -1;
  if (off + 4 > len)
    return ar_error_set (err, 0, "dns: answer's question is truncated");
  if (clean != NAME_CLEAN || strcmp (name, asked->name) != 0
      || ar_load_be16 (msg + off) != asked->qtype
      || ar_load_be16 (msg + off + 2) != asked->qclass)
    return ar_error_set (err, 0, "dns: answer's question is not the one asked");
  off += 4;
  unsigned count = ar_load_be16 (msg + 6);
  if (check_answer_section (msg, len, off, count, asked->qclass, err) < 0)
    return -1;
  if ((msg[3] & 0x0f) != 0)
    return 0;
  name_chain chain;
  follow_cnames (msg, len, off, count, asked, &chain);
  collect_addresses (msg, len, off, count, asked, &chain, out);
  return 0;
}

void
dns_addresses_free (dns_addresses *a)
{
  free (a->items);
  *a = (dns_addresses){ 0 };
}
