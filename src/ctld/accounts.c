/* Accounts and fair share (docs/accounts.md): the account tree with its shares and
 * members, which operators manage (`ductile account add/modify/list`), the account a
 * job runs under, the engine's priority settings and the fair-share usage kept across
 * restarts, and `ductile priority` (sprio).
 *
 * Tables of their own, made on first use: accounts (id, name, parent, shares,
 * description), account_users (account, user, is_default), fairshare_usage (account,
 * uid, usage, at). The engine knows accounts by id and users by uid; usage is saved
 * every minute and at a stop, and decayed for the time it was away at a start. */
#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld.h"
#include "privacy.h"

/* Limits of an account (its sub-accounts' jobs included) or a user (all their jobs);
 * 0: none. The engine holds the first three (limits.c), the controller max_submit. */
typedef struct limits {
    int max_running, max_nodes, max_submit;
    double max_node_hours;
} limits_t;

typedef struct acct {
    uint32_t id;
    char *name;
    uint32_t parent; /* 0: top level */
    double shares;
    char *desc;
    limits_t lim;
} acct_t;

typedef struct ulimit {
    char *user;
    limits_t lim;
} ulimit_t;

typedef struct member {
    uint32_t account;
    char *user;
    bool is_default;
} member_t;

struct accounts {
    acct_t *a;
    int na;
    member_t *m;
    int nm;
    ulimit_t *u;
    int nu;
    double saved_at; /* monotonic: the last save of the usage */
    double usage_until; /* wall clock: what the database's usage counts up to (the last
                           save before this start); -INFINITY: none saved */
    uint64_t saved_version; /* sched_usage_version then */
};

#define NAME_MAX_LEN 64
#define SAVE_EVERY 60.0

static int tables(ctld_t *c)
{
    return sqlite3_exec(c->db,
                        "CREATE TABLE IF NOT EXISTS accounts (id INTEGER PRIMARY KEY,"
                        " name TEXT UNIQUE NOT NULL, parent INTEGER, shares REAL,"
                        " description TEXT, max_running INTEGER DEFAULT 0, max_nodes INTEGER"
                        " DEFAULT 0, max_node_hours REAL DEFAULT 0, max_submit INTEGER"
                        " DEFAULT 0);"
                        "CREATE TABLE IF NOT EXISTS user_limits (user TEXT PRIMARY KEY,"
                        " max_running INTEGER, max_nodes INTEGER, max_node_hours REAL,"
                        " max_submit INTEGER);"
                        "CREATE TABLE IF NOT EXISTS account_users (account INTEGER NOT NULL,"
                        " user TEXT NOT NULL, is_default INTEGER, PRIMARY KEY (account, user));"
                        "CREATE TABLE IF NOT EXISTS fairshare_usage (account INTEGER NOT NULL,"
                        " uid INTEGER NOT NULL, usage REAL, at REAL,"
                        " PRIMARY KEY (account, uid))",
                        NULL, NULL, NULL) == SQLITE_OK
               ? 0
               : -EIO;
}

static void clear(struct accounts *s)
{
    for (int i = 0; i < s->na; i++) {
        free(s->a[i].name);
        free(s->a[i].desc);
    }
    for (int i = 0; i < s->nm; i++)
        free(s->m[i].user);
    for (int i = 0; i < s->nu; i++)
        free(s->u[i].user);
    free(s->a);
    free(s->m);
    free(s->u);
    s->a = NULL;
    s->m = NULL;
    s->u = NULL;
    s->na = s->nm = s->nu = 0;
}

void accounts_free(ctld_t *c)
{
    if (!c->acct)
        return;
    clear(c->acct);
    free(c->acct);
    c->acct = NULL;
}

static acct_t *by_name(const ctld_t *c, const char *name)
{
    for (int i = 0; c->acct && name && i < c->acct->na; i++)
        if (!strcmp(c->acct->a[i].name, name))
            return &c->acct->a[i];
    return NULL;
}

static acct_t *by_id(const ctld_t *c, uint32_t id)
{
    for (int i = 0; c->acct && i < c->acct->na; i++)
        if (c->acct->a[i].id == id)
            return &c->acct->a[i];
    return NULL;
}

static member_t *membership(const ctld_t *c, uint32_t account, const char *user)
{
    for (int i = 0; c->acct && i < c->acct->nm; i++)
        if (c->acct->m[i].account == account && !strcmp(c->acct->m[i].user, user))
            return &c->acct->m[i];
    return NULL;
}

static const acct_t *default_of(const ctld_t *c, const char *user)
{
    for (int i = 0; c->acct && i < c->acct->nm; i++)
        if (c->acct->m[i].is_default && !strcmp(c->acct->m[i].user, user))
            return by_id(c, c->acct->m[i].account);
    return NULL;
}

void accounts_engine_settings(ctld_t *c)
{
    const config_t *f = &c->cfg;
    sched_prio_config_t p = {
        .w_age = f->prio_w_age,
        .w_size = f->prio_w_size,
        .w_fairshare = f->prio_w_fairshare,
        .w_tier = f->prio_w_partition,
        .max_age = f->prio_max_age,
        .half_life = f->prio_half_life,
        .calc_period = f->prio_calc_period,
        .tier_max = parts_tier_max(c),
    };
    char err[256];
    if (sched_set_priority(c->sched, &p, err, sizeof(err)) < 0)
        fprintf(stderr, "ductiled: priority settings: %s\n", err);
}

/* Four columns from i: max_running, max_nodes, max_node_hours, max_submit. */
static void col_limits(sqlite3_stmt *st, int i, limits_t *l)
{
    l->max_running = sqlite3_column_int(st, i);
    l->max_nodes = sqlite3_column_int(st, i + 1);
    l->max_node_hours = sqlite3_column_double(st, i + 2);
    l->max_submit = sqlite3_column_int(st, i + 3);
}

static sched_limits_t engine_limits(const limits_t *l)
{
    return (sched_limits_t){.max_running = l->max_running, .max_nodes = l->max_nodes,
                            .max_node_seconds = l->max_node_hours * 3600};
}

static const ulimit_t *user_limits(const ctld_t *c, const char *user)
{
    for (int i = 0; c->acct && user && i < c->acct->nu; i++)
        if (!strcmp(c->acct->u[i].user, user))
            return &c->acct->u[i];
    return NULL;
}

int accounts_user_max_submit(const ctld_t *c, const char *user)
{
    const ulimit_t *u = user_limits(c, user);
    return u ? u->lim.max_submit : 0;
}

/* The tables into memory (replacing what it held). */
static int read_tables(ctld_t *c, char *err, size_t errlen)
{
    struct accounts *s = c->acct;
    clear(s);
    sqlite3_stmt *st = NULL;
    int rc = 0;
    if (sqlite3_prepare_v2(c->db, "SELECT id, name, parent, shares, description, max_running,"
                                  " max_nodes, max_node_hours, max_submit FROM accounts"
                                  " ORDER BY id", -1, &st, NULL) != SQLITE_OK)
        rc = -EIO;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        acct_t *na = realloc(s->a, (size_t)(s->na + 1) * sizeof(*na));
        if (!na) {
            rc = -ENOMEM;
            break;
        }
        s->a = na;
        acct_t *a = &s->a[s->na++];
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *desc = (const char *)sqlite3_column_text(st, 4);
        a->id = (uint32_t)sqlite3_column_int64(st, 0);
        a->name = strdup(name ? name : "?");
        a->parent = (uint32_t)sqlite3_column_int64(st, 2);
        a->shares = sqlite3_column_double(st, 3);
        a->desc = strdup(desc ? desc : "");
        col_limits(st, 5, &a->lim);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc == 0 && sqlite3_prepare_v2(c->db, "SELECT account, user, is_default FROM account_users"
                                             " ORDER BY account, user", -1, &st, NULL) != SQLITE_OK)
        rc = -EIO;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        member_t *nm = realloc(s->m, (size_t)(s->nm + 1) * sizeof(*nm));
        if (!nm) {
            rc = -ENOMEM;
            break;
        }
        s->m = nm;
        member_t *m = &s->m[s->nm++];
        const char *u = (const char *)sqlite3_column_text(st, 1);
        m->account = (uint32_t)sqlite3_column_int64(st, 0);
        m->user = strdup(u ? u : "?");
        m->is_default = sqlite3_column_int(st, 2) != 0;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc == 0 && sqlite3_prepare_v2(c->db, "SELECT user, max_running, max_nodes,"
                                             " max_node_hours, max_submit FROM user_limits"
                                             " ORDER BY user", -1, &st, NULL) != SQLITE_OK)
        rc = -EIO;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        ulimit_t *nu = realloc(s->u, (size_t)(s->nu + 1) * sizeof(*nu));
        if (!nu) {
            rc = -ENOMEM;
            break;
        }
        s->u = nu;
        ulimit_t *u = &s->u[s->nu++];
        const char *name = (const char *)sqlite3_column_text(st, 0);
        u->user = strdup(name ? name : "?");
        col_limits(st, 1, &u->lim);
    }
    sqlite3_finalize(st);
    if (rc < 0)
        snprintf(err, errlen, "cannot read the accounts: %s", sqlite3_errmsg(c->db));
    return rc;
}

/* A user's limits into the engine, by the uid the controller's host gives the name. */
static void user_to_engine(ctld_t *c, const ulimit_t *u)
{
    struct passwd pw, *res = NULL;
    char buf[4096];
    if (getpwnam_r(u->user, &pw, buf, sizeof(buf), &res) != 0 || !res)
        return; /* no such user here: jobs_limits_of sets it from a job's uid */
    sched_limits_t l = engine_limits(&u->lim);
    sched_set_user_limits(c->sched, (uint32_t)pw.pw_uid, &l);
}

/* The accounts and the saved usage into the engine. */
static void to_engine(ctld_t *c)
{
    char err[256];
    for (int i = 0; i < c->acct->na; i++) {
        const acct_t *a = &c->acct->a[i];
        if (sched_set_account(c->sched, a->id, a->parent, a->shares, err, sizeof(err)) < 0)
            fprintf(stderr, "ductiled: account %s: %s\n", a->name, err);
        sched_limits_t l = engine_limits(&a->lim);
        sched_set_account_limits(c->sched, a->id, &l);
    }
    for (int i = 0; i < c->acct->nu; i++)
        user_to_engine(c, &c->acct->u[i]);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->db, "SELECT account, uid, usage, at FROM fairshare_usage", -1, &st,
                           NULL) != SQLITE_OK)
        return;
    double now = ctld_now(), hl = c->cfg.prio_half_life;
    c->acct->usage_until = -INFINITY;
    while (sqlite3_step(st) == SQLITE_ROW) {
        double u = sqlite3_column_double(st, 2), at = sqlite3_column_double(st, 3);
        if (at > c->acct->usage_until) /* every row of a save has its time */
            c->acct->usage_until = at;
        if (hl > 0 && now > at)
            u *= exp2(-(now - at) / hl);
        sched_set_usage(c->sched, (uint32_t)sqlite3_column_int64(st, 0),
                        (uint32_t)sqlite3_column_int64(st, 1), u);
    }
    sqlite3_finalize(st);
}

int accounts_load(ctld_t *c, char *err, size_t errlen)
{
    if (!c->acct && !(c->acct = calloc(1, sizeof(*c->acct))))
        return snprintf(err, errlen, "out of memory"), -ENOMEM;
    if (tables(c) < 0)
        return snprintf(err, errlen, "cannot make the accounts' tables: %s",
                        sqlite3_errmsg(c->db)),
               -EIO;
    int rc = read_tables(c, err, errlen);
    if (rc < 0)
        return rc;
    sched_clock(c->sched, ctld_now());
    accounts_engine_settings(c);
    to_engine(c);
    c->acct->saved_at = ctld_mono();
    c->acct->saved_version = sched_usage_version(c->sched);
    return 0;
}

uint32_t accounts_id(const ctld_t *c, const char *name)
{
    const acct_t *a = by_name(c, name);
    return a ? a->id : 0;
}

/* Is account id `a` the account `anc` or under it? */
static bool under(const ctld_t *c, uint32_t a, uint32_t anc)
{
    for (int hops = 0; a && hops <= c->acct->na; hops++) {
        if (a == anc)
            return true;
        const acct_t *x = by_id(c, a);
        a = x ? x->parent : 0;
    }
    return false;
}

typedef struct count_arg {
    const ctld_t *c;
    const char *user;  /* count this user's jobs, or */
    uint32_t account;  /* those under this account */
    int n;
} count_arg_t;

static bool counted(const count_arg_t *a, const job_t *j)
{
    return a->user ? j->user && !strcmp(j->user, a->user) : under(a->c, j->account_id, a->account);
}

static void count_live(int64_t id, void *val, void *arg)
{
    (void)id;
    const job_t *j = val;
    count_arg_t *a = arg;
    if (!jstate_final(j->state) && counted(a, j))
        a->n++;
}

/* the elements of arrays not made yet count as jobs (arrays.c) */
static void count_unmade(const job_t *tmpl, int unmade, void *arg)
{
    count_arg_t *a = arg;
    if (counted(a, tmpl))
        a->n += unmade;
}

/* Would a limit always refuse this job (count: does its submission pass max_submit)?
 * who: "user alice" or "account physics". */
static int check_limits(ctld_t *c, const job_t *j, const limits_t *l, const char *who,
                        const char *user, uint32_t account, int njobs, bool count, char *err,
                        size_t errlen)
{
    if (count) {
        if (l->max_submit <= 0)
            return 0;
        count_arg_t a = {c, user, account, 0};
        idmap_foreach(c->jobs, count_live, &a);
        arrays_unmade(c, count_unmade, &a);
        if (a.n + njobs > l->max_submit)
            return snprintf(err, errlen, "%s has %d jobs queued or running and may have at most"
                            " %d (its limit): wait for some to end%s", who, a.n, l->max_submit,
                            njobs > 1 && a.n < l->max_submit ? " or submit fewer" : ""), -EDQUOT;
        return 0;
    }
    int least = j->type != SCHED_RIGID && j->min_nodes > 0 ? j->min_nodes : j->nodes;
    if (l->max_nodes > 0 && least > l->max_nodes)
        return snprintf(err, errlen, "the job needs at least %d nodes but %s may hold at most"
                        " %d at once (its limit)", least, who, l->max_nodes), -EINVAL;
    if (l->max_node_hours > 0) {
        if (!(j->time_limit > 0))
            return snprintf(err, errlen, "%s has a node-hours limit (%g): give the job a time"
                            " limit (--time)", who, l->max_node_hours), -EINVAL;
        double nh = least * j->time_limit / 3600;
        if (nh > l->max_node_hours)
            return snprintf(err, errlen, "the job may use %.1f node-hours (%d nodes x its time"
                            " limit) but %s may use %g in all (its limit)", nh, least, who,
                            l->max_node_hours), -EINVAL;
    }
    return 0;
}

void accounts_job_limits(ctld_t *c, const job_t *j)
{
    const ulimit_t *u = user_limits(c, j->user);
    sched_limits_t l = engine_limits(u ? &u->lim : &(limits_t){0});
    sched_set_user_limits(c->sched, (uint32_t)j->uid, &l); /* none: dropped if it had */
}

int accounts_resolve(ctld_t *c, job_t *j, const char *asked, bool oper, int njobs, char *err,
                     size_t errlen)
{
    const acct_t *a = NULL;
    if (asked && *asked) {
        a = by_name(c, asked);
        if (!a)
            return snprintf(err, errlen, "there is no account '%.64s' (`ductile account list`"
                            " shows them)", asked), -EINVAL;
        if (!oper && !membership(c, a->id, j->user))
            return snprintf(err, errlen, "user %.64s is not a member of account %s (an operator"
                            " adds members: ductile account modify %s --add-user %.64s)",
                            j->user, a->name, a->name, j->user), -EPERM;
    } else {
        a = default_of(c, j->user);
        if (!a && c->cfg.accounts_required)
            return snprintf(err, errlen, "user %.64s has no default account and this cluster"
                            " requires one (AccountsRequired): name one with --account, or ask"
                            " an operator to add you to one", j->user), -EINVAL;
    }
    /* first what no wait would mend, then the count of jobs */
    const ulimit_t *u = user_limits(c, j->user);
    char who[160];
    for (int count = 0; count < 2; count++) {
        if (u) {
            snprintf(who, sizeof(who), "user %.64s", j->user);
            int rc = check_limits(c, j, &u->lim, who, j->user, 0, njobs, count, err, errlen);
            if (rc < 0)
                return rc;
        }
        for (const acct_t *x = a; x; x = x->parent ? by_id(c, x->parent) : NULL) {
            snprintf(who, sizeof(who), "account %s", x->name);
            int rc = check_limits(c, j, &x->lim, who, NULL, x->id, njobs, count, err, errlen);
            if (rc < 0)
                return rc;
        }
    }
    free(j->account);
    j->account = a ? strdup(a->name) : NULL;
    j->account_id = a ? a->id : 0;
    accounts_job_limits(c, j);
    return 0;
}

const char *accounts_limit_text(const ctld_t *c, const job_t *j, char *buf, size_t len)
{
    uint32_t who;
    sched_jobinfo_t info;
    if (!c->acct || !c->sched || !sched_limited(c->sched, j->id, &who) ||
        sched_job_info(c->sched, j->id, &info) < 0)
        return NULL;
    const limits_t *l = NULL;
    char name[96];
    if (who) {
        const acct_t *a = by_id(c, who);
        if (!a)
            return NULL;
        l = &a->lim;
        snprintf(name, sizeof(name), "account %s", a->name);
    } else {
        const ulimit_t *u = user_limits(c, j->user);
        if (!u)
            return NULL;
        l = &u->lim;
        snprintf(name, sizeof(name), "user %.64s", j->user);
    }
    if (info.reason == SCHED_R_LIMIT_JOBS)
        snprintf(buf, len, "%s may run %d job%s at once", name, l->max_running,
                 l->max_running == 1 ? "" : "s");
    else if (info.reason == SCHED_R_LIMIT_NODES)
        snprintf(buf, len, "%s may hold %d node%s at once", name, l->max_nodes,
                 l->max_nodes == 1 ? "" : "s");
    else
        snprintf(buf, len, "%s may use %g node-hours (used and allowed to its running jobs)",
                 name, l->max_node_hours);
    return buf;
}

/* --- saving the usage --- */

double accounts_usage_until(const ctld_t *c)
{
    return c->acct ? c->acct->usage_until : -INFINITY;
}

int accounts_save_usage(ctld_t *c, bool force)
{
    if (!c->acct || !c->sched || db_degraded(c))
        return 0;
    double mono = ctld_mono();
    if (!force && mono - c->acct->saved_at < SAVE_EVERY)
        return 0;
    c->acct->saved_at = mono;
    sched_clock(c->sched, ctld_now()); /* the running jobs charged up to now */
    sched_usage_refresh(c->sched);      /* not the queue: that waits for its period */
    uint64_t version = sched_usage_version(c->sched);
    if (version == c->acct->saved_version)
        return 0; /* decay alone is no change: a start decays what it reads */
    c->acct->saved_version = version;
    size_t n = sched_associations(c->sched, NULL, 0);
    sched_assoc_t *as = n ? malloc(n * sizeof(*as)) : NULL;
    if (n && !as)
        return -ENOMEM;
    n = sched_associations(c->sched, as, n);
    sqlite3_stmt *st = NULL;
    int rc = 0;
    if (db_write_begin(c) < 0 ||
        sqlite3_prepare_v2(c->db, "INSERT OR REPLACE INTO fairshare_usage VALUES (?1, ?2, ?3, ?4)",
                           -1, &st, NULL) != SQLITE_OK)
        rc = -EIO;
    double now = ctld_now();
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (as[i].is_account || as[i].usage <= 0)
            continue;
        sqlite3_bind_int64(st, 1, as[i].account);
        sqlite3_bind_int64(st, 2, as[i].user);
        sqlite3_bind_double(st, 3, as[i].usage);
        sqlite3_bind_double(st, 4, now);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = -EIO;
        sqlite3_reset(st);
    }
    if (rc < 0)
        fprintf(stderr, "ductiled: database: cannot save the fair-share usage: %s\n",
                sqlite3_errmsg(c->db));
    sqlite3_finalize(st);
    free(as);
    return rc;
}

/* --- requests --- */

static bool name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > NAME_MAX_LEN)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-' || *p == '.'))
            return false;
    return true;
}

/* Members to add, remove, or make default: arrays of user names. */
static int users_arg(const json_t *m, const char *key, const json_t **out, char *err, size_t errlen)
{
    *out = NULL;
    if (proto_strarray_opt(m, key, 4096, 1024, out, err, errlen) < 0) /* name_ok says */
        return -EINVAL;
    size_t i;
    const json_t *v;
    json_array_foreach(*out, i, v)
    {
        if (!name_ok(json_string_value(v)))
            return snprintf(err, errlen, "'%.64s' is not a user name", json_string_value(v)),
                   -EINVAL;
    }
    return 0;
}

/* Runs one write of the batch, binding its values in order (i: int64, d: double,
 * s: text). */
static int exec_bind(ctld_t *c, const char *sql, const char *fmt, ...)
{
    sqlite3_stmt *st = NULL;
    if (db_write_begin(c) < 0 || sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return -EIO;
    }
    va_list ap;
    va_start(ap, fmt);
    for (int k = 0; fmt[k]; k++) {
        if (fmt[k] == 'i')
            sqlite3_bind_int64(st, k + 1, va_arg(ap, long long));
        else if (fmt[k] == 'd')
            sqlite3_bind_double(st, k + 1, va_arg(ap, double));
        else
            sqlite3_bind_text(st, k + 1, va_arg(ap, const char *), -1, SQLITE_TRANSIENT);
    }
    va_end(ap);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
    if (rc < 0)
        fprintf(stderr, "ductiled: database: accounts: %s\n", sqlite3_errmsg(c->db));
    sqlite3_finalize(st);
    return rc;
}

static int apply_members(ctld_t *c, uint32_t id, const json_t *add, const json_t *remove,
                         const json_t *defaults)
{
    size_t i;
    const json_t *v;
    int rc = 0;
    json_array_foreach(add, i, v)
    {
        if (rc == 0)
            rc = exec_bind(c, "INSERT OR IGNORE INTO account_users VALUES (?1, ?2, 0)", "is",
                           (long long)id, json_string_value(v));
    }
    json_array_foreach(remove, i, v)
    {
        if (rc == 0)
            rc = exec_bind(c, "DELETE FROM account_users WHERE account = ?1 AND user = ?2", "is",
                           (long long)id, json_string_value(v));
    }
    json_array_foreach(defaults, i, v)
    {
        const char *u = json_string_value(v);
        if (rc == 0)
            rc = exec_bind(c, "INSERT OR IGNORE INTO account_users VALUES (?1, ?2, 0)", "is",
                           (long long)id, u);
        if (rc == 0)
            rc = exec_bind(c, "UPDATE account_users SET is_default = (account = ?1)"
                              " WHERE user = ?2", "is", (long long)id, u);
    }
    /* a member without a default account (new, or removed from its default) gets its
     * first one: this account for a new member, else the oldest of those left */
    if (rc == 0)
        rc = exec_bind(c, "UPDATE account_users SET is_default = 1 WHERE is_default = 0 AND"
                          " NOT EXISTS (SELECT 1 FROM account_users u WHERE u.user ="
                          " account_users.user AND u.is_default) AND account = (SELECT"
                          " MIN(v.account) FROM account_users v WHERE v.user = account_users.user)",
                       "");
    return rc;
}

static bool would_cycle(const ctld_t *c, uint32_t id, uint32_t parent)
{
    for (int hops = 0; parent && hops <= c->acct->na; hops++) {
        if (parent == id)
            return true;
        const acct_t *p = by_id(c, parent);
        parent = p ? p->parent : 0;
    }
    return false;
}

/* The limits a request changes (absent: kept from *l; 0: none). */
static int limits_arg(const json_t *m, limits_t *l, char *err, size_t errlen)
{
    int64_t run, nodes, submit;
    double nh;
    if (proto_int_opt(m, "max_running", 0, 1000000000, l->max_running, &run, err, errlen) < 0 ||
        proto_int_opt(m, "max_nodes", 0, 1 << 24, l->max_nodes, &nodes, err, errlen) < 0 ||
        proto_num_opt(m, "max_node_hours", 0, 1e12, l->max_node_hours, &nh, err, errlen) < 0 ||
        proto_int_opt(m, "max_submit", 0, 1000000000, l->max_submit, &submit, err, errlen) < 0)
        return -EINVAL;
    *l = (limits_t){(int)run, (int)nodes, (int)submit, nh};
    return 0;
}

static json_t *limits_json(const limits_t *l)
{
    return json_pack("{s:i,s:i,s:f,s:i}", "max_running", l->max_running, "max_nodes",
                     l->max_nodes, "max_node_hours", l->max_node_hours, "max_submit",
                     l->max_submit);
}

static void push_user_limits(int64_t id, void *val, void *arg)
{
    (void)id;
    const job_t *j = val;
    const char *user = ((void **)arg)[1];
    if (j->user && !strcmp(j->user, user))
        accounts_job_limits(((void **)arg)[0], j);
}

/* account_user: a user's limits (operators). */
static void user_change(ctld_t *c, conn_t *conn, json_t *m)
{
    char err[512];
    const char *user;
    if (proto_str(m, "user", 1024, &user, err, sizeof(err)) < 0) {
        rpc_fail(c, conn, err);
        return;
    }
    if (!name_ok(user)) {
        rpc_fail(c, conn, "a user name is 1 to 64 letters, digits, '.', '_' or '-'");
        return;
    }
    const ulimit_t *u = user_limits(c, user);
    limits_t l = u ? u->lim : (limits_t){0};
    if (limits_arg(m, &l, err, sizeof(err)) < 0) {
        rpc_fail(c, conn, err);
        return;
    }
    int rc = exec_bind(c, "INSERT OR REPLACE INTO user_limits VALUES (?1, ?2, ?3, ?4, ?5)",
                       "siidi", user, (long long)l.max_running, (long long)l.max_nodes,
                       l.max_node_hours, (long long)l.max_submit);
    if (rc == 0 && !l.max_running && !l.max_nodes && !l.max_submit && !(l.max_node_hours > 0))
        rc = exec_bind(c, "DELETE FROM user_limits WHERE user = ?1", "s", user);
    char why[256];
    if (rc == 0)
        rc = read_tables(c, why, sizeof(why));
    if (rc < 0) {
        rpc_fail(c, conn, "cannot save the limits (the controller's log says why)");
        return;
    }
    /* into the engine by the uid of each of the user's jobs, and by name here */
    const ulimit_t *now = user_limits(c, user);
    ulimit_t gone = {(char *)user, {0}};
    user_to_engine(c, now ? now : &gone);
    void *arg[2] = {c, (void *)user};
    idmap_foreach(c->jobs, push_user_limits, arg);
    jobs_want_schedule(c);
    rpc_reply(c, conn, json_pack("{s:b,s:s,s:o}", "ok", 1, "user", user, "limits",
                                 limits_json(&l)));
}

static void account_change(ctld_t *c, conn_t *conn, json_t *m, bool add)
{
    char err[512];
    const char *name, *parent_name, *desc;
    double shares;
    const json_t *users, *remove, *defaults;
    /* names longer than a name are refused below, in words */
    if (proto_str(m, "name", 1024, &name, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "parent", 1024, NULL, &parent_name, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "description", 256, NULL, &desc, err, sizeof(err)) < 0 ||
        proto_num_opt(m, "shares", 0, 1e9, -1, &shares, err, sizeof(err)) < 0 ||
        users_arg(m, "add_users", &users, err, sizeof(err)) < 0 ||
        users_arg(m, "remove_users", &remove, err, sizeof(err)) < 0 ||
        users_arg(m, "default_for", &defaults, err, sizeof(err)) < 0) {
        rpc_fail(c, conn, err);
        return;
    }
    if (!name_ok(name)) {
        rpc_fail(c, conn, "an account's name is 1 to 64 letters, digits, '.', '_' or '-'");
        return;
    }
    if (!strcmp(name, "root")) { /* --parent root means the top */
        rpc_fail(c, conn, "root is the top of the tree, not an account: choose another name");
        return;
    }
    acct_t *a = by_name(c, name);
    if (add && a) {
        snprintf(err, sizeof(err), "account %s exists already (change it with ductile account"
                 " modify)", name);
        rpc_fail(c, conn, err);
        return;
    }
    if (!add && !a) {
        snprintf(err, sizeof(err), "there is no account '%s' (`ductile account list` shows them)",
                 name);
        rpc_fail(c, conn, err);
        return;
    }
    uint32_t parent = a ? a->parent : 0;
    if (parent_name && *parent_name && strcmp(parent_name, "root")) {
        const acct_t *p = by_name(c, parent_name);
        if (!p) {
            snprintf(err, sizeof(err), "there is no account '%s' to put %s under", parent_name,
                     name);
            rpc_fail(c, conn, err);
            return;
        }
        parent = p->id;
    } else if (parent_name) {
        parent = 0;
    }
    limits_t lim = a ? a->lim : (limits_t){0};
    if (limits_arg(m, &lim, err, sizeof(err)) < 0) {
        rpc_fail(c, conn, err);
        return;
    }
    uint32_t id = a ? a->id : 0;
    size_t k;
    const json_t *v;
    json_array_foreach(remove, k, v)
    {
        if (!a || !membership(c, id, json_string_value(v))) {
            snprintf(err, sizeof(err), "%.64s is not a member of account %s: nothing to remove",
                     json_string_value(v), name);
            rpc_fail(c, conn, err);
            return;
        }
    }
    if (!add && would_cycle(c, id, parent)) {
        snprintf(err, sizeof(err), "account %s cannot go under %s: %s is under %s", name,
                 parent_name, parent_name, name);
        rpc_fail(c, conn, err);
        return;
    }
    if (shares < 0)
        shares = a ? a->shares : 1;
    int rc;
    if (add) {
        uint32_t next = 1;
        for (int i = 0; i < c->acct->na; i++)
            if (c->acct->a[i].id >= next)
                next = c->acct->a[i].id + 1;
        id = next;
        rc = exec_bind(c, "INSERT INTO accounts VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                       "isidsiidi", (long long)id, name, (long long)parent, shares,
                       desc ? desc : "", (long long)lim.max_running, (long long)lim.max_nodes,
                       lim.max_node_hours, (long long)lim.max_submit);
    } else {
        rc = exec_bind(c, "UPDATE accounts SET parent = ?2, shares = ?3, description = ?4,"
                          " max_running = ?5, max_nodes = ?6, max_node_hours = ?7,"
                          " max_submit = ?8 WHERE id = ?1", "iidsiidi", (long long)id,
                       (long long)parent, shares, desc ? desc : a->desc,
                       (long long)lim.max_running, (long long)lim.max_nodes,
                       lim.max_node_hours, (long long)lim.max_submit);
    }
    if (rc == 0)
        rc = apply_members(c, id, users, remove, defaults);
    char why[256];
    if (rc == 0)
        rc = read_tables(c, why, sizeof(why));
    if (rc < 0) {
        rpc_fail(c, conn, "cannot save the account (the controller's log says why)");
        return;
    }
    if (sched_set_account(c->sched, id, parent, shares, why, sizeof(why)) < 0)
        fprintf(stderr, "ductiled: account %s: %s\n", name, why);
    sched_limits_t el = engine_limits(&lim);
    sched_set_account_limits(c->sched, id, &el);
    jobs_want_schedule(c);
    rpc_reply(c, conn, json_pack("{s:b,s:s}", "ok", 1, "account", name));
}

/* PrivateData=accounts: an account's definition is for its members (Slurm's: for its
 * coordinators, which Ductile does not have). */
static bool sees_account(const ctld_t *c, const viewer_t *v, uint32_t id)
{
    return privacy_sees(v, CONFIG_PRIVATE_ACCOUNTS, membership(c, id, v->user) ? v->user : NULL);
}

/* The tree with each account's figures, and each association's (user names from the
 * controller's users database), as much of it as v may see. */
static json_t *list(ctld_t *c, const viewer_t *v)
{
    sched_clock(c->sched, ctld_now());
    sched_usage_refresh(c->sched); /* anyone may ask: the figures, not the queue */
    json_t *out = json_array();
    size_t n = sched_associations(c->sched, NULL, 0);
    sched_assoc_t *as = n ? calloc(n, sizeof(*as)) : NULL;
    n = as ? sched_associations(c->sched, as, n) : 0;
    /* an account's usage is its members' summed: no one user's (PrivateData=usage) */
    bool usage = privacy_sees(v, CONFIG_PRIVATE_USAGE, NULL);
    for (int i = 0; i < c->acct->na; i++) {
        const acct_t *a = &c->acct->a[i];
        if (!sees_account(c, v, a->id))
            continue;
        const acct_t *p = by_id(c, a->parent);
        json_t *o = json_pack("{s:s,s:s,s:f,s:s}", "name", a->name, "parent",
                              p ? p->name : "root", "shares", a->shares, "description", a->desc);
        json_t *mem = json_array();
        for (int k = 0; k < c->acct->nm; k++)
            if (c->acct->m[k].account == a->id)
                json_array_append_new(mem, json_pack("{s:s,s:b}", "user", c->acct->m[k].user,
                                                     "default", c->acct->m[k].is_default));
        json_object_set_new(o, "users", mem);
        json_object_set_new(o, "limits", limits_json(&a->lim));
        for (size_t k = 0; k < n; k++)
            if (as[k].is_account && as[k].account == a->id) {
                json_object_set_new(o, "norm_shares", json_real(as[k].norm_shares));
                if (!usage)
                    continue;
                json_object_set_new(o, "usage", json_real(as[k].usage));
                json_object_set_new(o, "norm_usage", json_real(as[k].norm_usage));
                json_object_set_new(o, "eff_usage", json_real(as[k].eff_usage));
                json_object_set_new(o, "fairshare", json_real(as[k].fairshare));
            }
        json_array_append_new(out, o);
    }
    json_t *assoc = json_array();
    for (size_t k = 0; k < n; k++) {
        if (as[k].is_account)
            continue;
        const acct_t *a = by_id(c, as[k].account);
        char user[64];
        ctld_user_name(as[k].user, user, sizeof(user));
        if (!privacy_sees(v, CONFIG_PRIVATE_USAGE, user) || (a && !sees_account(c, v, a->id)))
            continue;
        json_array_append_new(assoc, json_pack("{s:s,s:s,s:I,s:f,s:f,s:f,s:f,s:f,s:f}", "account",
                                               a ? a->name : "", "user", user, "uid",
                                               (json_int_t)as[k].user, "shares", as[k].shares,
                                               "norm_shares", as[k].norm_shares, "usage",
                                               as[k].usage, "norm_usage", as[k].norm_usage,
                                               "eff_usage", as[k].eff_usage, "fairshare",
                                               as[k].fairshare));
    }
    free(as);
    json_t *ul = json_array();
    for (int i = 0; i < c->acct->nu; i++)
        if (privacy_sees(v, CONFIG_PRIVATE_ACCOUNTS, c->acct->u[i].user))
            json_array_append_new(ul, json_pack("{s:s,s:o}", "user", c->acct->u[i].user,
                                                "limits", limits_json(&c->acct->u[i].lim)));
    json_t *rep = json_pack("{s:b,s:o,s:o,s:o}", "ok", 1, "accounts", out, "associations", assoc,
                            "user_limits", ul);
    char hidden[64];
    config_private_names(v->hidden & (CONFIG_PRIVATE_USAGE | CONFIG_PRIVATE_ACCOUNTS), hidden,
                         sizeof(hidden));
    if (rep && *hidden) /* what the listing leaves out, so that the command can say so */
        json_object_set_new(rep, "private", json_string(hidden));
    return rep;
}

void accounts_rpc(ctld_t *c, conn_t *conn, json_t *msg, const char *type, bool oper)
{
    if (!c->acct) {
        rpc_fail(c, conn, "the accounts are not loaded");
        return;
    }
    if (!strcmp(type, "account_list")) {
        viewer_t who;
        privacy_viewer(c, conn, &who);
        rpc_reply(c, conn, list(c, &who));
        return;
    }
    if (!oper) {
        rpc_fail(c, conn, "permission denied: only operators manage accounts");
        return;
    }
    if (!strcmp(type, "account_user"))
        user_change(c, conn, msg);
    else
        account_change(c, conn, msg, !strcmp(type, "account_add"));
}

/* ductile priority (sprio): the waiting jobs the engine sees, in the queue's order
 * (class, partition tier, priority), with their factors weighted as they counted when
 * their priority was last computed (every PriorityCalcPeriod: a query recomputes
 * nothing, anyone may ask). */
void accounts_priority_rpc(ctld_t *c, conn_t *conn, json_t *msg)
{
    (void)msg;
    viewer_t who;
    privacy_viewer(c, conn, &who);
    json_t *rows = json_array();
    sched_prio_config_t w;
    sched_get_priority(c->sched, &w);
    size_t n = sched_pending_order(c->sched, NULL, 0);
    int64_t *ids = n ? malloc(n * sizeof(*ids)) : NULL;
    n = ids ? sched_pending_order(c->sched, ids, n) : 0;
    for (size_t i = 0; i < n; i++) {
        const job_t *j = idmap_get(c->jobs, ids[i]);
        sched_prio_info_t p;
        if (!j || !privacy_sees(&who, CONFIG_PRIVATE_JOBS, j->user) ||
            sched_job_priority(c->sched, ids[i], &p) < 0)
            continue;
        json_t *row = json_pack("{s:I,s:s,s:s,s:f,s:f,s:f,s:f,s:f,s:i}", "id", (json_int_t)j->id,
                                "user", j->user ? j->user : "", "account",
                                j->account ? j->account : "", "priority", p.priority, "age",
                                p.age * w.w_age, "size", p.size * w.w_size, "fairshare",
                                p.fairshare * w.w_fairshare, "partition", p.tier * w.w_tier,
                                "nice", p.nice);
        privacy_trim(&who, j->user, row);
        json_array_append_new(rows, row);
    }
    free(ids);
    rpc_reply(c, conn,
              json_pack("{s:b,s:o,s:{s:f,s:f,s:f,s:f}}", "ok", 1, "jobs", rows, "weights", "age",
                        w.w_age, "size", w.w_size, "fairshare", w.w_fairshare, "partition",
                        w.w_tier));
}
