#include "config.h"
#include "nodeattr.h"
#include "strparse.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* A configuration file is a few hundred bytes; refusing anything huge keeps a
 * mistaken path (a log, /dev/zero) from eating the daemon's memory. */
#define CONFIG_FILE_MAX (16 * 1024 * 1024)
#define ADDR_MAX 255 /* a DNS name is at most 253 characters */
#define USER_MAX 32  /* useradd's limit on Linux */

enum {
    K_CLUSTER_NAME, K_CONTROL_ADDR, K_CONTROL_PORT, K_CONTROL_SOCKET, K_NODES,
    K_CORES, K_MEMORY, K_STATE_DIR, K_LOG_DIR, K_POLICY, K_TICK, K_NODE_TIMEOUT,
    K_HEARTBEAT, K_RESIZE_TIMEOUT, K_KILL_WAIT, K_AUTH_TYPE, K_AUTH_KEY_FILE,
    K_MUNGE_SOCKET, K_OPERATORS, K_MAX_JOBS, K_MAX_JOBS_USER, K_SUBMIT_RATE, K_MAX_SCRIPT, K_NODE_ADDR,
    K_MAX_CONNS, K_RESERVED_CONNS, K_CONNS_PER_USER, K_CONNS_PER_HOST, K_UNAUTH_CONNS, K_AUTH_TIMEOUT,
    K_FRAME_TIMEOUT, K_IDLE_TIMEOUT, K_NODE_PORT, K_RESIZE_BACKOFF, K_RESIZE_BACKOFF_MAX,
    K_OPER_HOLD, K_POWER_SOURCE, K_IDLE_POWER, K_DEFAULT_JOB_POWER, K_POWER_LOWER,
    K_POWER_UPPER, K_POWER_SCHEDULE, K_POWERCAP_DIR, K_CKPT_NODES, K_AGENT_STOP_WAIT, K_AGENT_MEMORY,
    K_AGENT_MALLEABLE, K_CKPT_LENDING, K_CKPT_PLACEMENT, K_CKPT_DIST, K_CKPT_CANDIDATES,
    K_RECLAIM_WAIT, K_AGENT_SCALING, K_CKPT_TRANSFER, K_CKPT_REGIONS, K_MAX_REQUEUE,
    K_CKPT_NODE_MEMORY, K_SCALER_LOWER, K_SCALER_UPPER, K_STEP_OUTPUT_WAIT, K_STEP_REATTACH_TIME, K_SLURM_ENV,
    K_PW_AGE, K_PW_SIZE, K_PW_FAIRSHARE, K_PW_PARTITION, K_PRIO_MAX_AGE, K_PRIO_HALF_LIFE,
    K_PRIO_CALC, K_ACCOUNTS_REQUIRED, K_NODE_FEATURES, K_NODE_GRES, K_NODE_MEMORY, K_MAX_PROCS,
    K_PRIVATE_DATA, NKEYS
};

typedef enum ktype {
    T_NAME,      /* a name like a host name: ClusterName */
    T_WORD,      /* non-empty, no blanks: an address */
    T_STR,       /* non-empty, anything */
    T_PATH,      /* non-empty path, relative ones anchored at the file's directory */
    T_PATH_OPT,  /* the same, or "" */
    T_INT,       /* integer in [lo, hi] */
    T_SEC,       /* seconds, > 0 */
    T_SEC0,      /* seconds, >= 0 */
    T_ENUM,      /* one of the key's words (case-insensitive), stored as an int */
    T_FLAGS,     /* some of the key's words, comma-separated, their values or'ed in an int */
    T_NODES,     /* host list */
    T_USERS,     /* comma-separated user names */
    T_NODE_ADDR, /* name=host,...: checked once Nodes is known */
    T_CKPT_NODES, /* a host list of some of Nodes: checked once Nodes is known */
    T_WATTS,     /* watts, >= 0 */
    T_NODE_ATTR, /* HOSTS=VALUE ...: checked once Nodes is known (nodeattr.h) */
} ktype_t;

/* A word a T_ENUM key takes, the value it stores and, for the message that lists
 * them, what it means (NULL: the word says it). */
typedef struct word {
    const char *word;
    int value;
    const char *meaning;
} word_t;

/* T_ENUM stores an int: the enum fields must be ints */
_Static_assert(sizeof(config_auth_t) == sizeof(int) && sizeof(config_power_source_t) == sizeof(int),
               "an enum field of config_t is not an int");

static const word_t auth_words[] = {
    {"key", CONFIG_AUTH_KEY, NULL}, {"munge", CONFIG_AUTH_MUNGE, NULL}, {NULL, 0, NULL}};
static const word_t power_words[] = {
    {"model", CONFIG_POWER_MODEL, NULL}, {"rapl", CONFIG_POWER_RAPL, NULL},
    {"auto", CONFIG_POWER_AUTO, NULL}, {"none", CONFIG_POWER_NONE, NULL}, {NULL, 0, NULL}};
static const word_t ma_words[] = {
    {"MA-RA", 0, "a resized job keeps its number of checkpoint agents"},
    {"MA-MA", 1, "its agents grow and shrink with it"}, {NULL, 0, NULL}};
static const word_t lending_words[] = {
    {"none", 0, "checkpoint agents run on CheckpointNodes only"},
    {"idle", 1, "idle nodes are lent to them when those are full"},
    {"shrink", 2, "and else a malleable job gives up nodes"}, {NULL, 0, NULL}};
static const word_t scaling_words[] = {
    {"off", 0, "a job keeps the number of checkpoint agents it started with"},
    {"on", 1, "the number follows the time its commits take"}, {NULL, 0, NULL}};
static const word_t slurm_env_words[] = {
    {"yes", 1, "jobs and steps get Slurm's variables (SLURM_JOB_ID...) beside Ductile's"},
    {"no", 0, "they get Ductile's only"}, {NULL, 0, NULL}};
static const word_t accounts_words[] = {
    {"no", 0, "a job without an account goes to its user's default one, or none"},
    {"yes", 1, "every job must run under an account its user belongs to"}, {NULL, 0, NULL}};
static const word_t transfer_words[] = {
    {"push", 0, "the processes write into the checkpoint agents' memory"},
    {"pull", 1, "the agents read the processes' memory"}, {NULL, 0, NULL}};
static const word_t regions_words[] = {
    {"mr", 0, "a registered region and endpoint per process"},
    {"shmr", 1, "one shared-memory region and endpoint per node"}, {NULL, 0, NULL}};
static const word_t select_words[] = {
    {"memory", CONFIG_CKPT_SEL_MEMORY, "the nodes with the most room first"},
    {"bandwidth", CONFIG_CKPT_SEL_BANDWIDTH, "the nodes whose agents move the least data first"},
    {"frequency", CONFIG_CKPT_SEL_FREQUENCY, "the nodes with the fewest commits per second "
     "first"},
    {"power", CONFIG_CKPT_SEL_POWER, "the nodes that draw the least first"}, {NULL, 0, NULL}};
static const word_t private_words[] = {
    {"jobs", CONFIG_PRIVATE_JOBS, NULL}, {"usage", CONFIG_PRIVATE_USAGE, NULL},
    {"accounts", CONFIG_PRIVATE_ACCOUNTS, NULL}, {NULL, 0, NULL}};
/* Slurm's other PrivateData words: a line copied from slurm.conf is told what they are */
static const char *const slurm_private_words[] = {"events", "nodes", "partitions",
                                                  "reservations", "users", NULL};
static const word_t dist_words[] = {
    {"block", CONFIG_CKPT_DIST_BLOCK, "an even run of agents on each node"},
    {"round-robin", CONFIG_CKPT_DIST_ROUNDROBIN, "one agent per node in turn"},
    {"fill", CONFIG_CKPT_DIST_FILL, "each node full before the next"}, {NULL, 0, NULL}};

typedef struct cfgkey {
    const char *name;
    ktype_t type;
    size_t off; /* field in config_t */
    long long lo, hi;
    const word_t *words; /* T_ENUM */
    bool live;           /* a running controller takes a new value (config_apply_changes) */
} cfgkey_t;

#define F(field) offsetof(config_t, field)
static const cfgkey_t keys[NKEYS] = {
    [K_CLUSTER_NAME] = {"ClusterName", T_NAME, F(cluster_name), 0, 0},
    [K_CONTROL_ADDR] = {"ControlAddr", T_WORD, F(control_addr), 0, 0},
    [K_CONTROL_PORT] = {"ControlPort", T_INT, F(control_port), 1, 65535},
    [K_NODE_PORT] = {"NodePort", T_INT, F(node_port), 0, 65535},
    [K_CONTROL_SOCKET] = {"ControlSocket", T_PATH, F(control_socket), 0, 0},
    [K_NODES] = {"Nodes", T_NODES, F(nodes), 0, 0},
    [K_CORES] = {"CoresPerNode", T_INT, F(cores_per_node), 1, INT_MAX},
    [K_MEMORY] = {"MemoryPerNode", T_INT, F(memory_per_node), 1, INT_MAX},
    [K_STATE_DIR] = {"StateDir", T_PATH, F(state_dir), 0, 0},
    [K_LOG_DIR] = {"LogDir", T_PATH, F(log_dir), 0, 0},
    [K_POLICY] = {"Policy", T_STR, F(policy), 0, 0, NULL, true},
    [K_TICK] = {"SchedulerTick", T_SEC, F(scheduler_tick), 0, 0},
    [K_NODE_TIMEOUT] = {"NodeTimeout", T_SEC, F(node_timeout), 0, 0},
    [K_HEARTBEAT] = {"HeartbeatInterval", T_SEC, F(heartbeat_interval), 0, 0},
    [K_RESIZE_TIMEOUT] = {"ResizeTimeout", T_SEC, F(resize_timeout), 0, 0, NULL, true},
    [K_RESIZE_BACKOFF] = {"ResizeBackoff", T_SEC0, F(resize_backoff), 0, 0},
    [K_RESIZE_BACKOFF_MAX] = {"ResizeBackoffMax", T_SEC0, F(resize_backoff_max), 0, 0},
    [K_KILL_WAIT] = {"KillWait", T_SEC0, F(kill_wait), 0, 0},
    [K_STEP_OUTPUT_WAIT] = {"StepOutputWait", T_SEC, F(step_output_wait), 0, 0},
    [K_STEP_REATTACH_TIME] = {"StepReattachTime", T_SEC0, F(step_reattach_time), 0, 0},
    [K_SLURM_ENV] = {"SlurmEnvironment", T_ENUM, F(slurm_env), 0, 0, slurm_env_words, false},
    [K_MAX_REQUEUE] = {"MaxRequeue", T_INT, F(max_requeue), 0, 1000000, NULL, true},
    [K_AUTH_TYPE] = {"AuthType", T_ENUM, F(auth_type), 0, 0, auth_words, false},
    [K_AUTH_KEY_FILE] = {"AuthKeyFile", T_PATH, F(auth_key_file), 0, 0},
    [K_MUNGE_SOCKET] = {"MungeSocket", T_PATH_OPT, F(munge_socket), 0, 0},
    [K_OPERATORS] = {"Operators", T_USERS, F(operators), 0, 0, NULL, true},
    [K_MAX_JOBS] = {"MaxJobs", T_INT, F(max_jobs), 1, INT_MAX, NULL, true},
    [K_MAX_JOBS_USER] = {"MaxJobsPerUser", T_INT, F(max_jobs_per_user), 0, INT_MAX, NULL, true},
    [K_SUBMIT_RATE] = {"MaxSubmitRate", T_INT, F(max_submit_rate), 0, 1000000, NULL, true},
    [K_MAX_SCRIPT] = {"MaxScriptSize", T_INT, F(max_script_size), 1024, 16777216},
    /* Linux's largest pid_max */
    [K_MAX_PROCS] = {"MaxProcessesPerJob", T_INT, F(max_procs_per_job), 0, 4194304},
    [K_NODE_ADDR] = {"NodeAddr", T_NODE_ADDR, F(node_addr), 0, 0},
    [K_NODE_FEATURES] = {"NodeFeatures", T_NODE_ATTR, F(node_features), NODEATTR_FEATURES, 0},
    [K_NODE_GRES] = {"NodeGres", T_NODE_ATTR, F(node_gpus), NODEATTR_GRES, 0},
    [K_NODE_MEMORY] = {"NodeMemory", T_NODE_ATTR, F(node_memory), NODEATTR_MEMORY, 0},
    [K_MAX_CONNS] = {"MaxConnections", T_INT, F(max_connections), 16, 1000000},
    [K_RESERVED_CONNS] = {"ReservedConnections", T_INT, F(reserved_connections), 0, 1000000},
    [K_CONNS_PER_USER] = {"MaxConnectionsPerUser", T_INT, F(max_connections_per_user), 0, 1000000},
    [K_CONNS_PER_HOST] = {"MaxConnectionsPerHost", T_INT, F(max_connections_per_host), 0, 1000000},
    [K_UNAUTH_CONNS] = {"MaxUnauthConnections", T_INT, F(max_unauth_connections), 1, 1000000},
    [K_AUTH_TIMEOUT] = {"AuthTimeout", T_SEC0, F(auth_timeout), 0, 0},
    [K_FRAME_TIMEOUT] = {"FrameTimeout", T_SEC0, F(frame_timeout), 0, 0},
    [K_IDLE_TIMEOUT] = {"IdleTimeout", T_SEC0, F(idle_timeout), 0, 0},
    [K_OPER_HOLD] = {"OperatorResizeHold", T_SEC0, F(operator_resize_hold), 0, 0, NULL, true},
    [K_POWER_SOURCE] = {"PowerSource", T_ENUM, F(power_source), 0, 0, power_words, false},
    [K_IDLE_POWER] = {"IdlePower", T_WATTS, F(idle_power), 0, 0},
    [K_DEFAULT_JOB_POWER] = {"DefaultJobPower", T_WATTS, F(default_job_power), 0, 0},
    [K_POWER_LOWER] = {"PowerLower", T_WATTS, F(power_lower), 0, 0},
    [K_POWER_UPPER] = {"PowerUpper", T_WATTS, F(power_upper), 0, 0},
    [K_POWER_SCHEDULE] = {"PowerSchedule", T_PATH_OPT, F(power_schedule), 0, 0},
    [K_POWERCAP_DIR] = {"PowercapDir", T_PATH, F(powercap_dir), 0, 0},
    [K_CKPT_NODES] = {"CheckpointNodes", T_CKPT_NODES, F(ckpt_node), 0, 0},
    [K_AGENT_STOP_WAIT] = {"CheckpointAgentStopWait", T_SEC0, F(agent_stop_wait), 0, 0},
    [K_AGENT_MEMORY] = {"CheckpointAgentMemory", T_INT, F(agent_memory), 0, INT_MAX, NULL, true},
    [K_AGENT_MALLEABLE] = {"CheckpointMalleableAgents", T_ENUM, F(agents_scale), 0, 0, ma_words,
                           true},
    [K_CKPT_LENDING] = {"CheckpointLending", T_ENUM, F(ckpt_lending), 0, 0, lending_words, true},
    [K_CKPT_PLACEMENT] = {"CheckpointPlacement", T_ENUM, F(ckpt_select), 0, 0, select_words,
                          true},
    [K_CKPT_DIST] = {"CheckpointDistribution", T_ENUM, F(ckpt_dist), 0, 0, dist_words, true},
    [K_AGENT_SCALING] = {"CheckpointAgentScaling", T_ENUM, F(agent_scaling), 0, 0, scaling_words,
                          true},
    [K_CKPT_TRANSFER] = {"CheckpointTransfer", T_ENUM, F(ckpt_pull), 0, 0, transfer_words, false},
    [K_CKPT_REGIONS] = {"CheckpointRegions", T_ENUM, F(ckpt_shmr), 0, 0, regions_words, false},
    [K_RECLAIM_WAIT] = {"CheckpointReclaimWait", T_SEC0, F(reclaim_wait), 0, 0, NULL, true},
    [K_CKPT_CANDIDATES] = {"CheckpointCandidates", T_INT, F(ckpt_candidates), 0, 1000000, NULL,
                           true},
    [K_CKPT_NODE_MEMORY] = {"CheckpointNodeMemory", T_INT, F(ckpt_node_memory), 0, INT_MAX, NULL,
                            true},
    [K_SCALER_LOWER] = {"CheckpointScalerLower", T_INT, F(scaler_lower), 1, 100, NULL, true},
    [K_SCALER_UPPER] = {"CheckpointScalerUpper", T_INT, F(scaler_upper), 1, 100, NULL, true},
    /* priority and fair share (docs/accounts.md) */
    [K_PW_AGE] = {"PriorityWeightAge", T_INT, F(prio_w_age), 0, 1000000000, NULL, true},
    [K_PW_SIZE] = {"PriorityWeightJobSize", T_INT, F(prio_w_size), 0, 1000000000, NULL, true},
    [K_PW_FAIRSHARE] = {"PriorityWeightFairshare", T_INT, F(prio_w_fairshare), 0, 1000000000,
                        NULL, true},
    [K_PW_PARTITION] = {"PriorityWeightPartition", T_INT, F(prio_w_partition), 0, 1000000000,
                        NULL, true},
    [K_PRIO_MAX_AGE] = {"PriorityMaxAge", T_SEC, F(prio_max_age), 0, 0, NULL, true},
    [K_PRIO_HALF_LIFE] = {"PriorityDecayHalfLife", T_SEC0, F(prio_half_life), 0, 0, NULL, true},
    [K_PRIO_CALC] = {"PriorityCalcPeriod", T_SEC0, F(prio_calc_period), 0, 0, NULL, true},
    [K_ACCOUNTS_REQUIRED] = {"AccountsRequired", T_ENUM, F(accounts_required), 0, 0,
                             accounts_words, true},
    /* what users see of others' (docs/security.md, "What users see of each other") */
    [K_PRIVATE_DATA] = {"PrivateData", T_FLAGS, F(private_data), 0, 0, private_words, true},
};
#undef F

typedef struct parse {
    const char *origin;
    const char *basedir; /* anchors relative paths; NULL: leave them relative */
    config_t *cfg;
    int line[NKEYS]; /* where each key was set; 0: not set */
    char *node_addr_text;
    struct part_line {
        int line;
        char *text;
    } *parts;            /* Partition lines, parsed once Nodes is known */
    int nparts;
    char *ckpt_nodes_text;
    char *attr_text[NKEYS]; /* T_NODE_ATTR keys' values, parsed once Nodes is known */
    char *err;
    size_t errlen;
} parse_t;

/* "origin:line: message", or "origin: message" for line 0. */
static int fail(parse_t *ps, int line, const char *fmt, ...)
{
    if (!ps->err || !ps->errlen)
        return -EINVAL;
    int n = line > 0 ? snprintf(ps->err, ps->errlen, "%s:%d: ", ps->origin, line)
                     : snprintf(ps->err, ps->errlen, "%s: ", ps->origin);
    if (n >= 0 && (size_t)n < ps->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

/* At most 60 bytes of s for a message; '?' for bytes that would garble a terminal. */
static const char *clip(const char *s, size_t n, char out[72])
{
    size_t k = n > 60 ? 60 : n;
    for (size_t i = 0; i < k; i++)
        out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    strcpy(out + k, n > k ? "..." : "");
    return out;
}

static bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* ---- paths -------------------------------------------------------------------- */

/* base + "/" + rel, or rel itself when absolute or when there is no base; "./"
 * prefixes and trailing slashes go, so derived names ("<StateDir>/ctld.sock") and
 * messages stay clean. NULL when memory runs out. */
static char *join_path(const char *base, const char *rel)
{
    while (rel[0] == '.' && rel[1] == '/')
        for (rel += 2; *rel == '/'; rel++)
            ;
    if (strcmp(rel, ".") == 0)
        rel = "";
    bool anchored = base && rel[0] != '/';
    size_t bl = anchored ? strlen(base) : 0, rl = strlen(rel);
    char *p = malloc(bl + rl + 2);
    if (!p)
        return NULL;
    if (anchored) {
        memcpy(p, base, bl);
        if (rl && (bl == 0 || base[bl - 1] != '/'))
            p[bl++] = '/';
    }
    memcpy(p + bl, rel, rl + 1);
    for (size_t n = strlen(p); n > 1 && p[n - 1] == '/'; n--)
        p[n - 1] = '\0';
    if (!*p) { /* "." with no base */
        free(p);
        return strdup(".");
    }
    return p;
}

/* ---- values ------------------------------------------------------------------- */

static int set_int(parse_t *ps, const cfgkey_t *k, int line, const char *v, int *out)
{
    const char *p = v + (*v == '-' || *v == '+');
    bool digits = *p != '\0';
    for (; *p; p++)
        digits &= isdigit((unsigned char)*p) != 0;
    char q[72];
    if (!digits)
        return fail(ps, line, "%s: '%s' is not an integer (accepted: %lld..%lld)", k->name,
                    clip(v, strlen(v), q), k->lo, k->hi);
    errno = 0;
    long long x = strtoll(v, NULL, 10);
    if (errno == ERANGE || x < k->lo || x > k->hi)
        return fail(ps, line, "%s: %s is out of range (accepted: %lld..%lld)", k->name,
                    clip(v, strlen(v), q), k->lo, k->hi);
    *out = (int)x;
    return 0;
}

static int set_seconds(parse_t *ps, const cfgkey_t *k, int line, const char *v, double *out)
{
    bool zero_ok = k->type == T_SEC0;
    char q[72];
    /* Plain decimal only: strtod would also take "inf", "nan" and hex floats. */
    bool ok = *v != '\0';
    for (const char *p = v; *p; p++)
        ok &= isdigit((unsigned char)*p) || strchr(".eE+-", *p) != NULL;
    char *end = NULL;
    double x = ok ? strtod(v, &end) : 0;
    if (!ok || *end != '\0')
        return fail(ps, line, "%s: '%s' is not a number of seconds (accepted: %s 0 and <= %.0f)",
                    k->name, clip(v, strlen(v), q), zero_ok ? ">=" : ">", CONFIG_SECONDS_MAX);
    if (!isfinite(x) || x < 0 || (x == 0 && !zero_ok) || x > CONFIG_SECONDS_MAX)
        return fail(ps, line, "%s: %s is out of range (accepted: seconds %s 0 and <= %.0f)",
                    k->name, clip(v, strlen(v), q), zero_ok ? ">=" : ">", CONFIG_SECONDS_MAX);
    *out = x + 0.0; /* -0 becomes 0 */
    return 0;
}

static int set_watts(parse_t *ps, const cfgkey_t *k, int line, const char *v, double *out)
{
    char q[72];
    if (strparse_decimal(v, CONFIG_WATTS_MAX, out) < 0)
        return fail(ps, line, "%s: '%s' is not a power in watts (accepted: 0 to %.0f, e.g. 250 "
                    "or 70.5)", k->name, clip(v, strlen(v), q), CONFIG_WATTS_MAX);
    return 0;
}

static int set_enum(parse_t *ps, const cfgkey_t *k, int line, const char *v, int *out)
{
    for (const word_t *w = k->words; w->word; w++)
        if (strcasecmp(v, w->word) == 0) {
            *out = w->value;
            return 0;
        }
    char q[72], list[512] = "";
    for (const word_t *w = k->words; w->word; w++) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof(list) - l, "%s%s%s%s%s", l ? ", " : "", w->word,
                 w->meaning ? " (" : "", w->meaning ? w->meaning : "", w->meaning ? ")" : "");
    }
    return fail(ps, line, "%s: '%s' is not accepted (accepted: %s)", k->name,
                clip(v, strlen(v), q), list);
}

/* "jobs,usage": each word one of the key's, in any case; "" sets none. */
static int set_flags(parse_t *ps, const cfgkey_t *k, int line, const char *v, int *out)
{
    *out = 0;
    if (!*v)
        return 0; /* "": none of them */
    for (const char *p = v;;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        const char *s = p;
        while (n && blank(*s))
            s++, n--;
        while (n && blank(s[n - 1]))
            n--;
        const word_t *w = k->words;
        while (w->word && !(strlen(w->word) == n && !strncasecmp(w->word, s, n)))
            w++;
        if (!w->word) {
            char q[72], list[256] = "";
            for (w = k->words; w->word; w++) {
                size_t l = strlen(list);
                snprintf(list + l, sizeof(list) - l, "%s%s", l ? ", " : "", w->word);
            }
            bool slurms = false;
            for (const char *const *sw = slurm_private_words; *sw && !slurms; sw++)
                slurms = strlen(*sw) == n && !strncasecmp(*sw, s, n);
            return fail(ps, line, "%s: '%s' is not one of %s%s%s%s", k->name, clip(s, n, q),
                        list, slurms ? " (Slurm hides " : "", slurms ? q : "",
                        slurms ? " with it; Ductile does not)" : "");
        }
        *out |= w->value;
        if (!e)
            return 0;
        p = e + 1;
    }
}

static bool user_char(char c)
{
    return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-';
}

static int set_users(parse_t *ps, const cfgkey_t *k, int line, const char *v)
{
    config_t *cfg = ps->cfg;
    char q[72];
    const char *p = v;
    while (blank(*p))
        p++;
    if (!*p)
        return 0; /* Operators = "": nobody but root */
    size_t items = 1;
    for (const char *c = p; *c; c++)
        items += *c == ',';
    if (!(cfg->operators = calloc(items, sizeof(char *))))
        return -ENOMEM;
    for (;;) {
        while (blank(*p))
            p++;
        const char *e = p;
        while (*e && *e != ',')
            e++;
        size_t n = (size_t)(e - p);
        while (n && blank(p[n - 1]))
            n--;
        bool ok = n > 0 && n <= USER_MAX && p[0] != '-';
        for (size_t i = 0; ok && i < n; i++)
            ok = user_char(p[i]);
        if (!ok)
            return fail(ps, line, "%s: '%s' is not a user name (1..%d letters, digits, '.', '_', "
                        "'-', not starting with '-'; names separated by commas)",
                        k->name, clip(p, n, q), USER_MAX);
        if (!(cfg->operators[cfg->noperators] = strndup(p, n)))
            return -ENOMEM;
        cfg->noperators++;
        if (!*e)
            break;
        p = e + 1;
    }
    hostlist_index_t *ix;
    int dup = -1, rc = hostlist_index_create(cfg->operators, cfg->noperators, &ix, &dup);
    if (rc == -EEXIST)
        return fail(ps, line, "%s: '%s' is listed twice", k->name, cfg->operators[dup]);
    hostlist_index_destroy(ix);
    return rc;
}

/* Stores the value v of key k given on line; v is the unquoted text. */
static int set_value(parse_t *ps, int kid, int line, const char *v)
{
    const cfgkey_t *k = &keys[kid];
    void *field = (char *)ps->cfg + k->off;
    char **str = field;
    char q[72];
    size_t n = strlen(v);
    bool has_blank = false;
    for (size_t i = 0; i < n; i++)
        has_blank |= blank(v[i]) || v[i] == '\n';
    int rc;
    switch (k->type) {
    case T_NAME:
        if (!hostlist_valid_name(v))
            return fail(ps, line, "%s: '%s' is not a valid name (1..%d letters, digits, '-', "
                        "'_', '.')", k->name, clip(v, n, q), HOSTLIST_NAME_MAX);
        break;
    case T_WORD:
        if (n == 0 || n > ADDR_MAX || has_blank)
            return fail(ps, line, "%s: '%s' is not a host name or address", k->name,
                        clip(v, n, q));
        break;
    case T_STR:
        if (n == 0)
            return fail(ps, line, "%s: the value is empty", k->name);
        break;
    case T_PATH:
    case T_PATH_OPT:
        if (n == 0 && k->type == T_PATH)
            return fail(ps, line, "%s: the path is empty", k->name);
        if (n == 0)
            return (*str = strdup("")) ? 0 : -ENOMEM;
        if (!(*str = join_path(ps->basedir, v)))
            return -ENOMEM;
        if (strlen(*str) >= PATH_MAX)
            return fail(ps, line, "%s: the path is longer than %d bytes", k->name, PATH_MAX - 1);
        return 0;
    case T_INT:
        return set_int(ps, k, line, v, field);
    case T_SEC:
    case T_SEC0:
        return set_seconds(ps, k, line, v, field);
    case T_ENUM:
        return set_enum(ps, k, line, v, field);
    case T_FLAGS:
        return set_flags(ps, k, line, v, field);
    case T_NODES: {
        char herr[256];
        rc = hostlist_expand(v, &ps->cfg->nodes, &ps->cfg->nnodes, herr, sizeof(herr));
        if (rc == -ENOMEM)
            return rc;
        if (rc < 0)
            return fail(ps, line, "%s: %s", k->name, herr);
        if (ps->cfg->nnodes == 0)
            return fail(ps, line, "%s: no nodes listed (e.g. Nodes = n[01-16])", k->name);
        return 0;
    }
    case T_USERS:
        return set_users(ps, k, line, v);
    case T_NODE_ADDR:
        return (ps->node_addr_text = strdup(v)) ? 0 : -ENOMEM;
    case T_CKPT_NODES:
        free(ps->ckpt_nodes_text);
        return (ps->ckpt_nodes_text = strdup(v)) ? 0 : -ENOMEM;
    case T_NODE_ATTR:
        return (ps->attr_text[kid] = strdup(v)) ? 0 : -ENOMEM;
    case T_WATTS:
        return set_watts(ps, k, line, v, field);
    }
    return (*str = strdup(v)) ? 0 : -ENOMEM;
}

/* ---- lines -------------------------------------------------------------------- */

/* Levenshtein distance, case-insensitive, for "did you mean" on unknown keys. */
static size_t distance(const char *a, size_t an, const char *b)
{
    size_t bn = strlen(b), row[32];
    if (bn >= 32)
        return SIZE_MAX;
    for (size_t j = 0; j <= bn; j++)
        row[j] = j;
    for (size_t i = 1; i <= an; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= bn; j++) {
            size_t up = row[j];
            bool same = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]);
            size_t sub = diag + !same;
            size_t best = (up < row[j - 1] ? up : row[j - 1]) + 1;
            row[j] = sub < best ? sub : best;
            diag = up;
        }
    }
    return row[bn];
}

static int unknown_key(parse_t *ps, int line, const char *key, size_t n)
{
    char q[72];
    const char *near = NULL;
    size_t best = 3; /* suggest only keys within two edits */
    for (int i = 0; i < NKEYS && n <= 40; i++) {
        size_t d = distance(key, n, keys[i].name);
        if (d < best) {
            best = d;
            near = keys[i].name;
        }
    }
    if (near)
        return fail(ps, line, "unknown key '%s' (did you mean '%s'?)", clip(key, n, q), near);
    return fail(ps, line, "unknown key '%s' (the keys are listed in docs/configuration.md)",
                clip(key, n, q));
}

/* The value after '=': quoted or bare, comments and blanks removed. */
static int read_value(parse_t *ps, int line, const char *key, const char *p, const char *end,
                      char **out)
{
    while (p < end && blank(*p))
        p++;
    if (p < end && *p == '"') {
        char *v = malloc((size_t)(end - p)), *w = v;
        if (!v)
            return -ENOMEM;
        for (p++; p < end && *p != '"'; p++) {
            if (*p == '\\' && p + 1 < end && (p[1] == '"' || p[1] == '\\'))
                p++;
            *w++ = *p;
        }
        *w = '\0';
        if (p >= end) {
            free(v);
            return fail(ps, line, "%s: missing closing '\"'", key);
        }
        for (p++; p < end && blank(*p); p++)
            ;
        if (p < end && *p != '#') {
            free(v);
            return fail(ps, line, "%s: unexpected text after the closing '\"'", key);
        }
        *out = v;
        return 0;
    }
    const char *e = memchr(p, '#', (size_t)(end - p));
    if (!e)
        e = end;
    while (e > p && blank(e[-1]))
        e--;
    if (e == p)
        return fail(ps, line, "%s: no value (write \"\" for an empty one)", key);
    return (*out = strndup(p, (size_t)(e - p))) ? 0 : -ENOMEM;
}

static int parse_line(parse_t *ps, int line, const char *p, const char *end)
{
    char q[72];
    if (memchr(p, '\0', (size_t)(end - p)))
        return fail(ps, line, "NUL byte in the line");
    while (p < end && blank(*p))
        p++;
    if (p == end || *p == '#')
        return 0;
    const char *eq = p;
    while (eq < end && *eq != '=' && *eq != '#')
        eq++;
    if (eq == end || *eq != '=')
        return fail(ps, line, "expected 'Key = Value', found '%s'", clip(p, (size_t)(eq - p), q));
    const char *ke = eq;
    while (ke > p && blank(ke[-1]))
        ke--;
    if (ke == p)
        return fail(ps, line, "no key before '='");
    if ((size_t)(ke - p) == 9 && !strncasecmp(p, "Partition", 9)) { /* one line each */
        struct part_line *np = realloc(ps->parts, (size_t)(ps->nparts + 1) * sizeof(*np));
        if (!np)
            return -ENOMEM;
        ps->parts = np;
        char *v = NULL;
        int rc = read_value(ps, line, "Partition", eq + 1, end, &v);
        if (rc < 0)
            return rc;
        ps->parts[ps->nparts++] = (struct part_line){line, v};
        return 0;
    }
    int kid = -1;
    for (int i = 0; i < NKEYS && kid < 0; i++)
        if (strlen(keys[i].name) == (size_t)(ke - p) &&
            strncasecmp(keys[i].name, p, (size_t)(ke - p)) == 0)
            kid = i;
    if (kid < 0)
        return unknown_key(ps, line, p, (size_t)(ke - p));
    if (ps->line[kid])
        return fail(ps, line, "%s is given twice (first on line %d)", keys[kid].name,
                    ps->line[kid]);
    ps->line[kid] = line;
    char *v = NULL;
    int rc = read_value(ps, line, keys[kid].name, eq + 1, end, &v);
    if (rc == 0)
        rc = set_value(ps, kid, line, v);
    free(v);
    return rc;
}

/* ---- after the last line: defaults and checks across keys --------------------- */

/* NodeAddr = name=host,...: each name must be a node, and only once. */
static int node_addrs(parse_t *ps, const char *text)
{
    config_t *cfg = ps->cfg;
    int line = ps->line[K_NODE_ADDR];
    char q[72];
    const char *p = text;
    while (blank(*p))
        p++;
    if (!*p)
        return 0;
    for (;;) {
        const char *e = strchr(p, ','), *end = e ? e : p + strlen(p);
        while (p < end && blank(*p))
            p++;
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (!eq)
            return fail(ps, line, "NodeAddr: '%s' is not name=host", clip(p, (size_t)(end - p), q));
        const char *ne = eq, *hs = eq + 1, *he = end;
        while (ne > p && blank(ne[-1]))
            ne--;
        while (hs < he && blank(*hs))
            hs++;
        while (he > hs && blank(he[-1]))
            he--;
        char name[HOSTLIST_NAME_MAX + 1];
        size_t nl = (size_t)(ne - p), hl = (size_t)(he - hs);
        int i = -1;
        if (nl <= HOSTLIST_NAME_MAX) {
            memcpy(name, p, nl);
            name[nl] = '\0';
            i = config_node_index(cfg, name);
        }
        if (i < 0)
            return fail(ps, line, "NodeAddr: '%s' is not in Nodes", clip(p, nl, q));
        if (cfg->node_addr[i])
            return fail(ps, line, "NodeAddr: '%s' is given twice", name);
        bool ok = hl > 0 && hl <= ADDR_MAX;
        for (size_t k = 0; ok && k < hl; k++)
            ok = !blank(hs[k]) && hs[k] != '=';
        if (!ok)
            return fail(ps, line, "NodeAddr: '%s' is not a host name or address (for %s)",
                        clip(hs, hl, q), name);
        if (!(cfg->node_addr[i] = strndup(hs, hl)))
            return -ENOMEM;
        if (!e)
            return 0;
        p = e + 1;
    }
}

/* CheckpointNodes: nodes of Nodes that hold checkpoint agents instead of jobs; at
 * least one node is left for jobs. */
static int ckpt_nodes(parse_t *ps, const char *text)
{
    config_t *cfg = ps->cfg;
    int line = ps->line[K_CKPT_NODES];
    char **names = NULL, herr[256];
    int n = 0, rc = hostlist_expand(text, &names, &n, herr, sizeof(herr));
    if (rc == -ENOMEM)
        return rc;
    if (rc < 0)
        return fail(ps, line, "CheckpointNodes: %s", herr);
    for (int i = 0; i < n && rc == 0; i++) {
        int idx = config_node_index(cfg, names[i]);
        if (idx < 0)
            rc = fail(ps, line, "CheckpointNodes: %s is not one of Nodes", names[i]);
        else
            cfg->ckpt_node[idx] = true;
    }
    hostlist_free(names, n);
    int left = 0;
    for (int i = 0; i < cfg->nnodes; i++)
        left += !cfg->ckpt_node[i];
    if (rc == 0 && left == 0)
        rc = fail(ps, line, "CheckpointNodes: every node would hold checkpoints and none "
                  "would run jobs");
    return rc;
}

static int set_default(char **field, const char *value)
{
    if (*field)
        return 0;
    return (*field = strdup(value)) ? 0 : -ENOMEM;
}

static int derived_path(char **field, const char *dir, const char *file)
{
    if (*field)
        return 0;
    return (*field = join_path(dir, file)) ? 0 : -ENOMEM;
}

static int finish(parse_t *ps)
{
    config_t *cfg = ps->cfg;
    int rc;
    if (!ps->line[K_NODES])
        return fail(ps, 0, "Nodes is missing: list the cluster's nodes (e.g. Nodes = n[01-16])");
    if ((rc = set_default(&cfg->cluster_name, "ductile")) ||
        (rc = set_default(&cfg->control_addr, "127.0.0.1")) ||
        (rc = set_default(&cfg->policy, "easy")) || (rc = set_default(&cfg->munge_socket, "")) ||
        (rc = set_default(&cfg->state_dir, "/var/lib/ductile")) ||
        (rc = set_default(&cfg->log_dir, cfg->state_dir)) ||
        (rc = derived_path(&cfg->control_socket, cfg->state_dir, "ctld.sock")) ||
        (rc = derived_path(&cfg->auth_key_file, cfg->state_dir, "cluster.key")) ||
        (rc = set_default(&cfg->power_schedule, "")) ||
        (rc = set_default(&cfg->powercap_dir, "/sys/class/powercap")))
        return rc;
    if (cfg->power_upper > 0 && cfg->power_upper < cfg->power_lower)
        return fail(ps, ps->line[K_POWER_UPPER],
                    "PowerUpper: %g W is below PowerLower (%g W): the corridor would be empty",
                    cfg->power_upper, cfg->power_lower);
    if (strlen(cfg->control_socket) > CONFIG_SOCKET_PATH_MAX) {
        int set = ps->line[K_CONTROL_SOCKET];
        return fail(ps, set ? set : ps->line[K_STATE_DIR],
                    "%s: the socket path '%s' is longer than %d bytes, the limit of a Unix "
                    "socket; set ControlSocket to a shorter path",
                    set ? "ControlSocket" : "StateDir", cfg->control_socket,
                    CONFIG_SOCKET_PATH_MAX);
    }
    if (!ps->line[K_HEARTBEAT])
        cfg->heartbeat_interval = cfg->node_timeout / 3;
    else if (cfg->heartbeat_interval >= cfg->node_timeout)
        return fail(ps, ps->line[K_HEARTBEAT],
                    "HeartbeatInterval: %g must be less than NodeTimeout (%g), or a node "
                    "would time out between heartbeats", cfg->heartbeat_interval,
                    cfg->node_timeout);
    if (cfg->scaler_lower > cfg->scaler_upper)
        return fail(ps, ps->line[K_SCALER_LOWER] ? ps->line[K_SCALER_LOWER]
                                                 : ps->line[K_SCALER_UPPER],
                    "CheckpointScalerLower: %d %% is above CheckpointScalerUpper (%d %%)",
                    cfg->scaler_lower, cfg->scaler_upper);
    if (cfg->reserved_connections >= cfg->max_connections)
        return fail(ps, ps->line[K_RESERVED_CONNS] ? ps->line[K_RESERVED_CONNS]
                                                   : ps->line[K_MAX_CONNS],
                    "ReservedConnections: %d must be less than MaxConnections (%d), or ordinary "
                    "users could never connect", cfg->reserved_connections, cfg->max_connections);
    if (!ps->line[K_UNAUTH_CONNS])
        cfg->max_unauth_connections = cfg->max_connections / 4;
    else if (cfg->max_unauth_connections > cfg->max_connections - cfg->reserved_connections)
        return fail(ps, ps->line[K_UNAUTH_CONNS],
                    "MaxUnauthConnections: %d is more than MaxConnections less "
                    "ReservedConnections (%d): peers that have not authenticated could take "
                    "every connection", cfg->max_unauth_connections,
                    cfg->max_connections - cfg->reserved_connections);
    if (cfg->idle_timeout > 0 && cfg->idle_timeout < 2 * CONFIG_KEEPALIVE_SECONDS)
        return fail(ps, ps->line[K_IDLE_TIMEOUT],
                    "IdleTimeout: %g s is too short: waiting clients send a keepalive every %d s; "
                    "use at least %d s, or 0 to never close idle clients", cfg->idle_timeout,
                    CONFIG_KEEPALIVE_SECONDS, 2 * CONFIG_KEEPALIVE_SECONDS);
    if ((rc = hostlist_index_create(cfg->nodes, cfg->nnodes, &cfg->node_index, NULL)) < 0)
        return rc;
    if (!(cfg->node_addr = calloc((size_t)cfg->nnodes, sizeof(char *))))
        return -ENOMEM;
    if (ps->node_addr_text && (rc = node_addrs(ps, ps->node_addr_text)) < 0)
        return rc;
    if (!(cfg->ckpt_node = calloc((size_t)cfg->nnodes, sizeof(bool))))
        return -ENOMEM;
    if (ps->ckpt_nodes_text && (rc = ckpt_nodes(ps, ps->ckpt_nodes_text)) < 0)
        return rc;
    if ((rc = nodeattr_init(cfg)) < 0)
        return rc;
    for (int k = 0; k < NKEYS; k++) {
        char why[512];
        if (keys[k].type != T_NODE_ATTR || !ps->attr_text[k])
            continue;
        rc = nodeattr_parse(cfg, (nodeattr_kind_t)keys[k].lo, ps->attr_text[k], why, sizeof(why));
        if (rc == -EINVAL)
            return fail(ps, ps->line[k], "%s", why);
        if (rc < 0)
            return rc;
    }
    for (int k = 0; k < ps->nparts; k++) {
        char why[512];
        rc = partition_parse(cfg, ps->parts[k].text, why, sizeof(why));
        if (rc == -EINVAL)
            return fail(ps, ps->parts[k].line, "%s", why);
        if (rc < 0)
            return rc;
    }
    char why[512];
    if (partition_finish(cfg, why, sizeof(why)) < 0)
        return fail(ps, ps->nparts ? ps->parts[ps->nparts - 1].line : 0, "%s", why);
    return 0;
}

static int parse_text(const char *text, size_t len, const char *origin, const char *basedir,
                      config_t *out, char *err, size_t errlen)
{
    parse_t ps = {.origin = origin ? origin : "(config)", .basedir = basedir, .cfg = out,
                  .err = err, .errlen = errlen};
    *out = (config_t){
        .control_port = 6817, .cores_per_node = 1, .memory_per_node = 1024,
        .scheduler_tick = 10, .node_timeout = 30, .resize_timeout = 60, .kill_wait = 10,
        .step_output_wait = 10, .step_reattach_time = 300, .slurm_env = 1,
        .agent_stop_wait = 120, .scaler_lower = 80, .scaler_upper = 90,
        .resize_backoff = 10, .resize_backoff_max = 300,
        .auth_type = CONFIG_AUTH_KEY, .max_jobs = 1000000, .max_jobs_per_user = 10000, .max_submit_rate = 20, .max_requeue = 5, .max_script_size = 1048576,
        .max_procs_per_job = 4096,
        .max_connections = 4096, .reserved_connections = 32, .max_connections_per_user = 64,
        .max_connections_per_host = 128, .auth_timeout = 10, .frame_timeout = 30,
        .idle_timeout = 600, .operator_resize_hold = 3600,
        .prio_max_age = 7 * 86400, .prio_half_life = 7 * 86400, .prio_calc_period = 300,
        .power_source = CONFIG_POWER_MODEL, .idle_power = 71, .default_job_power = 200,
        .ckpt_dist = CONFIG_CKPT_DIST_ROUNDROBIN, .reclaim_wait = 30,
    };
    int rc = 0, line = 0;
    for (const char *p = text, *end = text + len; rc == 0 && p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        rc = parse_line(&ps, ++line, p, le);
        p = le + 1;
    }
    if (rc == 0)
        rc = finish(&ps);
    free(ps.node_addr_text);
    free(ps.ckpt_nodes_text);
    for (int k = 0; k < ps.nparts; k++)
        free(ps.parts[k].text);
    free(ps.parts);
    for (int k = 0; k < NKEYS; k++)
        free(ps.attr_text[k]);
    if (rc == -ENOMEM && err && errlen)
        snprintf(err, errlen, "%s: out of memory", ps.origin);
    if (rc < 0)
        config_free(out);
    return rc;
}

int config_parse_string(const char *text, const char *origin, config_t *out, char *err,
                        size_t errlen)
{
    if (!out)
        return -EINVAL;
    if (!text) {
        *out = (config_t){0};
        if (err && errlen)
            snprintf(err, errlen, "no configuration text");
        return -EINVAL;
    }
    char *dir = NULL;
    const char *slash = origin ? strrchr(origin, '/') : NULL;
    if (slash && !(dir = strndup(origin, slash == origin ? 1 : (size_t)(slash - origin)))) {
        *out = (config_t){0};
        return -ENOMEM;
    }
    int rc = parse_text(text, strlen(text), origin, dir, out, err, errlen);
    free(dir);
    return rc;
}

/* The absolute directory of path, without resolving symbolic links: a file reached
 * through a link anchors its paths where the administrator sees it. */
static char *file_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir || dir[0] == '/')
        return dir;
    char cwd[PATH_MAX];
    char *abs = getcwd(cwd, sizeof(cwd)) ? join_path(cwd, dir) : NULL;
    free(dir);
    return abs;
}

static int read_file(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    int rc = 0;
    if (fd < 0 || fstat(fd, &st) < 0) {
        rc = -errno;
        snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        goto out;
    }
    if (S_ISDIR(st.st_mode)) {
        rc = -EISDIR;
        snprintf(err, errlen, "cannot read '%s': it is a directory", path);
        goto out;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            rc = -ENOMEM;
            snprintf(err, errlen, "%s: out of memory", path);
            goto out;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = -errno;
            snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
            free(buf);
            goto out;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n > CONFIG_FILE_MAX) {
            rc = -EFBIG;
            snprintf(err, errlen, "%s: larger than %d MiB; is this the configuration file?",
                     path, CONFIG_FILE_MAX >> 20);
            free(buf);
            goto out;
        }
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
out:
    if (fd >= 0)
        close(fd);
    return rc;
}

int config_load(const char *path, config_t *out, char *err, size_t errlen)
{
    char dummy[1];
    if (!err || !errlen) { /* messages below write unconditionally */
        err = dummy;
        errlen = sizeof(dummy);
    }
    if (!out)
        return -EINVAL;
    *out = (config_t){0};
    if (!path || !*path) {
        snprintf(err, errlen, "no configuration file given");
        return -EINVAL;
    }
    char *text = NULL, *dir = NULL;
    size_t len = 0;
    int rc = read_file(path, &text, &len, err, errlen);
    if (rc == 0 && !(dir = file_dir(path))) {
        rc = -ENOMEM;
        snprintf(err, errlen, "%s: cannot find the file's directory", path);
    }
    if (rc == 0)
        rc = parse_text(text, len, path, dir, out, err, errlen);
    free(text);
    free(dir);
    return rc;
}

void config_free(config_t *cfg)
{
    if (!cfg)
        return;
    char **strs[] = {&cfg->cluster_name, &cfg->control_addr, &cfg->control_socket,
                     &cfg->state_dir, &cfg->log_dir, &cfg->policy, &cfg->auth_key_file,
                     &cfg->munge_socket, &cfg->power_schedule, &cfg->powercap_dir};
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        free(*strs[i]);
    if (cfg->node_addr)
        for (int i = 0; i < cfg->nnodes; i++)
            free(cfg->node_addr[i]);
    free(cfg->node_addr);
    free(cfg->ckpt_node);
    nodeattr_free(cfg);
    partitions_free(cfg);
    hostlist_free(cfg->nodes, cfg->nnodes);
    hostlist_free(cfg->operators, cfg->noperators);
    hostlist_index_destroy(cfg->node_index);
    *cfg = (config_t){0};
}

void config_private_names(int bits, char *buf, size_t len)
{
    size_t pos = 0;
    if (len)
        buf[0] = '\0';
    for (const word_t *w = private_words; w->word && pos < len; w++)
        if (bits & w->value)
            pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", pos ? "," : "", w->word);
}

const char *config_power_source_name(config_power_source_t s)
{
    for (const word_t *w = power_words; w->word; w++)
        if (w->value == (int)s)
            return w->word;
    return "?";
}

/* ---- a running daemon's configuration against the file ------------------------- */

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_strs(char *const *a, int na, char *const *b, int nb)
{
    if (na != nb)
        return false;
    for (int i = 0; i < na; i++)
        if (!same_str(a ? a[i] : NULL, b ? b[i] : NULL))
            return false;
    return true;
}

/* Every node of a with an address (or a checkpoint role) has the same in b, by name:
 * a change of Nodes alone does not count as one of NodeAddr or CheckpointNodes. */
static bool same_by_node(const config_t *a, const config_t *b, ktype_t type)
{
    for (int i = 0; i < a->nnodes; i++) {
        int j = config_node_index(b, a->nodes[i]);
        if (type == T_CKPT_NODES && a->ckpt_node[i] && (j < 0 || !b->ckpt_node[j]))
            return false;
        if (type == T_NODE_ADDR && a->node_addr[i] &&
            (j < 0 || !same_str(a->node_addr[i], b->node_addr[j])))
            return false;
    }
    return true;
}

/* A node attribute is the same on every node a and b share, by name. */
static bool same_attr(const config_t *a, const config_t *b, long long kind)
{
    for (int i = 0; i < a->nnodes; i++) {
        int j = config_node_index(b, a->nodes[i]);
        if (j < 0)
            continue;
        bool same = kind == NODEATTR_FEATURES ? same_str(a->node_features[i], b->node_features[j])
                    : kind == NODEATTR_GRES   ? a->node_gpus[i] == b->node_gpus[j]
                                              : a->node_memory[i] == b->node_memory[j];
        if (!same)
            return false;
    }
    return true;
}

static bool same_value(const config_t *a, const config_t *b, const cfgkey_t *k)
{
    const void *fa = (const char *)a + k->off, *fb = (const char *)b + k->off;
    switch (k->type) {
    case T_INT:
    case T_ENUM:
    case T_FLAGS:
        return *(const int *)fa == *(const int *)fb;
    case T_SEC:
    case T_SEC0:
    case T_WATTS:
        return *(const double *)fa == *(const double *)fb;
    case T_NODES:
        return same_strs(a->nodes, a->nnodes, b->nodes, b->nnodes);
    case T_USERS:
        return same_strs(a->operators, a->noperators, b->operators, b->noperators);
    case T_NODE_ADDR:
    case T_CKPT_NODES:
        return same_by_node(a, b, k->type) && same_by_node(b, a, k->type);
    case T_NODE_ATTR:
        return same_attr(a, b, k->lo) && same_attr(b, a, k->lo);
    default:
        return same_str(*(char *const *)fa, *(char *const *)fb);
    }
}

static void note(char *list, size_t len, int *count, const char *name)
{
    size_t l = strlen(list);
    if (l + strlen(name) + 6 >= len) {
        if (l + 4 < len && (l < 3 || strcmp(list + l - 3, "...")))
            strcpy(list + l, l ? ", ..." : "...");
    } else {
        snprintf(list + l, len - l, "%s%s", l ? ", " : "", name);
    }
    (*count)++;
}

/* The same Partition lines (every setting; node sets of the same Nodes). */
static bool same_partitions(const config_t *a, const config_t *b)
{
    if (a->npartitions != b->npartitions)
        return false;
    if (a->npartitions && a->nnodes != b->nnodes) /* their node sets are of other Nodes */
        return false;
    for (int i = 0; i < a->npartitions; i++) {
        const config_partition_t *p = &a->partitions[i], *q = &b->partitions[i];
        if (strcmp(p->name, q->name) || p->is_default != q->is_default ||
            p->default_time != q->default_time || p->max_time != q->max_time ||
            p->max_nodes != q->max_nodes || p->tier != q->tier || p->state != q->state ||
            p->preempt != q->preempt ||
            memcmp(p->nodes, q->nodes, (size_t)a->nnodes * sizeof(bool)) ||
            !same_strs(p->accounts, p->naccounts, q->accounts, q->naccounts) ||
            !same_strs(p->groups, p->ngroups, q->groups, q->ngroups))
            return false;
    }
    return true;
}

void config_apply_changes(config_t *cur, config_t *fresh, config_changes_t *ch)
{
    *ch = (config_changes_t){0};
    if (!same_partitions(cur, fresh)) /* partitions.c reads them at a start */
        note(ch->restart, sizeof(ch->restart), &ch->nrestart, "Partition");
    for (int i = 0; i < NKEYS; i++) {
        const cfgkey_t *k = &keys[i];
        if (same_value(cur, fresh, k))
            continue;
        if (!k->live) {
            note(ch->restart, sizeof(ch->restart), &ch->nrestart, k->name);
            continue;
        }
        void *to = (char *)cur + k->off, *from = (char *)fresh + k->off;
        switch (k->type) {
        case T_INT:
        case T_ENUM:
        case T_FLAGS:
            memcpy(to, from, sizeof(int));
            break;
        case T_SEC:
        case T_SEC0:
        case T_WATTS:
            memcpy(to, from, sizeof(double));
            break;
        case T_STR: { /* swapped: fresh frees the old one */
            char *old = *(char **)to;
            *(char **)to = *(char **)from;
            *(char **)from = old;
            break;
        }
        case T_USERS: { /* swapped: fresh frees the old list */
            char **ops = cur->operators;
            int n = cur->noperators;
            cur->operators = fresh->operators;
            cur->noperators = fresh->noperators;
            fresh->operators = ops;
            fresh->noperators = n;
            break;
        }
        default: /* no other type is live */
            note(ch->restart, sizeof(ch->restart), &ch->nrestart, k->name);
            continue;
        }
        note(ch->applied, sizeof(ch->applied), &ch->napplied, k->name);
    }
}

int config_node_index(const config_t *cfg, const char *name)
{
    return cfg ? hostlist_index_find(cfg->node_index, name) : -1;
}

bool config_is_operator(const config_t *cfg, const char *user)
{
    if (!user)
        return false;
    if (strcmp(user, "root") == 0)
        return true;
    for (int i = 0; cfg && i < cfg->noperators; i++)
        if (strcmp(cfg->operators[i], user) == 0)
            return true;
    return false;
}

double config_lost_after(const config_t *cfg)
{
    double t = cfg->node_timeout / 2, hb = 1.25 * cfg->heartbeat_interval;
    t = hb > t ? hb : t;
    return t < cfg->node_timeout ? t : cfg->node_timeout;
}
