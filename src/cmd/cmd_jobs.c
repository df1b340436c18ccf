#define _GNU_SOURCE /* vasprintf */
/* ductile queue | show | cancel | nodes | history | drain | resume | resize */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "util.h"

typedef struct common {
    const char *conf;
    bool json;
    const char *user, *state, *reason;
    const char *since;
    long nodes;
    long limit;
} common_t;

enum { O_CONF = 256, O_JSON, O_USER, O_STATE, O_SINCE, O_REASON, O_NODES, O_LIMIT, O_HELP };

/* Parses the options every listing shares; returns the first positional index or -1. */
static int parse(int argc, char **argv, common_t *c, const char *usage)
{
    static const struct option lopts[] = {
        {"conf", required_argument, 0, O_CONF},     {"json", no_argument, 0, O_JSON},
        {"user", required_argument, 0, O_USER},     {"state", required_argument, 0, O_STATE},
        {"since", required_argument, 0, O_SINCE},   {"reason", required_argument, 0, O_REASON},
        {"nodes", required_argument, 0, O_NODES},   {"limit", required_argument, 0, O_LIMIT},
        {"help", no_argument, 0, O_HELP},           {0, 0, 0, 0},
    };
    int o;
    opterr = 0;
    optind = 1;
    while ((o = getopt_long(argc, argv, "u:N:", lopts, NULL)) != -1) {
        char *end;
        switch (o) {
        case O_CONF: c->conf = optarg; break;
        case O_JSON: c->json = true; break;
        case 'u':
        case O_USER: c->user = optarg; break;
        case O_STATE: c->state = optarg; break;
        case O_SINCE: c->since = optarg; break;
        case O_REASON: c->reason = optarg; break;
        case 'N':
        case O_NODES:
            errno = 0;
            c->nodes = strtol(optarg, &end, 10);
            if (errno || *end || c->nodes < 1) {
                cmd_fail("--nodes: '%s' is not a node count", optarg);
                return -1;
            }
            break;
        case O_LIMIT:
            errno = 0;
            c->limit = strtol(optarg, &end, 10);
            if (errno || *end || c->limit < 1) {
                cmd_fail("--limit: '%s' is not a positive number", optarg);
                return -1;
            }
            break;
        case O_HELP:
            printf("usage: %s\n", usage);
            exit(0);
        default:
            cmd_fail("bad option '%s' (usage: %s)", argv[optind - 1], usage);
            return -1;
        }
    }
    return optind;
}

static int parse_job(const char *s, long long *id)
{
    char *end;
    errno = 0;
    *id = strtoll(s, &end, 10);
    if (errno || end == s || *end || *id < 1)
        return cmd_fail("'%s' is not a job id", s);
    return 0;
}

static json_t *call(const char *conf, json_t *req)
{
    config_t cfg = {0};
    if (cu_load_conf(conf, &cfg)) {
        json_decref(req);
        return NULL;
    }
    json_t *rep = cu_call(&cfg, req);
    config_free(&cfg);
    return rep;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = NULL;
    if (vasprintf(&s, f, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

static void free_rows(char ***rows, int n, int ncols)
{
    for (int r = 0; r < n; r++) {
        for (int c = 0; c < ncols; c++)
            free(rows[r][c]);
        free(rows[r]);
    }
    free(rows);
}

int cmd_queue(int argc, char **argv)
{
    common_t o = {0};
    int i = parse(argc, argv, &o, "ductile queue [--user U] [--state ST] [--json]");
    if (i < 0)
        return 1;
    json_t *req = json_pack("{s:s,s:s}", "type", "queue", "format", o.json ? "json" : "table");
    if (o.user)
        json_object_set_new(req, "user", json_string(o.user));
    if (o.state)
        json_object_set_new(req, "state", json_string(o.state));
    json_t *rep = call(o.conf, req);
    if (!rep)
        return 1;
    json_t *jobs = json_object_get(rep, "jobs");
    if (o.json) {
        cu_print_json(jobs);
        json_decref(rep);
        return 0;
    }
    const json_t *text = json_object_get(rep, "text");
    if (json_is_string(text)) { /* the controller rendered the table */
        fwrite(json_string_value(text), 1, json_string_length(text), stdout);
        json_decref(rep);
        return 0;
    }
    static const char *hdr[] = {"JOBID", "NAME", "USER", "ST", "TIME", "NODES", "NODELIST(REASON)"};
    int n = (int)json_array_size(jobs);
    char ***rows = calloc((size_t)n + 1, sizeof(char **));
    size_t k;
    json_t *j;
    json_array_foreach(jobs, k, j)
    {
        char t[32];
        cu_fmt_duration(cu_num(j, "elapsed"), t, sizeof(t));
        bool pending = !strcmp(cu_str(j, "state"), "PD");
        rows[k] = calloc(7, sizeof(char *));
        rows[k][0] = fmt("%lld", (long long)json_integer_value(json_object_get(j, "id")));
        rows[k][1] = fmt("%.20s", cu_str(j, "name"));
        rows[k][2] = fmt("%s", cu_str(j, "user"));
        rows[k][3] = fmt("%s", cu_str(j, "state"));
        rows[k][4] = fmt("%s", t);
        rows[k][5] = fmt("%lld", (long long)json_integer_value(json_object_get(j, "nodes")));
        rows[k][6] = pending ? fmt("(%s)", cu_str(j, "reason")) : fmt("%s", cu_str(j, "nodelist"));
    }
    cu_table(hdr, rows, n, 7);
    free_rows(rows, n, 7);
    json_decref(rep);
    return 0;
}

static void print_time(const char *label, double t)
{
    if (t <= 0) {
        printf("%-14s -\n", label);
        return;
    }
    time_t s = (time_t)t;
    struct tm tm;
    char buf[64];
    localtime_r(&s, &tm);
    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    printf("%-14s %s\n", label, buf);
}

int cmd_show(int argc, char **argv)
{
    common_t o = {0};
    int i = parse(argc, argv, &o, "ductile show JOB [--json]");
    if (i < 0)
        return 1;
    if (i + 1 != argc)
        return cmd_fail("show: give exactly one job id");
    long long id;
    if (parse_job(argv[i], &id))
        return 1;
    json_t *rep = call(o.conf, json_pack("{s:s,s:I}", "type", "show", "job", (json_int_t)id));
    if (!rep)
        return 1;
    json_t *j = json_object_get(rep, "job");
    if (o.json) {
        cu_print_json(j);
        json_decref(rep);
        return 0;
    }
    char t[32];
    printf("%-14s %lld\n", "JobId", (long long)json_integer_value(json_object_get(j, "id")));
    printf("%-14s %s\n", "Name", cu_str(j, "name"));
    printf("%-14s %s\n", "User", cu_str(j, "user"));
    printf("%-14s %s (%s)\n", "State", cu_str(j, "state_name"), cu_str(j, "state"));
    printf("%-14s %s\n", "Reason", cu_str(j, "reason"));
    printf("%-14s %s\n", "Type", cu_str(j, "type"));
    printf("%-14s %lld (requested %lld, min %lld, max %lld, constraint %s)\n", "Nodes",
           (long long)json_integer_value(json_object_get(j, "nodes")),
           (long long)json_integer_value(json_object_get(j, "requested_nodes")),
           (long long)json_integer_value(json_object_get(j, "min_nodes")),
           (long long)json_integer_value(json_object_get(j, "max_nodes")), cu_str(j, "constraint"));
    printf("%-14s %s\n", "NodeList", cu_str(j, "nodelist"));
    if (json_object_get(j, "mtct"))
        printf("%-14s %.3f (MPI time / wall time, reported by the job)\n", "MTCT", cu_num(j, "mtct"));
    cu_fmt_duration(cu_num(j, "time_limit"), t, sizeof(t));
    printf("%-14s %s\n", "TimeLimit", cu_num(j, "time_limit") > 0 ? t : "none");
    print_time("SubmitTime", cu_num(j, "submit"));
    print_time("StartTime", cu_num(j, "start"));
    print_time("EndTime", cu_num(j, "end"));
    cu_fmt_duration(cu_num(j, "elapsed"), t, sizeof(t));
    printf("%-14s %s\n", "Elapsed", t);
    printf("%-14s %.0f\n", "NodeSeconds", cu_num(j, "node_seconds"));
    long long ec = (long long)json_integer_value(json_object_get(j, "exit_code"));
    long long sig = (long long)json_integer_value(json_object_get(j, "signal"));
    if (ec >= 0)
        printf("%-14s %lld%s%s\n", "ExitCode", ec, sig ? " signal " : "",
               sig ? (sig == 9 ? "KILL" : sig == 15 ? "TERM" : "other") : "");
    printf("%-14s %s\n", "WorkDir", cu_str(j, "cwd"));
    printf("%-14s %s\n", "StdOut", cu_str(j, "stdout"));
    printf("%-14s %s\n", "Requeue", json_is_true(json_object_get(j, "requeue")) ? "yes" : "no");
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
        printf("  %s  %-8s %lld -> %lld %s\n", buf, cu_str(e, "event"),
               (long long)json_integer_value(json_object_get(e, "before")),
               (long long)json_integer_value(json_object_get(e, "after")), cu_str(e, "detail"));
    }
    json_decref(rep);
    return 0;
}

int cmd_cancel(int argc, char **argv)
{
    common_t o = {0};
    int i = parse(argc, argv, &o, "ductile cancel JOB...");
    if (i < 0)
        return 1;
    if (i >= argc)
        return cmd_fail("cancel: give at least one job id");
    int status = 0;
    for (; i < argc; i++) {
        long long id;
        if (parse_job(argv[i], &id)) {
            status = 1;
            continue;
        }
        json_t *rep = call(o.conf, json_pack("{s:s,s:I}", "type", "cancel", "job", (json_int_t)id));
        if (!rep)
            status = 1;
        json_decref(rep);
    }
    return status;
}

int cmd_resize(int argc, char **argv)
{
    common_t o = {0};
    int i = parse(argc, argv, &o, "ductile resize JOB --nodes N");
    if (i < 0)
        return 1;
    if (i + 1 != argc || !o.nodes)
        return cmd_fail("resize: usage: ductile resize JOB --nodes N");
    long long id;
    if (parse_job(argv[i], &id))
        return 1;
    json_t *rep = call(o.conf, json_pack("{s:s,s:I,s:I}", "type", "resize", "job", (json_int_t)id,
                                         "nodes", (json_int_t)o.nodes));
    if (!rep)
        return 1;
    json_decref(rep);
    return 0;
}

int cmd_nodes(int argc, char **argv)
{
    common_t o = {0};
    int i = parse(argc, argv, &o, "ductile nodes [--json]");
    if (i < 0)
        return 1;
    json_t *rep = call(o.conf, json_pack("{s:s}", "type", "nodes"));
    if (!rep)
        return 1;
    json_t *nodes = json_object_get(rep, "nodes");
    if (o.json) {
        cu_print_json(nodes);
        json_decref(rep);
        return 0;
    }
    static const char *hdr[] = {"NODE", "STATE", "CPUS", "MEMORY", "REASON"};
    int n = (int)json_array_size(nodes);
    char ***rows = calloc((size_t)n + 1, sizeof(char **));
    const char *states[] = {"idle", "alloc", "draining", "drained", "down", "unknown"};
    int count[6] = {0};
    size_t k;
    json_t *x;
    json_array_foreach(nodes, k, x)
    {
        rows[k] = calloc(5, sizeof(char *));
        rows[k][0] = fmt("%s", cu_str(x, "name"));
        rows[k][1] = fmt("%s", cu_str(x, "state"));
        rows[k][2] = fmt("%lld", (long long)json_integer_value(json_object_get(x, "cpus")));
        rows[k][3] = fmt("%lldM", (long long)json_integer_value(json_object_get(x, "memory_mb")));
        rows[k][4] = fmt("%s", cu_str(x, "reason"));
        for (int s = 0; s < 6; s++)
            if (!strncmp(cu_str(x, "state"), states[s], strlen(states[s])))
                count[s]++;
    }
    cu_table(hdr, rows, n, 5);
    free_rows(rows, n, 5);
    printf("%d nodes: %d idle, %d allocated, %d draining, %d drained, %d down, %d unknown\n", n,
           count[0], count[1], count[2], count[3], count[4], count[5]);
    json_decref(rep);
    return 0;
}

/* "1h", "30m", "2d", "90s": that long ago; a plain number: Unix time. */
static int parse_since(const char *s, double *out)
{
    double d;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!errno && end != s && !*end && v >= 0) {
        *out = v;
        return 0;
    }
    if (cu_parse_duration(s, &d) < 0)
        return -1;
    *out = (double)time(NULL) - d;
    return 0;
}

int cmd_history(int argc, char **argv)
{
    common_t o = {0};
    int i = parse(argc, argv, &o, "ductile history [--user U] [--state CD|F|CA|TO|NF] "
                                  "[--since 1h|UNIXTIME] [--limit N] [--json]");
    if (i < 0)
        return 1;
    json_t *req = json_pack("{s:s}", "type", "history");
    if (o.user)
        json_object_set_new(req, "user", json_string(o.user));
    if (o.state)
        json_object_set_new(req, "state", json_string(o.state));
    if (o.limit)
        json_object_set_new(req, "limit", json_integer(o.limit));
    if (o.since) {
        double t;
        if (parse_since(o.since, &t) < 0) {
            json_decref(req);
            return cmd_fail("--since: '%s' is neither a Unix time nor a duration like 2h", o.since);
        }
        json_object_set_new(req, "since", json_real(t));
    }
    json_t *rep = call(o.conf, req);
    if (!rep)
        return 1;
    json_t *jobs = json_object_get(rep, "jobs");
    if (o.json) {
        cu_print_json(jobs);
        json_decref(rep);
        return 0;
    }
    static const char *hdr[] = {"JOBID", "NAME", "USER", "STATE", "ELAPSED", "NODES", "NODESECS",
                                "EXIT", "SIZES"};
    int n = (int)json_array_size(jobs);
    char ***rows = calloc((size_t)n + 1, sizeof(char **));
    size_t k;
    json_t *j;
    json_array_foreach(jobs, k, j)
    {
        char t[32];
        cu_fmt_duration(cu_num(j, "elapsed"), t, sizeof(t));
        long long sig = (long long)json_integer_value(json_object_get(j, "signal"));
        rows[k] = calloc(9, sizeof(char *));
        rows[k][0] = fmt("%lld", (long long)json_integer_value(json_object_get(j, "id")));
        rows[k][1] = fmt("%.20s", cu_str(j, "name"));
        rows[k][2] = fmt("%s", cu_str(j, "user"));
        rows[k][3] = fmt("%s", cu_str(j, "state_name"));
        rows[k][4] = fmt("%s", t);
        rows[k][5] = fmt("%lld", (long long)json_integer_value(json_object_get(j, "nodes")));
        rows[k][6] = fmt("%.0f", cu_num(j, "node_seconds"));
        rows[k][7] = sig ? fmt("%lld:%lld", (long long)json_integer_value(json_object_get(j, "exit_code")), sig)
                         : fmt("%lld", (long long)json_integer_value(json_object_get(j, "exit_code")));
        rows[k][8] = fmt("%.40s", cu_str(j, "sizes")[0] ? cu_str(j, "sizes") : "-");
    }
    cu_table(hdr, rows, n, 9);
    free_rows(rows, n, 9);
    json_decref(rep);
    return 0;
}

static int drain_resume(int argc, char **argv, bool drain)
{
    common_t o = {0};
    int i = parse(argc, argv, &o, drain ? "ductile drain NODES [--reason TEXT]"
                                        : "ductile resume NODES");
    if (i < 0)
        return 1;
    if (i + 1 != argc)
        return cmd_fail("%s: give one node list, e.g. n[01-04]", drain ? "drain" : "resume");
    json_t *req = json_pack("{s:s,s:s}", "type", drain ? "drain" : "resume", "nodes", argv[i]);
    if (o.reason)
        json_object_set_new(req, "reason", json_string(o.reason));
    json_t *rep = call(o.conf, req);
    if (!rep)
        return 1;
    json_decref(rep);
    return 0;
}

int cmd_drain(int argc, char **argv) { return drain_resume(argc, argv, true); }
int cmd_resume(int argc, char **argv) { return drain_resume(argc, argv, false); }
