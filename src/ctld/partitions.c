/* Partitions in the controller (docs/partitions.md): the partitions a job may run in,
 * checked at its submission against their rules, with the time limit they give it;
 * the nodes they let it use (nodesel.c intersects them with the rest of its node
 * selection) and its tier; whether it waits because they are down. The partitions
 * themselves are lines of ductile.conf (src/common/partition.c). */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld.h"
#include "strparse.h"

#define BAD(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

/* The job's partitions, in the order it gave them (NULL names: none configured). */
static int listed(const ctld_t *c, const char *list, const config_partition_t **out, int max)
{
    if (!list || !*list)
        return 0;
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", list);
    int n = 0;
    char *save = NULL;
    for (char *w = strtok_r(buf, ",", &save); w && n < max; w = strtok_r(NULL, ",", &save)) {
        const config_partition_t *p = partition_find(&c->cfg, w);
        if (p)
            out[n++] = p;
    }
    return n;
}

static const config_partition_t *default_partition(const ctld_t *c)
{
    for (int i = 0; i < c->cfg.npartitions; i++)
        if (c->cfg.partitions[i].is_default)
            return &c->cfg.partitions[i];
    return NULL;
}

static bool in_names(char **names, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (!strcmp(names[i], name))
            return true;
    return false;
}

static bool group_allowed(const config_partition_t *p, gid_t gid)
{
    if (!p->groups)
        return true;
    struct group gr, *res = NULL;
    char buf[8192];
    if (getgrgid_r(gid, &gr, buf, sizeof(buf), &res) != 0 || !res)
        return false;
    return in_names(p->groups, p->ngroups, gr.gr_name);
}

/* "partition P is for the accounts a, b, c (this job's: d)" */
static void for_whom(char *why, size_t len, const char *part, const char *what, char **names,
                     int n, const char *mine)
{
    size_t pos = (size_t)snprintf(why, len, "partition %s is for the %s ", part, what);
    for (int i = 0; i < n && pos < len; i++)
        pos += (size_t)snprintf(why + pos, len - pos, "%s%s", i ? ", " : "", names[i]);
    if (mine && pos < len)
        snprintf(why + pos, len - pos, " (this job's: %s)", mine);
}

/* Why the job may not run in p ("" if it may); its time limit with p's default. */
static void why_not(const config_partition_t *p, const job_t *j, bool oper, double *limit,
                    char *why, size_t len)
{
    *why = '\0';
    int least = j->type != SCHED_RIGID && j->min_nodes > 0 ? j->min_nodes : j->nodes;
    *limit = j->time_limit > 0 ? j->time_limit : p->default_time > 0 ? p->default_time
                                                                     : p->max_time;
    if (p->state == PART_DRAIN || p->state == PART_INACTIVE)
        snprintf(why, len, "partition %s is %s: it takes no new jobs", p->name,
                 p->state == PART_DRAIN ? "draining" : "inactive");
    else if (!oper && p->accounts && !in_names(p->accounts, p->naccounts, j->account))
        for_whom(why, len, p->name, "accounts", p->accounts, p->naccounts,
                 j->account ? j->account : "(none)");
    else if (!oper && !group_allowed(p, j->gid))
        for_whom(why, len, p->name, "groups", p->groups, p->ngroups, NULL);
    else if (p->max_nodes > 0 && least > p->max_nodes)
        snprintf(why, len, "partition %s takes jobs of %d nodes at most (MaxNodes); this one "
                 "needs %d", p->name, p->max_nodes, least);
    else if (least > p->nnodes)
        snprintf(why, len, "partition %s has %d nodes; the job needs %d", p->name, p->nnodes,
                 least);
    else if (p->max_time > 0 && *limit > p->max_time) {
        char a[32], b[32];
        strparse_fmt_limit(*limit, a, sizeof(a));
        strparse_fmt_limit(p->max_time, b, sizeof(b));
        snprintf(why, len, "partition %s takes time limits up to %s (MaxTime); this job asks "
                 "for %s", p->name, b, a);
    }
}

int parts_submit(ctld_t *c, job_t *j, const char *asked, bool oper, char *err, size_t errlen)
{
    free(j->partition);
    j->partition = NULL;
    if (!c->cfg.npartitions) {
        if (asked && *asked)
            return BAD("this cluster has no partitions (Partition in ductile.conf): remove "
                       "--partition");
        return 0;
    }
    const config_partition_t *cand[64];
    int n = 0;
    if (asked && *asked) {
        char buf[512], *save = NULL;
        snprintf(buf, sizeof(buf), "%s", asked);
        for (char *w = strtok_r(buf, ",", &save); w && n < 64; w = strtok_r(NULL, ",", &save)) {
            const config_partition_t *p = partition_find(&c->cfg, w);
            if (!p)
                return BAD("there is no partition '%.64s' (ductile partitions lists them)", w);
            cand[n++] = p;
        }
        if (!n) /* "," (the command refuses it too): no empty reason below */
            return BAD("--partition '%.64s' names no partition (ductile partitions lists them)",
                       asked);
    } else {
        cand[n++] = default_partition(c);
    }
    /* the ones it may run in, in the order given; the first's time limit */
    char ok[512] = "", why[256] = "";
    size_t pos = 0;
    double limit = 0;
    int tier = 0, nok = 0;
    for (int i = 0; i < n; i++) {
        double l;
        char w[256];
        why_not(cand[i], j, oper, &l, w, sizeof(w));
        if (*w) {
            if (!*why)
                snprintf(why, sizeof(why), "%s", w);
            continue;
        }
        if (!nok++)
            limit = l;
        if (cand[i]->tier > tier)
            tier = cand[i]->tier;
        if (pos + strlen(cand[i]->name) + 2 < sizeof(ok))
            pos += (size_t)snprintf(ok + pos, sizeof(ok) - pos, "%s%s", pos ? "," : "",
                                    cand[i]->name);
    }
    if (!nok)
        return BAD("%s", why);
    if (!(j->partition = strdup(ok)))
        return BAD("out of memory");
    j->time_limit = limit;
    j->tier = tier;
    /* a malleable job grows within the smallest MaxNodes of them */
    for (int i = 0; i < n; i++)
        if (cand[i]->max_nodes > 0 && j->max_nodes > cand[i]->max_nodes &&
            strstr(ok, cand[i]->name))
            j->max_nodes = cand[i]->max_nodes;
    return 0;
}

bool *parts_nodes(const ctld_t *c, const job_t *j, int *tier)
{
    const config_partition_t *p[64];
    int n = listed(c, j->partition, p, 64);
    *tier = 0;
    if (!n)
        return NULL;
    bool *in = calloc((size_t)c->cfg.nnodes, sizeof(bool));
    if (!in)
        return NULL;
    for (int k = 0; k < n; k++) {
        if (p[k]->tier > *tier)
            *tier = p[k]->tier;
        for (int i = 0; i < c->cfg.nnodes; i++)
            in[i] |= p[k]->nodes[i];
    }
    return in;
}

bool parts_down(const ctld_t *c, const job_t *j)
{
    const config_partition_t *p[64];
    int n = listed(c, j->partition, p, 64);
    for (int k = 0; k < n; k++)
        if (p[k]->state == PART_UP || p[k]->state == PART_DRAIN)
            return false;
    return n > 0;
}

bool parts_preempt(const ctld_t *c, const job_t *j)
{
    const config_partition_t *p[64];
    int n = listed(c, j->partition, p, 64);
    for (int k = 0; k < n; k++)
        if (p[k]->preempt)
            return true;
    return false;
}

int parts_tier_max(const ctld_t *c)
{
    int m = 0;
    for (int i = 0; i < c->cfg.npartitions; i++)
        if (c->cfg.partitions[i].tier > m)
            m = c->cfg.partitions[i].tier;
    return m;
}

const char *parts_running_in(const ctld_t *c, const job_t *j)
{
    const config_partition_t *p[64];
    int n = listed(c, j->partition, p, 64);
    for (int k = 0; k < n; k++) {
        bool all = j->nalloc > 0;
        for (int i = 0; all && i < j->nalloc; i++)
            all = p[k]->nodes[j->alloc[i]];
        if (all)
            return p[k]->name;
    }
    return j->partition;
}

/* the cluster's one queue when no partition is configured */
static const char *implicit_name(const ctld_t *c)
{
    return c->cfg.cluster_name && *c->cfg.cluster_name ? c->cfg.cluster_name : "ductile";
}

static bool name_in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

int parts_check_list(const ctld_t *c, const char *list, char *err, size_t errlen)
{
    char buf[512];
    if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf))
        return BAD("the list of partitions is too long");
    char *save = NULL;
    int n = 0;
    for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save), n++) {
        bool known = c->cfg.npartitions ? partition_find(&c->cfg, w) != NULL
                                         : !strcmp(w, implicit_name(c));
        if (!known) {
            char *e = strparse_escape(w);
            int rc = c->cfg.npartitions
                         ? BAD("'%.100s' is not a partition ('ductile partitions' lists them)",
                               e ? e : "?")
                         : BAD("'%.100s' is not a partition: this cluster has one queue, %s",
                               e ? e : "?", implicit_name(c));
            free(e);
            return rc;
        }
    }
    return n ? 0 : BAD("no partition named");
}

bool parts_job_in(const ctld_t *c, const job_t *j, const char *list)
{
    if (!j->partition) /* none configured: every job is in the one queue */
        return true;
    if (j->state == JS_PENDING || jstate_final(j->state)) {
        const config_partition_t *p[64];
        int n = listed(c, j->partition, p, 64);
        for (int k = 0; k < n; k++)
            if (name_in_list(list, p[k]->name))
                return true;
        return false;
    }
    return name_in_list(list, parts_running_in(c, j));
}

/* --- states changed by operators (partition_state table: kept across restarts) --- */

static config_partition_t *find_mutable(ctld_t *c, const char *name)
{
    for (int i = 0; i < c->cfg.npartitions; i++)
        if (!strcmp(c->cfg.partitions[i].name, name))
            return &c->cfg.partitions[i];
    return NULL;
}

int parts_load(ctld_t *c, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_exec(c->db, "CREATE TABLE IF NOT EXISTS partition_state (name TEXT PRIMARY"
                            " KEY, state INTEGER)", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->db, "SELECT name, state FROM partition_state", -1, &st, NULL) !=
            SQLITE_OK) {
        sqlite3_finalize(st);
        return BAD("cannot read the partitions' states: %s", sqlite3_errmsg(c->db));
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        int state = sqlite3_column_int(st, 1);
        config_partition_t *p = name ? find_mutable(c, name) : NULL;
        if (p && state >= PART_UP && state <= PART_INACTIVE)
            p->state = (partition_state_t)state; /* a partition gone from the file: none */
    }
    sqlite3_finalize(st);
    return 0;
}

static void collect_pending(int64_t id, void *val, void *arg)
{
    (void)id;
    job_t *j = val, ***out = arg;
    if (j->state == JS_PENDING && !j->waiting)
        *(*out)++ = j;
}

/* partition_update {name, state} (operators): the state from now on, and kept */
static void update_rpc(ctld_t *c, conn_t *conn, const json_t *m)
{
    char err[256];
    const char *name, *word;
    partition_state_t state;
    if (proto_str(m, "name", 256, &name, err, sizeof(err)) < 0 ||
        proto_str(m, "state", 32, &word, err, sizeof(err)) < 0) {
        rpc_fail(c, conn, err);
        return;
    }
    config_partition_t *p = find_mutable(c, name);
    if (!p) {
        char *e = strparse_escape(name);
        snprintf(err, sizeof(err), "'%.100s' is not a partition ('ductile partitions' lists them)",
                 e ? e : "?");
        free(e);
        rpc_fail(c, conn, err);
        return;
    }
    if (partition_state_parse(word, &state) < 0) {
        rpc_fail(c, conn, "a partition's state is UP, DOWN, DRAIN or INACTIVE");
        return;
    }
    sqlite3_stmt *st = NULL;
    int rc = db_write_begin(c) < 0 ||
                     sqlite3_prepare_v2(c->db, "INSERT OR REPLACE INTO partition_state VALUES"
                                               " (?1, ?2)", -1, &st, NULL) != SQLITE_OK
                 ? -EIO
                 : 0;
    if (rc == 0) {
        sqlite3_bind_text(st, 1, p->name, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 2, (int)state);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
    }
    sqlite3_finalize(st);
    if (rc < 0) {
        rpc_fail(c, conn, "the database refused the change: the state is as it was");
        return;
    }
    p->state = state;
    if (state == PART_DOWN || state == PART_INACTIVE) {
        /* its waiting jobs with no other partition up leave the engine's plans */
        size_t n = idmap_count(c->jobs);
        job_t **v = malloc((n + 1) * sizeof(*v)), **end = v;
        if (v)
            idmap_foreach(c->jobs, collect_pending, &end);
        for (job_t **k = v; v && k < end; k++)
            if (parts_down(c, *k)) {
                sched_remove(c->sched, (*k)->id);
                elig_enter(c, *k);
            }
        free(v);
    }
    c->elig_due = true; /* those it held may start */
    jobs_want_schedule(c);
    rpc_reply(c, conn, json_pack("{s:b,s:s,s:s}", "ok", 1, "name", p->name, "state",
                                 partition_state_name(state)));
}

void parts_rpc(ctld_t *c, conn_t *conn, const json_t *m, bool oper)
{
    if (m && !strcmp(json_string_value(json_object_get(m, "type")), "partition_update")) {
        if (!oper)
            rpc_fail(c, conn, "permission denied: only operators change a partition's state");
        else
            update_rpc(c, conn, m);
        return;
    }
    json_t *out = json_array();
    for (int i = 0; i < c->cfg.npartitions; i++) {
        const config_partition_t *p = &c->cfg.partitions[i];
        char **names = malloc((size_t)p->nnodes * sizeof(char *)), list[4096] = "";
        int k = 0;
        for (int n = 0; names && n < c->cfg.nnodes; n++)
            if (p->nodes[n])
                names[k++] = c->cfg.nodes[n];
        if (names)
            hostlist_compress(names, k, list, sizeof(list));
        free(names);
        json_t *acc = json_array();
        for (int a = 0; a < p->naccounts; a++)
            json_array_append_new(acc, json_string(p->accounts[a]));
        json_array_append_new(
            out, json_pack("{s:s,s:s,s:s,s:i,s:b,s:f,s:f,s:i,s:i,s:o,s:b}", "name", p->name,
                           "state", partition_state_name(p->state), "nodelist", list, "nodes",
                           p->nnodes, "default", p->is_default, "default_time", p->default_time,
                           "max_time", p->max_time, "max_nodes", p->max_nodes, "tier", p->tier,
                           "accounts", acc, "preempt", p->preempt));
    }
    rpc_reply(c, conn, json_pack("{s:b,s:o,s:s}", "ok", 1, "partitions", out, "cluster",
                                 c->cfg.cluster_name));
}
