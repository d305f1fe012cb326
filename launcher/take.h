/* SPDX-License-Identifier: Apache-2.0 */
/* The launcher's part of `agentrun sandbox --pool NAME -- COMMAND`. */
#ifndef AR_LAUNCHER_TAKE_H
#define AR_LAUNCHER_TAKE_H

/* For real root's `agentrun [--root ROOT] sandbox --pool NAME -- COMMAND`
 * (those words and no others): claim a ready sandbox of the pool, hand
 * it COMMAND and this process's stdio, start it, then execute the
 * runtime at `runtime` to see it through, telling it how far the take got
 * (src/core/take.h, ar_take_handover). The command's start then costs no
 * start of the runtime. Returns, having claimed nothing, for any other
 * call and when no sandbox is ready: the runtime does it all then. */
void take_from_pool (int argc, char **argv, char **envp, const char *runtime);

#endif
