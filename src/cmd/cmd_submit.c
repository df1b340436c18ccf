/* ductile submit: send a batch script to the controller. Options come from the
 * command line or from "#DUCTILE --opt=value" lines at the top of the script; the
 * command line wins. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "directives.h"
#include "sched.h"
#include "strparse.h"
#include "util.h"

extern char **environ;

typedef struct sub {
    const char *name, *out, *err, *cons, *type;
    long nodes, minn, maxn;
    double time;
    double pmin, pmax;  /* --power-min/--power-max, W per node; < 0: not given */
    double io;          /* --io-intensity, share of its run time in I/O, 0..1; < 0: not given */
    bool requeue, ckpt_agents;
    bool set_nodes, set_time;
} sub_t;

enum { O_MIN = 256, O_MAX, O_CONS, O_MALL, O_MOLD, O_RIGID, O_EVOL, O_REQ, O_CONF, O_HELP,
       O_PMIN, O_PMAX, O_CKAG, O_IO };
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
    {"help", no_argument, 0, O_HELP},          {0, 0, 0, 0},
};

/* Strict: "0x2", "+2", "2.0" and " 2" are not node counts (strparse). */
static int parse_count(const char *where, const char *opt, const char *v, long *out)
{
    if (strparse_long(v, 1, 1L << 24, out) < 0)
        return cmd_fail("%s%s: '%s' is not a node count (1 to 16777216)", where, opt, v);
    return 0;
}

/* Applies one option; `where` names its origin for messages. */
static int apply(sub_t *s, int o, const char *arg, const char *where, const char **conf)
{
    switch (o) {
    case 'N':
        s->set_nodes = true;
        return parse_count(where, "--nodes", arg, &s->nodes);
    case 't':
        s->set_time = true;
        if (strparse_duration(arg, &s->time) < 0)
            return cmd_fail("%s--time: '%s' is not a duration (minutes, MM:SS, HH:MM:SS, "
                            "D-HH[:MM[:SS]], or 90s, 30m, 2h, 1d; at most 100 years)", where, arg);
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
    case O_MALL: s->type = "malleable"; return 0;
    case O_MOLD: s->type = "moldable"; return 0;
    case O_RIGID: s->type = "rigid"; return 0;
    case O_EVOL: s->type = "evolving"; return 0;
    case O_REQ: s->requeue = true; return 0;
    case O_CKAG: s->ckpt_agents = true; return 0;
    case O_CONF: *conf = arg; return 0;
    case 'J':
    case 'o':
    case 'e':
        break;
    default: return cmd_fail("%sunknown option", where);
    }
    /* names and paths: checked here for a clear message, and by the controller */
    if (strparse_has_control(arg))
        return cmd_fail("%s--%s: the %s contains a control character (newline, tab, "
                        "escape...): not allowed", where,
                        o == 'J' ? "job-name" : o == 'o' ? "output" : "error",
                        o == 'J' ? "job name" : o == 'o' ? "output path" : "error path");
    switch (o) {
    case 'J': s->name = arg; break;
    case 'o': s->out = arg; break;
    default: s->err = arg; break;
    }
    return 0;
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

/* "#DUCTILE --nodes=4 --time 10" lines before the first command. */
typedef struct scan {
    sub_t *s;
    const char *path;
    const char **conf;
    char **keep; /* values must outlive the scan */
    int nkeep;
} scan_t;

static const struct option *find_opt(const char *name)
{
    for (const struct option *o = lopts; o->name; o++)
        if (!strcmp(o->name, name))
            return o;
    return NULL;
}

static int needs_value(const char *name, void *arg)
{
    (void)arg;
    const struct option *o = find_opt(name);
    return o && o->has_arg == required_argument;
}

static int on_directive(const char *name, const char *value, int line, void *arg)
{
    scan_t *x = arg;
    char where[512];
    snprintf(where, sizeof(where), "%.400s:%d: ", x->path, line);
    const struct option *o = find_opt(name);
    if (!o || o->val == O_HELP || o->val == O_CONF)
        return cmd_fail("%sunknown option --%s", where, name);
    if (o->has_arg == no_argument && value)
        return cmd_fail("%s--%s takes no value", where, name);
    char *v = value ? strdup(value) : NULL;
    if (v && x->nkeep < 64)
        x->keep[x->nkeep++] = v;
    /* directives come first: the command line, applied later, overrides them */
    return apply(x->s, o->val, v, where, x->conf);
}

static int scan_directives(sub_t *s, const char *script, const char *path, const char **conf)
{
    static char *keep[64];
    scan_t x = {.s = s, .path = path, .conf = conf, .keep = keep};
    char err[256];
    int rc = directives_scan(script, needs_value, on_directive, &x, err, sizeof(err));
    if (rc < 0)
        return cmd_fail("%s: %s", path, err);
    return rc;
}

static bool utf8_ok(const char *s)
{
    json_t *t = json_string(s); /* NULL unless valid UTF-8 */
    json_decref(t);
    return t != NULL;
}

int cmd_submit(int argc, char **argv)
{
    sub_t s = {.nodes = 1, .pmin = -1, .pmax = -1, .io = -1};
    const char *conf = NULL;
    /* First pass: find the script (the first non-option argument). */
    const char *script_path = NULL;
    int o;
    opterr = 0;
    optind = 1;
    while ((o = getopt_long(argc, argv, "+:N:t:J:o:e:", lopts, NULL)) != -1) {
        if (o == O_HELP) {
            printf("usage: ductile submit [options] SCRIPT\n"
                   "  -N, --nodes N             nodes (the start size)\n"
                   "  -t, --time T              time limit: minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]],\n"
                   "                            or 90s, 30m, 2h, 1d\n"
                   "  -J, --job-name NAME\n"
                   "  -o, --output FILE         stdout (%%j = job id), default ductile-%%j.out\n"
                   "  -e, --error FILE          stderr, default: with stdout\n"
                   "      --min-nodes N, --max-nodes N\n"
                   "      --node-constraint C   none, pof2, even, odd, ncube, square\n"
                   "      --rigid | --moldable | --malleable | --evolving\n"
                   "      --requeue             requeue if a node fails\n"
                   "      --checkpoint-agents   checkpoints go through agents on the checkpoint\n"
                   "                            nodes, kept until the job ends (docs/checkpointing.md)\n"
                   "      --power-min W, --power-max W\n"
                   "                            the power the job draws per node, in watts (the\n"
                   "                            power corridor; default: its past runs, or DefaultJobPower)\n"
                   "      --io-intensity F      the share of its run time the job spends in I/O,\n"
                   "                            0 to 1 (the io-aware policy; default: none known)\n"
                   "Options may also be given as '#DUCTILE --nodes=4' lines at the top of the script.\n");
            return 0;
        }
        if (o == ':')
            return cmd_fail("submit: option '%s' needs a value (try --help)", argv[optind - 1]);
        if (o == '?')
            return cmd_fail("submit: bad option '%s' (try --help)", argv[optind - 1]);
    }
    if (optind >= argc)
        return cmd_fail("submit: no script given");
    if (optind + 1 < argc)
        return cmd_fail("submit: unexpected argument '%s'%s", argv[optind + 1],
                        argv[optind + 1][0] == '-' ? " (options go before the script)" : "");
    script_path = argv[optind];
    config_t cfg = {0};
    /* --conf must be known before reading the script limits */
    optind = 1;
    while ((o = getopt_long(argc, argv, "+N:t:J:o:e:", lopts, NULL)) != -1)
        if (o == O_CONF)
            conf = optarg;
    if (cu_load_conf(conf, &cfg))
        return 1;
    size_t len;
    char *script = read_file(script_path, (size_t)cfg.max_script_size, &len);
    if (!script) {
        int e = errno;
        config_free(&cfg);
        return cmd_fail("cannot read %s: %s", script_path, strerror(e));
    }
    char cwd[4096];
    int bad = 0;
    if (len > (size_t)cfg.max_script_size)
        bad = cmd_fail("%s is larger than MaxScriptSize (%d bytes)", script_path,
                       cfg.max_script_size);
    else if (strlen(script) != len)
        bad = cmd_fail("%s contains a NUL byte: not a script", script_path);
    else if (scan_directives(&s, script, script_path, &conf))
        bad = 1;
    optind = 1;
    while (!bad && (o = getopt_long(argc, argv, "+N:t:J:o:e:", lopts, NULL)) != -1)
        bad = apply(&s, o, optarg, "", &conf);
    if (!bad && !getcwd(cwd, sizeof(cwd)))
        bad = cmd_fail("cannot read the current directory: %s", strerror(errno));
    if (bad) {
        free(script);
        config_free(&cfg);
        return 1;
    }
    if (!bad && s.pmin >= 0 && s.pmax >= 0 && s.pmax < s.pmin)
        bad = cmd_fail("--power-max (%g W) is below --power-min (%g W)", s.pmax, s.pmin);
    if (bad) {
        free(script);
        config_free(&cfg);
        return 1;
    }
    const char *base = strrchr(script_path, '/');
    const char *name = s.name ? s.name : (base ? base + 1 : script_path);
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
    json_t *env = json_array();
    for (char **e = environ; *e; e++)
        json_array_append_new(env, json_string(*e));
    char key[72];
    if (cu_submit_key(key, sizeof(key))) {
        free(script);
        json_decref(env);
        config_free(&cfg);
        return 1;
    }
    json_t *req = json_pack("{s:s,s:s,s:s,s:s,s:I,s:f,s:b,s:o,s:s,s:s}", "type", "submit",
                            "key", key, "cwd", cwd, "name", name, "nodes",
                            (json_int_t)s.nodes, "time", s.time, "requeue", s.requeue, "env", env,
                            "job_type", s.type ? s.type : "rigid", "constraint",
                            s.cons ? s.cons : "none");
    if (req && s.ckpt_agents)
        json_object_set_new(req, "checkpoint_agents", json_true());
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
    if (s.out)
        json_object_set_new(req, "stdout", json_string(s.out));
    if (s.err)
        json_object_set_new(req, "stderr", json_string(s.err));
    json_t *rep = cu_call_retry(&cfg, req);
    config_free(&cfg);
    if (!rep)
        return 1;
    printf("Submitted job %lld\n", (long long)json_integer_value(json_object_get(rep, "job")));
    json_decref(rep);
    return 0;
}
