/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AR_UTIL_DAEMON_H
#define AR_UTIL_DAEMON_H

#include <stddef.h>

/* In a child just forked to outlive its parent (the egress resolver, the
 * approval gate, a lease's watcher): a session of its own, stdin, stdout
 * and stderr on /dev/null, no fd but `keep` (a reader of the runtime's
 * pipes would otherwise wait for the daemon's end), and none of the
 * parent's signal handling: nothing blocked, every signal at its default
 * but SIGPIPE, ignored (a peer that hangs up must not end it). */
void ar_daemon_enter (const int *keep, size_t n_keep);

#endif
