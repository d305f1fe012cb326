/* SPDX-License-Identifier: Apache-2.0 */
/* What profile.c, policy.c and plan.c share, and what the unit tests look
 * at: the loaded profile, and the parsers for the small value languages
 * (sizes, durations, cpus, names) that profile files and annotations both
 * use. Not part of the interface the core runtime sees (agent.h). */
#ifndef AR_AGENT_POLICY_INTERNAL_H
#define AR_AGENT_POLICY_INTERNAL_H

#include "agent.h"

#include <stdbool.h>
#include <stdint.h>

/* Environment variable that replaces AR_AGENT_CONFIG_DIR (tests, and
 * hosts that keep their configuration elsewhere). */
#define AR_AGENT_CONFIG_DIR_ENV "AGENTRUN_CONFIG_DIR"

/* Profile files are small; a larger one is a mistake, not a profile. */
#define AR_PROFILE_MAX_FILE_SIZE (1u << 20)

/* "extends" chains deeper than this are refused (and so are cycles). */
#define AR_PROFILE_MAX_DEPTH 8

typedef enum
{
  AR_PROFILE_SECCOMP_SPEC,    /* keep what the spec says (maybe nothing) */
  AR_PROFILE_SECCOMP_DEFAULT, /* the spec's, else the built-in default */
  AR_PROFILE_SECCOMP_NONE,    /* remove any filter */
} ar_profile_seccomp;

struct ar_profile
{
  char *name;
  bool plain_oci;    /* the "oci" profile: ar_policy_apply changes nothing */
  bool trust_caller; /* see ar_profile_trust_caller */

  bool overlay;
  uint64_t overlay_size_bytes; /* 0: no size limit */
  uint64_t overlay_inodes;     /* 0: no inode limit */

  bool secrets;
  char *secrets_path;
  bool secrets_main_only;
  bool secrets_ask;
  oci_strv secrets_allowed_host_dirs;
  oci_map secret_files; /* name -> host path, named by the profile itself */

  bool output;
  char *output_path;
  uint64_t output_max_bytes; /* 0: no quota */
  uint64_t output_max_files; /* 0: no quota */
  oci_strv output_allowed_host_dirs;

  /* 0 in each means: the profile sets no limit. */
  uint64_t memory_bytes;
  int64_t pids;
  uint64_t millicpus; /* cpus * 1000 */
  int64_t wall_clock_seconds;

  ar_profile_seccomp seccomp;
  bool capabilities_set; /* false: leave the spec's capabilities alone */
  oci_strv capabilities;
  bool no_new_privileges; /* false: leave the spec's value */
  oci_strv masked_paths;  /* appended to the spec's */
  oci_strv readonly_paths;
  oci_rlimit *rlimits; /* each one tightens or adds the spec's */
  size_t n_rlimits;

  oci_strv programs_ask; /* rules: "git push", "curl" */

  ar_egress_mode egress;
  oci_strv egress_allow;
  /* Upstream resolver for the egress hook's resolver ("addr[:port]");
   * NULL: the host's first nameserver. */
  char *egress_upstream;
  /* Mode ask: the approver's socket; seconds it has to answer. */
  char *approver;
  int64_t ask_timeout;
  /* May run.agentrun.egress=open loosen the profile's egress? */
  bool egress_annotations_may_open;
  /* What run.agentrun.egress.allow may open beyond egress_allow, when
   * set (network.annotationsMayAllow); unset: anything. */
  bool egress_may_allow_set;
  oci_strv egress_may_allow;
  /* The egress hook executable (ar_profile_set_egress_hook); NULL:
   * AR_EGRESS_HOOK_DEFAULT. Not a profile key: the runtime knows it. */
  char *egress_hook_path;

  char *audit_path; /* NULL: no audit log */

  /* userNamespace: see ar_agent_plan's userns fields. */
  bool userns;
  char *userns_user;
  uint32_t userns_size;
  oci_map userns_limits; /* /proc/sys/user file name -> decimal value */

  /* Host paths hidden from a container whose root is the host's:
   * pattern (globs allowed; "~/.ssh" means below every home) -> reason. */
  oci_map hide_host_paths;

  oci_strv annotations; /* allowed run.agentrun.* suffixes; "x.*" prefixes */
};

/* The built-in agent profile, as the JSON that a profile file would hold
 * (one parser for both; docs/profiles.md shows the same text). */
extern const char ar_builtin_agent_profile_json[];

static inline void
ar_profile_freep (ar_profile **profile)
{
  ar_profile_free (*profile);
  *profile = NULL;
}
#define cleanup_profile __attribute__ ((cleanup (ar_profile_freep)))

static inline void
ar_agent_plan_freep (ar_agent_plan **plan)
{
  ar_agent_plan_free (*plan);
  *plan = NULL;
}
#define cleanup_plan __attribute__ ((cleanup (ar_agent_plan_freep)))

/* The config dir: $AGENTRUN_CONFIG_DIR (unless setuid), else
 * AR_AGENT_CONFIG_DIR. */
const char *ar_agent_config_dir (void);

/* A profile document (a profile file's text, `file` its name in errors)
 * as the profile `name`; "extends" loads what it names as
 * ar_profile_load does. */
int ar_profile_parse (const char *file, const char *data, size_t len,
                      const char *name, ar_profile **out, ar_error_t **err);

/* "1G", "512m", "1GiB", "4096" (bytes); binary multiples. */
bool ar_parse_size (const char *text, uint64_t *out);
/* "90", "90s", "15m", "1h" → seconds. */
bool ar_parse_duration (const char *text, int64_t *out);
/* "2", "0.5", "1.25" (at most three decimals) → thousandths of a cpu. */
bool ar_parse_cpus (const char *text, uint64_t *millicpus);
/* A non-negative decimal integer that fits in int64_t. */
bool ar_parse_count (const char *text, int64_t *out);

/* An entry of run.agentrun.egress.allow within what `profile` lets an
 * annotation open: its network.allow and network.annotationsMayAllow
 * (anything when the profile does not set the latter). */
int ar_profile_check_annotated_allow (const ar_profile *profile,
                                      const char *entry, ar_error_t **err);

bool ar_profile_name_valid (const char *name);  /* [a-z0-9_-]+ */
bool ar_secret_name_valid (const char *name);   /* [A-Za-z0-9._-]+, not . .. */
bool ar_egress_entry_valid (const char *entry); /* CIDR, host:port, *.dom */
/* A programs.ask rule: 1 to AR_PROGRAM_RULE_WORDS_MAX words of printable
 * characters but ',', at most AR_PROGRAM_RULE_MAX bytes. */
#define AR_PROGRAM_RULE_MAX 256
#define AR_PROGRAM_RULE_WORDS_MAX 16
#define AR_PROGRAM_RULES_MAX 64
bool ar_program_rule_valid (const char *rule);

const char *ar_egress_mode_name (ar_egress_mode mode);
bool ar_egress_mode_parse (const char *text, ar_egress_mode *out);

/* Is `suffix` (the part after "run.agentrun.") an annotation we know? */
bool ar_annotation_known (const char *suffix);
/* Does an allow-list entry ("memory", "secret.*", "*") admit `suffix`? */
bool ar_annotation_pattern_matches (const char *pattern, const char *suffix);

/* Set `key` (replacing its value, moving it last); remove it (false
 * when it was not there). */
void ar_map_set (oci_map *m, const char *key, const char *value);
bool ar_map_remove (oci_map *m, const char *key);

/* spec->linux_cfg, made when absent. */
oci_linux *ar_spec_ensure_linux (oci_spec *spec);

/* Append `item` to `list` unless it is there already. */
void ar_strv_append_unique (oci_strv *list, const char *item);

/* Is the absolute, clean `path` equal to or below the clean `dir`? */
bool ar_path_is_within (const char *path, const char *dir);
/* Does `path` have a ".." component? */
bool ar_path_has_dotdot (const char *path);

#endif
