/* ductile submit: send a batch script to the controller. Options come from the
 * command line, from "#DUCTILE" lines and from "#SBATCH" lines at the top of the script
 * (directives.h says how they are read); the command line wins over #DUCTILE, which
 * wins over #SBATCH. Slurm's options that Ductile has no use for are refused by name,
 * never ignored (docs/slurm-users.md). */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "directives.h"
#include "featexpr.h"
#include "hostlist.h"
#include "nodeattr.h"
#include "sched.h"
#include "strparse.h"
#include "util.h"

extern char **environ;

const char *cmd_submit_banner = "Submitted job";

typedef struct sub {
    const char *name, *out, *err, *cons, *type, *chdir, *wrap, *export_;
    long nodes, minn, maxn;
    long ntasks, tpn, cpt; /* --ntasks, --ntasks-per-node, --cpus-per-task; 0: not given */
    /* the nodes it may use: --constraint, --gpus-per-node (or --gres=gpu:N), --mem (MiB),
     * --nodelist, --exclude; NULL, 0: not given */
    const char *features, *nodelist, *exclude;
    long gpus, mem;
    double time;
    double begin;       /* --begin, seconds since the epoch; 0: not given */
    const char *depend; /* --dependency */
    const char *account; /* --account */
    const char *partition; /* --partition "a,b" */
    const char *reservation; /* --reservation */
    long nice;          /* --nice */
    bool hold;          /* --hold */
    const char *array;  /* --array, as given */
    int warn_sig, warn_scope; /* --signal=[B:]SIG[@SECS] */
    long warn_secs;
    double pmin, pmax;  /* --power-min/--power-max, W per node; < 0: not given */
    double io;          /* --io-intensity, share of its run time in I/O, 0..1; < 0: not given */
    bool requeue, ckpt_agents, parsable, help;
    bool test_only; /* --test-only */
    bool set_nodes, set_time, range;
} sub_t;

enum { O_MIN = 256, O_MAX, O_CONS, O_MALL, O_MOLD, O_RIGID, O_EVOL, O_REQ, O_CONF, O_HELP,
       O_PMIN, O_PMAX, O_CKAG, O_IO, O_WRAP, O_PARSABLE, O_EXPORT, O_TPN, O_EXCL, O_NOREQ,
       O_SIGNAL, O_TEST, O_NICE, O_GPN, O_GRES, O_MEM, O_REFUSE, O_RESV };
static const char shortopts[] = "+:hN:t:J:o:e:D:n:c:Hb:d:a:A:C:w:x:p:";
static const struct option lopts[] = {
    {"nodes", required_argument, 0, 'N'},      {"time", required_argument, 0, 't'},
    {"job-name", required_argument, 0, 'J'},   {"output", required_argument, 0, 'o'},
    {"error", required_argument, 0, 'e'},      {"min-nodes", required_argument, 0, O_MIN},
    {"max-nodes", required_argument, 0, O_MAX}, {"node-constraint", required_argument, 0, O_CONS},
    {"malleable", no_argument, 0, O_MALL},     {"moldable", no_argument, 0, O_MOLD},
    {"rigid", no_argument, 0, O_RIGID},        {"evolving", no_argument, 0, O_EVOL},
    {"requeue", no_argument, 0, O_REQ},        {"conf", required_argument, 0, O_CONF},
    {"power-min", required_argument, 0, O_PMIN}, {"power-max", required_argument, 0, O_PMAX},
    {"checkpoint-agents", no_argument, 0, O_CKAG},
    {"io-intensity", required_argument, 0, O_IO},
    {"chdir", required_argument, 0, 'D'},      {"wrap", required_argument, 0, O_WRAP},
    {"parsable", no_argument, 0, O_PARSABLE},  {"export", required_argument, 0, O_EXPORT},
    {"ntasks", required_argument, 0, 'n'},     {"ntasks-per-node", required_argument, 0, O_TPN},
    {"cpus-per-task", required_argument, 0, 'c'}, {"exclusive", optional_argument, 0, O_EXCL},
    {"no-requeue", no_argument, 0, O_NOREQ},  {"hold", no_argument, 0, 'H'},
    {"begin", required_argument, 0, 'b'},     {"dependency", required_argument, 0, 'd'},
    {"array", required_argument, 0, 'a'},     {"signal", required_argument, 0, O_SIGNAL},
    {"test-only", no_argument, 0, O_TEST},    {"help", no_argument, 0, O_HELP},
    {"account", required_argument, 0, 'A'},   {"nice", optional_argument, 0, O_NICE},
    {"partition", required_argument, 0, 'p'},  {"reservation", required_argument, 0, O_RESV},
    {"constraint", required_argument, 0, 'C'}, {"gpus-per-node", required_argument, 0, O_GPN},
    {"gres", required_argument, 0, O_GRES},   {"mem", required_argument, 0, O_MEM},
    {"nodelist", required_argument, 0, 'w'},  {"exclude", required_argument, 0, 'x'},
    /* Slurm's --gpus (in all) would pass for an abbreviation of --gpus-per-node: refused
     * by its own name (an exact match wins over a prefix) */
    {"gpus", optional_argument, 0, O_REFUSE},
    {0, 0, 0, 0},
};

/* Slurm's options that scripts use and Ductile does not take, with what to do instead.
 * Any other option that is not above is refused too, as unknown. */
static const struct {
    const char *name;
    char letter;
    const char *why;
} slurm_only[] = {
    {"qos", 'q', "Ductile has no QOS: remove it"},
    {"mem-per-cpu", 0, "a job gets whole nodes: ask for the memory of a node with --mem"},
    {"mem-per-gpu", 0, "a job gets whole nodes: ask for the memory of a node with --mem"},
    {"gpus", 'G', "a job gets whole nodes: ask for the GPUs of a node with --gpus-per-node"},
    {"gpus-per-task", 0, "a job gets whole nodes: ask for the GPUs of a node with "
     "--gpus-per-node"},
    {"mail-type", 0, "Ductile sends no mail: remove it"},
    {"mail-user", 0, "Ductile sends no mail: remove it"},
    {"licenses", 'L', "Ductile has no licenses"},
    {"clusters", 'M', "one Ductile controller serves one cluster"},
};

/* How to name an option the parser refused: "--partition" or "-p"; *why: a reason for
 * Slurm's options (NULL for any other). */
static void refused_name(char **argv, int optind_, int optopt_, char *name, size_t len,
                         const char **why)
{
    *why = NULL;
    const char *w = argv[optind_ - 1];
    if (optopt_ && !(w[0] == '-' && w[1] == '-')) {
        snprintf(name, len, "-%c", optopt_);
        for (size_t k = 0; k < sizeof(slurm_only) / sizeof(slurm_only[0]); k++)
            if (slurm_only[k].letter == optopt_)
                *why = slurm_only[k].why;
        return;
    }
    size_t n = strcspn(w, "=");
    snprintf(name, len, "%.*s", (int)(n > 64 ? 64 : n), w);
    for (size_t k = 0; k < sizeof(slurm_only) / sizeof(slurm_only[0]); k++)
        if (n > 2 && !strncmp(w + 2, slurm_only[k].name, n - 2) && !slurm_only[k].name[n - 2])
            *why = slurm_only[k].why;
}

/* Strict: "0x2", "+2", "2.0" and " 2" are not node counts (strparse). */
static int parse_count(const char *where, const char *opt, const char *v, long *out)
{
    if (strparse_long(v, 1, 1L << 24, out) < 0)
        return cmd_fail("%s%s: '%s' is not a node count (1 to 16777216)", where, opt, v);
    return 0;
}

/* --nodes N, or a range MIN-MAX (Slurm's), which makes the job moldable unless it says
 * otherwise */
static int parse_nodes(sub_t *s, const char *where, const char *v)
{
    const char *dash = strchr(v, '-');
    s->set_nodes = true;
    if (!dash) {
        if (s->range) /* a single count after a range replaces it */
            s->minn = s->maxn = 0;
        s->range = false;
        return parse_count(where, "--nodes", v, &s->nodes);
    }
    char lo[32];
    long a, b;
    size_t n = (size_t)(dash - v);
    if (n >= sizeof(lo) || (snprintf(lo, sizeof(lo), "%.*s", (int)n, v), 0) ||
        strparse_long(lo, 1, 1L << 24, &a) < 0 || strparse_long(dash + 1, 1, 1L << 24, &b) < 0)
        return cmd_fail("%s--nodes: '%s' is not a node count or a range MIN-MAX (1 to "
                        "16777216)", where, v);
    if (a > b)
        return cmd_fail("%s--nodes: the range %s is empty (%ld is above %ld)", where, v, a, b);
    s->minn = a;
    s->maxn = b;
    s->range = a != b;
    s->nodes = a;
    return 0;
}

static int parse_tasks(const char *where, const char *opt, const char *v, long *out)
{
    if (strparse_long(v, 1, 1L << 24, out) < 0)
        return cmd_fail("%s%s: '%s' is not a count (1 to 16777216)", where, opt, v);
    return 0;
}

/* --begin as sbatch takes it: now+N[seconds|minutes|hours|days|weeks] (seconds by
 * default), HH:MM[:SS] (today, or tomorrow once past), midnight, noon, today, tomorrow,
 * YYYY-MM-DD[THH:MM[:SS]], or Ductile's +DURATION and seconds since the epoch. */
int cmd_parse_begin(const char *v, double *out)
{
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    if (!strncmp(v, "now+", 4)) {
        char *end;
        errno = 0;
        long long n = strtoll(v + 4, &end, 10);
        if (end == v + 4 || n < 0 || errno || v[4] == '+' || v[4] == '-')
            return -1;
        static const struct { const char *unit; long mul; } units[] = {
            {"", 1}, {"s", 1}, {"sec", 1}, {"secs", 1}, {"second", 1}, {"seconds", 1},
            {"m", 60}, {"min", 60}, {"mins", 60}, {"minute", 60}, {"minutes", 60},
            {"h", 3600}, {"hour", 3600}, {"hours", 3600}, {"d", 86400}, {"day", 86400},
            {"days", 86400}, {"w", 604800}, {"week", 604800}, {"weeks", 604800}};
        for (size_t k = 0; k < sizeof(units) / sizeof(units[0]); k++)
            if (!strcasecmp(end, units[k].unit) && n <= 100LL * 365 * 86400 / units[k].mul) {
                *out = (double)now + (double)n * (double)units[k].mul;
                return 0;
            }
        return -1;
    }
    int hh = -1, mm = 0, ss = 0, used = 0;
    if (!strcasecmp(v, "midnight") || !strcasecmp(v, "tomorrow"))
        hh = 24;
    else if (!strcasecmp(v, "noon"))
        hh = 12;
    else if (!strcasecmp(v, "today"))
        hh = 0;
    else if ((sscanf(v, "%2d:%2d:%2d%n", &hh, &mm, &ss, &used) == 3 && !v[used]) ||
             (ss = 0, sscanf(v, "%2d:%2d%n", &hh, &mm, &used) == 2 && !v[used])) {
        if (hh > 23 || mm > 59 || ss > 59 || hh < 0 || mm < 0 || ss < 0)
            return -1;
    } else {
        hh = -1;
    }
    if (hh >= 0) {
        tm.tm_hour = hh;
        tm.tm_min = mm;
        tm.tm_sec = ss;
        tm.tm_isdst = -1;
        time_t t = mktime(&tm);
        if (t < now && hh != 0 && strcasecmp(v, "today")) /* already past: tomorrow */
            t += 86400;
        *out = (double)(t < now ? now : t);
        return 0;
    }
    int y, mo, d;
    if (sscanf(v, "%4d-%2d-%2d%n", &y, &mo, &d, &used) == 3 && !v[used]) {
        char full[32];
        snprintf(full, sizeof(full), "%sT00:00", v);
        return strparse_time(full, (double)now, out) < 0 ? -1 : 0;
    }
    return strparse_time(v, (double)now, out) < 0 ? -1 : 0;
}

#define ARRAY_MAX_ELEMENTS 10000
#define ARRAY_MAX_INDEX 4000000
#define FAIL_NEG(...) (cmd_fail(__VA_ARGS__), -1) /* the message, and -1 */

static int cmp_int(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

/* --array as sbatch takes it: indices and ranges, "1-100", "0-30:10", "1,4,7-9", with
 * "%N" at the end for at most N running at once. The indices, each once, rising. */
static int array_parse(const char *v, json_t **out, long *max, const char *where)
{
    *max = 0;
    char buf[1024];
    if (!*v || strlen(v) >= sizeof(buf))
        return FAIL_NEG("%s--array: give indices such as 1-100, 0-30:10 or 1,4,7 (and %%N to "
                        "run at most N at once)", where);
    snprintf(buf, sizeof(buf), "%s", v);
    char *pct = strchr(buf, '%');
    if (pct) {
        *pct = '\0';
        if (strparse_long(pct + 1, 1, ARRAY_MAX_ELEMENTS, max) < 0)
            return FAIL_NEG("%s--array: '%%%s' is not a limit of elements running at once (1 "
                            "to %d)", where, pct + 1, ARRAY_MAX_ELEMENTS);
    }
    long *v2 = malloc((ARRAY_MAX_ELEMENTS + 1) * sizeof(long));
    size_t n = 0;
    char *save = NULL;
    int bad = !v2;
    for (char *t = strtok_r(buf, ",", &save); t && !bad; t = strtok_r(NULL, ",", &save)) {
        long a, b, step = 1;
        char *colon = strchr(t, ':'), *dash = strchr(t, '-');
        if (colon)
            *colon = '\0';
        if (dash)
            *dash = '\0';
        if (strparse_long(t, 0, ARRAY_MAX_INDEX, &a) < 0 ||
            (dash && strparse_long(dash + 1, 0, ARRAY_MAX_INDEX, &b) < 0) ||
            (colon && (!dash || strparse_long(colon + 1, 1, ARRAY_MAX_INDEX, &step) < 0))) {
            bad = 1;
            break;
        }
        if (!dash)
            b = a;
        if (b < a) {
            bad = 1;
            break;
        }
        for (long x = a; x <= b && !bad; x += step) {
            if (n >= ARRAY_MAX_ELEMENTS)
                bad = 2;
            else
                v2[n++] = x;
        }
    }
    if (!bad && !n)
        bad = 1;
    if (bad) {
        free(v2);
        if (bad == 2)
            return FAIL_NEG("%s--array: more than %d elements", where, ARRAY_MAX_ELEMENTS);
        return FAIL_NEG("%s--array: '%s' is not a list of indices (0 to %d: 1-100, 0-30:10, "
                        "1,4,7, and %%N to run at most N at once)", where, v, ARRAY_MAX_INDEX);
    }
    qsort(v2, n, sizeof(long), cmp_int);
    json_t *a = json_array();
    for (size_t k = 0; k < n; k++)
        if (!k || v2[k] != v2[k - 1])
            json_array_append_new(a, json_integer(v2[k]));
    free(v2);
    *out = a;
    return 0;
}

/* The options that restrict the job to some nodes (the controller checks them against
 * the nodes; here, their form). */
static int parse_selection(sub_t *s, int o, const char *arg, const char *where)
{
    char why[256];
    char **names = NULL;
    int n = 0, gpus;
    switch (o) {
    case 'C':
        if (featexpr_check(arg, why, sizeof(why)) < 0)
            return cmd_fail("%s--constraint %s: %s", where, arg, why);
        s->features = arg;
        return 0;
    case O_GPN:
        if (strparse_long(arg, 1, NODEATTR_GPUS_MAX, &s->gpus) < 0)
            return cmd_fail("%s--gpus-per-node: '%s' is not a count of GPUs (1 to %d)", where,
                            arg, NODEATTR_GPUS_MAX);
        return 0;
    case O_GRES:
        if (nodeattr_parse_gres(arg, &gpus) < 0)
            return cmd_fail("%s--gres: '%s' is not gpu:COUNT (GPUs are the only generic "
                            "resource)", where, arg);
        s->gpus = gpus;
        return 0;
    case O_MEM:
        if (strparse_memory(arg, INT_MAX, &s->mem) < 0)
            return cmd_fail("%s--mem: '%s' is not an amount of memory per node (MiB, or with K, "
                            "M, G or T: 4000, 64G)", where, arg);
        return 0;
    default: /* -w, -x: host lists, checked for their form */
        if (hostlist_expand(arg, &names, &n, why, sizeof(why)) < 0)
            return cmd_fail("%s--%s: %s", where, o == 'w' ? "nodelist" : "exclude", why);
        hostlist_free(names, n);
        if (o == 'w')
            s->nodelist = arg;
        else
            s->exclude = arg;
        return 0;
    }
}

#define NICE_MAX 10000000

/* "--nice 5 job.sh": --nice takes its value after '=' only, so 5 would be the script.
 * A number there (on the command line, one that names no file) was meant as the value:
 * said so, with its range when it is out of it. */
static int nice_value_apart(const char *word, const char *where, bool directive)
{
    const char *p = word + (*word == '-' || *word == '+');
    if (!*p || strspn(p, "0123456789") != strlen(p) || (!directive && access(word, F_OK) == 0))
        return 0;
    long v;
    if (strparse_long(word, -NICE_MAX, NICE_MAX, &v) < 0)
        return cmd_fail("%s--nice %s: out of range (-%d to %d); an option with an optional value "
                        "takes it after '=' (--nice=N)", where, word, NICE_MAX, NICE_MAX);
    return cmd_fail("%s--nice %s: an option with an optional value takes it after '=' "
                    "(--nice=%s)%s%s%s", where, word, word, directive ? "" : "; ",
                    directive ? "" : word, directive ? "" : " is not the script");
}

/* Applies one option; `where` names its origin for messages. */
static int apply(sub_t *s, int o, const char *arg, const char *where, const char **conf)
{
    switch (o) {
    case 'N': return parse_nodes(s, where, arg);
    case 't':
        s->set_time = true;
        if (cu_parse_limit(arg, &s->time) < 0)
            return cmd_fail("%s--time: '%s' is not a duration (" CU_LIMIT_FORMATS ")", where,
                            arg);
        return 0;
    case O_MIN: return parse_count(where, "--min-nodes", arg, &s->minn);
    case O_PMIN:
    case O_PMAX:
        if (strparse_decimal(arg, CONFIG_WATTS_MAX, o == O_PMIN ? &s->pmin : &s->pmax) < 0)
            return cmd_fail("%s--power-%s: '%s' is not a power in watts per node (e.g. 250 or "
                            "70.5)", where, o == O_PMIN ? "min" : "max", arg);
        return 0;
    case O_IO:
        /* a share, "0.4" or "1" (0: none known); not a percentage, not above 1 */
        if (strparse_decimal(arg, 1, &s->io) < 0)
            return cmd_fail("%s--io-intensity: '%s' is not a share between 0 and 1 (the part "
                            "of the job's run time spent in I/O)", where, arg);
        return 0;
    case O_MAX: return parse_count(where, "--max-nodes", arg, &s->maxn);
    case O_CONS: {
        sched_constraint_t c;
        if (sched_constraint_parse(arg, &c) < 0)
            return cmd_fail("%s--node-constraint: '%s' is not one of none, pof2, even, odd, "
                            "ncube, square", where, arg);
        s->cons = arg;
        return 0;
    }
    case O_SIGNAL: { /* [B:]SIG[@SECS]: SECS (60) before the time limit; B: the script */
        char buf[64];
        snprintf(buf, sizeof(buf), "%s", arg);
        char *v = buf, *at = strchr(buf, '@');
        s->warn_scope = 0;
        if ((v[0] == 'B' || v[0] == 'R') && v[1] == ':') {
            s->warn_scope = v[0] == 'B' ? 1 : 0;
            v += 2;
        }
        if (at)
            *at = '\0';
        s->warn_secs = 60;
        if ((at && strparse_long(at + 1, 0, 65535, &s->warn_secs) < 0) ||
            !(s->warn_sig = cu_signal_number(v)))
            return cmd_fail("%s--signal: '%s' is not [B:]SIGNAL[@SECONDS] (USR1@120: SIGUSR1 "
                            "two minutes before the time limit)", where, arg);
        return 0;
    }
    case 'H': s->hold = true; return 0;
    case 'p':
        if (!*arg || strlen(arg) > 256 || strparse_has_control(arg))
            return cmd_fail("%s--partition: give a partition's name, or several joined by "
                            "',' (ductile partitions lists them)", where);
        if (!arg[strspn(arg, ",")])
            return cmd_fail("%s--partition: '%s' names no partition: give a partition's name, "
                            "or several joined by ','", where, arg);
        if (arg[0] == ',' || strstr(arg, ",,") || arg[strlen(arg) - 1] == ',')
            return cmd_fail("%s--partition: '%s' has an empty name: join names by one ',' "
                            "(ductile partitions lists them)", where, arg);
        s->partition = arg;
        return 0;
    case O_RESV:
        if (!*arg || strlen(arg) > 64 || strparse_has_control(arg))
            return cmd_fail("%s--reservation: give a reservation's name (ductile reservation "
                            "list shows them)", where);
        s->reservation = arg;
        return 0;
    case 'A':
        if (!*arg || strlen(arg) > 64 || strparse_has_control(arg))
            return cmd_fail("%s--account: give an account's name (ductile account list shows "
                            "them)", where);
        s->account = arg;
        return 0;
    case O_NICE: /* sbatch's --nice alone lowers the priority by 100 */
        s->nice = 100;
        if (arg && strparse_long(arg, -NICE_MAX, NICE_MAX, &s->nice) < 0)
            return cmd_fail("%s--nice: '%s' is not a whole number from -%d to %d (a negative "
                            "one, a higher priority, is for operators)", where, arg, NICE_MAX,
                            NICE_MAX);
        return 0;
    case 'b':
        if (cmd_parse_begin(arg, &s->begin) < 0)
            return cmd_fail("%s--begin: '%s' is not a time (HH:MM[:SS], YYYY-MM-DD[THH:MM[:SS]], "
                            "now+N[seconds|minutes|hours|days|weeks], midnight, noon, "
                            "tomorrow)", where, arg);
        return 0;
    case 'a': {
        json_t *idx = NULL;
        long max;
        if (array_parse(arg, &idx, &max, where) < 0)
            return -1;
        json_decref(idx);
        s->array = arg;
        return 0;
    }
    case 'd':
        if (!*arg || strlen(arg) > 1024 || strparse_has_control(arg))
            return cmd_fail("%s--dependency: give conditions such as afterok:JOBID (at most "
                            "1024 characters)", where);
        s->depend = arg;
        return 0;
    case 'C':
    case O_GPN:
    case O_GRES:
    case O_MEM:
    case 'w':
    case 'x': return parse_selection(s, o, arg, where);
    case 'n': return parse_tasks(where, "--ntasks", arg, &s->ntasks);
    case O_TPN: return parse_tasks(where, "--ntasks-per-node", arg, &s->tpn);
    case 'c': return parse_tasks(where, "--cpus-per-task", arg, &s->cpt);
    case O_EXCL:
        /* every job has its nodes to itself; "user" or "mcs" would share them */
        if (arg && *arg)
            return cmd_fail("%s--exclusive=%s: nodes are never shared between jobs in "
                            "Ductile; give --exclusive alone (or not at all)", where, arg);
        return 0;
    case O_EXPORT:
        if (!*arg)
            return cmd_fail("%s--export: give ALL, NONE or a list of variables", where);
        s->export_ = arg;
        return 0;
    case O_MALL: s->type = "malleable"; return 0;
    case O_MOLD: s->type = "moldable"; return 0;
    case O_RIGID: s->type = "rigid"; return 0;
    case O_EVOL: s->type = "evolving"; return 0;
    case O_REQ: s->requeue = true; return 0;
    case O_NOREQ: s->requeue = false; return 0;
    case O_CKAG: s->ckpt_agents = true; return 0;
    case O_PARSABLE: s->parsable = true; return 0;
    case O_TEST: s->test_only = true; return 0;
    case O_CONF: *conf = arg; return 0;
    case 'J':
    case 'o':
    case 'e':
    case 'D':
    case O_WRAP:
        break;
    default: return cmd_fail("%sunknown option", where);
    }
    /* names, paths and commands: checked here for a clear message, and by the controller */
    static const char *const what[][2] = {{"job-name", "job name"}, {"output", "output path"},
                                          {"error", "error path"}, {"chdir", "directory"},
                                          {"wrap", "command"}};
    int k = o == 'J' ? 0 : o == 'o' ? 1 : o == 'e' ? 2 : o == 'D' ? 3 : 4;
    if (k < 4 && strparse_has_control(arg))
        return cmd_fail("%s--%s: the %s contains a control character (newline, tab, "
                        "escape...): not allowed", where, what[k][0], what[k][1]);
    if (!*arg)
        return cmd_fail("%s--%s: the %s is empty", where, what[k][0], what[k][1]);
    switch (o) {
    case 'J': s->name = arg; break;
    case 'o': s->out = arg; break;
    case 'e': s->err = arg; break;
    case 'D': s->chdir = arg; break;
    default: s->wrap = arg; break;
    }
    return 0;
}

/* Runs getopt over argv (argv[0] a name) and applies what it finds. Returns the index
 * of the first word that is not an option (argc: none), or -1 after a message. */
static int apply_all(sub_t *s, int argc, char **argv, const char *where, const char **conf,
                     bool directive)
{
    int o;
    bool nice_bare = false; /* the last option was --nice without '=' */
    opterr = 0;
    optind = 0; /* a new argv: getopt starts over */
    while ((o = getopt_long(argc, argv, shortopts, lopts, NULL)) != -1) {
        nice_bare = o == O_NICE && !optarg;
        char name[80];
        const char *why;
        if (o == ':')
            return cmd_fail("%soption '%s' needs a value", where, argv[optind - 1]), -1;
        if (o == '?' || o == O_REFUSE ||
            (directive && (o == O_HELP || o == 'h' || o == O_CONF || o == O_WRAP))) {
            if (o == '?' && optopt >= '0' && optopt <= '9') { /* --nice -10 */
                const char *num = "";
                for (int k = optind + 1 > argc ? argc : optind + 1; k > 0 && !*num; k--)
                    if (argv[k - 1][0] == '-' && argv[k - 1][1] == optopt)
                        num = argv[k - 1];
                return cmd_fail("%s%s: a number is not an option; an option with an optional "
                                "value takes it after '=' (--nice=-10)", where, num), -1;
            }
            refused_name(argv, optind, o == '?' ? optopt : 0, name, sizeof(name), &why);
            if (o != '?' && o != O_REFUSE)
                return cmd_fail("%s%s is for the command line, not the script", where, name), -1;
            if (why)
                return cmd_fail("%s%s: not supported by Ductile (%s)", where, name, why), -1;
            return cmd_fail("%s%s: not an option of ductile submit%s", where, name,
                            directive ? "" : " (try --help)"), -1;
        }
        if (o == O_HELP || o == 'h') {
            s->help = true;
            continue;
        }
        if (apply(s, o, optarg, where, conf))
            return -1;
    }
    if (nice_bare && optind < argc && nice_value_apart(argv[optind], where, directive))
        return -1;
    return optind;
}
static char *read_file(const char *path, size_t max, size_t *len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
    if (!f)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n > max)
            break;
        if (n == cap) {
            char *nb = realloc(buf, (cap *= 2) + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
            } else
                buf = nb;
        }
    }
    if (f != stdin)
        fclose(f);
    if (buf)
        buf[n] = '\0';
    *len = n;
    return buf;
}

/* The script's directives: every #SBATCH line, then every #DUCTILE line (which win). */
typedef struct scan {
    sub_t *s;
    const char *path;
    const char **conf;
    directive_kind_t kind; /* the lines this pass applies */
    char **keep;           /* values must outlive the scan */
    int nkeep, maxkeep;
} scan_t;

static int on_directive(directive_kind_t kind, int argc, char **argv, int line, void *arg)
{
    scan_t *x = arg;
    if (kind != x->kind)
        return 0;
    char where[512];
    snprintf(where, sizeof(where), "%.400s:%d: %s ", x->path, line, argv[0]);
    /* the words are the scanner's: keep the values the options point into */
    if (x->nkeep + argc > x->maxkeep)
        return cmd_fail("%.400s: more than %d words of directives", x->path, x->maxkeep);
    for (int k = 1; k < argc; k++)
        if (!(argv[k] = x->keep[x->nkeep++] = strdup(argv[k])))
            return cmd_fail("out of memory");
    int first = apply_all(x->s, argc, argv, where, x->conf, true);
    if (first < 0)
        return 1;
    if (first < argc)
        return cmd_fail("%s'%.60s' is not an option (a directive holds options only)", where,
                        argv[first]);
    return 0;
}

static int scan_directives(sub_t *s, const char *script, const char *path, const char **conf,
                           char **keep, int *nkeep, int maxkeep)
{
    scan_t x = {.s = s, .path = path, .conf = conf, .keep = keep, .maxkeep = maxkeep};
    char err[256];
    int late = 0;
    for (int pass = 0; pass < 2; pass++) {
        x.kind = pass ? DIRECTIVE_DUCTILE : DIRECTIVE_SBATCH;
        int rc = directives_scan(script, on_directive, &x, &late, err, sizeof(err));
        *nkeep = x.nkeep;
        if (rc < 0)
            return cmd_fail("%s: %s", path, err);
        if (rc)
            return rc;
    }
    if (late)
        fprintf(stderr, "ductile: warning: %s:%d: a directive after the first command is "
                "ignored (as sbatch does): move it up\n", path, late);
    return 0;
}

static bool utf8_ok(const char *s)
{
    json_t *t = json_string(s); /* NULL unless valid UTF-8 */
    json_decref(t);
    return t != NULL;
}

/* What would only fail at launch, said at submission: DOS line ends (the kernel looks
 * for an interpreter named "/bin/sh\r") and a #! interpreter that this host does not
 * have (the compute hosts are expected to have the same software). */
static int check_script(const char *script, const char *shown)
{
    const char *cr = strstr(script, "\r\n");
    if (cr) {
        int line = 1;
        for (const char *p = script; p < cr; p++)
            line += *p == '\n';
        return cmd_fail("%s has DOS line ends (\\r\\n, line %d): convert it first, with "
                        "dos2unix or sed -i 's/\\r$//'", shown, line);
    }
    if (strncmp(script, "#!", 2))
        return 0; /* run by /bin/sh */
    const char *p = script + 2;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t n = strcspn(p, " \t\n");
    if (!n)
        return cmd_fail("%s: its first line '#!' names no interpreter", shown);
    char path[4096];
    if (n >= sizeof(path))
        return cmd_fail("%s: the interpreter's path on its first line is too long", shown);
    memcpy(path, p, n);
    path[n] = '\0';
    if (path[0] == '/' && access(path, X_OK) < 0)
        return cmd_fail("%s: its interpreter %s (line 1) %s on this host", shown, path,
                        errno == ENOENT ? "does not exist" : "cannot be run");
    return 0;
}

/* --test-only's answer (sbatch prints it on standard error too). */
static void print_will_run(const json_t *rep)
{
    long n = (long)json_integer_value(json_object_get(rep, "nodes"));
    const char *waits = json_string_value(json_object_get(rep, "waits_for"));
    const json_t *st = json_object_get(rep, "start");
    if (waits) {
        fprintf(stderr, "ductile submit: the job would wait for its %s: no start to expect "
                        "until then (nothing submitted)\n", waits);
        return;
    }
    if (!json_is_number(st)) {
        fprintf(stderr, "ductile submit: the job would start on %ld node%s at a time not known: "
                        "the nodes it needs are held by jobs without a time limit, or are down "
                        "(nothing submitted)\n", n, n == 1 ? "" : "s");
        return;
    }
    char when[64];
    cu_fmt_time(json_number_value(st), when, sizeof(when));
    fprintf(stderr, "ductile submit: the job would start at %s on %ld node%s, if the jobs before "
                    "it run to their time limits (nothing submitted)\n", when, n,
            n == 1 ? "" : "s");
}

static void usage(void)
{
    printf("usage: ductile submit [options] [SCRIPT [ARGS...] | -]  (no SCRIPT: read it from\n"
           "       stdin; ARGS: the script's arguments, options go before SCRIPT)\n"
           "       ductile submit [options] --wrap COMMAND\n"
           "  -N, --nodes N | MIN-MAX   nodes (the start size); a range makes the job moldable\n"
           "                            (with --malleable: it starts at MIN and may grow to MAX)\n"
           "  -t, --time T              time limit: minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]],\n"
           "                            UNLIMITED, or 90s, 30m, 2h, 1d\n"
           "  -J, --job-name NAME\n"
           "  -o, --output FILE         stdout (%%j job id, %%x name, %%u user, %%N node), default\n"
           "                            ductile-%%j.out\n"
           "  -e, --error FILE          stderr, default: with stdout\n"
           "  -D, --chdir DIR           the directory the job runs in (default: this one)\n"
           "      --wrap COMMAND        the script is this shell command\n"
           "      --export ALL|NONE|VARS  the environment the job gets: all of this one\n"
           "                            (ALL, the default), none, or the variables named\n"
           "                            (NAME or NAME=value, comma-separated; ALL,... adds to all)\n"
           "  -n, --ntasks N, --ntasks-per-node N, -c, --cpus-per-task N\n"
           "                            without --nodes: as many nodes as the tasks need\n"
           "      --parsable            print the job id alone\n"
           "      --test-only           submit nothing: say when the job would start\n"
           "  -a, --array SPEC          a job array: 1-100, 0-30:10, 1,4,7; %%N: N at once\n"
           "      --signal [B:]SIG[@S]  SIG S seconds (60) before the time limit, to the job's\n"
           "                            steps (B: to its script alone)\n"
           "  -H, --hold                submit it held (ductile release lets it start)\n"
           "  -p, --partition P[,P...]  run it in one of these partitions (default: the\n"
           "                            cluster's default one; ductile partitions lists them)\n"
           "      --reservation NAME    run it in that reservation, on its nodes, once it begins\n"
           "  -A, --account NAME        run it under that account (one you are a member of;\n"
           "                            default: your default account)\n"
           "      --nice[=N]            lower its priority by N (100 without N); a negative N\n"
           "                            is for operators\n"
           "  -b, --begin TIME          not before TIME: HH:MM[:SS], YYYY-MM-DD[THH:MM[:SS]],\n"
           "                            now+N[minutes|hours|days] (seconds by default), midnight\n"
           "  -d, --dependency DEPS     after other jobs: afterok:ID[:ID...], afternotok:,\n"
           "                            afterany:, after: (once started), singleton; joined by\n"
           "                            ',' (all) or '?' (any)\n"
           "      --min-nodes N, --max-nodes N\n"
           "      --node-constraint C   none, pof2, even, odd, ncube, square\n"
           "      --rigid | --moldable | --malleable | --evolving\n"
           "      --requeue             requeue if a node fails (--no-requeue: do not)\n"
           "      --exclusive           accepted: nodes are never shared between jobs\n"
           "      --checkpoint-agents   checkpoints go through agents on the checkpoint\n"
           "                            nodes, kept until the job ends (docs/checkpointing.md)\n"
           "      --power-min W, --power-max W\n"
           "                            the power the job draws per node, in watts (the\n"
           "                            power corridor; default: its past runs, or DefaultJobPower)\n"
           "      --io-intensity F      the share of its run time the job spends in I/O,\n"
           "                            0 to 1 (the io-aware policy; default: none known)\n"
           "Choosing nodes (docs/user-guide.md):\n"
           "  -C, --constraint EXPR     node features: gpu, gpu&a100, a100|h100 (& before |)\n"
           "      --gpus-per-node N     nodes with N GPUs or more (also --gres=gpu:N)\n"
           "      --mem SIZE            nodes with SIZE memory or more (MiB; K, M, G, T)\n"
           "  -w, --nodelist HOSTS      these nodes must be in the job's allocation\n"
           "  -x, --exclude HOSTS       never these nodes\n"
           "Options may also be given in '#SBATCH' and '#DUCTILE' lines at the top of the\n"
           "script (docs/slurm-users.md); the command line wins over #DUCTILE, which wins over\n"
           "#SBATCH.\n");
}

/* The nodes --ntasks asks for, and whether its tasks fit the nodes. */
static int tasks_to_nodes(sub_t *s, int cores)
{
    long cpt = s->cpt ? s->cpt : 1;
    if (!s->ntasks && !s->tpn && !s->cpt)
        return 0;
    if (cores < 1)
        cores = 1;
    long per = s->tpn ? s->tpn : cores / cpt;
    if (per < 1 || per * cpt > cores)
        return cmd_fail("%ld task%s of %ld core%s on a node need %ld cores, and the nodes have "
                        "%d (CoresPerNode)", per < 1 ? 1 : per, per > 1 ? "s" : "", cpt,
                        cpt > 1 ? "s" : "", (per < 1 ? 1 : per) * cpt, cores);
    if (!s->ntasks)
        return 0;
    long need = (s->ntasks + per - 1) / per;
    if (!s->set_nodes) {
        s->nodes = need;
        return 0;
    }
    long most = s->range ? s->maxn : s->nodes;
    if (need > most)
        return cmd_fail("--ntasks=%ld needs %ld nodes (%ld task%s a node), more than --nodes "
                        "gives (%ld)", s->ntasks, need, per, per > 1 ? "s" : "", most);
    return 0;
}

/* Sets "K=V" in an environment array: replaces an entry of the same K, else appends. */
static void env_set(json_t *env, const char *kv)
{
    size_t k = strcspn(kv, "=");
    size_t i;
    json_t *e;
    json_array_foreach(env, i, e) {
        const char *s = json_string_value(e);
        if (s && !strncmp(s, kv, k) && s[k] == '=') {
            json_array_set_new(env, i, json_string(kv));
            return;
        }
    }
    json_array_append_new(env, json_string(kv));
}

static void env_setf(json_t *env, const char *key, long v)
{
    char kv[96];
    snprintf(kv, sizeof(kv), "%s=%ld", key, v);
    env_set(env, kv);
}

/* The job's environment, as --export says: ALL (default), NONE, or NAME[=value],... with
 * ALL among them to add to everything. Without ALL, only the variables named. With
 * SlurmEnvironment, what --ntasks and --cpus-per-task set in a Slurm job (sbatch puts
 * them in its environment too). */
static json_t *job_environment(const sub_t *s, bool slurm, const json_t *idx)
{
    const char *export_ = s->export_;
    json_t *env = json_array();
    if (!env)
        return NULL;
    bool all = !export_ || !strcasecmp(export_, "ALL");
    bool none = export_ && !strcasecmp(export_, "NONE");
    char *list = export_ && !all && !none ? strdup(export_) : NULL;
    char *save = NULL;
    for (char *t = list ? strtok_r(list, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save))
        if (!strcasecmp(t, "ALL"))
            all = true;
    free(list);
    if (all)
        for (char **e = environ; *e; e++)
            json_array_append_new(env, json_string(*e));
    list = export_ && !none && strcasecmp(export_, "ALL") ? strdup(export_) : NULL;
    for (char *t = list ? strtok_r(list, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
        if (!strcasecmp(t, "ALL") || !*t)
            continue;
        const char *v = getenv(t);
        char *kv = NULL;
        if (strchr(t, '='))
            env_set(env, t);
        else if (!all && v && asprintf(&kv, "%s=%s", t, v) > 0)
            env_set(env, kv);
        free(kv);
    }
    free(list);
    /* with --ntasks-per-node alone, Slurm's SLURM_NTASKS is that many on each node */
    long ntasks = s->ntasks ? s->ntasks : s->tpn && !s->range ? s->tpn * s->nodes : 0;
    if (slurm && ntasks) {
        env_setf(env, "SLURM_NTASKS", ntasks);
        env_setf(env, "SLURM_NPROCS", ntasks);
    }
    if (slurm && s->tpn)
        env_setf(env, "SLURM_NTASKS_PER_NODE", s->tpn);
    if (slurm && s->cpt)
        env_setf(env, "SLURM_CPUS_PER_TASK", s->cpt);
    if (s->warn_sig) { /* --signal: the batch node sets the timer (noded jobs.c) */
        char kv[64];
        snprintf(kv, sizeof(kv), "DUCTILE_SIGNAL_AT=%d:%ld:%d", s->warn_sig, s->warn_secs,
                 s->warn_scope);
        env_set(env, kv);
    }
    if (json_array_size(idx)) {
        size_t n = json_array_size(idx);
        long lo = (long)json_integer_value(json_array_get(idx, 0));
        long hi = (long)json_integer_value(json_array_get(idx, n - 1));
        env_setf(env, "DUCTILE_ARRAY_TASK_COUNT", (long)n);
        env_setf(env, "DUCTILE_ARRAY_TASK_MIN", lo);
        env_setf(env, "DUCTILE_ARRAY_TASK_MAX", hi);
        if (slurm) {
            env_setf(env, "SLURM_ARRAY_TASK_COUNT", (long)n);
            env_setf(env, "SLURM_ARRAY_TASK_MIN", lo);
            env_setf(env, "SLURM_ARRAY_TASK_MAX", hi);
        }
    }
    return env;
}

#define MAX_KEEP 512

/* The submission; with fixed (ductile alloc): that script, options alone on the command
 * line up to *first (the command alloc runs), and the job's id in *id, not printed. */
static int submit(int argc, char **argv, const char *fixed, long long *id_out, int *first_out)
{
    sub_t s = {.nodes = 1, .pmin = -1, .pmax = -1, .io = -1};
    sub_t pre = s;
    const char *conf = NULL;
    /* First the command line alone: --help, --conf, --wrap, and where the script is. */
    int first = apply_all(&pre, argc, argv, "", &conf, false);
    if (first < 0)
        return 1;
    if (pre.help) {
        usage();
        return 0;
    }
    if (fixed && (pre.wrap || pre.array || pre.test_only || pre.hold || pre.depend ||
                  pre.begin || pre.out || pre.err || pre.parsable))
        return cmd_fail("%s is not for an interactive allocation (submit a batch job)",
                        pre.wrap        ? "--wrap"
                        : pre.array     ? "--array"
                        : pre.test_only ? "--test-only"
                        : pre.hold      ? "--hold"
                        : pre.depend    ? "--dependency"
                        : pre.begin     ? "--begin"
                        : pre.out       ? "--output (the command's output is yours)"
                        : pre.err       ? "--error (the command's output is yours)"
                                        : "--parsable");
    if (first_out)
        *first_out = first;
    const char *script_path = fixed ? NULL : first < argc ? argv[first] : NULL;
    if (pre.wrap && script_path)
        return cmd_fail("submit: --wrap and a script '%s': give one or the other", script_path);
    /* what follows the script is its arguments, as with sbatch: `submit job.sh -N 2`
     * gives the script "-N" and "2" */
    for (int k = first + 1; k < argc && !fixed; k++)
        if (!utf8_ok(argv[k]))
            return cmd_fail("argument %d of the script is not valid UTF-8", k - first);
    if (!script_path && !pre.wrap && !fixed) {
        if (isatty(STDIN_FILENO))
            return cmd_fail("submit: no script given (a file, '-' for standard input, or "
                            "--wrap COMMAND; try --help)");
        script_path = "-";
    }
    config_t cfg = {0};
    if (cu_load_conf(conf, &cfg))
        return 1;
    size_t len = 0;
    char *script = NULL;
    const char *shown = script_path && strcmp(script_path, "-") ? script_path : "standard input";
    if (fixed) {
        script = strdup(fixed);
        len = script ? strlen(script) : 0;
        shown = "the allocation";
    } else if (pre.wrap) {
        if (asprintf(&script, "#!/bin/sh\n# made by ductile submit --wrap\n%s\n", pre.wrap) < 0)
            script = NULL;
        len = script ? strlen(script) : 0;
        shown = "--wrap";
    } else {
        script = read_file(script_path, (size_t)cfg.max_script_size, &len);
    }
    if (!script) {
        int e = errno;
        config_free(&cfg);
        return cmd_fail("cannot read %s: %s", shown, strerror(e));
    }
    char cwd[4096];
    char *keep[MAX_KEEP];
    int nkeep = 0;
    int bad = 0;
    if (len > (size_t)cfg.max_script_size)
        bad = cmd_fail("%s is larger than MaxScriptSize (%d bytes)", shown, cfg.max_script_size);
    else if (!len)
        bad = cmd_fail("%s is empty: no script", shown);
    else if (strlen(script) != len)
        bad = cmd_fail("%s contains a NUL byte: not a script", shown);
    else if (!pre.wrap && !fixed && check_script(script, shown))
        bad = 1;
    else if (!pre.wrap && !fixed && scan_directives(&s, script, strcmp(shown, "standard input") ? shown
                                                                                      : "stdin",
                                          &conf, keep, &nkeep, MAX_KEEP))
        bad = 1;
    /* the command line last: it wins */
    if (!bad && apply_all(&s, argc, argv, "", &conf, false) < 0)
        bad = 1;
    if (!bad && !getcwd(cwd, sizeof(cwd)))
        bad = cmd_fail("cannot read the current directory: %s", strerror(errno));
    if (!bad && s.chdir) {
        char dir[4096];
        int n = s.chdir[0] == '/' ? snprintf(dir, sizeof(dir), "%s", s.chdir)
                                  : snprintf(dir, sizeof(dir), "%s/%s", cwd, s.chdir);
        if (n < 0 || (size_t)n >= sizeof(dir))
            bad = cmd_fail("--chdir: the directory's path is too long");
        else
            memcpy(cwd, dir, (size_t)n + 1);
    }
    if (!bad && s.pmin >= 0 && s.pmax >= 0 && s.pmax < s.pmin)
        bad = cmd_fail("--power-max (%g W) is below --power-min (%g W)", s.pmax, s.pmin);
    if (!bad && s.range) {
        if (s.type && !strcmp(s.type, "rigid"))
            bad = cmd_fail("--nodes=%ld-%ld asks for a range, and a rigid job has one size",
                           s.minn, s.maxn);
        else if (!s.type)
            s.type = "moldable";
        /* a moldable job starts at the largest size there is room for; a malleable or
         * evolving one at the smallest, and grows */
        s.nodes = !strcmp(s.type ? s.type : "", "moldable") ? s.maxn : s.minn;
    }
    if (!bad && tasks_to_nodes(&s, cfg.cores_per_node))
        bad = 1;
    for (int k = 0; k < nkeep && bad; k++)
        free(keep[k]);
    if (bad) {
        free(script);
        config_free(&cfg);
        return 1;
    }
    const char *base = script_path ? strrchr(script_path, '/') : NULL;
    const char *name = s.name                        ? s.name
                       : fixed                       ? "interactive"
                       : s.wrap                      ? "wrap"
                       : !strcmp(script_path, "-")   ? "stdin"
                       : base                        ? base + 1
                                                     : script_path;
    const struct { const char *what, *v; } texts[] = {
        {"job name", name}, {"working directory", cwd}, {"output path", s.out},
        {"error path", s.err},
    };
    for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]); t++)
        if (texts[t].v && !utf8_ok(texts[t].v)) {
            free(script);
            config_free(&cfg);
            return cmd_fail("the %s is not valid UTF-8", texts[t].what);
        }
    json_t *aidx = NULL; /* --array's indices, parsed once here (checked when given) */
    long amax = 0;
    if (s.array)
        array_parse(s.array, &aidx, &amax, "");
    json_t *env = job_environment(&s, cfg.slurm_env, aidx);
    char key[72];
    if (!env || cu_submit_key(key, sizeof(key))) {
        free(script);
        json_decref(env);
        json_decref(aidx);
        config_free(&cfg);
        for (int k = 0; k < nkeep; k++)
            free(keep[k]);
        return env ? 1 : cmd_fail("out of memory");
    }
    json_t *req = json_pack("{s:s,s:s,s:s,s:s,s:I,s:f,s:b,s:o,s:s,s:s}", "type", "submit",
                            "key", key, "cwd", cwd, "name", name, "nodes",
                            (json_int_t)s.nodes, "time", s.time, "requeue", s.requeue, "env", env,
                            "job_type", s.type ? s.type : "rigid", "constraint",
                            s.cons ? s.cons : "none");
    if (req && s.ckpt_agents)
        json_object_set_new(req, "checkpoint_agents", json_true());
    if (req && s.hold)
        json_object_set_new(req, "hold", json_true());
    if (req && s.test_only)
        json_object_set_new(req, "test_only", json_true());
    if (req && s.begin > 0)
        json_object_set_new(req, "begin", json_real(s.begin));
    if (req && s.depend)
        json_object_set_new(req, "dependency", json_string(s.depend));
    if (req && s.account)
        json_object_set_new(req, "account", json_string(s.account));
    if (req && s.partition)
        json_object_set_new(req, "partition", json_string(s.partition));
    if (req && s.reservation)
        json_object_set_new(req, "reservation", json_string(s.reservation));
    if (req && s.nice)
        json_object_set_new(req, "nice", json_integer(s.nice));
    if (req) /* the job's files are created as this shell would create them */
        json_object_set_new(req, "umask", json_integer(cu_umask()));
    if (req && s.array) {
        json_object_set_new(req, "array", aidx ? json_incref(aidx) : json_array());
        if (amax)
            json_object_set_new(req, "array_max", json_integer(amax));
    }
    json_decref(aidx);
    if (req && first + 1 < argc && script_path) {
        json_t *args = json_array();
        for (int k = first + 1; k < argc; k++)
            json_array_append_new(args, json_string(argv[k]));
        json_object_set_new(req, "args", args);
    }
    /* the script's exact bytes: a string when it is UTF-8, base64 when not */
    int prc = req ? proto_set_bytes(req, "script", script) : -ENOMEM;
    free(script);
    if (prc < 0) {
        json_decref(req);
        config_free(&cfg);
        return cmd_fail("out of memory");
    }
    if (s.minn)
        json_object_set_new(req, "min_nodes", json_integer(s.minn));
    if (s.maxn)
        json_object_set_new(req, "max_nodes", json_integer(s.maxn));
    if (s.pmin >= 0 || s.pmax >= 0) /* one alone stands for both */
        json_object_set_new(req, "power", json_pack("[f,f]", s.pmin >= 0 ? s.pmin : s.pmax,
                                                     s.pmax >= 0 ? s.pmax : s.pmin));
    if (s.io >= 0)
        json_object_set_new(req, "io_intensity", json_real(s.io));
    if (s.features)
        json_object_set_new(req, "features", json_string(s.features));
    if (s.gpus)
        json_object_set_new(req, "gpus_per_node", json_integer(s.gpus));
    if (s.mem)
        json_object_set_new(req, "mem", json_integer(s.mem));
    if (s.nodelist)
        json_object_set_new(req, "req_nodelist", json_string(s.nodelist));
    if (s.exclude)
        json_object_set_new(req, "exc_nodelist", json_string(s.exclude));
    if (s.out || fixed) /* an allocation's script prints nothing */
        json_object_set_new(req, "stdout", json_string(s.out ? s.out : "/dev/null"));
    if (s.err)
        json_object_set_new(req, "stderr", json_string(s.err));
    json_t *rep = cu_call_retry(&cfg, req);
    config_free(&cfg);
    for (int k = 0; k < nkeep; k++)
        free(keep[k]);
    if (!rep)
        return 1;
    if (s.test_only) {
        print_will_run(rep);
        json_decref(rep);
        return 0;
    }
    long long id = (long long)json_integer_value(json_object_get(rep, "job"));
    if (id_out) {
        *id_out = id;
        json_decref(rep);
        return 0;
    }
    if (s.parsable)
        printf("%lld\n", id);
    else
        printf("%s %lld\n", cmd_submit_banner, id);
    json_decref(rep);
    return 0;
}

int cmd_submit(int argc, char **argv) { return submit(argc, argv, NULL, NULL, NULL); }

int cmd_submit_alloc(int argc, char **argv, const char *script, long long *id, int *first)
{
    return submit(argc, argv, script, id, first);
}
