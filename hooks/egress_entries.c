/* SPDX-License-Identifier: Apache-2.0 */
/* Allow-list entries: 10.0.0.0/8, fd00::/8, 1.2.3.4, 1.2.3.4:443,
 * [fd00::1]:443, pypi.org, pypi.org:443, *.npmjs.org, *.npmjs.org:443.
 * Addresses are normalised with inet_pton/inet_ntop so that the nft text
 * built from them cannot carry anything but an address. */
#include "config.h"
#include "egress.h"
#include "../oci/json.h"
#include "../src/util/cleanup.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define ENTRY_CHARS                                                            \
  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.:/*[]_-"
#define DIGITS "0123456789"

static int
parse_port (const char *text, uint16_t *port, ar_error_t **err)
{
  if (*text == '\0')
    return ar_error_set (err, 0, "empty port after `:`");
  size_t len = strlen (text);
  unsigned long v
      = len <= 5 && strspn (text, DIGITS) == len ? strtoul (text, NULL, 10) : 0;
  if (v == 0 || v > 65535)
    return ar_error_set (err, 0, "port `%s` is not a number from 1 to 65535",
                         text);
  *port = (uint16_t) v;
  return 0;
}

/* `addr` with an optional "/prefix"; fills kind and the normalised text. */
static int
parse_network (const char *addr, egress_entry *out, ar_error_t **err)
{
  cleanup_free char *copy = xstrdup (addr);
  char *slash = strchr (copy, '/');
  long prefix = -1;
  if (slash)
    {
      *slash = '\0';
      size_t digits = strspn (slash + 1, DIGITS);
      if (digits == 0 || digits > 3 || slash[1 + digits] != '\0')
        return ar_error_set (err, 0, "prefix `/%s` is not a number", slash + 1);
      prefix = strtol (slash + 1, NULL, 10);
    }
  unsigned char buf[sizeof (struct in6_addr)];
  char shown[INET6_ADDRSTRLEN];
  int family = strchr (copy, ':') ? AF_INET6 : AF_INET;
  if (inet_pton (family, copy, buf) != 1)
    return ar_error_set (err, 0, "`%s` is not an %s address", copy,
                         family == AF_INET ? "IPv4" : "IPv6");
  int bits = family == AF_INET ? 32 : 128;
  if (prefix > bits)
    return ar_error_set (err, 0,
                         "prefix /%ld is longer than the address's %d bits",
                         prefix, bits);
  inet_ntop (family, buf, shown, sizeof shown);
  out->kind = family == AF_INET ? ENTRY_NET4 : ENTRY_NET6;
  out->text
      = prefix >= 0 ? xasprintf ("%s/%ld", shown, prefix) : xstrdup (shown);
  return 0;
}

/* Labels of 1..63 letters, digits, '-' and '_', at most 253 in all. */
static int
check_domain (const char *name, ar_error_t **err)
{
  size_t len = strlen (name);
  if (len == 0)
    return ar_error_set (err, 0, "empty name");
  if (len > 253)
    return ar_error_set (err, 0, "name of %zu characters (at most 253)", len);
  for (const char *p = name; *p;)
    {
      size_t label = strcspn (p, ".");
      if (label == 0)
        return ar_error_set (err, 0, "empty label in `%s`", name);
      if (label > 63)
        return ar_error_set (err, 0,
                             "label of %zu characters in `%s` (at most 63)",
                             label, name);
      for (size_t i = 0; i < label; i++)
        if (!isalnum ((unsigned char) p[i]) && p[i] != '-' && p[i] != '_')
          return ar_error_set (
              err, 0,
              "`%c` in `%s` (a name's labels have letters, digits, '-' and '_')",
              p[i], name);
      p += label;
      if (*p == '.' && *++p == '\0')
        return ar_error_set (err, 0, "empty label in `%s`", name);
    }
  return 0;
}

static char *
lowercase_without_dot (const char *name)
{
  char *out = xstrdup (name);
  for (char *p = out; *p; p++)
    *p = (char) tolower ((unsigned char) *p);
  size_t len = strlen (out);
  if (len > 1 && out[len - 1] == '.')
    out[len - 1] = '\0';
  return out;
}

/* What looks like an address is read as one, and its error is that. */
static bool
looks_like_address (const char *host)
{
  return (*host && strspn (host, DIGITS ".") == strlen (host))
         || strpbrk (host, ":/") != NULL;
}

static int
parse_host (const char *host, egress_entry *out, ar_error_t **err)
{
  if (looks_like_address (host))
    return parse_network (host, out, err);
  bool wildcard = strncmp (host, "*.", 2) == 0;
  if (strchr (wildcard ? host + 1 : host, '*'))
    return ar_error_set (err, 0,
                         "`*` only as the whole first label (`*.name`)");
  cleanup_free char *name = lowercase_without_dot (wildcard ? host + 2 : host);
  if (wildcard && name[0] == '\0')
    return ar_error_set (err, 0, "`*.` wants a name after it");
  if (check_domain (name, err) < 0)
    return -1;
  out->kind = wildcard ? ENTRY_WILDCARD : ENTRY_DOMAIN;
  out->text = steal_pointer (&name);
  return 0;
}

/* [v6]:port or [v6] */
static int
parse_bracketed (const char *text, egress_entry *out, ar_error_t **err)
{
  const char *close = strchr (text, ']');
  if (close == NULL)
    return ar_error_set (err, 0, "`[` without `]`");
  if (close[1] != '\0' && close[1] != ':')
    return ar_error_set (err, 0,
                         "`]` followed by something other than `:PORT`");
  if (close[1] == ':' && parse_port (close + 2, &out->port, err) < 0)
    return -1;
  cleanup_free char *host = xstrndup (text + 1, (size_t) (close - text - 1));
  if (strchr (host, ':') == NULL)
    return ar_error_set (err, 0, "`[%s]` is not an IPv6 address", host);
  return parse_network (host, out, err);
}

static int
parse_entry (const char *text, egress_entry *out, ar_error_t **err)
{
  const char *colon = strrchr (text, ':');
  if (*text == '\0')
    return ar_error_set (err, 0, "empty entry");
  unsigned char bad = (unsigned char) text[strspn (text, ENTRY_CHARS)];
  if (bad > ' ' && bad < 0x7f)
    return ar_error_set (
        err, 0,
        "character `%c` (an entry has letters, digits and . : / * [ ] - _)",
        bad);
  if (bad)
    return ar_error_set (
        err, 0,
        "byte 0x%02x (an entry has letters, digits and . : / * [ ] - _)", bad);
  if (text[0] == '[')
    return parse_bracketed (text, out, err);
  if (colon == NULL || strchr (text, ':') != colon)
    return parse_host (text, out, err); /* no ':', or an IPv6 address */
  /* exactly one ':': host:port */
  cleanup_free char *host = xstrndup (text, (size_t) (colon - text));
  if (parse_port (colon + 1, &out->port, err) < 0)
    return -1;
  if (strchr (host, '/'))
    return ar_error_set (
        err, 0, "a network with a port (an address or name may have one)");
  return parse_host (host, out, err);
}

/* "WHAT `TEXT`: why", the text as typed unless it has bytes that could
 * break the line. */
static int
entry_error (const char *what, const char *text, const ar_error_t *why,
             ar_error_t **err)
{
  bool plain = true;
  for (const char *p = text; *p; p++)
    plain = plain && *p >= ' ' && *p < 0x7f && *p != '`';
  cleanup_free char *shown
      = plain ? xasprintf ("`%s`", text) : oj_quote (text, strlen (text));
  return ar_error_set (err, 0, "%s %s: %s", what, shown, ar_error_text (why));
}

int
egress_entry_parse (const char *what, const char *text, egress_entry *out,
                    ar_error_t **err)
{
  *out = (egress_entry){ 0 };
  cleanup_error ar_error_t *why = NULL;
  if (parse_entry (text, out, &why) == 0)
    return 0;
  free (out->text);
  *out = (egress_entry){ 0 };
  return entry_error (what, text, why, err);
}

int
egress_ingress_parse (const char *what, const char *text, egress_ingress *out,
                      ar_error_t **err)
{
  cleanup_free char *port = xstrdup (text);
  char *slash = strchr (port, '/');
  out->proto = IPPROTO_TCP;
  cleanup_error ar_error_t *why = NULL;
  if (slash)
    {
      *slash = '\0';
      if (strcmp (slash + 1, "udp") == 0)
        out->proto = IPPROTO_UDP;
      else if (strcmp (slash + 1, "tcp") != 0)
        ar_error_set (&why, 0, "want PORT, PORT/tcp or PORT/udp");
    }
  if (why == NULL && *port == '\0')
    ar_error_set (&why, 0, "want PORT, PORT/tcp or PORT/udp");
  if (why == NULL && parse_port (port, &out->port, &why) == 0)
    return 0;
  return entry_error (what, text, why, err);
}

void
egress_allowlist_free (egress_allowlist *list)
{
  for (size_t i = 0; i < list->len; i++)
    free (list->items[i].text);
  free (list->items);
  *list = (egress_allowlist){ 0 };
}

bool
egress_allowlist_has_domains (const egress_allowlist *list)
{
  for (size_t i = 0; i < list->len; i++)
    if (list->items[i].kind == ENTRY_DOMAIN
        || list->items[i].kind == ENTRY_WILDCARD)
      return true;
  return false;
}

static bool
name_matches (const egress_entry *e, const char *name)
{
  if (e->kind == ENTRY_DOMAIN)
    return strcmp (name, e->text) == 0;
  if (e->kind != ENTRY_WILDCARD)
    return false;
  size_t n = strlen (name), s = strlen (e->text);
  return n > s + 1 && name[n - s - 1] == '.'
         && strcmp (name + n - s, e->text) == 0;
}

bool
egress_network_parse (const char *text, egress_network *n)
{
  char copy[INET6_ADDRSTRLEN + 8];
  snprintf (copy, sizeof copy, "%s", text);
  char *slash = strchr (copy, '/');
  if (slash)
    *slash = '\0';
  n->family = strchr (copy, ':') ? AF_INET6 : AF_INET;
  n->prefix = n->family == AF_INET ? 32 : 128;
  if (slash)
    n->prefix = (unsigned) strtoul (slash + 1, NULL, 10);
  memset (n->addr, 0, sizeof n->addr);
  return inet_pton (n->family, copy, n->addr) == 1;
}

static bool
network_covers (const egress_entry *outer, const egress_entry *inner)
{
  egress_network a, b;
  if (!egress_network_parse (outer->text, &a)
      || !egress_network_parse (inner->text, &b) || b.prefix < a.prefix)
    return false;
  unsigned whole = a.prefix / 8, rest = a.prefix % 8;
  if (memcmp (a.addr, b.addr, whole) != 0)
    return false;
  uint8_t mask = (uint8_t) (0xff << (8 - rest));
  return rest == 0 || (a.addr[whole] & mask) == (b.addr[whole] & mask);
}

bool
egress_entry_covers (const egress_entry *outer, const egress_entry *inner)
{
  if (outer->port != 0 && outer->port != inner->port)
    return false;
  switch (outer->kind)
    {
    case ENTRY_NET4:
    case ENTRY_NET6:
      return inner->kind == outer->kind && network_covers (outer, inner);
    case ENTRY_DOMAIN:
      return inner->kind == ENTRY_DOMAIN
             && strcmp (inner->text, outer->text) == 0;
    case ENTRY_WILDCARD:
      return (inner->kind == ENTRY_DOMAIN || inner->kind == ENTRY_WILDCARD)
             && (name_matches (outer, inner->text)
                 || (inner->kind == ENTRY_WILDCARD
                     && strcmp (inner->text, outer->text) == 0));
    }
  return false;
}

bool
egress_name_allowed (const egress_allowlist *list, const char *name,
                     uint16_t *ports, size_t max, size_t *n_ports)
{
  cleanup_free char *lower = lowercase_without_dot (name);
  bool allowed = false;
  *n_ports = 0;
  for (size_t i = 0; i < list->len; i++)
    if (name_matches (&list->items[i], lower))
      {
        allowed = true;
        if (*n_ports < max)
          ports[(*n_ports)++] = list->items[i].port;
      }
  return allowed;
}
