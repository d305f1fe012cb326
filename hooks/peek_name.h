/* SPDX-License-Identifier: Apache-2.0 */
/* The name a TCP client's first bytes ask for, read before anything is
 * answered or passed on: the server_name of a TLS ClientHello (RFC 8446
 * 4.1.2, RFC 6066 3; the outer one of an Encrypted ClientHello), or the
 * Host header of an HTTP/1.x request. Nothing is decrypted or changed:
 * the bytes are only looked at, for a connection to an address that an
 * allowed name opened to be let through only if it says such a name.
 *
 * Pure: no sockets, no globals; unit tests and tests/fuzz/fuzz_peek_name.c
 * call it. A name is taken as the resolver takes one (dns_name_from_text):
 * lowercase, no final dot. Anything ambiguous is refused: two server
 * names, two Host headers, a ClientHello or a request line that does not
 * parse, bytes that are neither. */
#ifndef AR_HOOKS_PEEK_NAME_H
#define AR_HOOKS_PEEK_NAME_H

#include "dns_wire.h"
#include "../src/util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What is read at most before the answer: a ClientHello with post-quantum
 * key shares is about 2 KiB, a browser's request headers a few. */
#define PEEK_BYTES_MAX 16384

typedef enum
{
  PEEK_MORE,   /* not enough bytes yet (never at PEEK_BYTES_MAX or more) */
  PEEK_NAME,   /* a name: peek_name.name */
  PEEK_REFUSE, /* no name to let it through by: *err says why, in a line */
} peek_result;

typedef struct
{
  char name[DNS_NAME_TEXT_MAX + 1];
  bool tls; /* from a ClientHello; else from a Host header */
} peek_name;

/* Read the first `len` bytes a client sent. */
peek_result peek_name_read (const uint8_t *buf, size_t len, peek_name *out,
                            ar_error_t **err);

#endif
