/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AR_UTIL_FDS_H
#define AR_UTIL_FDS_H

#include <stddef.h>

/* Close every fd >= `first` except those in `keep` (n_keep entries), with
 * close_range where available. */
void ar_close_fds_from (int first, const int *keep, size_t n_keep);

/* Mark every fd >= `first` close-on-exec. */
void ar_cloexec_fds_from (int first);

#endif
