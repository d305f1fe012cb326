/* SPDX-License-Identifier: Apache-2.0 */
/* A client's first bytes read for the name they ask for (peek_name.h).
 * Every read goes through a span that knows how many bytes it has left. */
#include "config.h"
#include "peek_name.h"

#include <string.h>
#include <strings.h>

#define TLS_HANDSHAKE 22
#define TLS_CLIENT_HELLO 1
#define TLS_FRAGMENT_MAX 16384 /* a plaintext record's, RFC 8446 5.1 */
#define TLS_EXT_SERVER_NAME 0
#define SNI_HOST_NAME 0
#define HTTP_METHOD_MAX 20

/* The bytes not read yet of a part of the message. */
typedef struct
{
  const uint8_t *p;
  size_t left;
} span;

static bool
take (span *s, size_t n, span *out)
{
  if (s->left < n)
    return false;
  if (out)
    *out = (span){ .p = s->p, .left = n };
  s->p += n;
  s->left -= n;
  return true;
}

static bool
take_uint (span *s, size_t bytes, unsigned *v)
{
  span b;
  if (!take (s, bytes, &b))
    return false;
  *v = 0;
  for (size_t i = 0; i < bytes; i++)
    *v = *v << 8 | b.p[i];
  return true;
}

/* A TLS vector: its length in `bytes` bytes, then that many. */
static bool
take_vector (span *s, size_t bytes, span *out)
{
  unsigned n;
  return take_uint (s, bytes, &n) && take (s, n, out);
}

static peek_result
refuse (ar_error_t **err, const char *why)
{
  ar_error_set (err, 0, "%s", why);
  return PEEK_REFUSE;
}

/* ---- TLS ---------------------------------------------------------- */

/* The ClientHello's handshake message, joined from the fragments of the
 * handshake records at the start of `buf`: PEEK_NAME once it is whole. */
static peek_result
join_client_hello (const uint8_t *buf, size_t len, uint8_t *hs, size_t *hs_len,
                   ar_error_t **err)
{
  size_t off = 0, n = 0;
  for (;;)
    {
      if (len - off < 5)
        return PEEK_MORE;
      const uint8_t *record = buf + off;
      size_t fragment = (size_t) record[3] << 8 | record[4];
      if (record[0] != TLS_HANDSHAKE || record[1] != 3)
        return refuse (err, "TLS: a record other than the ClientHello's "
                            "handshake came first");
      if (fragment == 0 || fragment > TLS_FRAGMENT_MAX)
        return refuse (err, "TLS: a handshake record of a size TLS forbids");
      if (len - off - 5 < fragment)
        return PEEK_MORE;
      if (fragment > PEEK_BYTES_MAX - n)
        return refuse (err, "TLS: a ClientHello longer than agentrun reads");
      memcpy (hs + n, record + 5, fragment);
      n += fragment;
      off += 5 + fragment;
      if (n < 4)
        continue;
      if (hs[0] != TLS_CLIENT_HELLO)
        return refuse (err, "TLS: the first handshake message is no "
                            "ClientHello");
      size_t whole = 4 + ((size_t) hs[1] << 16 | (size_t) hs[2] << 8 | hs[3]);
      if (whole > PEEK_BYTES_MAX)
        return refuse (err, "TLS: a ClientHello longer than agentrun reads");
      if (n > whole)
        return refuse (err, "TLS: more handshake bytes after the "
                            "ClientHello in its record");
      if (n == whole)
        {
          *hs_len = whole;
          return PEEK_NAME;
        }
    }
}

/* The one host_name of a server_name extension's data. */
static peek_result
read_server_name (span data, peek_name *out, ar_error_t **err)
{
  span list;
  if (!take_vector (&data, 2, &list) || data.left != 0)
    return refuse (err, "TLS: a malformed server_name extension");
  bool have = false;
  while (list.left > 0)
    {
      unsigned type;
      span name;
      if (!take_uint (&list, 1, &type) || !take_vector (&list, 2, &name))
        return refuse (err, "TLS: a malformed server_name extension");
      if (type != SNI_HOST_NAME)
        continue;
      if (have)
        return refuse (err, "TLS: two host names in server_name");
      have = true;
      if (!dns_name_from_text ((const char *) name.p, name.left, out->name))
        return refuse (err, "TLS: a server name that is not a host name");
    }
  if (!have)
    return refuse (err, "TLS: a server_name extension without a host name");
  return PEEK_NAME;
}

static peek_result
read_client_hello (span hello, peek_name *out, ar_error_t **err)
{
  span session, suites, compression, extensions;
  if (!take (&hello, 2 + 32, NULL) || !take_vector (&hello, 1, &session)
      || session.left > 32 || !take_vector (&hello, 2, &suites)
      || !take_vector (&hello, 1, &compression))
    return refuse (err, "TLS: a malformed ClientHello");
  if (hello.left == 0)
    return refuse (err, "TLS: no server name (a ClientHello without "
                        "extensions)");
  if (!take_vector (&hello, 2, &extensions) || hello.left != 0)
    return refuse (err, "TLS: a malformed ClientHello's extensions");
  bool seen = false;
  while (extensions.left > 0)
    {
      unsigned type;
      span data;
      if (!take_uint (&extensions, 2, &type)
          || !take_vector (&extensions, 2, &data))
        return refuse (err, "TLS: a malformed ClientHello's extensions");
      if (type != TLS_EXT_SERVER_NAME)
        continue;
      if (seen)
        return refuse (err, "TLS: two server_name extensions");
      seen = true;
      if (read_server_name (data, out, err) != PEEK_NAME)
        return PEEK_REFUSE;
    }
  if (!seen)
    return refuse (err, "TLS: no server name (SNI) in the ClientHello");
  out->tls = true;
  return PEEK_NAME;
}

static peek_result
read_tls (const uint8_t *buf, size_t len, peek_name *out, ar_error_t **err)
{
  uint8_t hs[PEEK_BYTES_MAX];
  size_t hs_len = 0;
  peek_result r = join_client_hello (buf, len, hs, &hs_len, err);
  if (r != PEEK_NAME)
    return r;
  return read_client_hello ((span){ .p = hs + 4, .left = hs_len - 4 }, out,
                            err);
}

/* ---- HTTP/1 ------------------------------------------------------- */

/* The next line of `s` (without its CRLF or LF), or false when its end
 * has not come yet. */
static bool
next_line (span *s, span *line)
{
  const uint8_t *nl = memchr (s->p, '\n', s->left);
  if (nl == NULL)
    return false;
  size_t n = (size_t) (nl - s->p);
  *line = (span){ .p = s->p, .left = n > 0 && nl[-1] == '\r' ? n - 1 : n };
  take (s, n + 1, NULL);
  return true;
}

/* METHOD SP TARGET SP HTTP/1.x, the target in origin form ("/path" or
 * "*"): a server takes the name of an absolute-form target
 * ("http://name/") over the Host header's (RFC 9112 3.2.2), so one would
 * carry a second name past the check. */
static bool
is_request_line (span line)
{
  size_t m = 0;
  while (m < line.left && line.p[m] >= 'A' && line.p[m] <= 'Z')
    m++;
  if (m == 0 || m > HTTP_METHOD_MAX || m >= line.left || line.p[m] != ' ')
    return false;
  const uint8_t *target = line.p + m + 1;
  size_t rest = line.left - m - 1;
  const uint8_t *sp = memchr (target, ' ', rest);
  static const char version[] = "HTTP/1.";
  size_t tail = sp ? rest - (size_t) (sp - target) - 1 : 0;
  bool origin_form
      = sp && sp > target
        && (target[0] == '/' || (sp == target + 1 && *target == '*'));
  return origin_form && tail == sizeof version
         && memcmp (sp + 1, version, sizeof version - 1) == 0
         && (sp[sizeof version] == '0' || sp[sizeof version] == '1');
}

static bool
is_token_byte (uint8_t c)
{
  return c > ' ' && c < 127 && !strchr ("\"(),/:;<=>?@[\\]{}", c);
}

/* A Host header's value: optional white space around a name and an
 * optional port. */
static peek_result
read_host (span value, peek_name *out, ar_error_t **err)
{
  while (value.left > 0 && (value.p[0] == ' ' || value.p[0] == '\t'))
    take (&value, 1, NULL);
  while (value.left > 0
         && (value.p[value.left - 1] == ' ' || value.p[value.left - 1] == '\t'))
    value.left--;
  const uint8_t *colon = memchr (value.p, ':', value.left);
  size_t name_len = colon ? (size_t) (colon - value.p) : value.left;
  for (size_t i = name_len + 1; colon && i < value.left; i++)
    if (value.p[i] < '0' || value.p[i] > '9')
      return refuse (err, "HTTP: a Host header that is not a host name");
  if (!dns_name_from_text ((const char *) value.p, name_len, out->name))
    return refuse (err, "HTTP: a Host header that is not a host name");
  return PEEK_NAME;
}

static peek_result
read_http (const uint8_t *buf, size_t len, peek_name *out, ar_error_t **err)
{
  span s = { .p = buf, .left = len }, line;
  if (!next_line (&s, &line))
    {
      /* The method so far must still be one. */
      for (size_t i = 0; i < len && buf[i] != ' '; i++)
        if (buf[i] < 'A' || buf[i] > 'Z' || i >= HTTP_METHOD_MAX)
          return refuse (err, "neither a TLS ClientHello nor an HTTP/1 "
                              "request");
      return PEEK_MORE;
    }
  if (!is_request_line (line))
    return refuse (err, "HTTP: not an HTTP/1 request line with a path");
  bool have = false;
  while (next_line (&s, &line))
    {
      if (line.left == 0)
        return have ? PEEK_NAME
                    : refuse (err, "HTTP: no Host header in the request");
      const uint8_t *colon = memchr (line.p, ':', line.left);
      size_t name_len = colon ? (size_t) (colon - line.p) : 0;
      for (size_t i = 0; i < name_len; i++)
        if (!is_token_byte (line.p[i]))
          colon = NULL;
      /* A folded line (obsolete) or no "Name:" is malformed. */
      if (colon == NULL || name_len == 0)
        return refuse (err, "HTTP: a malformed header line");
      if (name_len != 4 || strncasecmp ((const char *) line.p, "host", 4) != 0)
        continue;
      if (have)
        return refuse (err, "HTTP: two Host headers");
      have = true;
      span value = { .p = colon + 1, .left = line.left - name_len - 1 };
      if (read_host (value, out, err) != PEEK_NAME)
        return PEEK_REFUSE;
    }
  return PEEK_MORE;
}

peek_result
peek_name_read (const uint8_t *buf, size_t len, peek_name *out,
                ar_error_t **err)
{
  *out = (peek_name){ .tls = false };
  if (len > PEEK_BYTES_MAX)
    len = PEEK_BYTES_MAX; /* no answer may depend on more */
  if (len == 0)
    return PEEK_MORE;
  peek_result r;
  if (buf[0] == TLS_HANDSHAKE)
    r = read_tls (buf, len, out, err);
  else if (buf[0] >= 'A' && buf[0] <= 'Z')
    r = read_http (buf, len, out, err);
  else
    r = refuse (err, "neither a TLS ClientHello nor an HTTP/1 request");
  if (r == PEEK_MORE && len >= PEEK_BYTES_MAX)
    r = refuse (err, "no name in the first bytes agentrun reads");
  if (r != PEEK_NAME)
    out->name[0] = '\0';
  return r;
}
