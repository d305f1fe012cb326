/* Allow-list entries: 10.0.0.0/8, fd00::/8, 1.2.3.4, 1.2.3.4:443,
 * [fd00::1]:443, pypi.org, pypi.org:443, *.npmjs.org, *.npmjs.org:443.
 * Addresses are normalised with inet_pton/inet_ntop so that the nft text
 * built from them cannot carry anything but an address. */
#include "config.h"
#include "egress.h"
#include "../src/util/cleanup.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int
parse_port (const char *text, uint16_t *port)
{
  char *end;
  if (*text < '0' || *text > '9')
    return -1;
  unsigned long v = strtoul (text, &end, 10);
  if (*end != '\0' || v == 0 || v > 65535)
    return -1;
  *port = (uint16_t) v;
  return 0;
}

/* `addr` with an optional "/prefix"; fills kind and the normalised text. */
static int
parse_network (const char *addr, egress_entry *out)
{
  cleanup_free char *copy = xstrdup (addr);
  char *slash = strchr (copy, '/');
  long prefix = -1;
  if (slash)
    {
      char *end;
      *slash = '\0';
      prefix = strtol (slash + 1, &end, 10);
      if (slash[1] == '\0' || *end != '\0' || prefix < 0)
        return -1;
    }
  unsigned char buf[sizeof (struct in6_addr)];
  char shown[INET6_ADDRSTRLEN];
  int family = strchr (copy, ':') ? AF_INET6 : AF_INET;
  if (inet_pton (family, copy, buf) != 1)
    return -1;
  if (prefix > (family == AF_INET ? 32 : 128))
    return -1;
  inet_ntop (family, buf, shown, sizeof shown);
  out->kind = family == AF_INET ? ENTRY_NET4 : ENTRY_NET6;
  out->text = prefix >= 0 ? xasprintf ("%s/%ld", shown, prefix)
                          : xstrdup (shown);
  return 0;
}

/* Letters, digits, '-' and '.', labels of 1..63, at most 253 in all. */
static bool
domain_valid (const char *name)
{
  size_t len = strlen (name), label = 0;
  if (len == 0 || len > 253)
    return false;
  for (const char *p = name; *p; p++)
    {
      if (*p == '.')
        {
          if (label == 0)
            return false;
          label = 0;
          continue;
        }
      if (!isalnum ((unsigned char) *p) && *p != '-' && *p != '_')
        return false;
      if (++label > 63)
        return false;
    }
  return label > 0;
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

static int
parse_host (const char *host, egress_entry *out)
{
  if (parse_network (host, out) == 0)
    return 0;
  bool wildcard = strncmp (host, "*.", 2) == 0;
  cleanup_free char *name = lowercase_without_dot (wildcard ? host + 2 : host);
  if (!domain_valid (name))
    return -1;
  out->kind = wildcard ? ENTRY_WILDCARD : ENTRY_DOMAIN;
  out->text = steal_pointer (&name);
  return 0;
}

int
egress_entry_parse (const char *text, egress_entry *out, ar_error_t **err)
{
  *out = (egress_entry){ 0 };
  cleanup_free char *host = NULL;
  const char *colon = strrchr (text, ':');
  int r = -1;
  if (text[0] == '[')
    {
      /* [v6]:port or [v6] */
      const char *close = strchr (text, ']');
      if (close && (close[1] == '\0'
                    || (close[1] == ':' && parse_port (close + 2, &out->port) == 0)))
        {
          host = strndup (text + 1, (size_t) (close - text - 1));
          r = strchr (host, ':') ? parse_network (host, out) : -1;
        }
    }
  else if (colon && strchr (text, ':') == colon)
    {
      /* exactly one ':': host:port */
      host = strndup (text, (size_t) (colon - text));
      if (parse_port (colon + 1, &out->port) == 0 && strchr (host, '/') == NULL)
        r = parse_host (host, out);
    }
  else
    r = parse_host (text, out);
  if (r < 0)
    {
      free (out->text);
      *out = (egress_entry){ 0 };
      return ar_error_set (err, 0, "invalid allow entry `%s` (want CIDR, address, address:port, [v6]:port, name, name:port or *.name)", text);
    }
  return 0;
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
  return n > s + 1 && name[n - s - 1] == '.' && strcmp (name + n - s, e->text) == 0;
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
