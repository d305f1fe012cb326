/* SPDX-License-Identifier: Apache-2.0 */
/*
 * argv_flip: the attack on an exec gate that reads a caller's arguments
 * from its memory and lets the kernel read them again later: exec
 * PROGRAM with the argument A while a second thread keeps rewriting it
 * to B and back.
 *
 *   argv_flip [--still] PROGRAM A B
 *
 * A and B must be of one length. --still: no second thread (the same
 * exec, with nothing that could change its arguments). Exits 126 with the
 * error when the exec fails.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *arg;
static const char *a, *b;

static void *
flip (void *unused)
{
  (void) unused;
  for (;;)
    {
      memcpy (arg, b, strlen (b));
      memcpy (arg, a, strlen (a));
    }
  return NULL;
}

int
main (int argc, char **argv)
{
  int still = argc > 1 && strcmp (argv[1], "--still") == 0;
  if (argc != 4 + still || strlen (argv[2 + still]) != strlen (argv[3 + still]))
    {
      fprintf (stderr, "usage: argv_flip [--still] PROGRAM A B (A, B of one length)\n");
      return 2;
    }
  const char *program = argv[1 + still];
  a = argv[2 + still];
  b = argv[3 + still];
  arg = strdup (a);
  pthread_t t;
  if (!still && pthread_create (&t, NULL, flip, NULL) != 0)
    return 2;
  char *args[] = { (char *) program, arg, NULL };
  execv (program, args);
  perror (program);
  /* Not through exit(): a sanitizer's leak check at exit stops the world
   * with ptrace, which a sandbox refuses. */
  _exit (126);
}
