/* SPDX-License-Identifier: Apache-2.0 */
/* What the runtime and its launcher (launcher/) both act on: the state
 * files a `start` reads, and a take (take.h) as it travels. The launcher
 * links no code of the runtime and so knows them from here. Only
 * definitions: nothing here needs a library. */
#ifndef AR_CORE_LAUNCHER_WIRE_H
#define AR_CORE_LAUNCHER_WIRE_H

/* The state root of real root when --root is not given. */
#define AR_DEFAULT_ROOT "/run/agentrun"

/* Files of a container's state dir, <root>/<id>/ (state.h has the rest).
 * The fifo a created container's init waits to write to; `start` reads
 * it. */
#define AR_EXEC_FIFO "exec.fifo"
/* A pooled sandbox waiting to be taken (take.h): created, not started. */
#define AR_AWAIT_TAKE_FILE "await-take"
/* "PID START_TIME" of the init (util/fs.h's pid record), written by
 * create when starting it takes nothing but reading the fifo: no
 * poststart hooks, no agent plan to audit in. The launcher starts those
 * alone (launcher/start.c). */
#define AR_PLAIN_START_FILE "plain-start"

/* The signals a foreground run, sandbox or take passes on to its
 * container (src/core/foreground.c); the launcher blocks them before it
 * starts a pooled command, until the runtime has its handlers. Names
 * from <signal.h> or <linux/signal.h>, whichever the includer has. */
#define AR_FORWARDED_SIGNALS                                                   \
  SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT

/* Where a pool's sockets wait: <root>/.pool/NAME/ready/ID; a taker claims
 * one by renaming it to taken/ID (src/cmd/pool.h). */
#define AR_POOLS_DIR ".pool"
#define AR_POOL_READY_DIR "ready"
#define AR_POOL_TAKEN_DIR "taken"

/* A message: a 4-byte type, a 4-byte value, then NUL-terminated text (at
 * most AR_TAKE_WIRE_TEXT_MAX bytes with its NUL), at most one fd with it.
 * The types a take uses (sync.h's values; sync.c checks they agree). */
#define AR_TAKE_WIRE_READY 5
#define AR_TAKE_WIRE_START 6
#define AR_TAKE_WIRE_ERROR 9
#define AR_TAKE_WIRE_COMMAND 13
#define AR_TAKE_WIRE_STDIO 14
#define AR_TAKE_WIRE_TEXT_MAX 4096

/* The launcher's word to the runtime it then executes, in its environment:
 * how far it took (take.h, ar_take_handover). */
#define AR_TAKE_HANDOVER_ENV "_AGENTRUN_TAKEN"

#endif
