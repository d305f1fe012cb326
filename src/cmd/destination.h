/* SPDX-License-Identifier: Apache-2.0 */
/* Where a sandbox writes a file when it is done (--diff, --json-status). */
#ifndef AR_CMD_DESTINATION_H
#define AR_CMD_DESTINATION_H

#include "../util/error.h"

/* GIVEN made absolute (relative to the current directory) in *out, and
 * checked before the command runs, so that a file that cannot be written
 * is found out now, not once the work is done: its directory exists and
 * may be written, and the file, if there, is no directory and writable.
 * Errors read "sandbox: FLAG `GIVEN`: ...". */
int ar_cmd_file_destination (const char *flag, const char *given, char **out,
                             ar_error_t **err);

#endif
