/* The checkpoint agent's memory (src/agent/store.c): versions whole or absent, the last
 * two kept, regions reused, another history replacing the old one, readers keeping a
 * version, the memory limit, a released application, and the flush to files. */
#include "testutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/store.h"
#include "ckptfiles.h"

static store_t st;
static char dir[PATH_MAX];

static int setup(void **state)
{
    (void)state;
    char err[256];
    memset(&st, 0, sizeof(st));
    pthread_mutex_init(&st.mu, NULL);
    st.limit = 64u << 20;
    if (fab_open(NULL, "127.0.0.1", &st.fab, err, sizeof(err)) < 0) {
        fprintf(stderr, "fab_open: %s\n", err);
        return -1;
    }
    snprintf(dir, sizeof(dir), "%s/ductile-store-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    store_free(&st);
    fab_close(st.fab);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Writes version v of app as one node file of len bytes filled with v, and publishes it. */
static void commit(app_t *a, long v, size_t len)
{
    char err[256] = "";
    afile_t *f = store_put(&st, a, v, 0, len, err, sizeof(err));
    assert_non_null(f);
    memset(f->buf, (int)v, len);
    long files[1] = {0};
    json_t *man = json_pack("{s:I}", "version", (json_int_t)v);
    assert_int_equal(store_publish(&st, a, v, 1, files, 1, man, err, sizeof(err)), 0);
    json_decref(man);
}

static app_t *app_named(const char *leaf)
{
    char name[PATH_MAX + 32];
    snprintf(name, sizeof(name), "%s/%s", dir, leaf);
    app_t *a = store_app(&st, name, true);
    assert_non_null(a);
    return a;
}

static void last_two_kept_and_regions_reused(void **state)
{
    (void)state;
    app_t *a = app_named("keep");
    size_t before = st.bytes;
    commit(a, 1, 4096);
    commit(a, 2, 4096);
    commit(a, 3, 4096);
    assert_int_equal(store_latest(a)->version, 3);
    assert_null(store_version(a, 1)); /* dropped: its region is a spare */
    assert_non_null(store_version(a, 2));
    assert_int_equal(st.nspare, 1);
    assert_int_equal(st.bytes - before, 3 * 4096);
    commit(a, 4, 4096); /* takes the spare: nothing more held */
    assert_int_equal(st.bytes - before, 3 * 4096);
    assert_int_equal(store_file(store_version(a, 4), 0)->buf[4095], 4);
    /* a version written but not published is never the latest */
    char err[256];
    assert_non_null(store_put(&st, a, 5, 0, 4096, err, sizeof(err)));
    assert_int_equal(store_latest(a)->version, 4);
    /* and a complete one cannot be published twice */
    long files[1] = {0};
    json_t *man = json_object();
    assert_int_equal(store_publish(&st, a, 4, 1, files, 1, man, err, sizeof(err)), -EEXIST);
    json_decref(man);
}

static void another_history_replaces_the_old(void **state)
{
    (void)state;
    app_t *a = app_named("history");
    commit(a, 5, 4096);
    commit(a, 6, 4096);
    /* the run restarted from version 2 (the files'): its version 3 replaces 5 and 6 */
    commit(a, 3, 4096);
    assert_int_equal(store_latest(a)->version, 3);
    assert_null(store_version(a, 5));
    assert_null(store_version(a, 6));
    /* a version written again is the new one, not the old */
    commit(a, 3, 4096);
    assert_int_equal(store_file(store_latest(a), 0)->buf[0], 3);
}

static void a_read_version_stays(void **state)
{
    (void)state;
    app_t *a = app_named("readers");
    commit(a, 1, 4096);
    aver_t *v1 = store_version(a, 1);
    v1->readers = 1; /* a restart reads it */
    commit(a, 1, 4096); /* another history while it is read: stale, not freed */
    assert_true(v1->stale);
    assert_ptr_not_equal(store_latest(a), v1);
    int n = a->nv;
    store_prune(&st, a);
    assert_int_equal(a->nv, n); /* still there for its reader */
    v1->readers = 0;
    store_prune(&st, a);
    assert_int_equal(a->nv, n - 1);
}

static int ngrants(const afile_t *f)
{
    int n = 0;
    for (const grant_t *g = f->grants; g; g = g->next)
        n++;
    return n;
}

/* A region is opened to a client for its transfer only (the security issue: regions were
 * open to anyone for their whole life): the region's own registration has no blob; each
 * grant has its own, with another key; a client's ck_done (store_revoke) closes its own
 * grants and no other's; a publish closes the writers' grants; a dropped version's go
 * before its region becomes a spare. */
static void grants_for_transfers_only(void **state)
{
    (void)state;
    char err[256] = "", blob[FAB_BLOB_MAX], blob2[FAB_BLOB_MAX];
    int c1, c2; /* two clients: their addresses stand for their connections */
    app_t *a = app_named("grants");
    afile_t *f = store_put(&st, a, 1, 0, 4096, err, sizeof(err));
    assert_non_null(f);
    size_t n = sizeof(blob);
    assert_int_equal(fab_mr_blob(f->mr, blob, &n, err, sizeof(err)), -EPERM);
    fab_mr_t *g1 = store_grant(&st, f, &c1, FAB_REMOTE_WRITE, err, sizeof(err));
    fab_mr_t *g2 = store_grant(&st, f, &c2, FAB_REMOTE_WRITE, err, sizeof(err));
    assert_non_null(g1);
    assert_non_null(g2);
    n = sizeof(blob);
    size_t n2 = sizeof(blob2);
    assert_int_equal(fab_mr_blob(g1, blob, &n, err, sizeof(err)), 0);
    assert_int_equal(fab_mr_blob(g2, blob2, &n2, err, sizeof(err)), 0);
    assert_memory_not_equal(blob, blob2, n); /* another key */
    assert_int_equal(ngrants(f), 2);
    store_revoke(&st, &c1);
    assert_int_equal(ngrants(f), 1);
    assert_ptr_equal(f->grants->owner, &c2);
    /* published: nobody writes it any more */
    long files[1] = {0};
    json_t *man = json_object();
    assert_int_equal(store_publish(&st, a, 1, 1, files, 1, man, err, sizeof(err)), 0);
    json_decref(man);
    assert_int_equal(ngrants(f), 0);
    /* a restart's reader; the version dropped (two newer ones) once it is done */
    assert_non_null(store_grant(&st, f, &c1, FAB_REMOTE_READ, err, sizeof(err)));
    commit(a, 2, 4096);
    commit(a, 3, 4096);
    assert_null(store_version(a, 1));
    for (int i = 0; i < st.nspare; i++)
        assert_null(st.spare[i].grants);
    store_revoke(&st, &c1); /* (nothing left to close) */
}

/* Past its limit a node file is spilled: its region maps the file on the file level
 * (not counted in what the agent holds), and the flush names it and publishes the
 * version; where the file level fails too, the region is refused. */
static void memory_limit_spills(void **state)
{
    (void)state;
    app_t *a = app_named("big");
    char err[512] = "", path[PATH_MAX + 64];
    size_t held = st.bytes;
    st.limit = st.bytes + (1u << 20);
    afile_t *f = store_put(&st, a, 1, 0, 2u << 20, err, sizeof(err));
    assert_non_null(f);
    assert_true(f->spilled);
    assert_true(st.bytes <= held); /* spares may go to make room; it adds nothing */
    snprintf(path, sizeof(path), "%s/v1.flush/node0.dat.spill", a->name);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_size, 2u << 20);
    memset(f->buf, 7, f->len);
    long files[1] = {0};
    json_t *man = json_pack("{s:I}", "version", 1);
    assert_int_equal(store_publish(&st, a, 1, 1, files, 1, man, err, sizeof(err)), 0);
    json_decref(man);
    assert_int_equal(store_flush(&st, a, store_version(a, 1), NULL, NULL), 0);
    for (int i = 0; i < 500 && store_version(a, 1)->flushing; i++)
        usleep(10000);
    assert_int_equal(store_version(a, 1)->flushed, 1);
    snprintf(path, sizeof(path), "%s/v1/node0.dat", a->name);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    assert_int_equal(fgetc(fp), 7);
    fclose(fp);
    app_t *nowhere = store_app(&st, "/proc/ductile-no-such/app", true);
    assert_null(store_put(&st, nowhere, 1, 0, 2u << 20, err, sizeof(err)));
    assert_non_null(strstr(err, "would pass its limit"));
    assert_non_null(strstr(err, "the file level failed"));
    st.limit = 64u << 20;
    assert_non_null(store_put(&st, a, 2, 0, 2u << 20, err, sizeof(err)));
    assert_false(store_file(store_version(a, 2), 0)->spilled);
}

static void released_versions_go_once_flushed(void **state)
{
    (void)state;
    app_t *a = app_named("released");
    commit(a, 1, 4096);
    commit(a, 2, 4096);
    store_version(a, 1)->flushed = 1;
    store_version(a, 2)->flushed = -EIO; /* not in the files: kept */
    a->release = true;
    store_prune(&st, a);
    assert_null(store_version(a, 1));
    assert_non_null(store_version(a, 2));
}

static int flush_done;
static void on_done(void *arg)
{
    (void)arg;
    __atomic_store_n(&flush_done, 1, __ATOMIC_SEQ_CST);
}

static void flushed_to_the_files(void **state)
{
    (void)state;
    app_t *a = app_named("flush");
    commit(a, 7, 8192);
    aver_t *v = store_latest(a);
    assert_int_equal(store_flush(&st, a, v, on_done, NULL), 0);
    for (int i = 0; i < 2000 && !__atomic_load_n(&flush_done, __ATOMIC_SEQ_CST); i++)
        nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    assert_true(flush_done);
    assert_int_equal(v->flushed, 1);
    assert_int_equal(ckptfiles_latest(a->name), 7);
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/v7/node0.dat", a->name);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char buf[8192];
    assert_int_equal(fread(buf, 1, sizeof(buf), f), 8192);
    fclose(f);
    assert_int_equal(buf[8191], 7);
    snprintf(p, sizeof(p), "%s/v7/manifest.json", a->name);
    assert_int_equal(access(p, R_OK), 0);
    snprintf(p, sizeof(p), "%s/v7.flush", a->name);
    assert_int_not_equal(access(p, F_OK), 0);
}

/* Publishes version v of a 2-node-file version of which this store holds node file 0
 * only (the other agent's node file 1 never comes: the job died between the two
 * publishes), and starts its flush, which waits for node file 1. */
static aver_t *published_half(app_t *a, long ver)
{
    char err[256] = "";
    afile_t *f = store_put(&st, a, ver, 0, 4096, err, sizeof(err));
    assert_non_null(f);
    memset(f->buf, (int)ver, f->len);
    long files[1] = {0};
    json_t *man = json_pack("{s:I}", "version", (json_int_t)ver);
    assert_int_equal(store_publish(&st, a, ver, 2, files, 1, man, err, sizeof(err)), 0);
    json_decref(man);
    aver_t *v = store_version(a, ver);
    assert_int_equal(store_flush(&st, a, v, NULL, NULL), 0);
    return v;
}

static int flushing(aver_t *v)
{
    pthread_mutex_lock(&st.mu);
    int f = v->flushing;
    pthread_mutex_unlock(&st.mu);
    return f;
}

/* A flush waiting for another agent's node file ends as soon as its version belongs to
 * an old history (the requeued run writes that version again): it used to wait its full
 * two minutes, and an agent told to stop meanwhile outlived its job (a clean-clone CI
 * run, test_ckpt_agent_requeue). */
static void a_waiting_flush_of_another_history_ends(void **state)
{
    (void)state;
    app_t *a = app_named("half");
    aver_t *v = published_half(a, 3);
    char err[256] = "";
    assert_non_null(store_put(&st, a, 3, 0, 4096, err, sizeof(err))); /* version 3 again */
    int i = 0;
    for (; i < 1000 && flushing(v); i++) /* 10 s at most */
        usleep(10000);
    assert_false(flushing(v));
    assert_int_equal(v->flushed, -ECANCELED);
    assert_int_equal(ckptfiles_latest(a->name), 0); /* nothing published */
    store_prune(&st, a);
}

/* Told to stop, an agent whose flush waits for another agent's node file waits only
 * while the files keep coming (the other agents, stopped too, flush theirs first): past
 * the store's stop_wait without one, it gives up. */
static void a_waiting_flush_gives_up_when_stopping(void **state)
{
    (void)state;
    app_t *a = app_named("halfstop");
    aver_t *v = published_half(a, 4);
    st.stop_wait_ms = 200;
    usleep(300000);
    assert_true(flushing(v)); /* not stopping: it still waits */
    pthread_mutex_lock(&st.mu);
    st.stopping = true;
    pthread_mutex_unlock(&st.mu);
    for (int i = 0; i < 1000 && flushing(v); i++)
        usleep(10000);
    assert_false(flushing(v));
    assert_int_equal(v->flushed, -ETIMEDOUT);
    assert_int_equal(ckptfiles_latest(a->name), 0);
    st.stopping = false;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(last_two_kept_and_regions_reused),
        cmocka_unit_test(another_history_replaces_the_old),
        cmocka_unit_test(a_read_version_stays),
        cmocka_unit_test(grants_for_transfers_only),
        cmocka_unit_test(memory_limit_spills),
        cmocka_unit_test(released_versions_go_once_flushed),
        cmocka_unit_test(flushed_to_the_files),
        cmocka_unit_test(a_waiting_flush_of_another_history_ends),
        cmocka_unit_test(a_waiting_flush_gives_up_when_stopping),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
