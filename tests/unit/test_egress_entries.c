/* SPDX-License-Identifier: Apache-2.0 */
/* Allow-list entries (hooks/egress_entries.c): what each form becomes,
 * and that every malformed one is refused with its reason on one line. */
#define _GNU_SOURCE
#include "config.h"
#include "unit.h"
#include "../../hooks/egress.h"

/* The error text for `text`, or NULL when it parsed; *out as parsed. */
static char *
parse (const char *text, egress_entry *out)
{
  ar_error_t *err = NULL;
  int r = egress_entry_parse ("entry", text, out, &err);
  char *msg = r < 0 && err ? strdup (ar_error_text (err)) : NULL;
  if (r < 0 && (msg == NULL || strchr (msg, '\n') || out->text != NULL))
    {
      free (msg);
      msg = strdup ("bad failure");
    }
  ar_error_free (err);
  return msg;
}

static void
accepted (const char *text, egress_entry_kind kind, const char *norm,
          uint16_t port)
{
  egress_entry e;
  char *msg = parse (text, &e);
  unit_current_test = text;
  CHECK_STR (msg, NULL);
  CHECK_INT (e.kind, kind);
  CHECK_STR (e.text, norm);
  CHECK_INT (e.port, port);
  free (e.text);
  free (msg);
}

static void
refused (const char *text, const char *why)
{
  egress_entry e;
  char *msg = parse (text, &e);
  unit_current_test = text;
  CHECK_STR (msg, why);
  free (msg);
}

static void
test_accepted (void)
{
  accepted ("10.0.0.0/8", ENTRY_NET4, "10.0.0.0/8", 0);
  accepted ("1.2.3.4", ENTRY_NET4, "1.2.3.4", 0);
  accepted ("1.2.3.4:443", ENTRY_NET4, "1.2.3.4", 443);
  accepted ("0.0.0.0/0", ENTRY_NET4, "0.0.0.0/0", 0);
  accepted ("FD00:0::/8", ENTRY_NET6, "fd00::/8", 0);
  accepted ("::/128", ENTRY_NET6, "::/128", 0);
  accepted ("[::1]:53", ENTRY_NET6, "::1", 53);
  accepted ("[fd00::1]", ENTRY_NET6, "fd00::1", 0);
  accepted ("PyPI.org", ENTRY_DOMAIN, "pypi.org", 0);
  accepted ("pypi.org.", ENTRY_DOMAIN, "pypi.org", 0);
  accepted ("pypi.org:65535", ENTRY_DOMAIN, "pypi.org", 65535);
  accepted ("_svc.x-1.example", ENTRY_DOMAIN, "_svc.x-1.example", 0);
  accepted ("*.npmjs.org", ENTRY_WILDCARD, "npmjs.org", 0);
  accepted ("*.npmjs.org:443", ENTRY_WILDCARD, "npmjs.org", 443);
}

static void
test_refused (void)
{
  refused (
      "10.0.0.0/33",
      "entry `10.0.0.0/33`: prefix /33 is longer than the address's 32 bits");
  refused ("::/129",
           "entry `::/129`: prefix /129 is longer than the address's 128 bits");
  refused ("10.0.0.0/", "entry `10.0.0.0/`: prefix `/` is not a number");
  refused ("10.0.0.0/0008",
           "entry `10.0.0.0/0008`: prefix `/0008` is not a number");
  refused (
      "10.0.0.0/+8",
      "entry `10.0.0.0/+8`: character `+` (an entry has letters, digits and . : / * [ ] - _)");
  refused ("1.2.3.256",
           "entry `1.2.3.256`: `1.2.3.256` is not an IPv4 address");
  refused ("pypi.org/8",
           "entry `pypi.org/8`: `pypi.org` is not an IPv4 address");
  refused ("host:99999",
           "entry `host:99999`: port `99999` is not a number from 1 to 65535");
  refused ("host:0",
           "entry `host:0`: port `0` is not a number from 1 to 65535");
  refused ("host:", "entry `host:`: empty port after `:`");
  refused ("host:4a",
           "entry `host:4a`: port `4a` is not a number from 1 to 65535");
  refused (
      "10.0.0.0/8:80",
      "entry `10.0.0.0/8:80`: a network with a port (an address or name may have one)");
  refused ("", "entry ``: empty entry");
  refused (":443", "entry `:443`: empty name");
  refused (
      "a b.org",
      "entry `a b.org`: byte 0x20 (an entry has letters, digits and . : / * [ ] - _)");
  refused (
      "a\n.org",
      "entry \"a\\x0a.org\": byte 0x0a (an entry has letters, digits and . : / * [ ] - _)");
  refused (
      "a,b.org",
      "entry `a,b.org`: character `,` (an entry has letters, digits and . : / * [ ] - _)");
  refused (
      "a`b",
      "entry \"a`b\": character ``` (an entry has letters, digits and . : / * [ ] - _)");
  refused ("a..org", "entry `a..org`: empty label in `a..org`");
  refused (".org", "entry `.org`: empty label in `.org`");
  refused ("a.org..", "entry `a.org..`: empty label in `a.org.`");
  refused ("*.", "entry `*.`: `*.` wants a name after it");
  refused ("*", "entry `*`: `*` only as the whole first label (`*.name`)");
  refused ("a*.org",
           "entry `a*.org`: `*` only as the whole first label (`*.name`)");
  refused ("*.*.org",
           "entry `*.*.org`: `*` only as the whole first label (`*.name`)");
  refused ("[::1", "entry `[::1`: `[` without `]`");
  refused ("[::1]x",
           "entry `[::1]x`: `]` followed by something other than `:PORT`");
  refused ("[::1]:0",
           "entry `[::1]:0`: port `0` is not a number from 1 to 65535");
  refused ("[1.2.3.4]:80",
           "entry `[1.2.3.4]:80`: `[1.2.3.4]` is not an IPv6 address");
  refused ("a:b:c", "entry `a:b:c`: `a:b:c` is not an IPv6 address");

  char label64[80];
  memset (label64, 'a', 64);
  strcpy (label64 + 64, ".org");
  egress_entry e;
  char *msg = parse (label64, &e);
  CHECK (msg && strstr (msg, "label of 64 characters"));
  free (msg);
  char name254[260];
  memset (name254, 'a', 254);
  name254[254] = '\0';
  for (int i = 60; i < 254; i += 60)
    name254[i] = '.';
  msg = parse (name254, &e);
  CHECK (msg && strstr (msg, "name of 254 characters"));
  free (msg);
  name254[253] = '\0';
  msg = parse (name254, &e);
  CHECK_STR (msg, NULL);
  free (msg);
  free (e.text);
}

int
main (void)
{
  RUN (test_accepted);
  RUN (test_refused);
  return unit_finish ();
}
