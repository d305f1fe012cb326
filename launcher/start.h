/* SPDX-License-Identifier: Apache-2.0 */
/* The launcher's `start`. */
#ifndef AR_LAUNCHER_START_H
#define AR_LAUNCHER_START_H

/* For `agentrun [GLOBAL OPTIONS] start ID` (call.h's options) of a
 * created container whose create left AR_PLAIN_START_FILE (no poststart
 * hooks, no agent plan: the start is the exec fifo's read and nothing
 * else), starts it as the runtime's ar_container_start does, without the
 * runtime: 0, or 1 when it started but the fifo could not be removed
 * (said on stderr). -1, having started nothing, for any other call or
 * container, and when the init died before its start: the runtime then
 * does it, and reports what is wrong in its own words and log. */
int start_created (int argc, char **argv);

#endif
