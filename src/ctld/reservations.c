/* Reservations in the controller (docs/reservations.md): operators set nodes apart for a
 * window (`ductile reservation create`), for some users' jobs or for maintenance; the
 * engine keeps every other job off them (src/sched/resv.c). In a table of their own,
 * made on first use; given to the engine at a start and after a reload. An ended one is
 * dropped at the tick. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld.h"
#include "hostlist.h"
#include "strparse.h"

static int table(ctld_t *c)
{
    return sqlite3_exec(c->db,
                        "CREATE TABLE IF NOT EXISTS reservations (id INTEGER PRIMARY KEY,"
                        " name TEXT UNIQUE NOT NULL, start REAL, end REAL, nodes TEXT,"
                        " users TEXT, maintenance INTEGER, by TEXT)",
                        NULL, NULL, NULL) == SQLITE_OK
               ? 0
               : -EIO;
}

/* "n1,n3" into node indices (the caller frees); NULL when a name is not configured. */
static int *indices(const ctld_t *c, const char *list, int *n)
{
    char **names = NULL, err[128];
    int count = 0;
    *n = 0;
    if (!list || hostlist_expand(list, &names, &count, err, sizeof(err)) < 0 || !count)
        return NULL;
    int *ids = malloc((size_t)count * sizeof(int));
    for (int i = 0; ids && i < count; i++)
        if ((ids[i] = config_node_index(&c->cfg, names[i])) < 0) {
            free(ids);
            ids = NULL;
        }
    hostlist_free(names, count);
    if (ids)
        *n = count;
    return ids;
}

int resv_load(ctld_t *c, char *err, size_t errlen)
{
    if (table(c) < 0)
        return snprintf(err, errlen, "cannot make the reservations' table: %s",
                        sqlite3_errmsg(c->db)),
               -EIO;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->db, "SELECT id, name, start, end, nodes, maintenance FROM"
                                  " reservations", -1, &st, NULL) != SQLITE_OK)
        return snprintf(err, errlen, "cannot read the reservations: %s", sqlite3_errmsg(c->db)),
               -EIO;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int n;
        int *ids = indices(c, (const char *)sqlite3_column_text(st, 4), &n);
        char why[256];
        if (!ids || sched_add_reservation(c->sched, sqlite3_column_int64(st, 0),
                                          sqlite3_column_double(st, 2),
                                          sqlite3_column_double(st, 3), ids, n,
                                          sqlite3_column_int(st, 5), why, sizeof(why)) < 0)
            fprintf(stderr, "ductiled: reservation %s: %s: not kept to\n",
                    sqlite3_column_text(st, 1), ids ? why : "its nodes are not all in Nodes");
        free(ids);
    }
    sqlite3_finalize(st);
    return 0;
}

/* The reservation's id, users and whether it is for maintenance; 0 when none has the name. */
static int64_t lookup(ctld_t *c, const char *name, char *users, size_t ulen, bool *maint,
                      double *end)
{
    sqlite3_stmt *st = NULL;
    int64_t id = 0;
    if (table(c) == 0 &&
        sqlite3_prepare_v2(c->db, "SELECT id, users, maintenance, end FROM reservations WHERE"
                                  " name = ?1", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) {
            id = sqlite3_column_int64(st, 0);
            const char *u = (const char *)sqlite3_column_text(st, 1);
            snprintf(users, ulen, "%s", u ? u : "");
            *maint = sqlite3_column_int(st, 2) != 0;
            *end = sqlite3_column_double(st, 3);
        }
    }
    sqlite3_finalize(st);
    return id;
}

static bool listed(const char *users, const char *user)
{
    size_t n = strlen(user);
    for (const char *p = users; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, user, n))
            return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

int resv_submit(ctld_t *c, job_t *j, const char *name, bool oper, char *err, size_t errlen)
{
    free(j->reservation);
    j->reservation = NULL;
    j->resv_id = 0;
    if (!name || !*name)
        return 0;
    char users[1024] = "";
    bool maint = false;
    double end = 0;
    int64_t id = lookup(c, name, users, sizeof(users), &maint, &end);
    if (!id)
        return snprintf(err, errlen, "there is no reservation '%.64s' (ductile reservation list"
                        " shows them)", name), -EINVAL;
    if (maint)
        return snprintf(err, errlen, "reservation %.64s is for maintenance: it takes no jobs",
                        name), -EINVAL;
    if (!oper && !listed(users, j->user))
        return snprintf(err, errlen, "reservation %.64s is for %s: user %.64s is not one of them",
                        name, users, j->user), -EPERM;
    if (!(j->reservation = strdup(name)))
        return snprintf(err, errlen, "out of memory"), -ENOMEM;
    j->resv_id = id;
    return 0;
}

int64_t resv_id_of(ctld_t *c, const char *name)
{
    char users[8];
    bool maint;
    double end;
    return name && *name ? lookup(c, name, users, sizeof(users), &maint, &end) : 0;
}

void resv_tick(ctld_t *c)
{
    if (db_degraded(c) || table(c) < 0)
        return;
    sqlite3_stmt *st = NULL;
    int64_t n = 0;
    if (sqlite3_prepare_v2(c->db, "SELECT count(*) FROM reservations WHERE end <= ?1", -1, &st,
                           NULL) == SQLITE_OK) {
        sqlite3_bind_double(st, 1, ctld_now());
        if (sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    if (!n || db_write_begin(c) < 0)
        return; /* (the engine drops ended ones itself) */
    st = NULL;
    if (sqlite3_prepare_v2(c->db, "DELETE FROM reservations WHERE end <= ?1", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_double(st, 1, ctld_now());
        sqlite3_step(st);
    }
    sqlite3_finalize(st);
}

/* --- requests --- */

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void create(ctld_t *c, conn_t *conn, const json_t *m, const char *by)
{
    char err[512];
    const char *name, *nodelist, *users;
    double start, duration;
    int64_t count;
    bool maint;
    if (proto_str_opt(m, "name", 64, NULL, &name, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "nodelist", 4096, NULL, &nodelist, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "users", 1000, NULL, &users, err, sizeof(err)) < 0 ||
        proto_num_opt(m, "start", 0, 1e11, 0, &start, err, sizeof(err)) < 0 ||
        proto_num_opt(m, "duration", 1, STRPARSE_DURATION_MAX, 3600, &duration, err,
                      sizeof(err)) < 0 ||
        proto_int_opt(m, "nodes", 0, 1 << 24, 0, &count, err, sizeof(err)) < 0 ||
        proto_bool_opt(m, "maintenance", false, &maint, err, sizeof(err)) < 0) {
        rpc_fail(c, conn, err);
        return;
    }
    if (name && (!*name || !hostlist_valid_name(name))) {
        rpc_fail(c, conn, "a reservation's name is letters, digits, '.', '_' or '-'");
        return;
    }
    if (!maint && (!users || !*users)) {
        rpc_fail(c, conn, "whose is it? give --users (or --maintenance for one that takes no jobs)");
        return;
    }
    if (!count == !nodelist) {
        rpc_fail(c, conn, "give either --nodes N (the scheduler picks them) or --nodelist");
        return;
    }
    double now = ctld_now();
    if (!(start > 0))
        start = now;
    if (start + duration <= now) {
        rpc_fail(c, conn, "it would have ended already: give a start in the future or now");
        return;
    }
    int n = 0, *ids = NULL;
    if (nodelist) {
        ids = indices(c, nodelist, &n);
        if (!ids) {
            snprintf(err, sizeof(err), "--nodelist %.200s: not a list of this cluster's nodes",
                     nodelist);
            rpc_fail(c, conn, err);
            return;
        }
    } else {
        ids = malloc((size_t)count * sizeof(int));
        n = ids ? sched_pick_reservation_nodes(c->sched, start, start + duration, (int)count, ids)
                : 0;
        if (n < count) {
            snprintf(err, sizeof(err), "only %d of the cluster's nodes are free of other "
                     "reservations then; asked for %lld", n, (long long)count);
            free(ids);
            rpc_fail(c, conn, err);
            return;
        }
    }
    /* the id: one past every one there is (the engine knows them by it); the default
     * name is made from it */
    sqlite3_stmt *st = NULL;
    int64_t id = 1;
    if (table(c) == 0 &&
        sqlite3_prepare_v2(c->db, "SELECT coalesce(max(id), 0) + 1 FROM reservations", -1, &st,
                           NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    char gen[32];
    if (!name) {
        snprintf(gen, sizeof(gen), "resv_%lld", (long long)id);
        name = gen;
    }
    char ub[8];
    bool mt;
    double e;
    if (lookup(c, name, ub, sizeof(ub), &mt, &e)) {
        free(ids);
        snprintf(err, sizeof(err), "reservation %s exists already", name);
        rpc_fail(c, conn, err);
        return;
    }
    char why[256];
    if (sched_add_reservation(c->sched, id, start, start + duration, ids, n, maint, why,
                              sizeof(why)) < 0) {
        free(ids);
        /* the engine knows the other one by its id: the user by its name */
        const char *w = strstr(why, "with reservation ");
        long long oid;
        sqlite3_stmt *q = NULL;
        if (w && sscanf(w, "with reservation %lld", &oid) == 1 &&
            sqlite3_prepare_v2(c->db, "SELECT name FROM reservations WHERE id = ?1", -1, &q,
                               NULL) == SQLITE_OK) {
            sqlite3_bind_int64(q, 1, oid);
            if (sqlite3_step(q) == SQLITE_ROW)
                snprintf(why, sizeof(why), "it would share nodes with reservation %.100s at"
                         " the same time", (const char *)sqlite3_column_text(q, 0));
        }
        sqlite3_finalize(q);
        snprintf(err, sizeof(err), "%s", why);
        rpc_fail(c, conn, err);
        return;
    }
    qsort(ids, (size_t)n, sizeof(int), int_cmp);
    char *list = nodes_format(c, ids, n);
    free(ids);
    st = NULL;
    int rc = db_write_begin(c) < 0 ||
                     sqlite3_prepare_v2(c->db, "INSERT INTO reservations VALUES (?1, ?2, ?3, ?4,"
                                               " ?5, ?6, ?7, ?8)", -1, &st, NULL) != SQLITE_OK
                 ? -EIO
                 : 0;
    if (rc == 0) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_double(st, 3, start);
        sqlite3_bind_double(st, 4, start + duration);
        sqlite3_bind_text(st, 5, list ? list : "", -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 6, users ? users : "", -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(st, 7, maint);
        sqlite3_bind_text(st, 8, by, -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
    }
    sqlite3_finalize(st);
    if (rc < 0) {
        sched_remove_reservation(c->sched, id);
        free(list);
        rpc_fail(c, conn, "cannot save the reservation (the controller's log says why)");
        return;
    }
    jobs_want_schedule(c);
    rpc_reply(c, conn, json_pack("{s:b,s:s,s:s,s:f,s:f}", "ok", 1, "name", name, "nodelist",
                                 list ? list : "", "start", start, "end", start + duration));
    free(list);
}

static void delete_one(ctld_t *c, conn_t *conn, const json_t *m)
{
    char err[256];
    const char *name;
    if (proto_str(m, "name", 64, &name, err, sizeof(err)) < 0) {
        rpc_fail(c, conn, err);
        return;
    }
    int64_t id = resv_id_of(c, name);
    if (!id) {
        snprintf(err, sizeof(err), "there is no reservation '%.64s'", name);
        rpc_fail(c, conn, err);
        return;
    }
    sqlite3_stmt *st = NULL;
    int rc = db_write_begin(c) < 0 ||
                     sqlite3_prepare_v2(c->db, "DELETE FROM reservations WHERE id = ?1", -1, &st,
                                        NULL) != SQLITE_OK
                 ? -EIO
                 : 0;
    if (rc == 0) {
        sqlite3_bind_int64(st, 1, id);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
    }
    sqlite3_finalize(st);
    if (rc < 0) {
        rpc_fail(c, conn, "cannot delete the reservation (the controller's log says why)");
        return;
    }
    sched_remove_reservation(c->sched, id);
    jobs_want_schedule(c);
    rpc_reply(c, conn, json_pack("{s:b,s:s}", "ok", 1, "name", name));
}

static void list(ctld_t *c, conn_t *conn)
{
    json_t *out = json_array();
    sqlite3_stmt *st = NULL;
    if (table(c) == 0 &&
        sqlite3_prepare_v2(c->db, "SELECT name, start, end, nodes, users, maintenance, by FROM"
                                  " reservations ORDER BY start, name", -1, &st, NULL) == SQLITE_OK)
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *u = (const char *)sqlite3_column_text(st, 4);
            json_array_append_new(
                out, json_pack("{s:s,s:f,s:f,s:s,s:s,s:b,s:s}", "name",
                               (const char *)sqlite3_column_text(st, 0), "start",
                               sqlite3_column_double(st, 1), "end", sqlite3_column_double(st, 2),
                               "nodelist", (const char *)sqlite3_column_text(st, 3), "users",
                               u ? u : "", "maintenance", sqlite3_column_int(st, 5) != 0, "by",
                               (const char *)sqlite3_column_text(st, 6)));
        }
    sqlite3_finalize(st);
    rpc_reply(c, conn, json_pack("{s:b,s:o}", "ok", 1, "reservations", out));
}

void resv_rpc(ctld_t *c, conn_t *conn, json_t *msg, const char *type, bool oper, const char *by)
{
    if (!strcmp(type, "reservation_list")) {
        list(c, conn);
        return;
    }
    if (!oper) {
        rpc_fail(c, conn, "permission denied: only operators make and delete reservations");
        return;
    }
    if (!strcmp(type, "reservation_create"))
        create(c, conn, msg, by);
    else
        delete_one(c, conn, msg);
}
