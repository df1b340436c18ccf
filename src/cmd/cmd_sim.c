/* ductile sim: replay a workload through one or more policies in simulated time. */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "metrics.h"
#include "output.h"
#include "report.h"
#include "sim.h"
#include "workload.h"
#include "strparse.h"

#define MAXPOL 16

typedef struct opts {
    const char *workload;
    int nodes;
    int cores_per_node;
    char *policies[MAXPOL];
    int npolicies;
    double malleable;      /* < 0: not given */
    uint64_t seed;
    double interarrival;
    bool json, lenient, progress;
    const char *jobs_csv, *events_csv, *gantt;
    sim_reconf_t reconf;
    speedup_t speedup;
    bool force_speedup;
    /* power (docs/power.md) */
    sim_corridor_t corridor[32];
    int ncorridor;
    double idle_w, default_w;
    bool power;
    const char *power_csv, *power_svg;
    /* checkpoint service (docs/simulator.md, "Checkpoint nodes") */
    sim_ckpt_t ckpt;
    const char *ckpt_csv;
    /* failures (docs/simulator.md, "Failures") */
    const char *failures;
    double mtbf, downtime, ckpt_every, ckpt_cost;
    /* the file system of jobs with I/O phases (docs/simulator.md) */
    sim_pfs_t pfs;
    /* multifactor priority and fair share (docs/simulator.md, "Fair share") */
    sched_prio_config_t prio;
    bool priority, per_user;
    sim_resv_t resv[16]; /* --reservation */
    int nresv;
    char resv_text[512]; /* as given, "2h,6h,64 5h,1h,2" */
} opts_t;

static void help(FILE *f)
{
    fprintf(f,
        "usage: ductile sim --workload FILE.swf|FILE.json|esp|io-peaks[:N] [options]\n"
        "\n"
        "  --workload W         SWF trace, JSON job list, 'esp' (the ESP benchmark mix) or\n"
        "                       'io-peaks[:N]' (seed 003's N jobs with I/O peaks, 4000)\n"
        "  --nodes N            cluster size (default: from the workload; esp: 32;\n"
        "                       io-peaks: 500)\n"
        "  --cores-per-node C   SWF processors per node (default 1)\n"
        "  --policy P[,P...]    policies to compare (default fcfs); parameters follow the\n"
        "                       name: perf:lower=0.2:upper=0.6\n"
        "  --malleable F        make a share F (0..1) of the jobs malleable\n"
        "  --seed S             seed for everything random (default 1)\n"
        "  --interarrival S     esp: seconds between submissions; io-peaks: their mean\n"
        "                       (default 30)\n"
        "  --speedup MODEL      speedup of jobs without one: linear, amdahl:F, power:A,\n"
        "                       downey:A:SIGMA (default amdahl:0.01)\n"
        "  --force-speedup      use --speedup for every job\n"
        "  --reconf EF,EP,SF,SP resize cost: expand fixed,per-node, shrink fixed,per-node [s]\n"
        "                       (default 0.026,0.084,0,0.14 from seed 000 §7.5)\n"
        "  --lenient            skip malformed SWF lines instead of failing\n"
        "  --json               print the results as JSON\n"
        "  --jobs-csv FILE      one row per job\n"
        "  --events-csv FILE    one row per allocation change\n"
        "  --gantt FILE.svg     nodes by time, one colour per job\n"
        "  --no-progress        never draw the progress bar\n"
        "  --corridor L-U[,L-U@T]...  a power corridor in W, changing at T seconds from the\n"
        "                       workload's start: 1700-2500,1000-1700@550,2500-3500@800\n"
        "  --idle-power W       an idle node's draw (default 71, seed 002 §9.2.4)\n"
        "  --default-power W    per node of a job that declares no power (default 200)\n"
        "  --power-csv FILE     the draw after every change: t,watts,lower,upper\n"
        "  --power-svg FILE     the draw over time against the corridor, outside in red\n"
        "  --ckpt-nodes K       a checkpoint service holding K nodes from the start\n"
        "  --ckpt-favor icheck|app  how requests are answered: shrink malleable jobs for a\n"
        "                       HIGH request (icheck, Alg. 10, default) or idle nodes only\n"
        "                       and reclaim empty checkpoint nodes (app, Alg. 11)\n"
        "  --ckpt-node-mem MB   memory of a checkpoint node (default 65536)\n"
        "  --ckpt-mb-per-node MB  checkpoint data per node of a job without ckpt_mb\n"
        "                       (default 1024)\n"
        "  --ckpt-csv FILE      the service after every change: t,nodes,used_mb\n"
        "  --failures FILE      node failures from a trace: TIME NODE DOWN_SECONDS per line\n"
        "                       (nodes numbered from 0, as in --events-csv)\n"
        "  --mtbf S             node failures drawn at random (--seed): each node fails\n"
        "                       on average once every S seconds\n"
        "  --downtime S         how long a drawn failure keeps its node down (default 3600);\n"
        "                       --failures and --mtbf may be combined\n"
        "  --checkpoint-every S  jobs without checkpoint_every of their own checkpoint after\n"
        "                       every S seconds of work; a failed job restarts from its last\n"
        "                       checkpoint (default: none, it starts over)\n"
        "  --checkpoint-cost S  seconds each of those checkpoints takes (default 0)\n"
        "  --pfs LINK,TOTAL     the file system jobs with I/O phases write to: GB/s of one\n"
        "                       node's link, GB/s of all nodes together, shared equally\n"
        "                       among the nodes writing (default 12.5,48, seed 003 §4.2.5)\n"
        "  --priority K=V[,K=V]...  multifactor priority and fair share (accounts: SWF\n"
        "                       group + 1, JSON 'account'): weights fairshare, age, size\n"
        "                       (default 0); maxage, halflife, calc in seconds or with a\n"
        "                       unit s/m/h/d (default 7d, 7d, 300): fairshare=1000,age=100\n"
        "  --reservation START,DURATION,NODES  NODES set apart from START for DURATION\n"
        "                       (seconds, or 90s, 30m, 2h, 7d): no job runs on them then,\n"
        "                       nor starts on them unless it ends before; up to 16\n"
        "  --per-user           wait time per user (and account) below the table\n"
        "\n"
        "With several policies the CSV and SVG names get the policy inserted before the\n"
        "extension (jobs.csv -> jobs.easy.csv).\n\npolicies:\n");
    const char *sum;
    for (int i = 0; sched_policy_name_at(i, &sum); i++) {
        fprintf(f, "  %-13s %s\n", sched_policy_name_at(i, NULL), sum);
        const char *pn, *ph;
        double def;
        for (int k = 0; sched_policy_params_at(i, k, &pn, &def, &ph) == 0; k++)
            fprintf(f, "  %13s   %s=%g: %s\n", "", pn, def, ph);
    }
    fprintf(f, "  every policy also takes tick=S: a scheduling pass every S seconds\n");
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || strpbrk(s, "xX"))
        return -1; /* no inf, nan or hexadecimal */
    *out = v;
    return 0;
}

static int parse_int(const char *s, long lo, long hi, long *out)
{
    return strparse_long(s, lo, hi, out) < 0 ? -1 : 0;
}

/* --corridor L-U[,L-U@T]...: the first applies from the start unless it has @T */
static int parse_corridor(const char *arg, opts_t *o)
{
    char buf[1024];
    if (strlen(arg) >= sizeof(buf))
        return -cmd_fail("--corridor: too long");
    strcpy(buf, arg);
    o->ncorridor = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->ncorridor == 32)
            return -cmd_fail("--corridor: at most 32 changes");
        sim_corridor_t *k = &o->corridor[o->ncorridor];
        char *at = strchr(t, '@'), *dash = strchr(t, '-');
        if (at)
            *at = '\0';
        if (!dash || (at && dash > at))
            return -cmd_fail("--corridor: '%s' is not LOWER-UPPER[@SECONDS]", t);
        *dash = '\0';
        k->t = 0;
        if (parse_double(t, &k->lower) < 0 || parse_double(dash + 1, &k->upper) < 0 ||
            k->lower < 0 || k->upper < k->lower)
            return -cmd_fail("--corridor: '%s-%s' is not a range of W with lower <= upper", t,
                             dash + 1);
        if (at && (parse_double(at + 1, &k->t) < 0 || k->t < 0))
            return -cmd_fail("--corridor: '@%s' is not a time in seconds", at + 1);
        if (!at && o->ncorridor > 0)
            return -cmd_fail("--corridor: every change after the first needs @SECONDS");
        if (o->ncorridor > 0 && k->t <= o->corridor[o->ncorridor - 1].t)
            return -cmd_fail("--corridor: the changes must come in time order");
        o->ncorridor++;
    }
    if (!o->ncorridor)
        return -cmd_fail("--corridor: empty");
    return 0;
}

/* A time: seconds, or with a unit (90s, 30m, 2h, 7d). */
static int parse_time_value(const char *v, double *out)
{
    size_t len = v ? strlen(v) : 0;
    if (!len)
        return -1;
    return strchr("smhd", v[len - 1]) ? strparse_duration(v, out)
                                      : strparse_decimal(v, STRPARSE_DURATION_MAX, out);
}

/* --priority K=V,...: the keys name the controller's settings (PriorityWeightFairshare,
 * PriorityWeightAge, PriorityWeightJobSize, PriorityMaxAge, PriorityDecayHalfLife,
 * PriorityCalcPeriod); times are seconds, as there, unless a unit follows. */
static int parse_priority(const char *arg, sched_prio_config_t *pc)
{
    static const struct {
        const char *key;
        size_t off;
        bool time;
    } keys[] = {
        {"fairshare", offsetof(sched_prio_config_t, w_fairshare), false},
        {"age", offsetof(sched_prio_config_t, w_age), false},
        {"size", offsetof(sched_prio_config_t, w_size), false},
        {"maxage", offsetof(sched_prio_config_t, max_age), true},
        {"halflife", offsetof(sched_prio_config_t, half_life), true},
        {"calc", offsetof(sched_prio_config_t, calc_period), true},
    };
    char buf[512];
    if (strlen(arg) >= sizeof(buf))
        return -cmd_fail("--priority: too long");
    strcpy(buf, arg);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        size_t k = 0;
        if (eq)
            *eq = '\0';
        while (k < sizeof(keys) / sizeof(keys[0]) && strcmp(keys[k].key, t))
            k++;
        if (!eq || k == sizeof(keys) / sizeof(keys[0])) {
            if (eq)
                *eq = '='; /* the whole item in the message */
            return -cmd_fail("--priority: '%s' is not KEY=VALUE with a key among fairshare, "
                             "age, size, maxage, halflife, calc", t);
        }
        const char *v = eq + 1;
        double *dst = (double *)((char *)pc + keys[k].off), x;
        int rc = !keys[k].time ? strparse_decimal(v, 1e9, &x) : parse_time_value(v, &x);
        if (rc < 0)
            return -cmd_fail("--priority: '%s=%s' is not %s", t, v,
                             keys[k].time ? "a time (seconds, or 90s, 30m, 2h, 7d)"
                                          : "a weight from 0 to 1e9");
        *dst = x;
    }
    return 0;
}

/* The checkpoint options, in the order of their O_CK* codes. */
static int parse_ckpt_opt(int which, const char *arg, opts_t *o)
{
    long v;
    double mb;
    switch (which) {
    case 0:
        if (parse_int(arg, 1, 1 << 24, &v) < 0)
            return -cmd_fail("--ckpt-nodes: '%s' is not a node count (>= 1)", arg);
        o->ckpt.nodes = (int)v;
        return 0;
    case 1:
        if (strcmp(arg, "icheck") && strcmp(arg, "app"))
            return -cmd_fail("--ckpt-favor: '%s' is neither icheck nor app", arg);
        o->ckpt.favor = strcmp(arg, "app") ? CKPT_FAVOR_ICHECK : CKPT_FAVOR_APP;
        return 0;
    case 4:
        o->ckpt_csv = arg;
        return 0;
    }
    if (parse_double(arg, &mb) < 0 || mb < 0 || (which == 2 && mb == 0))
        return -cmd_fail("--%s: '%s' is not a size in MB (%s)",
                         which == 2 ? "ckpt-node-mem" : "ckpt-mb-per-node", arg,
                         which == 2 ? "> 0" : ">= 0");
    *(which == 2 ? &o->ckpt.node_mem_mb : &o->ckpt.mb_per_node) = mb;
    return 0;
}

static int parse_args(int argc, char **argv, opts_t *o)
{
    enum { O_CPN = 256, O_INTER, O_SPEEDUP, O_FORCE, O_RECONF, O_LENIENT, O_JSON, O_JOBS,
           O_EVENTS, O_GANTT, O_NOPROG, O_HELP, O_CORRIDOR, O_IDLEW, O_DEFW, O_PCSV,
           O_PSVG, O_CKN, O_CKF, O_CKMEM, O_CKMB, O_CKCSV, O_FAILS, O_MTBF, O_DOWN, O_CKEVERY, O_CKCOST,
           O_PFS, O_PRIO, O_PERUSER, O_RESV };
    static const struct option lopts[] = {
        {"workload", required_argument, 0, 'w'},
        {"nodes", required_argument, 0, 'N'},
        {"cores-per-node", required_argument, 0, O_CPN},
        {"policy", required_argument, 0, 'p'},
        {"malleable", required_argument, 0, 'm'},
        {"seed", required_argument, 0, 's'},
        {"interarrival", required_argument, 0, O_INTER},
        {"speedup", required_argument, 0, O_SPEEDUP},
        {"force-speedup", no_argument, 0, O_FORCE},
        {"reconf", required_argument, 0, O_RECONF},
        {"lenient", no_argument, 0, O_LENIENT},
        {"json", no_argument, 0, O_JSON},
        {"jobs-csv", required_argument, 0, O_JOBS},
        {"events-csv", required_argument, 0, O_EVENTS},
        {"gantt", required_argument, 0, O_GANTT},
        {"no-progress", no_argument, 0, O_NOPROG},
        {"help", no_argument, 0, O_HELP},
        {"corridor", required_argument, 0, O_CORRIDOR},
        {"idle-power", required_argument, 0, O_IDLEW},
        {"default-power", required_argument, 0, O_DEFW},
        {"power-csv", required_argument, 0, O_PCSV},
        {"power-svg", required_argument, 0, O_PSVG},
        {"ckpt-nodes", required_argument, 0, O_CKN},
        {"ckpt-favor", required_argument, 0, O_CKF},
        {"ckpt-node-mem", required_argument, 0, O_CKMEM},
        {"ckpt-mb-per-node", required_argument, 0, O_CKMB},
        {"ckpt-csv", required_argument, 0, O_CKCSV},
        {"failures", required_argument, 0, O_FAILS},
        {"mtbf", required_argument, 0, O_MTBF},
        {"downtime", required_argument, 0, O_DOWN},
        {"checkpoint-every", required_argument, 0, O_CKEVERY},
        {"checkpoint-cost", required_argument, 0, O_CKCOST},
        {"pfs", required_argument, 0, O_PFS},
        {"priority", required_argument, 0, O_PRIO},
        {"reservation", required_argument, 0, O_RESV},
        {"per-user", no_argument, 0, O_PERUSER},
        {0, 0, 0, 0},
    };
    static char polbuf[1024];
    long v;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":w:N:p:m:s:", lopts, NULL)) != -1) {
        switch (c) {
        case 'w':
            o->workload = optarg;
            break;
        case 'N':
            if (parse_int(optarg, 1, 1 << 24, &v) < 0)
                return cmd_fail("--nodes: '%s' is not a node count (1..16777216)", optarg);
            o->nodes = (int)v;
            break;
        case O_CPN:
            if (parse_int(optarg, 1, 1 << 20, &v) < 0)
                return cmd_fail("--cores-per-node: '%s' is not a positive integer", optarg);
            o->cores_per_node = (int)v;
            break;
        case 'p': {
            if (strlen(optarg) >= sizeof(polbuf))
                return cmd_fail("--policy: list too long");
            strcpy(polbuf, optarg);
            o->npolicies = 0;
            char *save = NULL;
            for (char *t = strtok_r(polbuf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                if (o->npolicies == MAXPOL)
                    return cmd_fail("--policy: at most %d policies", MAXPOL);
                o->policies[o->npolicies++] = t;
            }
            if (!o->npolicies)
                return cmd_fail("--policy: empty list");
            break;
        }
        case 'm':
            if (parse_double(optarg, &o->malleable) < 0 || o->malleable < 0 || o->malleable > 1)
                return cmd_fail("--malleable: '%s' is not a share between 0 and 1", optarg);
            break;
        case 's': {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(optarg, &end, 10);
            if (errno || end == optarg || *end || optarg[0] == '-')
                return cmd_fail("--seed: '%s' is not a non-negative integer", optarg);
            o->seed = s;
            break;
        }
        case O_INTER:
            if (parse_double(optarg, &o->interarrival) < 0 || o->interarrival < 0)
                return cmd_fail("--interarrival: '%s' is not a non-negative number", optarg);
            break;
        case O_SPEEDUP: {
            char err[256];
            if (speedup_parse(optarg, &o->speedup, err, sizeof(err)) < 0)
                return cmd_fail("--speedup: %s", err);
            break;
        }
        case O_FORCE:
            o->force_speedup = true;
            break;
        case O_RECONF: {
            double x[4];
            if (sscanf(optarg, "%lf,%lf,%lf,%lf", &x[0], &x[1], &x[2], &x[3]) != 4 || x[0] < 0 ||
                x[1] < 0 || x[2] < 0 || x[3] < 0)
                return cmd_fail("--reconf: expected four non-negative numbers EF,EP,SF,SP");
            o->reconf = (sim_reconf_t){x[0], x[1], x[2], x[3]};
            break;
        }
        case O_LENIENT:
            o->lenient = true;
            break;
        case O_JSON:
            o->json = true;
            break;
        case O_JOBS:
            o->jobs_csv = optarg;
            break;
        case O_EVENTS:
            o->events_csv = optarg;
            break;
        case O_GANTT:
            o->gantt = optarg;
            break;
        case O_NOPROG:
            o->progress = false;
            break;
        case O_HELP:
            help(stdout);
            exit(0);
        case O_CORRIDOR:
            if (parse_corridor(optarg, o) < 0)
                return 1;
            o->power = true;
            break;
        case O_IDLEW:
        case O_DEFW: {
            double w;
            if (parse_double(optarg, &w) < 0 || w < 0)
                return cmd_fail("--%s: '%s' is not a power in W (>= 0)",
                                c == O_IDLEW ? "idle-power" : "default-power", optarg);
            *(c == O_IDLEW ? &o->idle_w : &o->default_w) = w;
            o->power = true;
            break;
        }
        case O_PCSV:
            o->power_csv = optarg;
            o->power = true;
            break;
        case O_PSVG:
            o->power_svg = optarg;
            break;
        case O_CKN:
        case O_CKF:
        case O_CKMEM:
        case O_CKMB:
        case O_CKCSV:
            if (parse_ckpt_opt(c - O_CKN, optarg, o) < 0)
                return 1;
            break;
        case O_FAILS:
            o->failures = optarg;
            break;
        case O_MTBF:
        case O_DOWN: {
            double x;
            if (parse_double(optarg, &x) < 0 || !(x > 0))
                return cmd_fail("--%s: '%s' is not a time in seconds (> 0)",
                                c == O_MTBF ? "mtbf" : "downtime", optarg);
            *(c == O_MTBF ? &o->mtbf : &o->downtime) = x;
            break;
        }
        case O_CKEVERY:
        case O_CKCOST: {
            double x;
            if (parse_double(optarg, &x) < 0 || x < 0 || (c == O_CKEVERY && x < 0.001))
                return cmd_fail("--%s: '%s' is not a time in seconds (%s)",
                                c == O_CKEVERY ? "checkpoint-every" : "checkpoint-cost", optarg,
                                c == O_CKEVERY ? ">= 0.001" : ">= 0");
            *(c == O_CKEVERY ? &o->ckpt_every : &o->ckpt_cost) = x;
            break;
        }
        case O_PFS: {
            char link[64];
            const char *comma = strchr(optarg, ',');
            size_t ll = comma ? (size_t)(comma - optarg) : 0;
            if (ll < sizeof(link)) {
                memcpy(link, optarg, ll);
                link[ll] = '\0';
            }
            if (!comma || ll >= sizeof(link) || parse_double(link, &o->pfs.link_gbs) < 0 ||
                parse_double(comma + 1, &o->pfs.total_gbs) < 0 || !(o->pfs.link_gbs > 0) ||
                !(o->pfs.total_gbs > 0)) {
                return cmd_fail("--pfs: '%s' is not LINK,TOTAL: two rates in GB/s (> 0), one "
                                "node's and all nodes' together, e.g. 12.5,48", optarg);
            }
            break;
        }
        case O_PRIO:
            if (parse_priority(optarg, &o->prio) < 0)
                return 1;
            o->priority = true;
            break;
        case O_PERUSER:
            o->per_user = true;
            break;
        case O_RESV: {
            char buf[128], *a, *b, *cn, *save = NULL;
            snprintf(buf, sizeof(buf), "%s", optarg);
            a = strtok_r(buf, ",", &save);
            b = a ? strtok_r(NULL, ",", &save) : NULL;
            cn = b ? strtok_r(NULL, ",", &save) : NULL;
            sim_resv_t r = {0};
            long n = 0;
            if (o->nresv >= 16)
                return cmd_fail("--reservation: at most 16");
            if (!cn || strtok_r(NULL, ",", &save) || parse_time_value(a, &r.start) < 0 ||
                parse_time_value(b, &r.duration) < 0 || !(r.duration > 0) ||
                strparse_long(cn, 1, 1L << 24, &n) < 0)
                return cmd_fail("--reservation: '%s' is not START,DURATION,NODES (seconds, or "
                                "with a unit: 90s, 30m, 2h, 7d; e.g. 2h,30m,16)", optarg);
            r.nodes = (int)n;
            o->resv[o->nresv++] = r;
            size_t at = strlen(o->resv_text);
            snprintf(o->resv_text + at, sizeof(o->resv_text) - at, "%s%s", at ? " " : "",
                     optarg);
            break;
        }
        case ':':
            return cmd_fail("sim: option '%s' needs a value (try 'ductile sim --help')",
                            argv[optind - 1]);
        default:
            return cmd_fail("sim: unknown option '%s' (try 'ductile sim --help')",
                            argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cmd_fail("sim: unexpected argument '%s'", argv[optind]);
    if (!o->workload)
        return cmd_fail("sim: --workload is required (a .swf or .json file, or 'esp')");
    if (o->downtime > 0 && !(o->mtbf > 0))
        return cmd_fail("--downtime applies to failures drawn with --mtbf, and there is no "
                        "--mtbf (a --failures trace gives each failure's own down time)");
    if ((o->ckpt_every > 0 || o->ckpt_cost > 0) && !o->failures && !(o->mtbf > 0))
        return cmd_fail("--checkpoint-every and --checkpoint-cost shorten what a node failure "
                        "costs, and there are no failures: add --failures FILE or --mtbf S");
    if (o->ckpt_cost > 0 && !(o->ckpt_every > 0))
        return cmd_fail("--checkpoint-cost needs --checkpoint-every (how often the jobs "
                        "checkpoint)");
    if (o->ckpt_csv && !o->ckpt.nodes)
        return cmd_fail("--ckpt-csv follows the checkpoint service, and there is none: add "
                        "--ckpt-nodes K");
    if (o->power_svg && !o->ncorridor)
        return cmd_fail("--power-svg draws the cluster's power draw against a power corridor, "
                        "and none was given: add --corridor LOWER-UPPER (in W; "
                        "'ductile sim --help')");
    return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static int load(opts_t *o, workload_t *wl, char *err, size_t errlen)
{
    if (!strcmp(o->workload, "esp")) {
        if (!o->nodes)
            o->nodes = 32;
        wl_esp_opts_t e = {.nodes = o->nodes, .malleable = o->malleable < 0 ? 0 : o->malleable,
                           .seed = o->seed, .interarrival = o->interarrival};
        return wl_gen_esp(&e, wl, err, errlen);
    }
    if (!strncmp(o->workload, "io-peaks", 8) && (!o->workload[8] || o->workload[8] == ':')) {
        long n = 4000;
        if (o->workload[8] && parse_int(o->workload + 9, 1, 10000000, &n) < 0)
            return snprintf(err, errlen, "--workload io-peaks:N: '%s' is not a number of jobs "
                            "(1 to 10000000)", o->workload + 9), -EINVAL;
        if (!o->nodes)
            o->nodes = 500;
        if (o->malleable < 0)
            o->malleable = 0.2; /* the seed's share, shown in the report */
        wl_iopeaks_opts_t p = {.njobs = (size_t)n, .nodes = o->nodes,
                               .malleable = o->malleable,
                               .seed = o->seed, .interarrival = o->interarrival};
        return wl_gen_iopeaks(&p, wl, err, errlen);
    }
    int rc;
    if (ends_with(o->workload, ".json")) {
        rc = wl_load_json(o->workload, wl, err, errlen);
    } else {
        wl_swf_opts_t s = {.nodes = o->nodes, .cores_per_node = o->cores_per_node,
                           .lenient = o->lenient};
        rc = wl_load_swf(o->workload, &s, wl, err, errlen);
    }
    if (rc < 0)
        return rc;
    if (!o->nodes)
        o->nodes = wl->machine_nodes;
    if (!o->nodes) {
        snprintf(err, errlen, "%s does not state the cluster size: give --nodes", o->workload);
        return -EINVAL;
    }
    if (o->malleable > 0)
        return wl_make_malleable(wl, o->malleable, o->seed, o->nodes, err, errlen);
    return 0;
}

/* "out/jobs.csv" + "easy" -> "out/jobs.easy.csv" (only when several policies run). */
static void per_policy_path(const char *path, const char *policy, bool several, char *buf,
                            size_t len)
{
    if (!several) {
        snprintf(buf, len, "%s", path);
        return;
    }
    char pol[128];
    size_t k = 0;
    for (const char *p = policy; *p && k + 1 < sizeof(pol); p++)
        pol[k++] = (char)((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                                  (*p >= '0' && *p <= '9') || *p == '-' || *p == '.'
                              ? *p
                              : '_');
    pol[k] = '\0';
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash) || dot == (slash ? slash + 1 : path))
        snprintf(buf, len, "%s.%s", path, pol);
    else
        snprintf(buf, len, "%.*s.%s%s", (int)(dot - path), path, pol, dot);
}

typedef struct sinks {
    events_csv_t *events;
    gantt_t *gantt;
    FILE *pcsv;
    power_chart_t *pchart;
    FILE *ckcsv;
} sinks_t;

static void on_ckpt(void *arg, double t, int nodes, double used_mb)
{
    sinks_t *k = arg;
    char buf[32];
    fprintf(k->ckcsv, "%s,%d,%.0f\n", fmt_time(t, buf, sizeof(buf)), nodes, used_mb);
}

/* --ckpt-csv for one policy's run; 0 or the command's failure status. */
static int open_ckpt_csv(const opts_t *o, const char *policy, bool several, sinks_t *sinks)
{
    char path[4096];
    if (!o->ckpt_csv)
        return 0;
    per_policy_path(o->ckpt_csv, policy, several, path, sizeof(path));
    if (!(sinks->ckcsv = fopen(path, "w")))
        return cmd_fail("cannot write %s: %s", path, strerror(errno));
    fputs("t,nodes,used_mb\n", sinks->ckcsv);
    return 0;
}

static void on_power(void *arg, double t, double watts, double lower, double upper,
                     bool busy)
{
    sinks_t *k = arg;
    if (k->pchart)
        power_chart_add(k->pchart, t, watts, lower, upper, busy);
    if (!k->pcsv)
        return;
    fprintf(k->pcsv, "%.3f,%.1f,%.1f,", t, watts, lower);
    if (isinf(upper))
        fprintf(k->pcsv, "\n");
    else
        fprintf(k->pcsv, "%.1f\n", upper);
}

static void on_event(void *arg, const sim_alloc_event_t *ev)
{
    sinks_t *k = arg;
    if (k->events)
        events_csv_add(k->events, ev);
    if (k->gantt)
        gantt_add(k->gantt, ev);
}

typedef struct progress {
    struct timespec t0;
    const char *label;
    bool drawn;
} progress_t;

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static void on_progress(void *arg, size_t done, size_t total)
{
    progress_t *p = arg;
    if (!p->drawn && since(&p->t0) < 1.0)
        return;
    p->drawn = true;
    int width = 40, filled = total ? (int)((double)done / (double)total * width) : width;
    fprintf(stderr, "\r%-14.14s [", p->label);
    for (int i = 0; i < width; i++)
        fputc(i < filled ? '=' : ' ', stderr);
    fprintf(stderr, "] %3d%%", total ? (int)(100.0 * (double)done / (double)total) : 100);
    if (done == total)
        fputs("\r\033[K", stderr);
    fflush(stderr);
}

int cmd_sim(int argc, char **argv)
{
    opts_t o = {.cores_per_node = 1, .malleable = -1, .seed = 1, .interarrival = 30,
                .progress = true, .reconf = sim_reconf_default,
                .speedup = {.model = SPEEDUP_AMDAHL, .a = 0.01}, .idle_w = 71,
                .default_w = 200,
                .ckpt = {.node_mem_mb = 65536, .mb_per_node = 1024}, .pfs = sim_pfs_default,
                .prio = {.max_age = 7 * 86400, .half_life = 7 * 86400, .calc_period = 300}};
    o.policies[0] = "fcfs";
    o.npolicies = 1;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    char err[512];
    workload_t wl = {0};
    if (load(&o, &wl, err, sizeof(err)) < 0) {
        wl_free(&wl);
        return cmd_fail("%s", err);
    }
    sim_failures_t fails = {.mtbf = o.mtbf, .downtime = o.downtime > 0 ? o.downtime : 3600,
                            .seed = o.seed, .ckpt_every = o.ckpt_every,
                            .ckpt_cost = o.ckpt_cost};
    sim_failure_t *trace = NULL;
    if (o.failures &&
        sim_failures_load(o.failures, o.nodes, &trace, &fails.ntrace, err, sizeof(err)) < 0) {
        wl_free(&wl);
        return cmd_fail("--failures: %s", err);
    }
    fails.trace = trace;
    bool failures = o.failures || o.mtbf > 0;
    report_run_t runs[MAXPOL];
    sim_user_stat_t *users[MAXPOL] = {0};
    char specs[MAXPOL][256], prio[256];
    snprintf(prio, sizeof(prio), "fairshare=%g,age=%g,size=%g,maxage=%g,halflife=%g,calc=%g",
             o.prio.w_fairshare, o.prio.w_age, o.prio.w_size, o.prio.max_age, o.prio.half_life,
             o.prio.calc_period);
    bool several = o.npolicies > 1;
    bool show_progress = o.progress && isatty(STDERR_FILENO);
    int status = 0;
    for (int p = 0; p < o.npolicies && !status; p++) {
        char path[4096];
        sinks_t sinks = {0};
        if (o.events_csv) {
            per_policy_path(o.events_csv, o.policies[p], several, path, sizeof(path));
            if (!(sinks.events = events_csv_open(path, err, sizeof(err)))) {
                status = cmd_fail("%s", err);
                break;
            }
        }
        if (o.gantt && !(sinks.gantt = gantt_create(o.nodes))) {
            status = cmd_fail("out of memory");
            events_csv_close(sinks.events, err, sizeof(err));
            break;
        }
        if (o.power_csv) {
            per_policy_path(o.power_csv, o.policies[p], several, path, sizeof(path));
            if (!(sinks.pcsv = fopen(path, "w"))) {
                status = cmd_fail("cannot write %s: %s", path, strerror(errno));
                events_csv_close(sinks.events, err, sizeof(err));
                gantt_destroy(sinks.gantt);
                break;
            }
            fputs("t,watts,lower,upper\n", sinks.pcsv);
        }
        if (o.power_svg) {
            per_policy_path(o.power_svg, o.policies[p], several, path, sizeof(path));
            if (!(sinks.pchart = power_chart_open(path, err, sizeof(err)))) {
                status = cmd_fail("--power-svg: %s", err);
                events_csv_close(sinks.events, err, sizeof(err));
                gantt_destroy(sinks.gantt);
                if (sinks.pcsv)
                    fclose(sinks.pcsv);
                break;
            }
        }
        sim_power_t power = {.idle_w = o.idle_w, .default_w = o.default_w,
                             .corridor = o.ncorridor ? o.corridor : NULL,
                             .ncorridor = o.ncorridor,
                             .on_sample = sinks.pcsv || sinks.pchart ? on_power : NULL,
                             .sample_arg = &sinks};
        if ((status = open_ckpt_csv(&o, o.policies[p], several, &sinks)) != 0) {
            events_csv_close(sinks.events, err, sizeof(err));
            gantt_destroy(sinks.gantt);
            if (sinks.pcsv)
                fclose(sinks.pcsv);
            power_chart_close(sinks.pchart, "", err, sizeof(err));
            break;
        }
        sim_ckpt_t ckpt = o.ckpt;
        ckpt.on_change = sinks.ckcsv ? on_ckpt : NULL;
        ckpt.change_arg = &sinks;
        progress_t prog = {.label = o.policies[p]};
        clock_gettime(CLOCK_MONOTONIC, &prog.t0);
        sim_config_t cfg = {
            .nodes = o.nodes,
            .policy = o.policies[p],
            .reconf = o.reconf,
            .speedup = o.speedup,
            .force_speedup = o.force_speedup,
            .on_event = (sinks.events || sinks.gantt) ? on_event : NULL,
            .event_arg = &sinks,
            .on_progress = show_progress ? on_progress : NULL,
            .progress_arg = &prog,
            .power = o.power ? &power : NULL,
            .ckpt = o.ckpt.nodes ? &ckpt : NULL,
            .failures = failures ? &fails : NULL,
            .pfs = &o.pfs,
            .priority = o.priority ? &o.prio : NULL,
            .resv = o.resv,
            .nresv = o.nresv,
        };
        sim_result_t res;
        if (sim_run(&wl, &cfg, &res, err, sizeof(err)) < 0) {
            status = cmd_fail("%s", err);
        } else {
            snprintf(specs[p], sizeof(specs[p]), "%s", res.policy);
            runs[p] = (report_run_t){.name = o.policies[p], .spec = specs[p],
                                     .rejected = res.rejected, .unfinished = res.unfinished};
            if (sim_metrics_compute(&res, o.nodes, &runs[p].m) < 0 ||
                (o.per_user && sim_metrics_users(&res, &users[p], &runs[p].nusers) < 0))
                status = cmd_fail("out of memory");
            runs[p].users = users[p];
            if (!status && o.jobs_csv) {
                per_policy_path(o.jobs_csv, o.policies[p], several, path, sizeof(path));
                if (report_jobs_csv(path, &res, err, sizeof(err)) < 0)
                    status = cmd_fail("%s", err);
            }
            sim_result_free(&res);
        }
        if (sinks.pcsv && (ferror(sinks.pcsv) | (fclose(sinks.pcsv) != 0)) && !status)
            status = cmd_fail("error writing %s", o.power_csv);
        if (sinks.ckcsv && (ferror(sinks.ckcsv) | (fclose(sinks.ckcsv) != 0)) && !status)
            status = cmd_fail("error writing %s", o.ckpt_csv);
        if (sinks.events && events_csv_close(sinks.events, err, sizeof(err)) < 0 && !status)
            status = cmd_fail("%s", err);
        char title[512];
        snprintf(title, sizeof(title), "%.200s, %.200s, %d nodes", o.workload,
                 status ? o.policies[p] : specs[p], o.nodes);
        if (sinks.pchart && power_chart_close(sinks.pchart, title, err, sizeof(err)) < 0 &&
            !status)
            status = cmd_fail("--power-svg: %s", err);
        if (sinks.gantt) {
            per_policy_path(o.gantt, o.policies[p], several, path, sizeof(path));
            if (!status && gantt_write_svg(sinks.gantt, path, title, err, sizeof(err)) < 0)
                status = cmd_fail("%s", err);
            gantt_destroy(sinks.gantt);
        }
    }
    if (!status) {
        report_info_t info = {.workload = o.workload, .njobs = wl.njobs, .nodes = o.nodes,
                              .skipped = wl.skipped, .malformed = wl.malformed,
                              .malleable = o.malleable, .seed = o.seed, .power = o.power,
                              .ckpt = o.ckpt.nodes > 0, .failures = failures,
                              .requests = false, .priority = o.priority ? prio : NULL,
                              .resv = o.nresv ? o.resv_text : NULL,
                              .per_user = o.per_user};
        for (size_t i = 0; i < wl.njobs; i++) {
            info.requests |= wl.jobs[i].nreq > 0;
            info.io |= wl.jobs[i].iters > 0;
        }
        if (o.json)
            report_json(stdout, &info, runs, o.npolicies);
        else
            report_table(stdout, &info, runs, o.npolicies);
    }
    for (int p = 0; p < o.npolicies; p++)
        free(users[p]);
    free(trace);
    wl_free(&wl);
    return status;
}
