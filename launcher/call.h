/* SPDX-License-Identifier: Apache-2.0 */
/* The calls the launcher carries out itself: their global options. */
#ifndef AR_LAUNCHER_CALL_H
#define AR_LAUNCHER_CALL_H

/* When every global option before the command word is one the launcher
 * knows what to do with (`--root ROOT`, `--log FILE`, `--log-format
 * text|json`, `--systemd-cgroup`, with one dash or two, a value after `=`
 * or as the next argument, each at most once), the command word's index
 * and *root (0: AR_DEFAULT_ROOT); else 0, and the runtime parses it. The
 * rest matter to the runtime alone, which still sees them all: a log is
 * written only on an error or with --debug, and the launcher leaves
 * every error to the runtime. */
int call_command (int argc, char **argv, const char **root);

#endif
