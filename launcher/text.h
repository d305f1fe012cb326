/* SPDX-License-Identifier: Apache-2.0 */
/* The launcher's text: names it accepts, numbers it reads and writes. */
#ifndef AR_LAUNCHER_TEXT_H
#define AR_LAUNCHER_TEXT_H

#define NAME_MAX_BYTES 64

/* src/util/path.c's ar_check_plain_name: 1 to 64 letters, digits, '_',
 * '.', '-', not first '.' or '-'. A container id of that form, or a pool's
 * or a pool member's name. */
int plain_name (const char *s);

/* Appends `s` at *at, within end, and a NUL; 0 when it does not fit. */
int append (char **at, const char *end, const char *s);
int append_number (char **at, const char *end, long v);

/* Skips blanks, then reads a decimal number into *value; 0 when there is
 * none. *p is left after it. */
int read_number (const char **p, unsigned long long *value);

#endif
