/* SPDX-License-Identifier: Apache-2.0 */
/* hooks/peek_name: the name a client's first bytes ask for. ClientHellos
 * are built here field by field (and split over records), so each case
 * says which bytes it is about; and what curl 7.88 and openssl 3.0 sent to
 * a local listener, kept as the fuzz target's seeds. */
#include "config.h"
#include "unit.h"
#include "../../hooks/peek_name.h"
#include "../../src/util/cleanup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct
{
  uint8_t b[PEEK_BYTES_MAX * 2];
  size_t n;
} bytes;

static void
put (bytes *o, const void *p, size_t n)
{
  memcpy (o->b + o->n, p, n);
  o->n += n;
}

static void
put8 (bytes *o, unsigned v)
{
  o->b[o->n++] = (uint8_t) v;
}

static void
put16 (bytes *o, unsigned v)
{
  put8 (o, v >> 8);
  put8 (o, v & 0xff);
}

/* A server_name extension with these host names (type 0 each). */
static void
sni_extension (bytes *o, const char *const *names, size_t n)
{
  size_t list = 0;
  for (size_t i = 0; i < n; i++)
    list += 3 + strlen (names[i]);
  put16 (o, 0);
  put16 (o, (unsigned) list + 2);
  put16 (o, (unsigned) list);
  for (size_t i = 0; i < n; i++)
    {
      put8 (o, 0);
      put16 (o, (unsigned) strlen (names[i]));
      put (o, names[i], strlen (names[i]));
    }
}

/* supported_versions: TLS 1.3 */
static void
other_extension (bytes *o)
{
  static const uint8_t ext[] = { 0x00, 0x2b, 0x00, 0x03, 0x02, 0x03, 0x04 };
  put (o, ext, sizeof ext);
}

/* A ClientHello with `ext` as its extensions (none at all when NULL), in
 * handshake records of at most `fragment` bytes. */
static void
client_hello (bytes *o, const bytes *ext, size_t fragment)
{
  bytes hs = { .n = 0 };
  put8 (&hs, 1);
  size_t at = hs.n;
  put8 (&hs, 0);
  put16 (&hs, 0);
  put16 (&hs, 0x0303);
  static const uint8_t random[32] = { 7 };
  put (&hs, random, 32);
  put8 (&hs, 32);
  put (&hs, random, 32);
  put16 (&hs, 2);
  put16 (&hs, 0x1301);
  put8 (&hs, 1);
  put8 (&hs, 0);
  if (ext)
    {
      put16 (&hs, (unsigned) ext->n);
      put (&hs, ext->b, ext->n);
    }
  size_t body = hs.n - 4;
  hs.b[at] = (uint8_t) (body >> 16);
  hs.b[at + 1] = (uint8_t) (body >> 8);
  hs.b[at + 2] = (uint8_t) body;
  o->n = 0;
  for (size_t off = 0; off < hs.n; off += fragment)
    {
      size_t n = hs.n - off < fragment ? hs.n - off : fragment;
      put8 (o, 22);
      put16 (o, 0x0301);
      put16 (o, (unsigned) n);
      put (o, hs.b + off, n);
    }
}

static peek_result
read_all (const bytes *in, peek_name *out, char **why)
{
  ar_error_t *err = NULL;
  peek_result r = peek_name_read (in->b, in->n, out, &err);
  *why = err ? xstrdup (ar_error_text (err)) : NULL;
  ar_error_free (err);
  return r;
}

static bool
refused_for (const bytes *in, const char *why)
{
  peek_name out;
  cleanup_free char *said = NULL;
  return read_all (in, &out, &said) == PEEK_REFUSE && said && strstr (said, why)
         && out.name[0] == '\0';
}

/* Every strict prefix is still waiting. */
static bool
prefixes_wait (const bytes *in)
{
  for (size_t n = 0; n < in->n; n++)
    {
      peek_name out;
      cleanup_error ar_error_t *err = NULL;
      if (peek_name_read (in->b, n, &out, &err) != PEEK_MORE)
        return false;
    }
  return true;
}

static void
test_tls_name (void)
{
  static const char *const good[] = { "Good.Test." };
  bytes ext = { .n = 0 }, hello;
  other_extension (&ext);
  sni_extension (&ext, good, 1);
  size_t fragments[] = { 16384, 7, 1 };
  for (size_t i = 0; i < sizeof fragments / sizeof *fragments; i++)
    {
      client_hello (&hello, &ext, fragments[i]);
      peek_name out;
      cleanup_free char *why = NULL;
      CHECK (read_all (&hello, &out, &why) == PEEK_NAME);
      CHECK_STR (out.name, "good.test");
      CHECK (out.tls);
      CHECK (prefixes_wait (&hello));
    }
  /* What follows the ClientHello (early data) is not looked at. */
  client_hello (&hello, &ext, 100);
  put (&hello, "\x17\x03\x03\x00\x01x", 6);
  peek_name out;
  cleanup_free char *why = NULL;
  CHECK (read_all (&hello, &out, &why) == PEEK_NAME);
}

static void
test_tls_refused (void)
{
  bytes ext = { .n = 0 }, hello;
  other_extension (&ext);
  client_hello (&hello, &ext, 16384);
  CHECK (refused_for (&hello, "no server name"));
  client_hello (&hello, NULL, 16384);
  CHECK (refused_for (&hello, "no server name"));

  static const char *const one[] = { "good.test" };
  static const char *const two[] = { "good.test", "evil.test" };
  ext.n = 0;
  sni_extension (&ext, two, 2);
  client_hello (&hello, &ext, 16384);
  CHECK (refused_for (&hello, "two host names"));
  ext.n = 0;
  sni_extension (&ext, one, 1);
  sni_extension (&ext, one, 1);
  client_hello (&hello, &ext, 16384);
  CHECK (refused_for (&hello, "two server_name extensions"));

  static const char *const bad[] = { "evil.test\x01", "a..b", "", "x y" };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      ext.n = 0;
      sni_extension (&ext, &bad[i], 1);
      client_hello (&hello, &ext, 16384);
      CHECK (refused_for (&hello, "not a host name"));
    }
  /* An extension that says it is longer than what is left. */
  ext.n = 0;
  sni_extension (&ext, one, 1);
  ext.b[3] += 40;
  client_hello (&hello, &ext, 16384);
  CHECK (refused_for (&hello, "malformed"));
  /* Application data first; a handshake message other than ClientHello. */
  bytes data = { .n = 0 };
  put (&data, "\x17\x03\x03\x00\x05hello", 10);
  CHECK (refused_for (&data, "neither"));
  client_hello (&hello, &ext, 16384);
  hello.b[5] = 2;
  CHECK (refused_for (&hello, "no ClientHello"));
  /* A record longer than TLS allows. */
  bytes big = { .n = 0 };
  put (&big, "\x16\x03\x01\x48\x01", 5);
  CHECK (refused_for (&big, "size TLS forbids"));
}

static bytes
text (const char *s)
{
  bytes b = { .n = 0 };
  put (&b, s, strlen (s));
  return b;
}

static void
test_http (void)
{
  bytes req = text ("GET /x HTTP/1.1\r\nUser-Agent: t\r\n"
                    "host:  Good.Test:8080 \r\nAccept: */*\r\n\r\nbody");
  peek_name out;
  cleanup_free char *why = NULL;
  CHECK (read_all (&req, &out, &why) == PEEK_NAME);
  CHECK_STR (out.name, "good.test");
  CHECK (!out.tls);
  bytes head = text ("GET /x HTTP/1.1\r\nhost: good.test\r\n\r\n");
  CHECK (prefixes_wait (&head));
  bytes lf = text ("HEAD / HTTP/1.0\nHost: good.test\n\n");
  cleanup_free char *why2 = NULL;
  CHECK (read_all (&lf, &out, &why2) == PEEK_NAME);

  bytes two
      = text ("GET / HTTP/1.1\r\nHost: good.test\r\nHost: evil.test\r\n\r\n");
  CHECK (refused_for (&two, "two Host headers"));
  bytes none = text ("GET / HTTP/1.0\r\nAccept: */*\r\n\r\n");
  CHECK (refused_for (&none, "no Host header"));
  bytes absolute
      = text ("GET http://evil.test/ HTTP/1.1\r\nHost: good.test\r\n\r\n");
  CHECK (refused_for (&absolute, "with a path"));
  bytes connect
      = text ("CONNECT evil.test:443 HTTP/1.1\r\nHost: good.test\r\n\r\n");
  CHECK (refused_for (&connect, "with a path"));
  bytes folded = text ("GET / HTTP/1.1\r\nHost: good.test\r\n evil\r\n\r\n");
  CHECK (refused_for (&folded, "malformed header"));
  bytes literal = text ("GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n");
  CHECK (refused_for (&literal, "not a host name"));
  bytes port = text ("GET / HTTP/1.1\r\nHost: good.test:80x\r\n\r\n");
  CHECK (refused_for (&port, "not a host name"));
  bytes neither = text ("\x01\x02 hello");
  CHECK (refused_for (&neither, "neither"));
  bytes lower = text ("get / HTTP/1.1\r\n");
  CHECK (refused_for (&lower, "neither"));
}

/* What curl and openssl sent (tests/fuzz/corpus/fuzz_peek_name). */
static void
test_captured (void)
{
  static const struct
  {
    const char *file;
    const char *name;
  } seen[] = { { "curl-clienthello", "good.test" },
               { "curl-clienthello-split", "good.test" },
               { "openssl-clienthello", "good.test" },
               { "curl-http", "good.test" } };
  const char *srcdir = getenv ("srcdir");
  for (size_t i = 0; i < sizeof seen / sizeof *seen; i++)
    {
      cleanup_free char *path
          = xasprintf ("%s/tests/fuzz/corpus/fuzz_peek_name/%s",
                       srcdir ? srcdir : ".", seen[i].file);
      bytes in = { .n = 0 };
      FILE *f = fopen (path, "rb");
      CHECK (f != NULL);
      if (f == NULL)
        continue;
      in.n = fread (in.b, 1, sizeof in.b, f);
      fclose (f);
      peek_name out;
      cleanup_free char *why = NULL;
      CHECK (read_all (&in, &out, &why) == PEEK_NAME);
      CHECK_STR (out.name, seen[i].name);
      CHECK (prefixes_wait (&in));
    }
}

/* No name in the first PEEK_BYTES_MAX bytes: refused, never "more". */
static void
test_limit (void)
{
  bytes req = text ("GET /");
  memset (req.b + req.n, 'a', PEEK_BYTES_MAX);
  req.n += PEEK_BYTES_MAX;
  CHECK (refused_for (&req, "no name in the first bytes"));
  bytes hdrs = text ("GET / HTTP/1.1\r\n");
  while (hdrs.n < PEEK_BYTES_MAX + 100)
    put (&hdrs, "X-Pad: aaaaaaaaaaaaaaaa\r\n", 25);
  put (&hdrs, "Host: good.test\r\n\r\n", 19);
  CHECK (refused_for (&hdrs, "no name in the first bytes"));
}

int
main (void)
{
  RUN (test_tls_name);
  RUN (test_tls_refused);
  RUN (test_http);
  RUN (test_captured);
  RUN (test_limit);
  return unit_finish ();
}
