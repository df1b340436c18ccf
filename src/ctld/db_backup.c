/* Online backup (`ductile cluster backup FILE`, issue 35): a consistent copy of the
 * controller's database made while it runs, a few hundred pages per turn of the loop
 * (SQLite's backup API; changes the controller makes meanwhile reach the copy too, as
 * they are made on the same connection), so that a large database never holds the
 * loop. The copy is marked (meta 'backup_seq': the commit it holds) so that a controller
 * started on it says it is a restored copy; the high-water mark is not copied: restored
 * beside the live mark, the copy is found behind what was acknowledged, and
 * `ductiled --recover` goes on with job ids above every acknowledged one and names the
 * jobs the copy lacks (docs/operations.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "ctld.h"

#define PAGES_PER_TURN 256

typedef struct backup {
    sqlite3 *dest;
    sqlite3_backup *b;
    ctld_t *c;
    conn_t *conn; /* who asked (NULL once it went: the copy is finished all the same) */
    char path[4096];
    double t0;
    int pages;
    int64_t seq, max_id;
    uv_timer_t timer;
    uv_fs_t fs;   /* the copy's fsync, on libuv's threads: the loop never waits for it */
    int fd;
} backup_t;

static backup_t *running; /* one at a time */

static void reply_fail(ctld_t *c, conn_t *conn, const char *fmt, const char *a, const char *b)
{
    char err[4600];
    snprintf(err, sizeof(err), fmt, a, b);
    rpc_fail(c, conn, err);
}

static void on_timer_closed(uv_handle_t *h) { free(h->data); }

static void reply_done(ctld_t *c, backup_t *k, const char *why)
{
    double ms = (stats_clock() - k->t0) * 1000;
    if (why) {
        unlink(k->path);
        fprintf(stderr, "ductiled: backup to %s failed: %s\n", k->path, why);
        if (k->conn)
            reply_fail(c, k->conn, "backup to %s failed: %s (nothing was kept)", k->path, why);
    } else {
        fprintf(stderr, "ductiled: backup to %s: %d pages, commit %lld, job ids up to %lld, "
                "in %.0f ms\n", k->path, k->pages, (long long)k->seq, (long long)k->max_id, ms);
        if (k->conn)
            rpc_reply(c, k->conn, json_pack("{s:b,s:s,s:i,s:I,s:I,s:f}", "ok", 1, "file", k->path,
                                            "pages", k->pages, "commit", (json_int_t)k->seq,
                                            "max_id", (json_int_t)k->max_id, "ms", ms));
    }
    running = NULL;
    k->timer.data = k;
    uv_close((uv_handle_t *)&k->timer, on_timer_closed);
}

static void on_synced(uv_fs_t *req)
{
    backup_t *k = req->data;
    int rc = (int)req->result;
    uv_fs_req_cleanup(req);
    close(k->fd);
    reply_done(k->c, k, rc < 0 ? uv_strerror(rc) : NULL);
}

static void finish(ctld_t *c, backup_t *k, int rc)
{
    char why[512] = "";
    int pages = k->b ? sqlite3_backup_pagecount(k->b) : 0;
    if (k->b && sqlite3_backup_finish(k->b) != SQLITE_OK && rc == SQLITE_DONE)
        rc = sqlite3_errcode(k->dest);
    k->b = NULL;
    int64_t seq = 0, max_id = 0;
    db_marks(c, &seq, &max_id);
    if (rc == SQLITE_DONE) {
        /* the copy says what it is (db_open tells a restored copy by it) */
        char q[160];
        snprintf(q, sizeof(q),
                 "INSERT OR REPLACE INTO meta (key, value) VALUES ('backup_seq', %lld)",
                 (long long)seq);
        if (sqlite3_exec(k->dest, q, NULL, NULL, NULL) != SQLITE_OK)
            rc = sqlite3_errcode(k->dest);
    }
    if (rc != SQLITE_DONE)
        snprintf(why, sizeof(why), "%s", sqlite3_errmsg(k->dest));
    sqlite3_close(k->dest);
    k->dest = NULL;
    uv_timer_stop(&k->timer);
    k->pages = pages, k->seq = seq, k->max_id = max_id;
    if (rc != SQLITE_DONE) {
        reply_done(c, k, why);
        return;
    }
    /* written without syncing (synchronous = OFF: SQLite would fsync in the loop); on
     * disk before the reply says so */
    k->fd = open(k->path, O_RDONLY | O_CLOEXEC);
    k->fs.data = k;
    if (k->fd < 0 || uv_fs_fsync(c->loop, &k->fs, k->fd, on_synced) < 0) {
        if (k->fd >= 0)
            close(k->fd);
        reply_done(c, k, "cannot sync the copy");
    }
}

static void on_step(uv_timer_t *t)
{
    backup_t *k = t->data;
    ctld_t *c = k->c;
    double t0 = stats_clock();
    int rc = sqlite3_backup_step(k->b, PAGES_PER_TURN);
    stats_loop_work(&c->loop_stats, "backup", stats_clock() - t0, ctld_now());
    if (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
        return; /* more next turn (busy: a batch of ours was open) */
    finish(c, k, rc);
}

void backup_conn_closed(conn_t *conn)
{
    if (running && running->conn == conn)
        running->conn = NULL;
}

void backup_rpc(ctld_t *c, conn_t *conn, const json_t *m, bool oper)
{
    char err[256];
    const char *path;
    if (proto_str(m, "file", 4095, &path, err, sizeof(err)) < 0) {
        rpc_fail(c, conn, err);
        return;
    }
    if (!oper) {
        rpc_fail(c, conn, "permission denied: only root and Operators may back up the "
                          "controller's database (it holds every job's script and environment)");
        return;
    }
    if (path[0] != '/') {
        reply_fail(c, conn, "backup: %s is not an absolute path (the file is written by the "
                   "controller, on its host)%s", path, "");
        return;
    }
    if (running) {
        reply_fail(c, conn, "backup: one is under way already (to %s)%s", running->path, "");
        return;
    }
    /* a new file only, the controller's alone: an existing one is never overwritten */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        reply_fail(c, conn, "backup: cannot create %s: %s", path, strerror(errno));
        return;
    }
    close(fd);
    backup_t *k = calloc(1, sizeof(*k));
    if (!k) {
        unlink(path);
        rpc_fail(c, conn, "out of memory");
        return;
    }
    snprintf(k->path, sizeof(k->path), "%s", path);
    if (sqlite3_open_v2(path, &k->dest, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
        sqlite3_exec(k->dest, "PRAGMA synchronous = OFF", NULL, NULL, NULL) != SQLITE_OK ||
        !(k->b = sqlite3_backup_init(k->dest, "main", c->db, "main"))) {
        reply_fail(c, conn, "backup: %s: %s", path, sqlite3_errmsg(k->dest));
        sqlite3_close(k->dest);
        unlink(path);
        free(k);
        return;
    }
    k->c = c;
    k->conn = conn;
    k->t0 = stats_clock();
    uv_timer_init(c->loop, &k->timer);
    k->timer.data = k;
    uv_timer_start(&k->timer, on_step, 0, 1);
    running = k;
}
