/* SPDX-License-Identifier: Apache-2.0 */
/* Base85 as git writes binary patches (RFC 1924's alphabet): each 4 bytes,
 * big-endian, become 5 digits, most significant first. */
#ifndef AR_UTIL_BASE85_H
#define AR_UTIL_BASE85_H

#include <stddef.h>
#include <stdint.h>

/* Encode `len` bytes (the last group padded with zero bytes) into `out`,
 * which holds 5 * ceil(len / 4) characters and a NUL. */
void ar_base85_encode (const uint8_t *in, size_t len, char *out);

#endif
