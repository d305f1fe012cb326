/* --diff withholds what /output withholds: a changed workspace file that
 * holds a secret's bytes (before or after the change), a symlink whose
 * target does, and a path that spells a secret are replaced in the diff
 * by one line saying so. The secrets are looked for with the same
 * helpers the export uses (secrets.h). */
#ifndef AR_AGENT_DIFF_WITHHOLD_H
#define AR_AGENT_DIFF_WITHHOLD_H

#include "output.h"
#include "secrets.h"
#include "../util/error.h"

typedef struct
{
  char **paths;                  /* as diff names them below a/ and b/ */
  ar_output_withheld *withheld;  /* the path or "[withheld name]", why */
  size_t n;
} ar_diff_withheld_list;

/* Walk the workspace's upper layer (`upper_fd`) for what changed, and
 * check each changed path in the original (`a_fd`) and changed (`b_fd`)
 * views. Nothing to find without secrets. */
void ar_diff_find_withheld (const ar_secret_set *secrets, int upper_fd,
                            int a_fd, int b_fd, ar_diff_withheld_list *out);

/* Copy diff(1)'s output from `in` to `out`, each withheld file's part
 * replaced by one line, and any other line that holds a secret too. */
int ar_diff_filter (int in, int out, const ar_secret_set *secrets,
                    const ar_diff_withheld_list *list, ar_error_t **err);

/* "withheld":[{"path","reason"}...], the inside of an audit event. */
char *ar_diff_withheld_fields_json (const ar_diff_withheld_list *list);

void ar_diff_withheld_list_clear (ar_diff_withheld_list *list);
#define cleanup_diff_withheld __attribute__ ((cleanup (ar_diff_withheld_list_clear)))

#endif
