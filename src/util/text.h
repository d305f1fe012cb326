/* SPDX-License-Identifier: Apache-2.0 */
/* Text from a container (a command line, a name) on its way to a person. */
#ifndef AR_UTIL_TEXT_H
#define AR_UTIL_TEXT_H

#include <stddef.h>

/* The length of the valid UTF-8 sequence at `s` (`n` bytes left): 1 for
 * ASCII, 2 to 4 for a well-formed multi-byte character (no overlong form,
 * surrogate, or code point past U+10FFFF), 0 when there is none. */
size_t ar_utf8_sequence (const unsigned char *s, size_t n);

/* `s` fit for a terminal: control characters (C0, DEL, C1), the
 * characters that reorder text (U+202A-U+202E, U+2066-U+2069) and bytes
 * that are not UTF-8 written as \xNN, a backslash as \\; nothing else
 * changed. The result is malloc'd. */
char *ar_text_printable (const char *s);

#endif
