/* SPDX-License-Identifier: Apache-2.0 */
/* The oci/ module: parse, emit, defaults, state, and hostile input.
 * JSON in this file is written with ' for " (see J()) to stay readable. */
#include "config.h"
#include "unit.h"
#include "../../oci/oci.h"
#include "../../oci/json.h"
#include "../../src/util/cleanup.h"
#include "../../src/util/fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

/* JSON with ' standing for " (none of the test documents needs a real
 * apostrophe). Returns a malloc'd copy. */
static char *
J (const char *s)
{
  char *out = xstrdup (s);
  for (char *p = out; *p; p++)
    if (*p == '\'')
      *p = '"';
  return out;
}

static oci_spec *
parse_ok (const char *json)
{
  cleanup_error ar_error_t *err = NULL;
  oci_spec *spec = NULL;
  if (oci_spec_parse (json, strlen (json), NULL, &spec, &err) < 0)
    {
      fprintf (stderr, "  unexpected error: %s\n", ar_error_text (err));
      return NULL;
    }
  return spec;
}

/* The error message for `json`, or NULL when it parses. */
static char *
parse_error_n (const char *json, size_t len)
{
  cleanup_error ar_error_t *err = NULL;
  oci_spec *spec = NULL;
  if (oci_spec_parse (json, len, "config.json", &spec, &err) == 0)
    {
      oci_spec_free (spec);
      return NULL;
    }
  if (spec != NULL || err == NULL)
    return xstrdup ("(failed without an error, or with a spec)");
  return xstrdup (ar_error_text (err));
}

static char *
parse_error (const char *json)
{
  return parse_error_n (json, strlen (json));
}

/* Check the error of a ' -quoted document. */
#define CHECK_ERROR(json_q, want)                                              \
  do                                                                           \
    {                                                                          \
      cleanup_free char *doc_ = J (json_q);                                    \
      cleanup_free char *msg_ = parse_error (doc_);                            \
      CHECK_STR (msg_, (want));                                                \
    }                                                                          \
  while (0)

/* Same, inside {'ociVersion':'1.0.0', ...}. */
#define CHECK_FIELD_ERROR(rest_q, want)                                        \
  CHECK_ERROR ("{'ociVersion':'1.0.0'," rest_q "}", (want))

static bool
strv_is (const oci_strv *v, const char *const *want)
{
  size_t n = 0;
  while (want[n])
    n++;
  if (v->items == NULL || v->len != n || v->items[n] != NULL)
    return false;
  for (size_t i = 0; i < n; i++)
    if (strcmp (v->items[i], want[i]) != 0)
      return false;
  return true;
}
#define STRV_IS(v, ...)                                                        \
  strv_is ((v), (const char *const[]){ __VA_ARGS__, NULL })

/* ------------------------------------------------------------------ */
/* A config with every field the parser reads, in the order the emitter
 * writes them, compact: emitting the parsed spec must give it back. */

static const char full_config[]
    = "{'ociVersion':'1.2.0',"
      "'process':{'terminal':true,'consoleSize':{'height':24,'width':80},"
      "'user':{'uid':1000,'gid':1001,'umask':18,'additionalGids':[5,6],"
      "'username':'me'},"
      "'args':['sh','-c','echo hi'],'commandLine':'cmd',"
      "'env':['PATH=/bin','A=b'],'cwd':'/work',"
      "'capabilities':{'bounding':['CAP_KILL'],'effective':['CAP_KILL'],"
      "'inheritable':[],'permitted':['CAP_KILL','CAP_CHOWN'],"
      "'ambient':['CAP_CHOWN']},"
      "'rlimits':[{'type':'RLIMIT_NOFILE','hard':18446744073709551615,"
      "'soft':1024},{'type':'RLIMIT_CORE','hard':0,'soft':0}],"
      "'noNewPrivileges':true,'apparmorProfile':'ap','oomScoreAdj':-500,"
      "'scheduler':{'policy':'SCHED_DEADLINE','nice':-5,'priority':0,"
      "'flags':['SCHED_FLAG_RESET_ON_FORK'],'runtime':1000,'deadline':2000,"
      "'period':3000},"
      "'selinuxLabel':'system_u:system_r:container_t:s0',"
      "'ioPriority':{'class':'IOPRIO_CLASS_RT','priority':4}},"
      "'root':{'path':'rootfs','readonly':true},"
      "'hostname':'box','domainname':'example.org',"
      "'mounts':[{'destination':'/proc','type':'proc','source':'proc'},"
      "{'destination':'/data','type':'bind','source':'/srv/data',"
      "'options':['rbind','ro'],"
      "'uidMappings':[{'containerID':0,'hostID':100000,'size':65536}],"
      "'gidMappings':[{'containerID':0,'hostID':200000,'size':65536}]}],"
      "'hooks':{'prestart':[{'path':'/bin/pre','args':['pre','1'],"
      "'env':['X=1'],'timeout':5}],"
      "'createRuntime':[{'path':'/bin/cr'}],"
      "'createContainer':[{'path':'/bin/cc'}],"
      "'startContainer':[{'path':'/bin/sc'}],"
      "'poststart':[{'path':'/bin/ps'}],"
      "'poststop':[{'path':'/bin/pst','timeout':30}]},"
      "'annotations':{'org.example.key':'value','run.agentrun.profile':'agent'},"
      "'linux':{'uidMappings':[{'containerID':0,'hostID':1000,'size':1}],"
      "'gidMappings':[{'containerID':0,'hostID':1000,'size':1}],"
      "'sysctl':{'net.ipv4.ip_forward':'1','kernel.shm_rmid_forced':'1'},"
      "'resources':{'devices':[{'allow':false,'access':'rwm'},"
      "{'allow':true,'type':'c','major':1,'minor':3,'access':'rw'}],"
      "'memory':{'limit':536870912,'reservation':268435456,'swap':-1,"
      "'kernel':0,'kernelTCP':0,'swappiness':60,'disableOOMKiller':false,"
      "'useHierarchy':true,'checkBeforeUpdate':true},"
      "'cpu':{'shares':1024,'quota':100000,'burst':1000,'period':100000,"
      "'realtimeRuntime':950000,'realtimePeriod':1000000,'cpus':'0-3',"
      "'mems':'0','idle':0},"
      "'pids':{'limit':100},"
      "'blockIO':{'weight':500,'leafWeight':300,"
      "'weightDevice':[{'major':8,'minor':0,'weight':600,'leafWeight':200}],"
      "'throttleReadBpsDevice':[{'major':8,'minor':0,'rate':1048576}],"
      "'throttleWriteBpsDevice':[{'major':8,'minor':16,'rate':2097152}],"
      "'throttleReadIOPSDevice':[{'major':8,'minor':0,'rate':100}],"
      "'throttleWriteIOPSDevice':[{'major':8,'minor':0,'rate':200}]},"
      "'hugepageLimits':[{'pageSize':'2MB','limit':209715200}],"
      "'network':{'classID':1048577,'priorities':[{'name':'eth0',"
      "'priority':500}]},"
      "'rdma':{'mlx5_1':{'hcaHandles':3,'hcaObjects':10000},'rxe0':{'hcaObjects':5}},"
      "'unified':{'memory.high':'400M','io.weight':'default 100'}},"
      "'cgroupsPath':'/agentrun/test',"
      "'namespaces':[{'type':'pid'},{'type':'network',"
      "'path':'/var/run/netns/x'},{'type':'mount'},{'type':'ipc'},"
      "{'type':'uts'},{'type':'user'},{'type':'cgroup'},{'type':'time'}],"
      "'devices':[{'path':'/dev/fuse','type':'c','major':10,'minor':229,"
      "'fileMode':438,'uid':0,'gid':0},{'path':'/dev/pipe','type':'p'}],"
      "'seccomp':{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':1,"
      "'architectures':['SCMP_ARCH_X86_64','SCMP_ARCH_X86'],"
      "'flags':['SECCOMP_FILTER_FLAG_LOG'],'listenerPath':'/run/seccomp.sock',"
      "'listenerMetadata':'meta',"
      "'syscalls':[{'names':['read','write'],'action':'SCMP_ACT_ALLOW'},"
      "{'names':['personality'],'action':'SCMP_ACT_ALLOW',"
      "'args':[{'index':0,'value':8,'op':'SCMP_CMP_EQ'},"
      "{'index':1,'value':4294967295,'valueTwo':7,'op':'SCMP_CMP_MASKED_EQ'}]},"
      "{'names':['mkdir'],'action':'SCMP_ACT_ERRNO','errnoRet':38}]},"
      "'rootfsPropagation':'rprivate',"
      "'maskedPaths':['/proc/kcore','/sys/firmware'],"
      "'readonlyPaths':['/proc/sys'],"
      "'mountLabel':'system_u:object_r:container_file_t:s0',"
      "'personality':{'domain':'LINUX32','flags':[]},"
      "'timeOffsets':{'monotonic':{'secs':-10,'nanosecs':500},"
      "'boottime':{'secs':3600}}}}";

/* Fields the spec defines for other platforms or later versions, and
 * made-up ones: all must be ignored. */
static char *
full_config_with_unknown_fields (void)
{
  cleanup_free char *base = J (full_config);
  const char *process = strstr (base, "\"process\":{");
  size_t head = (size_t) (process - base) + strlen ("\"process\":{");
  cleanup_free char *extra_process
      = J ("'execCPUAffinity':{'initial':'0'},'futureKnob':[1,{'x':null}],");
  cleanup_free char *extra_top
      = J ("'windows':{'layerFolders':['c:']},'vm':{'hypervisor':{}},");
  /* base without its final '}' + extra fields + '}' */
  return xasprintf ("%.*s%s%.*s,%.*s}", (int) head, base, extra_process,
                    (int) (strlen (base) - head - 1), base + head,
                    (int) (strlen (extra_top) - 1), extra_top);
}

static void
check_full_fields (const oci_spec *s)
{
  CHECK_STR (s->oci_version, "1.2.0");
  const oci_process *p = s->process;
  if (!CHECK (p != NULL))
    return;
  CHECK (p->terminal);
  CHECK (p->console_height.set && p->console_height.value == 24);
  CHECK (p->console_width.set && p->console_width.value == 80);
  CHECK_INT (p->user.uid, 1000);
  CHECK_INT (p->user.gid, 1001);
  CHECK (p->user.umask.set && p->user.umask.value == 18);
  CHECK_INT (p->user.n_additional_gids, 2);
  CHECK_INT (p->user.additional_gids[1], 6);
  CHECK_STR (p->user.username, "me");
  CHECK (STRV_IS (&p->args, "sh", "-c", "echo hi"));
  CHECK (STRV_IS (&p->env, "PATH=/bin", "A=b"));
  CHECK_STR (p->cwd, "/work");
  CHECK (STRV_IS (&p->capabilities->permitted, "CAP_KILL", "CAP_CHOWN"));
  CHECK (p->capabilities->inheritable.items != NULL
         && p->capabilities->inheritable.len == 0
         && p->capabilities->inheritable.items[0] == NULL);
  CHECK_INT (p->n_rlimits, 2);
  CHECK (p->rlimits[0].hard == UINT64_MAX);
  CHECK_INT (p->rlimits[0].soft, 1024);
  CHECK_STR (p->rlimits[1].type, "RLIMIT_CORE");
  CHECK (p->no_new_privileges);
  CHECK (p->oom_score_adj.set && p->oom_score_adj.value == -500);
  CHECK_STR (p->scheduler->policy, "SCHED_DEADLINE");
  CHECK (p->scheduler->nice.set && p->scheduler->nice.value == -5);
  CHECK (p->scheduler->priority.set && p->scheduler->priority.value == 0);
  CHECK (p->scheduler->period.set && p->scheduler->period.value == 3000);
  CHECK_STR (p->io_priority->class, "IOPRIO_CLASS_RT");
  CHECK_INT (p->io_priority->priority, 4);

  CHECK_STR (s->root_path, "rootfs");
  CHECK (s->root_readonly);
  CHECK_STR (s->hostname, "box");
  CHECK_STR (s->domainname, "example.org");
  CHECK_INT (s->n_mounts, 2);
  CHECK_STR (s->mounts[1].source, "/srv/data");
  CHECK (STRV_IS (&s->mounts[1].options, "rbind", "ro"));
  CHECK (s->mounts[0].options.items == NULL);
  CHECK_INT (s->mounts[1].n_uid_mappings, 1);
  CHECK_INT (s->mounts[1].gid_mappings[0].host_id, 200000);
  CHECK_INT (s->hooks.prestart.len, 1);
  CHECK (s->hooks.prestart.items[0].timeout.set
         && s->hooks.prestart.items[0].timeout.value == 5);
  CHECK (!s->hooks.create_runtime.items[0].timeout.set);
  CHECK_STR (s->hooks.poststop.items[0].path, "/bin/pst");
  CHECK_STR (oci_map_get (&s->annotations, "run.agentrun.profile"), "agent");

  const oci_linux *l = s->linux_cfg;
  if (!CHECK (l != NULL))
    return;
  CHECK_INT (l->uid_mappings[0].host_id, 1000);
  CHECK_STR (oci_map_get (&l->sysctl, "net.ipv4.ip_forward"), "1");
  const oci_resources *r = l->resources;
  CHECK_INT (r->n_devices, 2);
  CHECK (!r->devices[0].allow && r->devices[0].type == NULL
         && !r->devices[0].major.set);
  CHECK (r->devices[1].major.set && r->devices[1].major.value == 1);
  CHECK (r->memory->swap.set && r->memory->swap.value == -1);
  CHECK (r->memory->disable_oom_killer.set
         && !r->memory->disable_oom_killer.value);
  CHECK (r->memory->kernel.set && r->memory->kernel.value == 0);
  CHECK_STR (r->cpu->cpus, "0-3");
  CHECK (r->cpu->idle.set && r->cpu->idle.value == 0);
  CHECK (r->pids_limit.set && r->pids_limit.value == 100);
  CHECK (r->block_io->weight.set && r->block_io->weight.value == 500);
  CHECK_INT (r->block_io->weight_device[0].weight.value, 600);
  CHECK_INT (r->block_io->throttle_write_bps[0].minor, 16);
  CHECK_INT (r->block_io->throttle_write_iops[0].rate, 200);
  CHECK_STR (r->hugepage_limits[0].page_size, "2MB");
  CHECK (r->net_class_id.set && r->net_class_id.value == 1048577);
  CHECK_STR (r->net_priorities[0].name, "eth0");
  CHECK_STR (oci_map_get (&r->unified, "io.weight"), "default 100");
  CHECK_INT (r->n_rdma, 2);
  CHECK_STR (r->rdma[1].device, "rxe0");
  CHECK (r->rdma[0].hca_handles.set && r->rdma[0].hca_handles.value == 3);
  CHECK (!r->rdma[1].hca_handles.set && r->rdma[1].hca_objects.value == 5);
  CHECK_STR (l->cgroups_path, "/agentrun/test");
  CHECK_INT (l->n_namespaces, 8);
  CHECK_INT (l->namespaces[7].type, OCI_NS_TIME);
  CHECK_STR (l->namespaces[1].path, "/var/run/netns/x");
  CHECK_INT (l->devices[0].minor, 229);
  CHECK (l->devices[0].file_mode.set && l->devices[0].file_mode.value == 438);
  CHECK (!l->devices[1].uid.set);
  CHECK_STR (l->seccomp->default_action, "SCMP_ACT_ERRNO");
  CHECK_INT (l->seccomp->n_syscalls, 3);
  CHECK_INT (l->seccomp->syscalls[1].args[1].value, 4294967295u);
  CHECK_INT (l->seccomp->syscalls[1].args[1].value_two, 7);
  CHECK (l->seccomp->syscalls[2].errno_ret.set
         && l->seccomp->syscalls[2].errno_ret.value == 38);
  CHECK_STR (l->rootfs_propagation, "rprivate");
  CHECK (STRV_IS (&l->masked_paths, "/proc/kcore", "/sys/firmware"));
  CHECK_STR (l->mount_label, "system_u:object_r:container_file_t:s0");
  CHECK_STR (l->personality->domain, "LINUX32");
  CHECK (l->time_monotonic.secs.set && l->time_monotonic.secs.value == -10);
  CHECK (l->time_boottime.secs.set && !l->time_boottime.nanosecs.set);
}

static void
test_full_config_round_trip (void)
{
  cleanup_free char *canonical = J (full_config);
  cleanup_free char *input = full_config_with_unknown_fields ();
  oci_spec *first = parse_ok (input);
  if (!CHECK (first != NULL))
    return;
  check_full_fields (first);

  /* Unknown fields dropped, everything else back, byte for byte. */
  cleanup_free char *compact = oci_spec_to_json (first, false);
  CHECK_STR (compact, canonical);

  /* Pretty output parses back to the same spec. */
  cleanup_free char *pretty = oci_spec_to_json (first, true);
  CHECK (strchr (pretty, '\n') != NULL);
  oci_spec *second = parse_ok (pretty);
  if (CHECK (second != NULL))
    {
      check_full_fields (second);
      cleanup_free char *again = oci_spec_to_json (second, false);
      CHECK_STR (again, canonical);
    }
  oci_spec_free (first);
  oci_spec_free (second);
}

static void
test_minimal_config (void)
{
  cleanup_free char *doc = J ("{'ociVersion':'1.0.2'}");
  oci_spec *s = parse_ok (doc);
  if (!CHECK (s != NULL))
    return;
  CHECK (s->process == NULL && s->linux_cfg == NULL && s->root_path == NULL);
  CHECK (s->mounts == NULL && s->n_mounts == 0);
  cleanup_free char *out = oci_spec_to_json (s, false);
  CHECK_STR (out, doc);
  oci_spec_free (s);
}

/* JSON null reads as absent, as with Go's encoding/json. */
static void
test_null_is_absent (void)
{
  cleanup_free char *doc
      = J ("{'ociVersion':'1','process':null,'linux':{'resources':null,"
           "'namespaces':null},'hostname':null}");
  oci_spec *s = parse_ok (doc);
  if (CHECK (s != NULL))
    {
      CHECK (s->process == NULL && s->hostname == NULL);
      CHECK (s->linux_cfg != NULL && s->linux_cfg->resources == NULL
             && s->linux_cfg->namespaces == NULL);
    }
  oci_spec_free (s);
}

/* A repeated key is refused in every object, naming its path: at the
 * top, in a nested struct, in a string map, in an array's object, and
 * however far apart the two are. Distinct keys that differ only in
 * length or in one byte are fine. */
static void
test_duplicate_keys (void)
{
  static const struct
  {
    const char *doc;
    const char *msg;
  } cases[] = {
    { "{'ociVersion':'1','hostname':'a','hostname':'b'}",
      "config.json: .hostname: duplicate key" },
    { "{'ociVersion':'1','annotations':{'k':'1','j':'2','k':'3'}}",
      "config.json: .annotations.k: duplicate key" },
    { "{'ociVersion':'1','linux':{'sysctl':{'net.ipv4.ip_forward':'1',"
      "'net.ipv4.ip_forward':'0'}}}",
      "config.json: .linux.sysctl[\"net.ipv4.ip_forward\"]: duplicate key" },
    { "{'ociVersion':'1','process':{'cwd':'/','user':{'uid':0,'gid':0,"
      "'uid':1}}}",
      "config.json: .process.user.uid: duplicate key" },
    { "{'ociVersion':'1','mounts':[{'destination':'/a'},"
      "{'destination':'/b','type':'bind','destination':'/c'}]}",
      "config.json: .mounts[1].destination: duplicate key" },
    { "{'ociVersion':'1','x':{'unknown':{'a':1,'b':2,'a':3}}}",
      "config.json: .x.unknown.a: duplicate key" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      cleanup_free char *doc = J (cases[i].doc);
      cleanup_free char *msg = parse_error (doc);
      if (CHECK (msg != NULL))
        CHECK (strncmp (msg, cases[i].msg, strlen (cases[i].msg)) == 0
               || (fprintf (stderr, "  got: %s\n", msg), false));
    }

  cleanup_free char *fine = J (
      "{'ociVersion':'1','annotations':{'k':'1','kk':'2','j':'3','K':'4'}}");
  oci_spec *s = parse_ok (fine);
  if (CHECK (s != NULL))
    {
      CHECK_INT (s->annotations.len, 4);
      CHECK_STR (s->annotations.items[0].key, "k");
      CHECK_STR (s->annotations.items[3].value, "4");
    }
  oci_spec_free (s);
}

static void
test_integer_ranges (void)
{
  cleanup_free char *doc
      = J ("{'ociVersion':'1','process':{'user':{'uid':4294967295,'gid':0},"
           "'oomScoreAdj':-9223372036854775808},"
           "'linux':{'resources':{'memory':{'limit':9223372036854775807},"
           "'blockIO':{'weight':65535}}}}");
  oci_spec *s = parse_ok (doc);
  if (CHECK (s != NULL))
    {
      CHECK (s->process->user.uid == UINT32_MAX);
      CHECK (s->process->oom_score_adj.value == INT64_MIN);
      CHECK (s->linux_cfg->resources->memory->limit.value == INT64_MAX);
      CHECK_INT (s->linux_cfg->resources->block_io->weight.value, 65535);
      cleanup_free char *out = oci_spec_to_json (s, false);
      CHECK (strstr (out, "-9223372036854775808") != NULL);
      CHECK (strstr (out, "4294967295") != NULL);
    }
  oci_spec_free (s);
}

/* ------------------------------------------------------------------ */
/* Bad input: each error is one line naming the file, path and value.  */

static void
test_type_errors (void)
{
  CHECK_ERROR ("{'ociVersion':1}",
               "config.json: .ociVersion: expected string, got number 1");
  CHECK_FIELD_ERROR ("'process':{'args':['a','b',3]}",
                     "config.json: .process.args[2]: expected string, got "
                     "number 3");
  CHECK_FIELD_ERROR ("'process':[]",
                     "config.json: .process: expected object, got array");
  CHECK_FIELD_ERROR ("'process':{'terminal':'yes'}",
                     "config.json: .process.terminal: expected boolean, got "
                     "string \"yes\"");
  CHECK_FIELD_ERROR ("'process':{'args':'sh'}",
                     "config.json: .process.args: expected array, got string "
                     "\"sh\"");
  CHECK_FIELD_ERROR ("'process':{'user':{'additionalGids':[1,'x']}}",
                     "config.json: .process.user.additionalGids[1]: expected "
                     "uint32, got string \"x\"");
  CHECK_FIELD_ERROR ("'process':{'capabilities':{'bounding':'CAP_KILL'}}",
                     "config.json: .process.capabilities.bounding: expected "
                     "array, got string \"CAP_KILL\"");
  CHECK_FIELD_ERROR ("'process':{'cwd':{}}",
                     "config.json: .process.cwd: expected string, got object");
  CHECK_FIELD_ERROR ("'root':{'path':'r','readonly':1}",
                     "config.json: .root.readonly: expected boolean, got "
                     "number 1");
  CHECK_FIELD_ERROR ("'mounts':{}",
                     "config.json: .mounts: expected array, got object");
  CHECK_FIELD_ERROR ("'mounts':[{'destination':'/a','options':[null]}]",
                     "config.json: .mounts[0].options[0]: expected string, "
                     "got null");
  CHECK_FIELD_ERROR ("'annotations':{'a':1}",
                     "config.json: .annotations.a: expected string, got "
                     "number 1");
  CHECK_FIELD_ERROR ("'annotations':{'org.example':false}",
                     "config.json: .annotations[\"org.example\"]: expected "
                     "string, got boolean false");
  CHECK_FIELD_ERROR ("'linux':{'sysctl':[]}",
                     "config.json: .linux.sysctl: expected object, got array");
  CHECK_FIELD_ERROR ("'linux':{'resources':{'memory':{'limit':'1G'}}}",
                     "config.json: .linux.resources.memory.limit: expected "
                     "int64, got string \"1G\"");
  CHECK_FIELD_ERROR ("'linux':{'resources':{'unified':{'cpu.max':5}}}",
                     "config.json: .linux.resources.unified[\"cpu.max\"]: "
                     "expected string, got number 5");
  CHECK_FIELD_ERROR ("'linux':{'resources':{'rdma':[]}}",
                     "config.json: .linux.resources.rdma: expected object, "
                     "got array");
  CHECK_FIELD_ERROR (
      "'linux':{'resources':{'rdma':{'mlx5_1':{'hcaHandles':-1}}}}",
      "config.json: .linux.resources.rdma.mlx5_1.hcaHandles: "
      "expected uint32, got number -1");
  CHECK_FIELD_ERROR ("'linux':{'resources':{'rdma':{'':{}}}}",
                     "config.json: .linux.resources.rdma[\"\"]: expected a "
                     "device name");
  CHECK_FIELD_ERROR ("'linux':{'namespaces':['pid']}",
                     "config.json: .linux.namespaces[0]: expected object, got "
                     "string \"pid\"");
  CHECK_FIELD_ERROR ("'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW',"
                     "'syscalls':[{'names':['read'],'action':7}]}}",
                     "config.json: .linux.seccomp.syscalls[0].action: "
                     "expected string, got number 7");
}

static void
test_integer_errors (void)
{
  CHECK_FIELD_ERROR ("'process':{'user':{'uid':-1}}",
                     "config.json: .process.user.uid: expected uint32, got "
                     "number -1");
  CHECK_FIELD_ERROR ("'process':{'user':{'uid':4294967296}}",
                     "config.json: .process.user.uid: expected uint32, got "
                     "number 4294967296");
  CHECK_FIELD_ERROR ("'process':{'user':{'gid':1.5}}",
                     "config.json: .process.user.gid: expected uint32, got "
                     "number 1.5");
  CHECK_FIELD_ERROR ("'process':{'user':{'gid':1e3}}",
                     "config.json: .process.user.gid: expected uint32, got "
                     "number 1e3");
  CHECK_FIELD_ERROR ("'process':{'rlimits':[{'type':'RLIMIT_NOFILE',"
                     "'hard':18446744073709551616,'soft':1}]}",
                     "config.json: .process.rlimits[0].hard: expected uint64, "
                     "got number 18446744073709551616");
  CHECK_FIELD_ERROR ("'process':{'rlimits':[{'type':'RLIMIT_NOFILE',"
                     "'hard':-1,'soft':1}]}",
                     "config.json: .process.rlimits[0].hard: expected uint64, "
                     "got number -1");
  CHECK_FIELD_ERROR ("'process':{'oomScoreAdj':9223372036854775808}",
                     "config.json: .process.oomScoreAdj: expected int64, got "
                     "number 9223372036854775808");
  CHECK_FIELD_ERROR ("'mounts':[{'destination':'/a','uidMappings':"
                     "[{'containerID':0,'hostID':0,'size':-1}]}]",
                     "config.json: .mounts[0].uidMappings[0].size: expected "
                     "uint32, got number -1");
  CHECK_FIELD_ERROR ("'linux':{'resources':{'blockIO':{'weight':65536}}}",
                     "config.json: .linux.resources.blockIO.weight: expected "
                     "uint16, got number 65536");
  CHECK_FIELD_ERROR ("'linux':{'resources':{'pids':{'limit':1.0}}}",
                     "config.json: .linux.resources.pids.limit: expected "
                     "int64, got number 1.0");
  CHECK_FIELD_ERROR ("'linux':{'devices':[{'type':'c','path':'/dev/x',"
                     "'fileMode':-1}]}",
                     "config.json: .linux.devices[0].fileMode: expected "
                     "uint32, got number -1");
  CHECK_FIELD_ERROR ("'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW',"
                     "'syscalls':[{'names':['read'],'action':'SCMP_ACT_ERRNO',"
                     "'args':[{'index':-1,'value':0,'op':'SCMP_CMP_EQ'}]}]}}",
                     "config.json: .linux.seccomp.syscalls[0].args[0].index: "
                     "expected uint32, got number -1");
  CHECK_FIELD_ERROR ("'linux':{'timeOffsets':{'monotonic':{'nanosecs':-1}}}",
                     "config.json: .linux.timeOffsets.monotonic.nanosecs: "
                     "expected uint32, got number -1");
  /* A 40-digit number is cut in the message. */
  CHECK_FIELD_ERROR ("'process':{'user':{'uid':"
                     "1234567890123456789012345678901234567890}}",
                     "config.json: .process.user.uid: expected uint32, got "
                     "number 12345678901234567890123456789012...");
}

static void
test_missing_fields (void)
{
  CHECK_ERROR ("{}", "config.json: .ociVersion: missing required field");
  CHECK_ERROR ("{'ociVersion':null}",
               "config.json: .ociVersion: missing required field");
  CHECK_FIELD_ERROR ("'root':{}",
                     "config.json: .root.path: missing required field");
  CHECK_FIELD_ERROR ("'root':{'path':5}",
                     "config.json: .root.path: expected string, got number 5");
  CHECK_FIELD_ERROR ("'mounts':[{'destination':'/a'},{'type':'tmpfs'}]",
                     "config.json: .mounts[1].destination: missing required "
                     "field");
  CHECK_FIELD_ERROR ("'process':{'rlimits':[{'type':'RLIMIT_NOFILE',"
                     "'hard':1}]}",
                     "config.json: .process.rlimits[0].soft: missing required "
                     "field");
  CHECK_FIELD_ERROR ("'process':{'consoleSize':{'height':1}}",
                     "config.json: .process.consoleSize.width: missing "
                     "required field");
  CHECK_FIELD_ERROR ("'hooks':{'poststop':[{'args':['x']}]}",
                     "config.json: .hooks.poststop[0].path: missing required "
                     "field");
  CHECK_FIELD_ERROR ("'linux':{'uidMappings':[{'containerID':0,'size':1}]}",
                     "config.json: .linux.uidMappings[0].hostID: missing "
                     "required field");
  CHECK_FIELD_ERROR ("'linux':{'resources':{'devices':[{'access':'rwm'}]}}",
                     "config.json: .linux.resources.devices[0].allow: missing "
                     "required field");
  CHECK_FIELD_ERROR ("'linux':{'resources':{'pids':{}}}",
                     "config.json: .linux.resources.pids.limit: missing "
                     "required field");
  CHECK_FIELD_ERROR ("'linux':{'seccomp':{}}",
                     "config.json: .linux.seccomp.defaultAction: missing "
                     "required field");
  CHECK_FIELD_ERROR ("'linux':{'personality':{'flags':[]}}",
                     "config.json: .linux.personality.domain: missing "
                     "required field");
  CHECK_FIELD_ERROR ("'linux':{'namespaces':[{'path':'/x'}]}",
                     "config.json: .linux.namespaces[0].type: missing "
                     "required field");
}

static void
test_semantic_errors (void)
{
  CHECK_FIELD_ERROR ("'linux':{'namespaces':[{'type':'pid'},{'type':'foo'}]}",
                     "config.json: .linux.namespaces[1].type: unknown "
                     "namespace type \"foo\"");
  CHECK_FIELD_ERROR ("'linux':{'namespaces':[{'type':'pid'},{'type':'ipc'},"
                     "{'type':'pid','path':'/proc/1/ns/pid'}]}",
                     "config.json: .linux.namespaces[2].type: duplicate "
                     "namespace type \"pid\"");
  CHECK_FIELD_ERROR ("'hooks':{'prestart':[{'path':'/x','timeout':0}]}",
                     "config.json: .hooks.prestart[0].timeout: must be "
                     "greater than zero, got 0");
  CHECK_FIELD_ERROR ("'hooks':{'createRuntime':[{'path':'/x'},"
                     "{'path':'/y','timeout':-3}]}",
                     "config.json: .hooks.createRuntime[1].timeout: must be "
                     "greater than zero, got -3");
}

/* Strings become C strings: NULs are refused, and what errors quote is
 * escaped onto one line and cut when long. */
static void
test_hostile_strings (void)
{
  CHECK_FIELD_ERROR ("'process':{'cwd':'/a\\u0000/etc'}",
                     "config.json: .process.cwd: string contains a NUL "
                     "character");
  CHECK_FIELD_ERROR ("'annotations':{'a\\u0000b':'x'}",
                     "config.json: .annotations[\"a\\x00b\"]: key contains a "
                     "NUL character");
  CHECK_FIELD_ERROR ("'process':{'terminal':'a\\nb\\\"c'}",
                     "config.json: .process.terminal: expected boolean, got "
                     "string \"a\\x0ab\\\"c\"");
  CHECK_FIELD_ERROR (
      "'process':{'terminal':'"
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'}",
      "config.json: .process.terminal: expected boolean, got "
      "string \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
      "aaaaaaaaaaaaaaaa\"...");
  /* Not cut inside a multi-byte character (é is two bytes). */
  CHECK_FIELD_ERROR (
      "'process':{'terminal':'"
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
      "aaaaa\xc3\xa9zz'}",
      "config.json: .process.terminal: expected boolean, got "
      "string \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
      "aaaaaaaaaaaaaaa\"...");
  CHECK_FIELD_ERROR ("'annotations':{'x y':[]}",
                     "config.json: .annotations[\"x y\"]: expected string, "
                     "got array");
  /* yajl checks UTF-8. */
  CHECK_ERROR ("{'ociVersion':'\xff'}",
               "config.json: lexical error: invalid bytes in UTF8 string. "
               "(at byte 16)");
}

static void
test_top_level (void)
{
  CHECK_ERROR ("[]", "config.json: expected a JSON object at the top level, "
                     "got array");
  CHECK_ERROR ("null", "config.json: expected a JSON object at the top "
                       "level, got null");
  CHECK_ERROR ("'config'", "config.json: expected a JSON object at the top "
                           "level, got string \"config\"");
  CHECK_ERROR ("42", "config.json: expected a JSON object at the top level, "
                     "got number 42");
}

static void
test_syntax_errors (void)
{
  CHECK_ERROR ("", "config.json: parse error: premature EOF");
  CHECK_ERROR ("   \n", "config.json: parse error: premature EOF");
  CHECK_ERROR ("{'ociVersion':'1.2.0','process':{",
               "config.json: parse error: premature EOF");
  CHECK_ERROR ("{'ociVersion':'1.2.0',}",
               "config.json: parse error: invalid object key (must be a "
               "string) (at byte 23)");
  CHECK_ERROR ("{'ociVersion' '1'}",
               "config.json: parse error: object key and value must be "
               "separated by a colon (':') (at byte 17)");
  CHECK_ERROR ("{'a':[1,]}",
               "config.json: parse error: unallowed token at this point in "
               "JSON text (at byte 9)");
  CHECK_ERROR ("x", "config.json: lexical error: invalid char in json text. "
                    "(at byte 1)");
  CHECK_ERROR ("{'ociVersion':'1'} {}",
               "config.json: parse error: trailing garbage (at byte 20)");
  CHECK_ERROR ("{/* comment */}", "config.json: lexical error: probable "
                                  "comment found in input text, comments are "
                                  "not enabled. (at byte 1)");

  /* Every prefix of a real config fails cleanly with one line. */
  cleanup_free char *full = J (full_config);
  size_t len = strlen (full);
  bool all_fail = true, all_one_line = true;
  for (size_t cut = 0; cut < len; cut++)
    {
      cleanup_free char *msg = parse_error_n (full, cut);
      all_fail &= msg != NULL;
      all_one_line &= msg != NULL && strchr (msg, '\n') == NULL;
    }
  CHECK (all_fail);
  CHECK (all_one_line);
}

/* ------------------------------------------------------------------ */
/* Hostile sizes: errors, never a crash or a hang.                     */

static char *
repeat (const char *head, const char *unit, size_t n, const char *tail)
{
  size_t hl = strlen (head), ul = strlen (unit), tl = strlen (tail);
  char *s = xmalloc (hl + ul * n + tl + 1);
  memcpy (s, head, hl);
  for (size_t i = 0; i < n; i++)
    memcpy (s + hl + i * ul, unit, ul);
  memcpy (s + hl + ul * n, tail, tl + 1);
  return s;
}

static void
test_deep_nesting (void)
{
  const char head[] = "{\"ociVersion\":\"1\",\"x\":";
  /* The top-level object is level 1: 63 more levels are fine... */
  cleanup_free char *ok = repeat (head, "[", 63, "");
  cleanup_free char *ok_full = repeat (ok, "]", 63, "}");
  cleanup_free char *ok_msg = parse_error (ok_full);
  CHECK_STR (ok_msg, NULL);

  /* ...64 are not; the offset is just past the 65th opening bracket. */
  cleanup_free char *over = repeat (head, "[", 64, "");
  cleanup_free char *over_msg = parse_error (over);
  cleanup_free char *want = xasprintf (
      "config.json: JSON nested deeper than 64 levels (at byte %zu)",
      strlen (head) + 64);
  CHECK_STR (over_msg, want);

  /* 100000 levels, of arrays and of objects. */
  cleanup_free char *arrays = repeat (head, "[", 100000, "");
  cleanup_free char *arrays_msg = parse_error (arrays);
  CHECK_STR (arrays_msg, want);
  cleanup_free char *objects = repeat ("", "{\"a\":", 100000, "1");
  cleanup_free char *objects_msg = parse_error (objects);
  CHECK_STR (objects_msg, "config.json: JSON nested deeper than 64 levels "
                          "(at byte 321)");

  /* Brackets inside a string are not nesting. */
  cleanup_free char *in_string
      = repeat ("{\"ociVersion\":\"1\",\"hostname\":\"", "[", 100000, "\"}");
  oci_spec *s = parse_ok (in_string);
  CHECK (s != NULL && strlen (s->hostname) == 100000);
  oci_spec_free (s);
}

static void
test_long_arrays (void)
{
  const char head[] = "{\"ociVersion\":\"1\",\"mounts\":[";
  const char mount[] = "{\"destination\":\"/a\"},";

  /* OCI_MAX_ARRAY mounts are fine. */
  cleanup_free char *at_limit = repeat (head, mount, OCI_MAX_ARRAY, "");
  at_limit[strlen (at_limit) - 1] = '\0'; /* the last comma */
  cleanup_free char *ok_doc = xasprintf ("%s]}", at_limit);
  oci_spec *s = parse_ok (ok_doc);
  CHECK (s != NULL && s->n_mounts == OCI_MAX_ARRAY);
  oci_spec_free (s);

  /* 100000 are not; yajl stops at the first one too many. */
  cleanup_free char *many = repeat (head, mount, 100000, "{}]}");
  cleanup_free char *msg = parse_error (many);
  cleanup_free char *want = xasprintf (
      "config.json: .mounts: array has more than 8192 elements (at byte %zu)",
      strlen (head) + (sizeof mount - 1) * OCI_MAX_ARRAY + 1);
  CHECK_STR (msg, want);

  /* The same limit holds for objects (annotations)... */
  cleanup_free char *keys = xmalloc (20 * 9000 + 64);
  char *p = stpcpy (keys, "{\"ociVersion\":\"1\",\"annotations\":{");
  for (int i = 0; i < 9000; i++)
    p += sprintf (p, "\"k%d\":\"v\",", i);
  strcpy (p - 1, "}}");
  cleanup_free char *keys_msg = parse_error (keys);
  CHECK (keys_msg != NULL
         && strncmp (keys_msg,
                     "config.json: .annotations: object has more "
                     "than 8192 members (at byte ",
                     70)
                == 0);

  /* ...and for nested arrays anywhere, known field or not. */
  cleanup_free char *deep_many
      = repeat ("{\"ociVersion\":\"1\",\"x\":{\"y\":[", "0,", 10000, "0]}}");
  cleanup_free char *deep_msg = parse_error (deep_many);
  cleanup_free char *deep_want = xasprintf (
      "config.json: .x.y: array has more than 8192 elements (at byte %zu)",
      strlen ("{\"ociVersion\":\"1\",\"x\":{\"y\":[") + 2 * OCI_MAX_ARRAY + 1);
  CHECK_STR (deep_msg, deep_want);
}

/* Many small arrays: each within limits, together too many values. */
static void
test_too_many_values (void)
{
  cleanup_free char *row = repeat ("[", "0,", 8000, "0],");
  cleanup_free char *rows
      = repeat ("{\"ociVersion\":\"1\",\"x\":[", row, 140, "[]]}");
  cleanup_free char *msg = parse_error (rows);
  CHECK (msg != NULL
         && strncmp (msg,
                     "config.json: .x[131]: document has more than "
                     "1048576 values (at byte ",
                     68)
                == 0);
}

static void
test_file_size (void)
{
  /* One byte over the limit, in memory. */
  size_t big = OCI_MAX_FILE_SIZE + 1;
  cleanup_free char *data = xmalloc (big);
  memset (data, ' ', big);
  cleanup_free char *msg = parse_error_n (data, big);
  CHECK_STR (msg, "config.json: larger than 16777216 bytes");

  /* Exactly at the limit is fine. */
  const char doc[] = "{\"ociVersion\":\"1\"}";
  memcpy (data, doc, sizeof doc - 1);
  cleanup_free char *at_limit = parse_error_n (data, OCI_MAX_FILE_SIZE);
  CHECK_STR (at_limit, NULL);
}

/* ------------------------------------------------------------------ */
/* A config.json as create reads it: ar_read_file_at, oci_spec_parse    */

static char *
temp_file (const char *content, off_t size)
{
  char *path = xstrdup ("/tmp/test_oci.XXXXXX");
  int fd = mkstemp (path);
  if (fd < 0)
    {
      perror ("mkstemp");
      exit (2);
    }
  if (content && write (fd, content, strlen (content)) < 0)
    perror ("write");
  if (size > 0 && ftruncate (fd, size) < 0)
    perror ("ftruncate");
  close (fd);
  return path;
}

static int
load (const char *path, oci_spec **s, ar_error_t **err)
{
  cleanup_free char *data = NULL;
  size_t len = 0;
  if (ar_read_file_at (AT_FDCWD, path, OCI_MAX_FILE_SIZE, &data, &len, err) < 0)
    return -1;
  return oci_spec_parse (data, len, "config.json", s, err);
}

static void
test_load (void)
{
  cleanup_free char *json = J (full_config);
  cleanup_free char *path = temp_file (json, 0);
  cleanup_error ar_error_t *err = NULL;
  oci_spec *s = NULL;
  CHECK_INT (load (path, &s, &err), 0);
  if (CHECK (s != NULL))
    check_full_fields (s);
  oci_spec_free (s);
  s = NULL;

  cleanup_free char *bad = temp_file ("{\"ociVersion\":[]}", 0);
  CHECK_INT (load (bad, &s, &err), -1);
  CHECK_STR (err ? ar_error_text (err) : NULL,
             "config.json: .ociVersion: expected string, got array");
  ar_error_freep (&err);

  /* A sparse file over the limit is refused before it is read. */
  cleanup_free char *huge = temp_file (NULL, (off_t) OCI_MAX_FILE_SIZE + 1);
  CHECK_INT (load (huge, &s, &err), -1);
  cleanup_free char *want
      = xasprintf ("`%s`: larger than 16777216 bytes", huge);
  CHECK_STR (err ? ar_error_text (err) : NULL, want);
  ar_error_freep (&err);

  CHECK_INT (load ("/nonexistent/config.json", &s, &err), -1);
  CHECK_STR (err ? ar_error_text (err) : NULL,
             "open `/nonexistent/config.json`: No such file or directory");
  CHECK (err && err->errno_value == ENOENT);
  CHECK (s == NULL);

  unlink (path);
  unlink (bad);
  unlink (huge);
}

/* ------------------------------------------------------------------ */
/* process.json (exec --process)                                       */

static void
test_process_json (void)
{
  cleanup_free char *doc
      = J ("{'terminal':false,'user':{'uid':5,'gid':6},'args':['ls','-l'],"
           "'env':['A=1'],'cwd':'/tmp','capabilities':{'bounding':[]},"
           "'noNewPrivileges':true,'unknown':1}");
  cleanup_error ar_error_t *err = NULL;
  oci_process *p = NULL;
  CHECK_INT (oci_process_parse (doc, strlen (doc), NULL, &p, &err), 0);
  if (CHECK (p != NULL))
    {
      CHECK (STRV_IS (&p->args, "ls", "-l"));
      CHECK_INT (p->user.uid, 5);
      CHECK_STR (p->cwd, "/tmp");
      CHECK (p->no_new_privileges && !p->terminal);
      CHECK (p->capabilities && p->capabilities->bounding.len == 0
             && p->capabilities->effective.items == NULL);
    }
  oci_process_free (p);
  p = NULL;

  cleanup_free char *bad = J ("{'args':[true]}");
  CHECK_INT (oci_process_parse (bad, strlen (bad), NULL, &p, &err), -1);
  CHECK_STR (err ? ar_error_text (err) : NULL,
             "process.json: .args[0]: expected string, got boolean true");
  CHECK (p == NULL);
  ar_error_freep (&err);

  CHECK_INT (oci_process_parse ("[1]", 3, "p.json", &p, &err), -1);
  CHECK_STR (err ? ar_error_text (err) : NULL,
             "p.json: expected a JSON object at the top level, got array");
  ar_error_freep (&err);

  CHECK_INT (oci_process_parse ("{\"cwd\":", 7, "p.json", &p, &err), -1);
  CHECK_STR (err ? ar_error_text (err) : NULL,
             "p.json: parse error: premature EOF");
}

/* ------------------------------------------------------------------ */
/* The default spec                                                    */

static bool
has_option (const oci_mount *m, const char *prefix)
{
  for (size_t i = 0; i < m->options.len; i++)
    if (strncmp (m->options.items[i], prefix, strlen (prefix)) == 0)
      return true;
  return false;
}

static const oci_mount *
find_mount (const oci_spec *s, const char *destination)
{
  for (size_t i = 0; i < s->n_mounts; i++)
    if (strcmp (s->mounts[i].destination, destination) == 0)
      return &s->mounts[i];
  return NULL;
}

static void
test_default_spec (void)
{
  cleanup_free char *json = oci_spec_default_json (false, 1000, 1000);
  CHECK (strncmp (json, "{\n\t\"ociVersion\": \"" AR_OCI_VERSION "\"", 20)
         == 0);
  oci_spec *s = parse_ok (json);
  if (!CHECK (s != NULL))
    return;
  CHECK_STR (s->oci_version, AR_OCI_VERSION);
  CHECK (s->process->terminal);
  CHECK (STRV_IS (&s->process->args, "sh"));
  CHECK (STRV_IS (&s->process->env,
                  "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
                  "/sbin:/bin",
                  "TERM=xterm"));
  CHECK_STR (s->process->cwd, "/");
  CHECK_INT (s->process->user.uid, 0);
  CHECK (STRV_IS (&s->process->capabilities->bounding, "CAP_AUDIT_WRITE",
                  "CAP_KILL", "CAP_NET_BIND_SERVICE"));
  CHECK (STRV_IS (&s->process->capabilities->effective, "CAP_AUDIT_WRITE",
                  "CAP_KILL", "CAP_NET_BIND_SERVICE"));
  CHECK (STRV_IS (&s->process->capabilities->permitted, "CAP_AUDIT_WRITE",
                  "CAP_KILL", "CAP_NET_BIND_SERVICE"));
  CHECK (s->process->capabilities->inheritable.items == NULL);
  CHECK_INT (s->process->n_rlimits, 1);
  CHECK_STR (s->process->rlimits[0].type, "RLIMIT_NOFILE");
  CHECK_INT (s->process->rlimits[0].hard, 1024);
  CHECK_INT (s->process->rlimits[0].soft, 1024);
  CHECK (s->process->no_new_privileges);
  CHECK_STR (s->root_path, "rootfs");
  CHECK (s->root_readonly);
  CHECK_STR (s->hostname, "agentrun");
  CHECK_INT (s->n_mounts, 7);
  const char *const dests[]
      = { "/proc",       "/dev", "/dev/pts",      "/dev/shm",
          "/dev/mqueue", "/sys", "/sys/fs/cgroup" };
  for (size_t i = 0; i < 7 && i < s->n_mounts; i++)
    CHECK_STR (s->mounts[i].destination, dests[i]);
  CHECK_STR (find_mount (s, "/sys")->type, "sysfs");
  CHECK (has_option (find_mount (s, "/dev/pts"), "gid=5"));

  const oci_linux *l = s->linux_cfg;
  /* runc's five, and a cgroup namespace (docs/runc-compat.md). */
  CHECK_INT (l->n_namespaces, 6);
  CHECK (oci_spec_find_namespace (s, OCI_NS_NETWORK) != NULL);
  CHECK (oci_spec_find_namespace (s, OCI_NS_CGROUP) != NULL);
  CHECK_INT (s->process->capabilities->ambient.len, 3);
  CHECK (oci_spec_find_namespace (s, OCI_NS_USER) == NULL);
  CHECK (l->resources && l->resources->n_devices == 1
         && !l->resources->devices[0].allow);
  CHECK_STR (l->resources->devices[0].access, "rwm");
  CHECK (l->uid_mappings == NULL);
  CHECK (l->masked_paths.len >= 10);
  CHECK_STR (l->masked_paths.items[0], "/proc/acpi");
  CHECK (STRV_IS (&l->readonly_paths, "/proc/bus", "/proc/fs", "/proc/irq",
                  "/proc/sys", "/proc/sysrq-trigger"));

  /* Emitting the parsed default gives the same text back. */
  cleanup_free char *again = oci_spec_to_json (s, true);
  CHECK_STR (again, json);
  oci_spec_free (s);
}

static void
test_default_spec_rootless (void)
{
  cleanup_free char *json = oci_spec_default_json (true, 1234, 5678);
  oci_spec *s = parse_ok (json);
  if (!CHECK (s != NULL))
    return;
  const oci_linux *l = s->linux_cfg;
  CHECK (oci_spec_find_namespace (s, OCI_NS_USER) != NULL);
  CHECK (oci_spec_find_namespace (s, OCI_NS_NETWORK) == NULL);
  CHECK (oci_spec_find_namespace (s, OCI_NS_PID) != NULL);
  CHECK (l->resources == NULL);
  CHECK (l->n_uid_mappings == 1 && l->uid_mappings[0].container_id == 0
         && l->uid_mappings[0].host_id == 1234 && l->uid_mappings[0].size == 1);
  CHECK (l->n_gid_mappings == 1 && l->gid_mappings[0].host_id == 5678);
  const oci_mount *sys = find_mount (s, "/sys");
  CHECK_STR (sys->type, "none");
  CHECK_STR (sys->source, "/sys");
  CHECK (has_option (sys, "rbind") && has_option (sys, "ro"));
  CHECK (!has_option (find_mount (s, "/dev/pts"), "gid="));
  CHECK (!has_option (find_mount (s, "/dev/mqueue"), "gid="));
  CHECK (has_option (find_mount (s, "/dev/pts"), "newinstance"));
  oci_spec_free (s);
}

/* ------------------------------------------------------------------ */
/* State and small helpers                                             */

static void
test_state_json (void)
{
  oci_kv kv[] = { { "a", "1" }, { "b", "x\"y" } };
  oci_map ann = { kv, 2 };
  oci_state st = { .oci_version = "1.2.0",
                   .id = "c1",
                   .status = "running",
                   .pid = 4242,
                   .bundle = "/b",
                   .rootfs = "/b/rootfs",
                   .created = "2024-01-02T03:04:05.123456789Z",
                   .owner = "",
                   .annotations = &ann };
  cleanup_free char *compact = oci_state_to_json (&st, false);
  CHECK_STR (compact,
             "{\"ociVersion\":\"1.2.0\",\"id\":\"c1\",\"pid\":4242,"
             "\"status\":\"running\",\"bundle\":\"/b\",\"rootfs\":"
             "\"/b/rootfs\",\"created\":\"2024-01-02T03:04:05.123456789Z\","
             "\"owner\":\"\",\"annotations\":{\"a\":\"1\",\"b\":\"x\\\"y\"}}");

  oci_state stopped = { .id = "c2", .status = "stopped", .bundle = "/b" };
  cleanup_free char *pretty = oci_state_to_json (&stopped, true);
  CHECK_STR (pretty, "{\n"
                     "  \"ociVersion\": \"" AR_OCI_VERSION "\",\n"
                     "  \"id\": \"c2\",\n"
                     "  \"status\": \"stopped\",\n"
                     "  \"bundle\": \"/b\"\n"
                     "}\n");
}

static void
test_helpers (void)
{
  const char *const names[]
      = { "pid", "network", "mount", "ipc", "uts", "user", "cgroup", "time" };
  for (int t = 0; t < OCI_NS_COUNT; t++)
    CHECK_STR (oci_ns_type_name ((oci_ns_type) t), names[t]);
  CHECK (oci_ns_type_name (OCI_NS_COUNT) == NULL);

  oci_kv kv[] = { { "k", "v" } };
  oci_map m = { kv, 1 };
  CHECK_STR (oci_map_get (&m, "k"), "v");
  CHECK (oci_map_get (&m, "x") == NULL);
  CHECK (oci_map_get (NULL, "k") == NULL);

  cleanup_free char *doc
      = J ("{'ociVersion':'1','linux':{'namespaces':[{'type':'uts'},"
           "{'type':'network','path':'/run/netns/a'}]}}");
  oci_spec *s = parse_ok (doc);
  if (CHECK (s != NULL))
    {
      const oci_namespace *ns = oci_spec_find_namespace (s, OCI_NS_NETWORK);
      CHECK (ns != NULL && strcmp (ns->path, "/run/netns/a") == 0);
      CHECK (oci_spec_find_namespace (s, OCI_NS_PID) == NULL);
    }
  oci_spec_free (s);
  CHECK (oci_spec_find_namespace (NULL, OCI_NS_PID) == NULL);

  /* Both free functions take NULL. */
  oci_spec_free (NULL);
  oci_process_free (NULL);
  CHECK (true);
}

/* oj_json_string: what goes into a JSON line (the audit log) parses back
 * as a JSON string, whatever bytes came; long ones are cut on a character. */
static void
test_json_string (void)
{
  static const struct
  {
    const char *in;
    size_t max;
    const char *want;
  } cases[] = {
    { "plain", 64, "\"plain\"" },
    { "a\"b\\c\n\x01", 64, "\"a\\\"b\\\\c\\u000a\\u0001\"" },
    { "\xff\xc3(", 64, "\"\xEF\xBF\xBD\xEF\xBF\xBD(\"" },
    { "caf\xc3\xa9", 64, "\"caf\xc3\xa9\"" },
    { "\xed\xa0\x80", 64, "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"" },
    { "abcdef", 3, "\"abc...\"" },
    { "a\xc3\xa9z", 2, "\"a...\"" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      cleanup_free char *got
          = oj_json_string (cases[i].in, strlen (cases[i].in), cases[i].max);
      CHECK_STR (got, cases[i].want);
      oj_value v;
      ar_error_t *err = NULL;
      CHECK_INT (oj_parse (got, strlen (got), "t", &v, &err), 0);
      if (err == NULL)
        {
          CHECK (v.type == OJ_STRING);
          oj_value_clear (&v);
        }
      ar_error_free (err);
    }
}

int
main (void)
{
  RUN (test_full_config_round_trip);
  RUN (test_minimal_config);
  RUN (test_null_is_absent);
  RUN (test_duplicate_keys);
  RUN (test_integer_ranges);
  RUN (test_type_errors);
  RUN (test_integer_errors);
  RUN (test_missing_fields);
  RUN (test_semantic_errors);
  RUN (test_hostile_strings);
  RUN (test_top_level);
  RUN (test_syntax_errors);
  RUN (test_deep_nesting);
  RUN (test_long_arrays);
  RUN (test_too_many_values);
  RUN (test_file_size);
  RUN (test_load);
  RUN (test_process_json);
  RUN (test_default_spec);
  RUN (test_default_spec_rootless);
  RUN (test_state_json);
  RUN (test_helpers);
  RUN (test_json_string);
  return unit_finish ();
}
