/* ductile queue | show | cancel | nodes | history | drain | resume | resize */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cmd.h"
#include "hostlist.h"
#include "listing.h"
#include "strparse.h"
#include "errors.h"
#include "util.h"

typedef struct common {
    const char *conf;
    bool json;
    const char *user, *state, *reason, *name, *jobs;
    const char *since, *until, *format, *signal, *sort, *partition;
    long nodes;
    long limit;
    bool release, no_wait;
    bool me, noheader, start, parsable, batch, full, steps, running, down;
    long wait; /* -1: not given */
} common_t;

/* Every option any of these commands knows; each command declares which of them it
 * takes (a mask of O_* bits), and getopt refuses the rest: `cancel --limit 3` or
 * `show 1 --state R` is an error, not an option silently ignored. */
enum {
    O_CONF = 256, O_JSON, O_USER, O_STATE, O_SINCE, O_REASON, O_NODES, O_LIMIT, O_NAME,
    O_JOBS, O_RELEASE, O_NO_WAIT, O_WAIT, O_ME, O_NOHEADER, O_START, O_UNTIL, O_FORMAT,
    O_PARSABLE, O_SIGNAL, O_BATCH, O_FULL, O_SORT, O_STEPS, O_RUNNING, O_PARTITION, O_DOWN, O_HELP
};
#define OPT(o) (1u << ((o) - O_CONF))

static const struct option all_opts[] = {
    {"conf", required_argument, 0, O_CONF},   {"json", no_argument, 0, O_JSON},
    {"user", required_argument, 0, O_USER},   {"state", required_argument, 0, O_STATE},
    {"since", required_argument, 0, O_SINCE}, {"reason", required_argument, 0, O_REASON},
    {"nodes", required_argument, 0, O_NODES}, {"limit", required_argument, 0, O_LIMIT},
    {"name", required_argument, 0, O_NAME},   {"jobs", required_argument, 0, O_JOBS},
    {"release", no_argument, 0, O_RELEASE},   {"no-wait", no_argument, 0, O_NO_WAIT},
    {"wait", required_argument, 0, O_WAIT},   {"me", no_argument, 0, O_ME},
    {"noheader", no_argument, 0, O_NOHEADER}, {"start", no_argument, 0, O_START},
    {"until", required_argument, 0, O_UNTIL}, {"format", required_argument, 0, O_FORMAT},
    {"parsable", no_argument, 0, O_PARSABLE}, {"signal", required_argument, 0, O_SIGNAL},
    {"batch", no_argument, 0, O_BATCH},       {"full", no_argument, 0, O_FULL},
    {"sort", required_argument, 0, O_SORT},
    {"steps", no_argument, 0, O_STEPS},       {"running", no_argument, 0, O_RUNNING},
    {"partition", required_argument, 0, O_PARTITION}, {"down", no_argument, 0, O_DOWN},
    {"help", no_argument, 0, O_HELP},
};
/* short forms, as in Slurm: -u USER, -N NODES, -n NAME, -j JOBS, -t STATE, -s SIGNAL,
 * -p PARTITION */
static const struct { char c; int o; } shorts[] = {
    {'u', O_USER}, {'N', O_NODES}, {'n', O_NAME}, {'j', O_JOBS}, {'t', O_STATE}, {'s', O_SIGNAL},
    {'p', O_PARTITION},
};

typedef struct spec {
    const char *cmd;
    unsigned opts;    /* OPT(O_...) bits; --help always */
    int min_args, max_args; /* positional arguments; max -1: any number */
    const char *usage;
} spec_t;

/* Parses the options of one command; returns the first positional index or -1 once
 * the error is printed. Positional arguments are gathered after the options. */
static int parse(int argc, char **argv, common_t *c, const spec_t *sp)
{
    struct option lopts[sizeof(all_opts) / sizeof(all_opts[0]) + 1];
    size_t nl = 0;
    for (size_t k = 0; k < sizeof(all_opts) / sizeof(all_opts[0]); k++)
        if (all_opts[k].val == O_HELP || (sp->opts & OPT(all_opts[k].val)))
            lopts[nl++] = all_opts[k];
    memset(&lopts[nl], 0, sizeof(lopts[nl]));
    char sopts[32] = ":h"; /* -h: --help, as every Slurm command takes it */
    size_t ns = 2;
    for (size_t k = 0; k < sizeof(shorts) / sizeof(shorts[0]); k++)
        if (sp->opts & OPT(shorts[k].o)) {
            sopts[ns++] = shorts[k].c;
            sopts[ns++] = ':';
        }
    sopts[ns] = '\0';
    int o;
    opterr = 0;
    optind = 1;
    while ((o = getopt_long(argc, argv, sopts, lopts, NULL)) != -1) {
        for (size_t k = 0; k < sizeof(shorts) / sizeof(shorts[0]); k++)
            if (o == shorts[k].c)
                o = shorts[k].o;
        if (o == 'h')
            o = O_HELP;
        long v;
        switch (o) {
        case O_CONF: c->conf = optarg; break;
        case O_JSON: c->json = true; break;
        case O_USER: c->user = optarg; break;
        case O_STATE: c->state = optarg; break;
        case O_SINCE: c->since = optarg; break;
        case O_REASON: c->reason = optarg; break;
        case O_NAME: c->name = optarg; break;
        case O_JOBS: c->jobs = optarg; break;
        case O_RELEASE: c->release = true; break;
        case O_ME: c->me = true; break;
        case O_NOHEADER: c->noheader = true; break;
        case O_START: c->start = true; break;
        case O_UNTIL: c->until = optarg; break;
        case O_FORMAT: c->format = optarg; break;
        case O_SORT: c->sort = optarg; break;
        case O_PARTITION: c->partition = optarg; break;
        case O_PARSABLE: c->parsable = true; break;
        case O_SIGNAL: c->signal = optarg; break;
        case O_BATCH: c->batch = true; break;
        case O_FULL: c->full = true; break;
        case O_STEPS: c->steps = true; break;
        case O_RUNNING: c->running = true; break;
        case O_DOWN: c->down = true; break;
        case O_NO_WAIT: c->no_wait = true; break;
        case O_WAIT:
            if (strparse_long(optarg, 1, 86400, &v) < 0) {
                cmd_fail("%s: --wait: '%s' is not a number of seconds from 1 to 86400", sp->cmd,
                         optarg);
                return -1;
            }
            c->wait = v;
            break;
        case O_NODES:
            if (strparse_long(optarg, 1, 1L << 24, &v) < 0) {
                cmd_fail("%s: --nodes: '%s' is not a node count (a whole number, at least 1)",
                         sp->cmd, optarg);
                return -1;
            }
            c->nodes = v;
            break;
        case O_LIMIT:
            if (strparse_long(optarg, 1, 1000000, &v) < 0) {
                cmd_fail("%s: --limit: '%s' is not a number from 1 to 1000000", sp->cmd, optarg);
                return -1;
            }
            c->limit = v;
            break;
        case O_HELP:
            printf("usage: %s\n", sp->usage);
            exit(0);
        case ':':
            cmd_fail("%s: option '%s' needs a value (usage: %s)", sp->cmd, argv[optind - 1],
                     sp->usage);
            return -1;
        default:
            if (optopt && optopt < O_CONF)
                cmd_fail("%s: unknown option '-%c' (usage: %s)", sp->cmd, optopt, sp->usage);
            else
                cmd_fail("%s: unknown option '%s' (usage: %s)", sp->cmd, argv[optind - 1],
                         sp->usage);
            return -1;
        }
    }
    int npos = argc - optind;
    if (npos < sp->min_args) {
        cmd_fail("%s: missing argument (usage: %s)", sp->cmd, sp->usage);
        return -1;
    }
    if (sp->max_args >= 0 && npos > sp->max_args) {
        cmd_fail("%s: unexpected argument '%s' (usage: %s)", sp->cmd, argv[optind + sp->max_args],
                 sp->usage);
        return -1;
    }
    return optind;
}

/* Job ids from positional arguments and from "1,2,3" lists; NULL once the error is
 * printed. */
static json_t *job_ids(char **args, int n, const char *list)
{
    json_t *ids = json_array();
    json_t *id;
    for (int k = 0; k < n; k++) {
        if (!(id = cu_job_ref(args[k]))) {
            json_decref(ids);
            return NULL;
        }
        json_array_append_new(ids, id);
    }
    if (list) {
        char *copy = strdup(list), *save = NULL;
        for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
            if (!(id = cu_job_ref(t))) {
                free(copy);
                json_decref(ids);
                return NULL;
            }
            json_array_append_new(ids, id);
        }
        free(copy);
        if (!json_array_size(ids)) {
            json_decref(ids);
            cmd_fail("--jobs: '%s' is not a list of job ids", list);
            return NULL;
        }
    }
    return ids;
}

/* A text field of a reply, escaped for the terminal (user text is never printed raw:
 * a name with an escape sequence must not reach other users' terminals). */
static char *esc(const json_t *o, const char *key) { return strparse_escape(cu_str(o, key)); }

/* queue's tables: the one the controller renders (its columns, when the client
 * prints it), and --start's, the planned starts of the pending jobs */
static const listing_col_def_t queue_cols[] = {
    {"JobID", "JOBID", 0},       {"Name", "NAME", 20},   {"User", "USER", 0},
    {"StateCompact", "ST", 0},   {"TimeUsed", "TIME", 0}, {"NumNodes", "NODES", 0},
    {"ReasonList", "NODELIST(REASON)", 0},
};
static const listing_col_def_t queue_start_cols[] = {
    {"JobID", "JOBID", 0},       {"Name", "NAME", 20},          {"User", "USER", 0},
    {"StateCompact", "ST", 0},   {"StartTime", "START_TIME", 0}, {"NumNodes", "NODES", 0},
    {"ReasonList", "NODELIST(REASON)", 0},
};

/* The controller's request; fold: the pending elements of an array as one job (the
 * line the table shows for them). NULL once the error is printed. */
static json_t *queue_request(const common_t *o, bool json, bool fold)
{
    json_t *req = json_pack("{s:s,s:s}", "type", "queue", "format", json ? "json" : "table");
    if (fold)
        json_object_set_new(req, "fold", json_true());
    if (o->start)
        json_object_set_new(req, "state", json_string("PD"));
    if (o->jobs) {
        json_t *ids = job_ids(NULL, 0, o->jobs);
        if (!ids) {
            json_decref(req);
            return NULL;
        }
        json_object_set_new(req, "jobs", ids);
    }
    if (o->user)
        json_object_set_new(req, "user", json_string(o->user));
    if (o->state)
        json_object_set_new(req, "state", json_string(o->state));
    if (o->me)
        json_object_set_new(req, "me", json_true());
    if (o->partition)
        json_object_set_new(req, "partition", json_string(o->partition));
    return req;
}

/* The table as the controller rendered it (it costs a fraction of a JSON object per
 * job: with 100,000 queued jobs the difference is seconds). */
static void print_rendered(const json_t *text, bool noheader)
{
    const char *t = json_string_value(text);
    size_t len = json_string_length(text);
    const char *nl = noheader ? memchr(t, '\n', len) : NULL;
    if (nl) { /* the header is the first line */
        len -= (size_t)(nl + 1 - t);
        t = nl + 1;
    }
    fwrite(t, 1, len, stdout);
}

/* The columns queue prints: --format's, --start's or the usual ones; NULL once the
 * error is printed. */
static listing_t *queue_listing(const listing_ctx_t *x, const common_t *o)
{
    if (o->format)
        return listing_parse(x, o->format);
    int n = (int)(sizeof(queue_cols) / sizeof(queue_cols[0]));
    listing_t *l = listing_layout(x, o->start ? queue_start_cols : queue_cols, n);
    if (!l)
        cmd_fail("out of memory");
    return l;
}

const char *cmd_queue_format_opt = "queue: --format", *cmd_queue_sort_opt = "queue: --sort";

int cmd_queue(int argc, char **argv)
{
    common_t o = {0};
    static const spec_t sp = {"queue", OPT(O_CONF) | OPT(O_JSON) | OPT(O_USER) | OPT(O_STATE) |
                                           OPT(O_JOBS) | OPT(O_ME) | OPT(O_NOHEADER) |
                                           OPT(O_START) | OPT(O_FORMAT) | OPT(O_SORT) |
                                           OPT(O_PARSABLE) | OPT(O_PARTITION), 0, 0,
                              "ductile queue [-j|--jobs ID[,ID...]] [-u|--user U] [--me] "
                              "[-t|--state ST[,ST...]] [-p|--partition P[,P...]] [--start] "
                              "[--format F1[:WIDTH],F2...] "
                              "[--sort [-]KEY,...] [--noheader] [--parsable] [--json]"};
    int i = parse(argc, argv, &o, &sp);
    if (i < 0)
        return 1;
    if (o.start && o.state)
        return cmd_fail("queue: --start lists the pending jobs: no --state with it");
    if (o.json && (o.format || o.parsable))
        return cmd_fail("queue: --json prints every field: no --format or --parsable with it");
    config_t cfg = {0};
    if (cu_load_conf(o.conf, &cfg))
        return 1;
    listing_ctx_t x = {LISTING_QUEUE, cmd_queue_sort_opt, cfg.cluster_name, cfg.cores_per_node};
    json_t *none = json_array(); /* the keys checked before the controller is asked */
    int bad = o.sort && listing_sort(&x, none, o.sort);
    json_decref(none);
    x.what = cmd_queue_format_opt;
    bool listing = !o.json && (o.format || o.sort || o.parsable || o.start);
    listing_t *l = listing && !bad ? queue_listing(&x, &o) : NULL;
    json_t *req = bad || (listing && !l) ? NULL : queue_request(&o, o.json || listing, listing);
    json_t *rep = req ? cu_paged(cu_call, &cfg, req, 0) : NULL; /* a long queue: pages */
    if (rep) {
        json_t *jobs = json_object_get(rep, "jobs");
        const json_t *text = json_object_get(rep, "text");
        x.what = cmd_queue_sort_opt;
        if (o.sort)
            listing_sort(&x, jobs, o.sort);
        if (o.json)
            cu_print_json(jobs);
        else if (json_is_string(text))
            print_rendered(text, o.noheader);
        else if (l || (l = queue_listing(&x, &o)))
            listing_print(&x, l, jobs, o.noheader, o.parsable);
    }
    listing_free(l);
    json_decref(rep);
    config_free(&cfg);
    return rep ? 0 : 1;
}

static void print_time(const char *label, double t)
{
    if (t <= 0) {
        printf("%-14s -\n", label);
        return;
    }
    char buf[64];
    cu_fmt_time(t, buf, sizeof(buf));
    printf("%-14s %s\n", label, buf);
}

static void print_text(const char *label, const json_t *o, const char *key)
{
    char *v = esc(o, key);
    printf("%-14s %s\n", label, v ? v : "");
    free(v);
}

static void clock_of(double t, char *buf, size_t len);
static const char *plural(long long n);

/* The operator's resize (pending, under way, or how the last one ended) and the hold. */
static void print_resize(const json_t *j, long long id)
{
    const json_t *op = json_object_get(j, "operator_resize");
    char t[32];
    if (op) {
        long long n = (long long)json_integer_value(json_object_get(op, "nodes"));
        const char *st = cu_str(op, "state");
        char *why = esc(op, "why");
        bool live = !strcmp(st, "pending") || !strcmp(st, "under way");
        clock_of(cu_num(op, "since"), t, sizeof(t));
        printf("%-14s %lld node%s (operator), %s %s %s%s%s\n", "Resize", n, plural(n), st,
               live ? "since" : "at", t, why && *why ? ": " : "", why ? why : "");
        free(why);
    }
    const json_t *al = json_object_get(j, "app_limits");
    if (al) {
        double iv = cu_num(al, "interval");
        printf("%-14s %lld-%lld nodes, preferred %lld%s", "AppLimits",
               (long long)json_integer_value(json_object_get(al, "min")),
               (long long)json_integer_value(json_object_get(al, "max")),
               (long long)json_integer_value(json_object_get(al, "preferred")),
               iv > 0 ? ", a resize at most every " : "");
        if (iv > 0)
            printf("%g s", iv);
        printf(" (set by the application)\n");
    }
    if (json_is_true(json_object_get(j, "survives_node_loss")))
        printf("%-14s runs on without a failed node other than its first (set by the "
               "application)\n", "NodeFailure");
    const json_t *h = json_object_get(j, "hold");
    if (h) {
        long long n = (long long)json_integer_value(json_object_get(h, "nodes"));
        const json_t *until = json_object_get(h, "until");
        if (json_is_number(until)) {
            clock_of(json_number_value(until), t, sizeof(t));
            printf("%-14s %lld node%s (operator) until %s\n", "SizeHold", n, plural(n), t);
        } else {
            printf("%-14s %lld node%s (operator) until released (ductile resize %lld --release)\n",
                   "SizeHold", n, plural(n), id);
        }
    }
}

int cmd_show(int argc, char **argv)
{
    common_t o = {0};
    static const spec_t sp = {"show", OPT(O_CONF) | OPT(O_JSON), 1, 1, "ductile show JOB [--json]"};
    int i = parse(argc, argv, &o, &sp);
    if (i < 0)
        return 1;
    json_t *ref = cu_job_ref(argv[i]);
    if (!ref)
        return 1;
    json_t *rep = cu_request(o.conf, json_pack("{s:s,s:o}", "type", "show", "job", ref));
    if (!rep)
        return 1;
    json_t *j = json_object_get(rep, "job");
    if (o.json) {
        cu_print_json(j);
        json_decref(rep);
        return 0;
    }
    char t[32];
    long long id = (long long)json_integer_value(json_object_get(j, "id"));
    printf("%-14s %lld\n", "JobId", id);
    if (json_object_get(j, "array_id")) {
        char *label = listing_job_label(j);
        printf("%-14s %s\n", "ArrayElement", label);
        free(label);
    }
    print_text("Name", j, "name");
    print_text("User", j, "user");
    if (*cu_str(j, "account"))
        print_text("Account", j, "account");
    if (*cu_str(j, "limit"))
        print_text("Limit", j, "limit");
    if (*cu_str(j, "partition"))
        print_text("Partition", j, "partition");
    if (*cu_str(j, "reservation"))
        print_text("Reservation", j, "reservation");
    if (json_integer_value(json_object_get(j, "nice")))
        printf("%-14s %lld\n", "Nice", (long long)json_integer_value(json_object_get(j, "nice")));
    printf("%-14s %s (%s)\n", "State", cu_str(j, "state_name"), cu_str(j, "state"));
    print_text("Reason", j, "reason");
    if (json_object_get(j, "held")) /* (not "hold": an operator's size hold) */
        printf("%-14s by %s (ductile release)\n", "Held", cu_str(j, "held"));
    if (json_object_get(j, "dependency"))
        print_text("Dependency", j, "dependency");
    if (json_object_get(j, "begin"))
        print_time("BeginTime", cu_num(j, "begin"));
    printf("%-14s %s\n", "Type", cu_str(j, "type"));
    long long mn = (long long)json_integer_value(json_object_get(j, "min_nodes")),
              mx = (long long)json_integer_value(json_object_get(j, "max_nodes"));
    if (mn || mx) /* a range: moldable, malleable or evolving */
        printf("%-14s %lld (requested %lld, min %lld, max %lld, constraint %s)\n", "Nodes",
               (long long)json_integer_value(json_object_get(j, "nodes")),
               (long long)json_integer_value(json_object_get(j, "requested_nodes")), mn, mx,
               cu_str(j, "constraint"));
    else
        printf("%-14s %lld (requested %lld)\n", "Nodes",
               (long long)json_integer_value(json_object_get(j, "nodes")),
               (long long)json_integer_value(json_object_get(j, "requested_nodes")));
    print_text("NodeList", j, "nodelist");
    /* the nodes it may use (--constraint, --gpus-per-node, --mem, --nodelist, --exclude) */
    if (json_object_get(j, "features"))
        print_text("Features", j, "features");
    if (json_object_get(j, "gpus_per_node"))
        printf("%-14s %lld\n", "GpusPerNode",
               (long long)json_integer_value(json_object_get(j, "gpus_per_node")));
    if (json_object_get(j, "mem"))
        printf("%-14s %lldM\n", "MinMemoryNode",
               (long long)json_integer_value(json_object_get(j, "mem")));
    if (json_object_get(j, "req_nodelist"))
        print_text("ReqNodeList", j, "req_nodelist");
    if (json_object_get(j, "exc_nodelist"))
        print_text("ExcNodeList", j, "exc_nodelist");
    print_resize(j, id);
    if (json_object_get(j, "mtct"))
        printf("%-14s %.3f (MPI time / wall time, reported by the job)\n", "MTCT", cu_num(j, "mtct"));
    cu_fmt_duration(cu_num(j, "time_limit"), t, sizeof(t));
    printf("%-14s %s\n", "TimeLimit", cu_num(j, "time_limit") > 0 ? t : "UNLIMITED");
    print_time("SubmitTime", cu_num(j, "submit"));
    print_time("StartTime", cu_num(j, "start"));
    print_time("EndTime", cu_num(j, "end"));
    cu_fmt_duration(cu_num(j, "elapsed"), t, sizeof(t));
    printf("%-14s %s\n", "Elapsed", t);
    printf("%-14s %.0f\n", "NodeSeconds", cu_num(j, "node_seconds"));
    json_t *pw = json_object_get(j, "power");
    if (pw) {
        printf("%-14s %g-%g W per node (%s)", "Power", cu_num(pw, "min"), cu_num(pw, "max"),
               cu_str(pw, "from")[0] ? cu_str(pw, "from") : "not recorded");
        if (cu_num(pw, "draw") > 0)
            printf(", drawing %.0f W now", cu_num(pw, "draw"));
        printf("\n");
    }
    if (json_object_get(j, "io_intensity")) { /* declared, or measured over its last run */
        const char *from = cu_str(j, "io_from");
        printf("%-14s %.2g (%s)\n", "IOIntensity", cu_num(j, "io_intensity"),
               !strcmp(from, "measured") ? "measured over its last run" : "declared");
    }
    if (json_object_get(j, "io_measured")) /* this run's own, from its cgroups */
        printf("%-14s %.2g (share of this run's time in I/O, from its cgroups)\n",
               "IOMeasured", cu_num(j, "io_measured"));
    char en[32];
    cu_fmt_energy(cu_num(j, "energy"), en, sizeof(en));
    printf("%-14s %s\n", "Energy", en);
    long long ec = (long long)json_integer_value(json_object_get(j, "exit_code"));
    long long sig = (long long)json_integer_value(json_object_get(j, "signal"));
    if (ec >= 0)
        printf("%-14s %lld%s%s\n", "ExitCode", ec, sig ? " signal " : "",
               sig ? (sig == 9 ? "KILL" : sig == 15 ? "TERM" : "other") : "");
    print_text("WorkDir", j, "cwd");
    const char *out = json_string_value(json_object_get(j, "stdout"));
    if (out && *out)
        print_text("StdOut", j, "stdout");
    else /* not given at submission: the node daemon's default, ductile-%j.out */
        printf("%-14s ductile-%lld.out (the default, in WorkDir)\n", "StdOut", (long long)id);
    printf("%-14s %s\n", "Requeue", json_is_true(json_object_get(j, "requeue")) ? "yes" : "no");
    json_int_t restarts = json_integer_value(json_object_get(j, "restarts"));
    if (restarts > 0)
        printf("%-14s %lld\n", "Restarts", (long long)restarts);
    json_t *ck = json_object_get(j, "checkpoint_agents");
    if (ck) {
        const char *ag = json_string_value(json_object_get(ck, "agents"));
        const char *on = json_string_value(json_object_get(ck, "nodes"));
        const char *st = json_string_value(json_object_get(ck, "state"));
        bool ended = st && !strcmp(st, "ended");
        if (ag && *ag)
            printf("%-14s %s (on %s%s)\n", "CkptAgents", ag, on ? on : "?",
                   ended ? "; stopped at the job's end" : "");
        else if (ended)
            printf("%-14s none\n", "CkptAgents");
        else if (st && !strcmp(st, "none"))
            printf("%-14s none: its checkpoints go to its files\n", "CkptAgents");
        else
            printf("%-14s %s\n", "CkptAgents", st && !strcmp(st, "starting") ? "starting" : "not yet");
        /* its agents' shares of the checkpoint nodes' time */
        printf("%-14s %.1f\n", "CkptNodeSecs", cu_num(ck, "node_seconds"));
    }
    json_t *ev = json_object_get(j, "events");
    size_t k;
    json_t *e;
    printf("Events:\n");
    json_array_foreach(ev, k, e)
    {
        time_t s = (time_t)cu_num(e, "time");
        struct tm tm;
        char buf[32];
        localtime_r(&s, &tm);
        strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
        char *detail = esc(e, "detail");
        printf("  %s  %-8s %lld -> %lld %s\n", buf, cu_str(e, "event"),
               (long long)json_integer_value(json_object_get(e, "before")),
               (long long)json_integer_value(json_object_get(e, "after")), detail ? detail : "");
        free(detail);
    }
    json_decref(rep);
    return 0;
}

/* The per-job results of a cancel, hold or release (rep, freed here): --json prints
 * them; else each that is not `done` goes to stderr, "job 12: RESULT: DETAIL" (with
 * `failed` in place of a "failed" result). Exit status: a job not the caller's, 20 (as
 * a refusal with code `denied`); not found, 21 (`not_found`); both, or one that failed,
 * 1. */
static int job_results(json_t *rep, bool json, const char *done, const char *failed)
{
    if (!rep)
        return 1;
    json_t *res = json_object_get(rep, "results");
    if (json) {
        cu_print_json(res);
        json_decref(rep);
        return 0;
    }
    int status = 0;
    size_t k;
    json_t *r;
    json_array_foreach(res, k, r)
    {
        const char *what = cu_str(r, "result");
        int st = 0;
        const json_t *ref = json_object_get(r, "job"); /* an id, or "12_3" as given */
        char label[48];
        if (json_is_string(ref))
            snprintf(label, sizeof(label), "%.40s", json_string_value(ref));
        else
            snprintf(label, sizeof(label), "%lld", (long long)json_integer_value(ref));
        if (!strcmp(what, done))
            continue;
        if (failed && !strcmp(what, "failed"))
            what = failed;
        char *detail = esc(r, "detail");
        fprintf(stderr, "ductile: job %s: %s%s%s\n", label, what, detail && *detail ? ": " : "",
                detail ? detail : "");
        free(detail);
        if (!strcmp(what, "not yours"))
            st = proto_err_exit(PROTO_E_DENIED);
        else if (!strcmp(what, "no such job"))
            st = proto_err_exit(PROTO_E_NOT_FOUND);
        else if (what == failed)
            st = 1;
        if (st)
            status = status == 0 || status == st ? st : 1; /* mixed: 1 */
    }
    json_decref(rep);
    return status;
}

/* One request for every job named and every filter: the controller applies it at once
 * (no scheduling pass between two ids) and answers with a result per job. */
int cmd_cancel(int argc, char **argv)
{
    common_t o = {0};
    static const spec_t sp = {"cancel", OPT(O_CONF) | OPT(O_JSON) | OPT(O_USER) | OPT(O_STATE) |
                                            OPT(O_NAME) | OPT(O_SIGNAL) | OPT(O_BATCH) |
                                            OPT(O_FULL) | OPT(O_ME), 0, -1,
                              "ductile cancel [JOB...] [-t|--state ST] [-u|--user U | --me] "
                              "[-n|--name NAME] [-s|--signal SIG [--batch|--full]] [--json]"};
    int i = parse(argc, argv, &o, &sp);
    if (i < 0)
        return 1;
    if (i >= argc && !o.state && !o.user && !o.name && !o.me)
        return cmd_fail("cancel: give job ids, or a filter (--state, --user, --me, --name) to "
                        "cancel all your matching jobs");
    if (o.me && o.user)
        return cmd_fail("cancel: --me and --user: give one");
    json_t *ids = job_ids(argv + i, argc - i, NULL);
    if (!ids)
        return 1;
    int sig = 0;
    if (o.signal && (sig = cu_signal_number(o.signal)) <= 0) {
        json_decref(ids);
        return cmd_fail("cancel: --signal: '%s' is not a signal (USR1, SIGTERM, 10...)",
                        o.signal);
    }
    if ((o.batch || o.full) && !sig) {
        json_decref(ids);
        return cmd_fail("cancel: --batch and --full go with --signal");
    }
    json_t *req = json_pack("{s:s,s:o}", "type", "cancel", "jobs", ids);
    if (sig) { /* the steps' tasks; --batch: the script alone; --full: both, and its children */
        json_object_set_new(req, "signal", json_integer(sig));
        json_object_set_new(req, "scope", json_integer(o.full ? 2 : o.batch ? 1 : 0));
    }
    if (o.user)
        json_object_set_new(req, "user", json_string(o.user));
    if (o.me) /* the controller knows who asks: no $USER to trust or miss */
        json_object_set_new(req, "me", json_true());
    if (o.state)
        json_object_set_new(req, "state", json_string(o.state));
    if (o.name)
        json_object_set_new(req, "name", json_string(o.name));
    config_t cfg = {0};
    if (cu_load_conf(o.conf, &cfg)) {
        json_decref(req);
        return 1;
    }
    json_t *rep = cu_call_parts(&cfg, req); /* many jobs: in parts */
    config_free(&cfg);
    return job_results(rep, o.json, sig ? "signalled" : "cancelled", sig ? "not signalled" : NULL);
}

/* ductile hold / release / requeue JOB...: pending jobs kept out of scheduling or let
 * back in; running jobs ended to wait again. */
static int hold_or_release(int argc, char **argv, const char *verb)
{
    common_t o = {0};
    char usage[64];
    snprintf(usage, sizeof(usage), "ductile %s JOB... [--json]", verb);
    const spec_t sp = {verb, OPT(O_CONF) | OPT(O_JSON), 0, -1, usage};
    int i = parse(argc, argv, &o, &sp);
    if (i < 0)
        return 1;
    if (i >= argc)
        return cmd_fail("%s: give the ids of the jobs", verb);
    json_t *ids = job_ids(argv + i, argc - i, NULL);
    if (!ids)
        return 1;
    char done[16], failed[24];
    snprintf(done, sizeof(done), "%s", !strcmp(verb, "hold") ? "held" : !strcmp(verb, "release")
                                                                          ? "released"
                                                                          : "requeued");
    snprintf(failed, sizeof(failed), "not %s", done);
    config_t cfg = {0};
    if (cu_load_conf(o.conf, &cfg)) {
        json_decref(ids);
        return 1;
    }
    json_t *rep = cu_call_parts(&cfg, json_pack("{s:s,s:o}", "type", verb, "jobs", ids));
    config_free(&cfg);
    return job_results(rep, o.json, done, failed);
}

int cmd_hold(int argc, char **argv) { return hold_or_release(argc, argv, "hold"); }
int cmd_release(int argc, char **argv) { return hold_or_release(argc, argv, "release"); }
int cmd_requeue(int argc, char **argv) { return hold_or_release(argc, argv, "requeue"); }

/* Exit status of `ductile resize` (docs/user-guide.md). */
enum {
    RESIZE_DONE = 0,     /* committed, released, or accepted with --no-wait */
    RESIZE_REFUSED = 1,  /* refused, bad input, no controller */
    RESIZE_NOT_DONE = 2, /* declined, withdrawn, failed, replaced by another request */
    RESIZE_WAITING = 3,  /* still pending or under way when the wait ended */
};

static const char *plural(long long n) { return n == 1 ? "" : "s"; }

static void clock_of(double t, char *buf, size_t len)
{
    time_t s = (time_t)t;
    struct tm tm;
    localtime_r(&s, &tm);
    strftime(buf, len, "%H:%M:%S", &tm);
}

/* ", held at that size until 12:00:00 ..." when the job is held; "" when not. */
static void hold_text(const json_t *job, long long id, char *buf, size_t len)
{
    const json_t *h = json_object_get(job, "hold");
    buf[0] = '\0';
    if (!h)
        return;
    const json_t *until = json_object_get(h, "until");
    if (json_is_number(until)) {
        char t[32];
        clock_of(json_number_value(until), t, sizeof(t));
        snprintf(buf, len, "; held at that size until %s (OperatorResizeHold; ductile resize "
                 "%lld --release lets the policy resize it sooner)", t, id);
    } else {
        snprintf(buf, len, "; held at that size until released (ductile resize %lld --release)",
                 id);
    }
}

/* Prints the outcome of the operator's resize number seq of job id, if there is one:
 * returns 1 and the exit status in *status; 0 while it pends or is under way. */
static int resize_outcome(const json_t *job, long long id, long long seq, long asked, int *status)
{
    const json_t *op = json_object_get(job, "operator_resize");
    long long nodes = (long long)json_integer_value(json_object_get(op, "nodes"));
    char *why = esc(op, "why");
    const char *state = cu_str(op, "state");
    int done = 1;
    *status = RESIZE_NOT_DONE;
    if (!op || (long long)json_integer_value(json_object_get(op, "seq")) != seq) {
        if (op && (long long)json_integer_value(json_object_get(op, "seq")) > seq)
            fprintf(stderr, "ductile: job %lld: the resize was replaced by a newer one (to %lld "
                    "node%s)\n", id, nodes, plural(nodes));
        else if (strcmp(cu_str(job, "state"), "R") && strcmp(cu_str(job, "state"), "RS")) {
            char *reason = esc(job, "reason");
            fprintf(stderr, "ductile: job %lld: resize to %ld node%s failed: the job ended (%s%s%s)\n",
                    id, asked, plural(asked), cu_str(job, "state_name"),
                    reason && *reason ? ": " : "", reason ? reason : "");
            free(reason);
        }
        else
            fprintf(stderr, "ductile: job %lld: the controller no longer knows the resize: it "
                    "restarted, or could not save its state (a full disk?) and reloaded it; "
                    "ask again\n", id);
    } else if (!strcmp(state, "committed")) {
        char hold[256];
        hold_text(job, id, hold, sizeof(hold));
        printf("job %lld: committed at %lld node%s (%lld -> %lld)%s\n", id, nodes, plural(nodes),
               (long long)json_integer_value(json_object_get(op, "from")), nodes, hold);
        *status = RESIZE_DONE;
    } else if (!strcmp(state, "declined")) {
        fprintf(stderr, "ductile: job %lld: resize to %lld node%s declined by the application\n",
                id, nodes, plural(nodes));
    } else if (!strcmp(state, "pending") || !strcmp(state, "under way")) {
        done = 0;
    } else { /* withdrawn, failed, released */
        fprintf(stderr, "ductile: job %lld: resize to %lld node%s %s: %s\n", id, nodes,
                plural(nodes), state, why ? why : "");
    }
    free(why);
    return done;
}

int cmd_resize(int argc, char **argv)
{
    common_t o = {.wait = -1};
    static const spec_t sp = {"resize", OPT(O_CONF) | OPT(O_NODES) | OPT(O_RELEASE) |
                                            OPT(O_NO_WAIT) | OPT(O_WAIT), 1, 1,
                              "ductile resize JOB -N|--nodes N [--no-wait | --wait SECONDS], "
                              "or ductile resize JOB --release"};
    int i = parse(argc, argv, &o, &sp);
    if (i < 0)
        return RESIZE_REFUSED;
    if (o.release && o.nodes)
        return cmd_fail("resize: give either a new size (-N N) or --release, not both");
    if (!o.release && !o.nodes)
        return cmd_fail("resize: give the new size with -N N, or --release (usage: %s)", sp.usage);
    if (o.no_wait && o.wait >= 0)
        return cmd_fail("resize: --no-wait and --wait exclude each other");
    if (o.release && (o.no_wait || o.wait >= 0))
        return cmd_fail("resize: --release takes effect at once: no --wait or --no-wait");
    long long id;
    if (cu_parse_job(argv[i], &id))
        return RESIZE_REFUSED;
    config_t cfg = {0};
    if (cu_load_conf(o.conf, &cfg))
        return RESIZE_REFUSED;
    json_t *req = json_pack("{s:s,s:I}", "type", "resize", "job", (json_int_t)id);
    if (o.release)
        json_object_set_new(req, "release", json_true());
    else
        json_object_set_new(req, "nodes", json_integer(o.nodes));
    json_t *rep = cu_call(&cfg, req);
    int status = RESIZE_REFUSED;
    if (!rep)
        goto out;
    const json_t *job = json_object_get(rep, "job");
    if (o.release) {
        const char *msg = cu_str(rep, "message");
        printf("job %lld: %s%s\n", id, strncmp(msg, "nothing", 7) ? "released; " : "", msg);
        status = RESIZE_DONE;
        goto out;
    }
    long long seq = (long long)json_integer_value(
        json_object_get(json_object_get(job, "operator_resize"), "seq"));
    /* Long enough for one offer to be answered or withdrawn (ResizeTimeout), twice. */
    long limit = o.wait >= 0 ? o.wait : (long)(2 * cfg.resize_timeout + 0.5);
    double deadline = cu_mono() + (double)limit;
    bool told = false;
    while (!resize_outcome(job, id, seq, o.nodes, &status)) {
        const json_t *op = json_object_get(job, "operator_resize");
        const char *state = cu_str(op, "state");
        char *why = esc(op, "why");
        if (o.no_wait) {
            printf("job %lld: resize to %ld node%s %s: %s\n", id, o.nodes, plural(o.nodes), state,
                   why ? why : "");
            status = RESIZE_DONE;
        } else if (cu_mono() >= deadline) {
            fprintf(stderr, "ductile: job %lld: resize to %ld node%s still %s after %ld s: %s%s\n",
                    id, o.nodes, plural(o.nodes), state, limit, why ? why : "",
                    strcmp(state, "pending") ? ""
                                             : "; it stays asked for (--release drops it)");
            status = RESIZE_WAITING;
        } else if (!told && !strcmp(state, "pending") && cu_mono() > deadline - limit + 0.5) {
            fprintf(stderr, "ductile: job %lld: resize to %ld node%s pending: %s; waiting up to "
                    "%ld s (--no-wait returns at once)\n", id, o.nodes, plural(o.nodes),
                    why ? why : "", limit);
            told = true;
        }
        free(why);
        if (o.no_wait || status == RESIZE_WAITING)
            break;
        struct timespec ts = {0, 100 * 1000 * 1000}; /* the controller is asked 10 times a second */
        nanosleep(&ts, NULL);
        json_decref(rep);
        rep = cu_call(&cfg, json_pack("{s:s,s:I}", "type", "show", "job", (json_int_t)id));
        if (!rep) {
            status = RESIZE_REFUSED;
            break;
        }
        job = json_object_get(rep, "job");
    }
out:
    json_decref(rep);
    config_free(&cfg);
    return status;
}

/* Where a job's limit is not enforced (its node has no cgroup v2 controller for it):
 * a note under the table, so that a user of --mem knows. */
static void unenforced_note(const json_t *nodes, const char *limit, const char *what,
                            const char *ctl)
{
    size_t k, n = 0;
    json_t *x;
    char **names = calloc(json_array_size(nodes) + 1, sizeof(char *));
    json_array_foreach(nodes, k, x) {
        const json_t *lim = json_object_get(x, "limits");
        if (names && lim && !json_is_true(json_object_get(lim, limit)))
            names[n++] = (char *)cu_str(x, "name");
    }
    char list[512];
    if (n && hostlist_compress(names, (int)n, list, sizeof(list)) >= 0)
        printf("note: %s not enforced on %s (no cgroup v2 %s controller there)\n", what, list,
               ctl);
    free(names);
}

int cmd_nodes(int argc, char **argv)
{
    common_t o = {0};
    static const spec_t sp = {"nodes", OPT(O_CONF) | OPT(O_JSON), 0, 1,
                              "ductile nodes [NODE|HOSTLIST] [--json]"};
    int i = parse(argc, argv, &o, &sp);
    if (i < 0)
        return 1;
    char **want = NULL;
    int nwant = 0;
    if (i < argc) {
        char err[256];
        if (hostlist_expand(argv[i], &want, &nwant, err, sizeof(err)) < 0)
            return cmd_fail("nodes: %s", err);
        if (!nwant)
            return cmd_fail("nodes: '%s' names no node", argv[i]);
    }
    json_t *rep = cu_request(o.conf, json_pack("{s:s}", "type", "nodes"));
    if (!rep) {
        hostlist_free(want, nwant);
        return 1;
    }
    json_t *nodes = json_object_get(rep, "nodes");
    if (want) { /* only the nodes asked for, in the order asked */
        json_t *sel = json_array();
        for (int w = 0; w < nwant; w++) {
            size_t k;
            json_t *x, *found = NULL;
            json_array_foreach(nodes, k, x) if (!strcmp(cu_str(x, "name"), want[w])) found = x;
            if (!found) {
                cmd_fail("nodes: no node '%s' in this cluster", want[w]);
                json_decref(sel);
                json_decref(rep);
                hostlist_free(want, nwant);
                return 1;
            }
            json_array_append(sel, found);
        }
        hostlist_free(want, nwant);
        json_object_set_new(rep, "nodes", sel);
        nodes = sel;
    }
    if (o.json) {
        cu_print_json(nodes);
        json_decref(rep);
        return 0;
    }
    static const char *hdr[] = {"NODE", "STATE", "CPUS", "MEMORY", "GPUS", "FEATURES", "POWER",
                                "REASON"};
    int n = (int)json_array_size(nodes);
    char ***rows = calloc((size_t)n + 1, sizeof(char **));
    const char *states[] = {"idle", "alloc", "draining", "drained", "down", "unknown", "checkpoint",
                            "lent"};
    int count[8] = {0};
    size_t k;
    json_t *x;
    json_array_foreach(nodes, k, x)
    {
        rows[k] = calloc(8, sizeof(char *));
        rows[k][0] = esc(x, "name");
        rows[k][1] = cu_sprintf("%s", cu_str(x, "state"));
        rows[k][2] = cu_sprintf("%lld", (long long)json_integer_value(json_object_get(x, "cpus")));
        /* what --mem compares with (NodeMemory), else what the node reported */
        json_t *mem = json_object_get(x, "sched_memory_mb");
        rows[k][3] = cu_sprintf("%lldM", (long long)json_integer_value(
                                             mem ? mem : json_object_get(x, "memory_mb")));
        rows[k][4] = cu_sprintf("%lld", (long long)json_integer_value(json_object_get(x, "gpus")));
        rows[k][5] = json_object_get(x, "features") ? esc(x, "features") : cu_sprintf("-");
        /* the watts and where they come from: rapl (measured) or model */
        rows[k][6] = json_is_number(json_object_get(x, "power"))
                         ? cu_sprintf("%.0fW(%s)", cu_num(x, "power"), cu_str(x, "power_source"))
                         : cu_sprintf("-");
        rows[k][7] = esc(x, "reason");
        for (int s = 0; s < 8; s++)
            if (!strncmp(cu_str(x, "state"), states[s], strlen(states[s])))
                count[s]++;
    }
    cu_table(hdr, rows, n, 8);
    cu_free_rows(rows, n, 8);
    printf("%d nodes: %d idle, %d allocated, %d draining, %d drained, %d down, %d unknown", n,
           count[0], count[1], count[2], count[3], count[4], count[5]);
    if (count[6]) /* holding checkpoint agents (CheckpointNodes), not counted above */
        printf(", %d for checkpoints", count[6]);
    if (count[7]) /* nodes for jobs lent to the checkpoint service (CheckpointLending) */
        printf(", %d lent to checkpoints", count[7]);
    printf("\n");
    unenforced_note(nodes, "memory", "--mem is", "memory");
    unenforced_note(nodes, "pids", "MaxProcessesPerJob is", "pids");
    json_decref(rep);
    return 0;
}

/* "1h", "30m", "2d", "90s": that long ago; a plain number: Unix time. */
/* --since / --until: a Unix time, a date (2026-11-28, 2026-11-28T14:30[:00], local time),
 * or a duration back from now (2h) */
static int parse_since(const char *s, double *out)
{
    double d;
    long v;
    if (!strcasecmp(s, "now")) { /* sacct -E now: to the microsecond (ends are) */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        *out = (double)ts.tv_sec + ts.tv_nsec / 1e9;
        return 0;
    }
    if (strparse_long(s, 0, LONG_MAX, &v) == 0) {
        *out = (double)v;
        return 0;
    }
    if (strchr(s, '-') && s[0] != '-') { /* a date, not a duration like 1-00:00 */
        char full[40];
        snprintf(full, sizeof(full), "%s%s", s, strchr(s, 'T') ? "" : "T00:00");
        if (strlen(s) >= 10 && s[4] == '-' && strparse_time(full, (double)time(NULL), out) == 0)
            return 0;
    }
    if (strparse_duration(s, &d) < 0)
        return -1;
    *out = (double)time(NULL) - d;
    return 0;
}

/* history --steps: after each job a row per step, as sacct's "12.batch" and "12.0":
 * its command, state, times, nodes, exit code and use, its job's user. */
static json_t *with_steps(const json_t *jobs)
{
    json_t *rows = json_array();
    size_t k, q;
    json_t *j, *s;
    json_array_foreach(jobs, k, j)
    {
        json_array_append(rows, j);
        char *label = listing_job_label(j);
        json_array_foreach(json_object_get(j, "steps"), q, s)
        {
            long long step = (long long)json_integer_value(json_object_get(s, "step"));
            int st = (int)json_integer_value(json_object_get(s, "status"));
            double start = cu_num(s, "start"), end = cu_num(s, "end");
            bool killed = st > 128 && st <= 128 + 64; /* 128 + N: signal N (255: lost) */
            /* ended by SIGTERM or SIGKILL, as a cancel or a time limit ends it */
            bool stopped = st == 128 + SIGTERM || st == 128 + SIGKILL;
            char id[96];
            if (step == 0)
                snprintf(id, sizeof(id), "%s.batch", label ? label : "?");
            else
                snprintf(id, sizeof(id), "%s.%lld", label ? label : "?", step - 1);
            json_t *r = json_pack(
                "{s:s,s:O,s:O,s:O,s:s,s:s,s:O,s:f,s:f,s:f,s:i,s:i}", "step_label", id, "id",
                json_object_get(j, "id"), "name", json_object_get(s, "name"), "user",
                json_object_get(j, "user"), "state", end > 0 ? (stopped ? "CA" : st ? "F" : "CD") : "R",
                "state_name", end > 0 ? (stopped ? "CANCELLED" : st ? "FAILED" : "COMPLETED")
                                      : "RUNNING", "nodelist",
                json_object_get(s, "nodelist"), "start", start, "end", end, "elapsed",
                (end > 0 ? end : (double)time(NULL)) - start, "exit_code", killed ? 0 : st,
                "signal", killed ? st - 128 : 0);
            if (r) {
                json_object_set(r, "nodes", json_object_get(s, "tasks"));
                if (json_object_get(s, "cpu"))
                    json_object_set(r, "total_cpu", json_object_get(s, "cpu"));
                if (json_object_get(s, "mem"))
                    json_object_set(r, "max_rss", json_object_get(s, "mem"));
                json_array_append_new(rows, r);
            }
        }
        free(label);
    }
    return rows;
}

/* history's table, and the fields --parsable prints without --format */
static const listing_col_def_t history_cols[] = {
    {"JobID", "JOBID", 0},  {"JobName", "NAME", 20},  {"User", "USER", 0},
    {"State", "STATE", 0},  {"Elapsed", "ELAPSED", 0}, {"NNodes", "NODES", 0},
    {"NodeSecs", "NODESECS", 0}, {"Energy", "ENERGY", 0}, {"ExitCode", "EXIT", 0},
    {"Sizes", "SIZES", 0},
};
#define HISTORY_PARSABLE "JobID,JobName,User,State,Elapsed,NNodes,NodeSecs,Energy,ExitCode,Sizes"

int cmd_history(int argc, char **argv)
{
    common_t o = {0};
    static const spec_t sp = {"history", OPT(O_CONF) | OPT(O_JSON) | OPT(O_USER) | OPT(O_STATE) |
                                             OPT(O_SINCE) | OPT(O_UNTIL) | OPT(O_LIMIT) |
                                             OPT(O_FORMAT) | OPT(O_PARSABLE) |
                                             OPT(O_NOHEADER) | OPT(O_STEPS) | OPT(O_RUNNING) |
                                             OPT(O_SORT),
                              0, -1,
                              "ductile history [JOB...] [-u|--user U] [-t|--state CD|F|CA|TO|NF] "
                              "[--since T] [--until T] [--limit N] [--format F1,F2...] "
                              "[--parsable] [--noheader] [--steps] [--running] [--sort KEYS] "
                              "[--json]  (T: 2h, "
                              "2026-11-28[T14:30], UNIXTIME)"};
    int i = parse(argc, argv, &o, &sp);
    if (i < 0)
        return 1;
    json_t *req = json_pack("{s:s}", "type", "history");
    if (i < argc) {
        json_t *ids = job_ids(argv + i, argc - i, NULL);
        if (!ids) {
            json_decref(req);
            return 1;
        }
        json_object_set_new(req, "jobs", ids);
    }
    if (o.user)
        json_object_set_new(req, "user", json_string(o.user));
    if (o.state)
        json_object_set_new(req, "state", json_string(o.state));
    if (o.limit)
        json_object_set_new(req, "limit", json_integer(o.limit));
    if (o.steps)
        json_object_set_new(req, "steps", json_true());
    if (o.running)
        json_object_set_new(req, "running", json_true());
    const char *when[2] = {o.since, o.until};
    for (int w = 0; w < 2; w++) {
        double t;
        if (!when[w])
            continue;
        if (parse_since(when[w], &t) < 0) {
            json_decref(req);
            return cmd_fail("--%s: '%s' is not a time (2h ago, 2026-11-28, "
                            "2026-11-28T14:30, or a Unix time)", w ? "until" : "since", when[w]);
        }
        json_object_set_new(req, w ? "until" : "since", json_real(t));
    }
    config_t cfg = {0};
    if (cu_load_conf(o.conf, &cfg)) {
        json_decref(req);
        return 1;
    }
    /* a long history comes a page at a time (it never holds the controller long) */
    long limit = o.limit ? o.limit : 1000;
    json_t *rep = cu_paged(cu_call, &cfg, req, limit);
    config_free(&cfg);
    if (!rep)
        return 1;
    if (json_object_get(rep, "next")) /* cut by the limit: say so (to stderr: the table stays whole) */
        fprintf(stderr, "ductile: history: the newest %ld jobs shown; more ended before them "
                        "(--limit N shows more, --since T and --until T choose a time)\n", limit);
    json_t *jobs = json_object_get(rep, "jobs");
    if (o.json) {
        cu_print_json(jobs);
        json_decref(rep);
        return 0;
    }
    listing_ctx_t x = {LISTING_HISTORY, "history: --sort", NULL, 0};
    if (o.sort && listing_sort(&x, jobs, o.sort)) {
        json_decref(rep);
        return 1;
    }
    x.what = "history: --format";
    listing_t *l = o.format || o.parsable
                       ? listing_parse(&x, o.format ? o.format : HISTORY_PARSABLE)
                       : listing_layout(&x, history_cols,
                                        (int)(sizeof(history_cols) / sizeof(history_cols[0])));
    json_t *rows = o.steps ? with_steps(jobs) : json_incref(jobs);
    if (l)
        listing_print(&x, l, rows, o.noheader, o.parsable);
    listing_free(l);
    json_decref(rows);
    json_decref(rep);
    return l ? 0 : 1;
}

static int drain_resume(int argc, char **argv, bool drain)
{
    common_t o = {0};
    static const spec_t sd = {"drain", OPT(O_CONF) | OPT(O_REASON) | OPT(O_DOWN), 1, 1,
                              "ductile drain NODES [--reason TEXT] [--down]\n"
                              "  --down: the nodes failed (a power loss): their jobs end, or are "
                              "requeued, now; for nodes a controller that suspects its own "
                              "network keeps up. Not for nodes that are only cut off: their "
                              "--requeue jobs would run twice (docs/reliability.md)"};
    static const spec_t sr = {"resume", OPT(O_CONF), 1, 1, "ductile resume NODES"};
    int i = parse(argc, argv, &o, drain ? &sd : &sr);
    if (i < 0)
        return 1;
    json_t *req = json_pack("{s:s,s:s}", "type", drain ? "drain" : "resume", "nodes", argv[i]);
    if (o.reason)
        json_object_set_new(req, "reason", json_string(o.reason));
    if (o.down)
        json_object_set_new(req, "down", json_true());
    json_t *rep = cu_request(o.conf, req);
    if (!rep)
        return 1;
    json_decref(rep);
    return 0;
}

int cmd_drain(int argc, char **argv) { return drain_resume(argc, argv, true); }

int cmd_reconfigure(int argc, char **argv)
{
    common_t o = {0};
    static const spec_t sp = {"reconfigure", OPT(O_CONF), 0, 0,
                             "ductile reconfigure [--conf FILE]\n  (operators) the controller reads its "
                             "ductile.conf again: the keys that can change at run time take effect, "
                             "the others are named as waiting for a restart, and a file with a "
                             "mistake changes nothing (docs/configuration.md)"};
    if (parse(argc, argv, &o, &sp) < 0)
        return 1;
    config_t cfg = {0};
    if (cu_load_conf(o.conf, &cfg)) { /* the controller would refuse the same file */
        fprintf(stderr, "ductile: nothing changed: the controller keeps the configuration "
                        "it has\n");
        return 1;
    }
    json_t *rep = cu_call(&cfg, json_pack("{s:s}", "type", "reconfigure"));
    config_free(&cfg);
    if (!rep)
        return 1;
    const char *file = json_string_value(json_object_get(rep, "file"));
    const char *now = json_string_value(json_object_get(rep, "applied"));
    const char *later = json_string_value(json_object_get(rep, "restart"));
    printf("the controller read %s again\n", file ? file : "its configuration");
    printf("now in effect: %s\n", now && *now ? now : "no change");
    if (later && *later)
        printf("changed, but kept as they were until the daemons restart: %s\n", later);
    json_decref(rep);
    return 0;
}
int cmd_resume(int argc, char **argv) { return drain_resume(argc, argv, false); }
