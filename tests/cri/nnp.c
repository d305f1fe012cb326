/* SPDX-License-Identifier: Apache-2.0 */
/* The program of critest's nonewprivs image: installed setuid root and run
   as another user, it says which effective uid it got, so a container
   with no_new_privileges shows the caller's uid and one without shows 0.
   Built static by tests/cri/critest.sh (the image has no libc). */
#include <stdio.h>
#include <unistd.h>

int
main (void)
{
  printf ("Effective uid: %d\n", (int) geteuid ());
  return 0;
}
