/* SPDX-License-Identifier: Apache-2.0 */
/* A take (take.h) as it travels, and where, for the two programs that
 * take: the runtime (its sync channel, sync.h) and the launcher
 * (launcher/take.c), which links no code of the runtime and so knows it
 * from here. Only definitions: nothing here needs a library. */
#ifndef AR_CORE_TAKE_WIRE_H
#define AR_CORE_TAKE_WIRE_H

/* The state root of real root when --root is not given. */
#define AR_DEFAULT_ROOT "/run/agentrun"

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
