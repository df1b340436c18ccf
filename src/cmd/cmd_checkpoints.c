/* ductile checkpoints: the applications' checkpoints at the file level (libductile's
 * dt_ckpt_*, docs/checkpointing.md): per application its last complete version, the
 * process count that wrote it, its size and age, the versions kept and an interrupted
 * commit; with an application's name, its variables. Read from the checkpoint
 * directory itself (the home or parallel file system every node sees). */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ckptfiles.h"
#include "client.h"
#include "cmd.h"
#include "strparse.h"
#include "util.h"

enum { O_DIR = 256, O_JSON, O_HELP, O_AGENTS, O_KEY, O_JOB };

static const char *usage =
    "usage: ductile checkpoints [APP] [--dir DIR] [--json]\n"
    "       ductile checkpoints --agents HOST:PORT,... [--key-file FILE] [--json]\n"
    "       ductile checkpoints --job JOB [--json]\n"
    "  the checkpoints libductile's dt_ckpt_commit wrote: each application's last\n"
    "  complete version, its processes, size and time; with APP, its variables\n"
    "  --dir DIR       where they are (default: $DUCTILE_CKPT_DIR, else ~/.ductile/checkpoints)\n"
    "  --agents LIST   what these checkpoint agents hold in memory instead\n"
    "  --key-file F    the checkpoint service's key (default: $DUCTILE_CKPT_KEY_FILE)\n"
    "  --job JOB       what the agents of a job of yours (--checkpoint-agents) hold\n";

/* The bytes of a version's node files, and how many there are. */
static long long version_bytes(const char *vdir, int *files)
{
    long long sum = 0;
    *files = 0;
    DIR *d = opendir(vdir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "node", 4) || n < 5 || strcmp(e->d_name + n - 4, ".dat"))
            continue;
        char p[PATH_MAX + 256];
        struct stat st;
        snprintf(p, sizeof(p), "%s/%s", vdir, e->d_name);
        if (stat(p, &st) == 0) {
            sum += st.st_size;
            (*files)++;
        }
    }
    if (d)
        closedir(d);
    return sum;
}

/* Complete versions kept, and whether a commit was interrupted (a .part left). */
static int by_number(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static void versions_of(const char *app_dir, json_t *kept, int *interrupted)
{
    *interrupted = 0;
    long vs[64];
    size_t n = 0;
    DIR *d = opendir(app_dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char *end;
        if (e->d_name[0] != 'v')
            continue;
        long v = strtol(e->d_name + 1, &end, 10);
        if (v > 0 && !strcmp(end, ".part"))
            *interrupted = 1;
        else if (v > 0 && !*end && n < sizeof(vs) / sizeof(vs[0]))
            vs[n++] = v;
    }
    if (d)
        closedir(d);
    qsort(vs, n, sizeof(long), by_number);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(kept, json_integer(vs[i]));
}

static json_t *describe(const char *dir, const char *app)
{
    char adir[PATH_MAX], vdir[PATH_MAX + 32], man[PATH_MAX + 64];
    snprintf(adir, sizeof(adir), "%s/%s", dir, app);
    long v = ckptfiles_latest(adir);
    json_t *kept = json_array();
    int interrupted;
    versions_of(adir, kept, &interrupted);
    json_t *o = json_pack("{s:s,s:s,s:I,s:o,s:b,s:s}", "app", app, "dir", adir, "version",
                          (json_int_t)v, "kept", kept, "interrupted", interrupted, "level", "file");
    if (v <= 0)
        return o;
    snprintf(vdir, sizeof(vdir), "%s/v%ld", adir, v);
    snprintf(man, sizeof(man), "%s/manifest.json", vdir);
    int files;
    json_object_set_new(o, "bytes", json_integer(version_bytes(vdir, &files)));
    json_object_set_new(o, "nodes", json_integer(files));
    json_error_t jerr;
    json_t *m = json_load_file(man, 0, &jerr);
    if (!m) {
        json_object_set_new(o, "error", json_string("its manifest cannot be read"));
        return o;
    }
    json_object_set(o, "procs", json_object_get(m, "procs"));
    json_object_set(o, "time", json_object_get(m, "time"));
    json_object_set(o, "vars", json_object_get(m, "vars"));
    json_decref(m);
    return o;
}

/* How a saved variable comes back (libductile's manifest: dist, then value). */
static const char *dist_name(int d, int value)
{
    static const char *values[] = {NULL, "the process count", "the rank", "a default",
                                   "each process's own, a default for new ones", "recalculated"};
    if (value >= 1 && value <= 5)
        return values[value];
    return d == 1 ? "block" : d == 2 ? "block-cyclic" : d == 3 ? "replicated"
         : d == 5 ? "manual (whole to one process)" : "?";
}

static void fmt_bytes(long long b, char *buf, size_t len)
{
    if (b < 10 * 1024)
        snprintf(buf, len, "%lld B", b);
    else if (b < 10LL * 1024 * 1024)
        snprintf(buf, len, "%.1f KiB", (double)b / 1024);
    else if (b < 10LL * 1024 * 1024 * 1024)
        snprintf(buf, len, "%.1f MiB", (double)b / (1024.0 * 1024));
    else
        snprintf(buf, len, "%.1f GiB", (double)b / (1024.0 * 1024 * 1024));
}

static void print_table(json_t *apps)
{
    static const char *hdr[] = {"APP", "VERSION", "PROCS", "NODES", "SIZE", "SAVED", "KEPT", "NOTE"};
    size_t n = json_array_size(apps), i;
    char ***rows = calloc(n + 1, sizeof(char **));
    json_t *a;
    json_array_foreach(apps, i, a)
    {
        char ver[24], procs[24], nodes[24], size[32], saved[64] = "-", kept[128] = "";
        long v = (long)cu_num(a, "version");
        snprintf(ver, sizeof(ver), "%ld", v);
        snprintf(procs, sizeof(procs), "%.0f", cu_num(a, "procs"));
        snprintf(nodes, sizeof(nodes), "%.0f", cu_num(a, "nodes"));
        fmt_bytes((long long)cu_num(a, "bytes"), size, sizeof(size));
        if (cu_num(a, "time") > 0)
            cu_fmt_time(cu_num(a, "time"), saved, sizeof(saved));
        size_t k;
        json_t *x;
        json_array_foreach(json_object_get(a, "kept"), k, x)
        {
            size_t l = strlen(kept);
            snprintf(kept + l, sizeof(kept) - l, "%sv%lld", l ? "," : "",
                     (long long)json_integer_value(x));
        }
        const char *note = json_object_get(a, "error") ? cu_str(a, "error")
                           : json_is_true(json_object_get(a, "interrupted"))
                               ? "a commit was interrupted (ignored)"
                           : v <= 0 ? "no complete version"
                                    : "";
        rows[i] = calloc(8, sizeof(char *));
        const char *cells[8] = {cu_str(a, "app"), ver, v > 0 ? procs : "-", v > 0 ? nodes : "-",
                                v > 0 ? size : "-", saved, kept[0] ? kept : "-", note};
        for (int c = 0; c < 8; c++)
            rows[i][c] = strdup(cells[c] ? cells[c] : "");
    }
    cu_table(hdr, rows, (int)n, 8);
    for (i = 0; i < n; i++) {
        for (int c = 0; c < 8; c++)
            free(rows[i][c]);
        free(rows[i]);
    }
    free(rows);
}

static void print_app(const json_t *a)
{
    char saved[64] = "-", size[32];
    printf("%-12s %s\n", "App", cu_str(a, "app"));
    printf("%-12s %s (level: files)\n", "Directory", cu_str(a, "dir"));
    long v = (long)cu_num(a, "version");
    if (v <= 0) {
        printf("%-12s none complete\n", "Version");
        return;
    }
    if (cu_num(a, "time") > 0)
        cu_fmt_time(cu_num(a, "time"), saved, sizeof(saved));
    fmt_bytes((long long)cu_num(a, "bytes"), size, sizeof(size));
    int procs = (int)cu_num(a, "procs"), nodes = (int)cu_num(a, "nodes");
    printf("%-12s %ld, saved %s by %d process%s on %d node%s, %s\n", "Version", v, saved, procs,
           procs == 1 ? "" : "es", nodes, nodes == 1 ? "" : "s", size);
    if (json_is_true(json_object_get(a, "interrupted")))
        printf("%-12s a later commit was interrupted; it is ignored\n", "Note");
    printf("Variables:\n");
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(a, "vars"), i, x)
    {
        char dist[48];
        int d = (int)cu_num(x, "dist");
        if (d == 2)
            snprintf(dist, sizeof(dist), "block-cyclic %.0f", cu_num(x, "block"));
        else
            snprintf(dist, sizeof(dist), "%s", dist_name(d, (int)cu_num(x, "value")));
        printf("  %-20s %12.0f elements of %.0f bytes, %s\n", cu_str(x, "label"),
               cu_num(x, "total"), cu_num(x, "esize"), dist);
    }
}

/* --agents: each agent's ck_list, a row per version it holds. */
static int list_agents(const char *list, const uint8_t key[PROTO_KEY_LEN], int json)
{
    char err[600];
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        return cmd_fail("checkpoints: out of memory") + 1;
    json_t *all = json_array();
    int bad = 0;
    for (char *t = strtok_r(copy, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        char host[256];
        int port;
        client_t *c = NULL;
        json_t *req = json_pack("{s:s}", "type", "ck_list"), *r = NULL;
        if (strparse_hostport(t, host, sizeof(host), 1, &port) < 0) {
            cmd_fail("checkpoints: '%s' is not host:port (such as 10.0.0.5:7300)", t);
            bad = 1;
        } else if (client_call_keyed(&c, host, port, key, req, &r, 10, err, sizeof(err)) < 0) {
            cmd_fail("checkpoints: checkpoint agent %s: %s", t, err);
            bad = 1;
        } else {
            json_object_set_new(r, "agent", json_string(t));
            json_object_del(r, "ok");
            json_array_append(all, r);
        }
        json_decref(req);
        json_decref(r);
        if (c)
            client_close(c);
    }
    free(copy);
    if (json) {
        cu_print_json(all);
    } else {
        static const char *hdr[] = {"AGENT", "APP", "VERSION", "FILES", "SIZE", "STATE"};
        int n = 0;
        char ***rows = NULL;
        size_t i, k, v;
        json_t *ag, *app, *ver;
        json_array_foreach(all, i, ag) json_array_foreach(json_object_get(ag, "apps"), k, app)
            json_array_foreach(json_object_get(app, "versions"), v, ver)
        {
            char vs[24], files[24], size[32];
            const char *fl = cu_str(ver, "flushed");
            snprintf(vs, sizeof(vs), "%.0f", cu_num(ver, "version"));
            snprintf(files, sizeof(files), "%.0f", cu_num(ver, "files"));
            fmt_bytes((long long)cu_num(ver, "bytes"), size, sizeof(size));
            const char *state = !json_is_true(json_object_get(ver, "complete")) ? "writing"
                                : !strcmp(fl, "yes")                              ? "flushed"
                                : !strcmp(fl, "flushing")                         ? "flushing"
                                : !strcmp(fl, "failed")                           ? "flush failed"
                                                                                  : "in memory";
            const char *cells[6] = {cu_str(ag, "agent"), cu_str(app, "app"), vs, files, size, state};
            char ***grown = realloc(rows, (size_t)(n + 1) * sizeof(*rows));
            if (!grown)
                break;
            rows = grown;
            rows[n] = calloc(6, sizeof(char *));
            for (int col = 0; col < 6; col++)
                rows[n][col] = strdup(cells[col] ? cells[col] : "");
            n++;
        }
        if (n == 0 && !bad)
            printf("the checkpoint agents hold no checkpoints\n");
        else if (n > 0)
            cu_table(hdr, rows, n, 6);
        for (int r = 0; r < n; r++) {
            for (int col = 0; col < 6; col++)
                free(rows[r][col]);
            free(rows[r]);
        }
        free(rows);
    }
    json_decref(all);
    return bad;
}

static int agents_from_file(const char *list, const char *keyfile, int json)
{
    uint8_t key[PROTO_KEY_LEN];
    char err[600];
    if (!keyfile || !*keyfile)
        return cmd_fail("checkpoints: --agents needs the service's key: --key-file FILE or "
                        "DUCTILE_CKPT_KEY_FILE") + 1;
    if (proto_key_load(keyfile, key, err, sizeof(err)) < 0)
        return cmd_fail("checkpoints: %s", err) + 1;
    return list_agents(list, key, json);
}

/* The agents the cluster started for a job, with their key, from the controller (the
 * job's owner or an operator). */
static int agents_of_job(const char *job, int json)
{
    char *end;
    errno = 0;
    long long id = strtoll(job, &end, 10);
    if (errno || end == job || *end || id <= 0)
        return cmd_fail("checkpoints: --job %s: not a job id", job) + 1;
    json_t *rep = cu_request(NULL, json_pack("{s:s,s:I}", "type", "job_agents", "job",
                                             (json_int_t)id));
    if (!rep)
        return 1;
    uint8_t key[PROTO_KEY_LEN];
    const char *list = cu_str(rep, "agents");
    int rc = proto_key_parse(cu_str(rep, "key"), key) < 0 || !*list
                 ? cmd_fail("checkpoints: the controller's answer names no agents") + 1
                 : list_agents(list, key, json);
    json_decref(rep);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cmd_checkpoints(int argc, char **argv)
{
    static const struct option opts[] = {{"dir", required_argument, NULL, O_DIR},
                                          {"json", no_argument, NULL, O_JSON},
                                          {"agents", required_argument, NULL, O_AGENTS},
                                          {"key-file", required_argument, NULL, O_KEY},
                                          {"job", required_argument, NULL, O_JOB},
                                          {"help", no_argument, NULL, O_HELP},
                                          {NULL, 0, NULL, 0}};
    const char *dir = getenv("DUCTILE_CKPT_DIR"), *agents = NULL, *job = NULL;
    const char *keyfile = getenv("DUCTILE_CKPT_KEY_FILE");
    char home_dir[PATH_MAX];
    int json = 0, dir_given = 0, o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (o == O_DIR)
            dir = optarg, dir_given = 1;
        else if (o == O_JSON)
            json = 1;
        else if (o == O_AGENTS)
            agents = optarg;
        else if (o == O_KEY)
            keyfile = optarg;
        else if (o == O_JOB)
            job = optarg;
        else if (o == O_HELP) {
            fputs(usage, stdout);
            return 0;
        } else {
            fputs(usage, stderr);
            return 2;
        }
    }
    if (job && (agents || dir_given || optind < argc))
        return cmd_fail("checkpoints: --job lists what the job's agents hold: no --agents, "
                        "--dir or application with it") + 1;
    if (job)
        return agents_of_job(job, json);
    if (agents && dir_given)
        return cmd_fail("checkpoints: --agents lists what the agents hold, --dir what a "
                        "directory holds: one or the other") + 1;
    if (agents && optind < argc)
        return cmd_fail("checkpoints: --agents lists every application the agents hold; "
                        "'%s' is one too many", argv[optind]) + 1;
    if (agents)
        return agents_from_file(agents, keyfile, json);
    if (argc - optind > 1)
        return cmd_fail("checkpoints: one application at a time ('%s' too many)", argv[optind + 1]) + 1;
    if (!dir) {
        const char *home = getenv("HOME");
        snprintf(home_dir, sizeof(home_dir), "%s/.ductile/checkpoints", home ? home : "");
        dir = home_dir;
    }
    const char *app = optind < argc ? argv[optind] : NULL;
    if (app) {
        char adir[PATH_MAX];
        struct stat st;
        if (snprintf(adir, sizeof(adir), "%s/%s", dir, app) >= (int)sizeof(adir) ||
            strchr(app, '/') || stat(adir, &st) < 0 || !S_ISDIR(st.st_mode))
            return cmd_fail("checkpoints: no checkpoints of '%s' in %s", app, dir) + 1;
        json_t *a = describe(dir, app);
        if (json)
            cu_print_json(a);
        else
            print_app(a);
        json_decref(a);
        return 0;
    }
    DIR *d = opendir(dir);
    if (!d && errno != ENOENT)
        return cmd_fail("checkpoints: cannot read %s: %s", dir, strerror(errno)) + 1;
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[PATH_MAX + 256];
        struct stat st;
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.' || stat(p, &st) < 0 || !S_ISDIR(st.st_mode))
            continue;
        char **nn = realloc(names, (n + 1) * sizeof(char *));
        if (!nn)
            break;
        names = nn;
        names[n++] = strdup(e->d_name);
    }
    if (d)
        closedir(d);
    qsort(names, n, sizeof(char *), by_name);
    json_t *apps = json_array();
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(apps, describe(dir, names[i]));
        free(names[i]);
    }
    free(names);
    if (json)
        cu_print_json(apps);
    else if (n == 0)
        printf("no checkpoints in %s\n", dir);
    else
        print_table(apps);
    json_decref(apps);
    return 0;
}
