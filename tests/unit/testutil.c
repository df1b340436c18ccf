#define _XOPEN_SOURCE 700
#include "testutil.h"

#include <ftw.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

sched_t *tu_engine(int nnodes, const char *policy)
{
    sched_t *s = NULL;
    char err[SCHED_ERRLEN] = "";
    int rc = sched_create(nnodes, policy, &s, err, sizeof(err));
    if (rc != 0)
        fail_msg("sched_create(%s): %s", policy, err);
    return s;
}

void tu_submit(sched_t *s, tu_job_t j)
{
    sched_jobspec_t spec = {
        .id = j.id,
        .submit = j.submit,
        .type = j.type,
        .nodes = j.nodes,
        .min_nodes = j.min,
        .max_nodes = j.max,
        .pref_nodes = j.pref,
        .constraint = j.cons,
        .walltime = j.walltime,
        .no_interrupt = j.no_interrupt,
        .allowed = j.allowed,
        .nallowed = j.nallowed,
        .required = j.required,
        .nrequired = j.nrequired,
    };
    char err[SCHED_ERRLEN] = "";
    if (sched_submit(s, &spec, err, sizeof(err)) != 0)
        fail_msg("submit %lld: %s", (long long)j.id, err);
}

void tu_running(sched_t *s, int64_t id, double start, int first, int n, int min, int max,
                sched_constraint_t cons, double walltime)
{
    sched_jobspec_t spec = {
        .id = id,
        .submit = start,
        .type = SCHED_MALLEABLE,
        .nodes = n,
        .min_nodes = min,
        .max_nodes = max,
        .constraint = cons,
        .walltime = walltime,
    };
    int nodes[4096];
    for (int i = 0; i < n; i++)
        nodes[i] = first + i;
    char err[SCHED_ERRLEN] = "";
    if (sched_restore_running(s, &spec, start, nodes, n, err, sizeof(err)) != 0)
        fail_msg("restore %lld: %s", (long long)id, err);
}

size_t tu_pass(sched_t *s, double now, const sched_action_t **acts)
{
    size_t n = 0;
    assert_int_equal(sched_schedule(s, now, acts, &n), 0);
    return n;
}

void tu_complete(sched_t *s, const sched_action_t *acts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (acts[i].op == SCHED_OP_INTERRUPT)
            /* stopped for a failed job: ahead of the rest; preempted: in its place */
            assert_int_equal(sched_requeue(s, acts[i].job,
                                           acts[i].reason == SCHED_R_PREEMPTED
                                               ? SCHED_CLASS_NORMAL
                                               : SCHED_CLASS_INTERRUPTED),
                             0);
        else if (acts[i].op != SCHED_OP_START)
            assert_int_equal(sched_resize_done(s, acts[i].job, true), 0);
}

const sched_action_t *tu_find(const sched_action_t *acts, size_t n, int64_t job, sched_op_t op)
{
    for (size_t i = 0; i < n; i++)
        if (acts[i].job == job && acts[i].op == op)
            return &acts[i];
    return NULL;
}

int tu_size(sched_t *s, int64_t id)
{
    sched_jobinfo_t info;
    if (sched_job_info(s, id, &info) != 0 || info.state == SCHED_PENDING)
        return 0;
    return info.nnodes;
}

sched_state_t tu_state(sched_t *s, int64_t id)
{
    sched_jobinfo_t info;
    if (sched_job_info(s, id, &info) != 0)
        fail_msg("job %lld not found", (long long)id);
    return info.state;
}

char *tu_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof(tmpl), "%s/ductile-test-XXXXXX", base && *base ? base : "/tmp");
    char *d = mkdtemp(tmpl);
    if (!d)
        fail_msg("mkdtemp failed");
    return strdup(d);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

void tu_rmtree(const char *path)
{
    if (path)
        nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

char *tu_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n - 1 == 0) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            } else
                buf = nb;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

void tu_put(const char *dir, const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
    assert_int_equal(system(cmd), 0);
    *slash = '/';
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

void tu_sql(const char *path, const char *sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
    sqlite3_close(db);
}

/* A fixture under tests/data: ctest says where the sources are; a direct run falls
 * back on this file's own location. */
void tu_data_path(char *path, size_t len, const char *name)
{
    const char *src = getenv("DUCTILE_SOURCE_DIR");
    if (src && *src) {
        snprintf(path, len, "%s/tests/data/%s", src, name);
        return;
    }
    snprintf(path, len, "%s", __FILE__);
    char *cut = strstr(path, "tests/unit/");
    assert_non_null(cut);
    snprintf(cut, len - (size_t)(cut - path), "tests/data/%s", name);
}
