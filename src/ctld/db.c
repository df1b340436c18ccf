/* The controller's durable state in SQLite (WAL, synchronous=FULL).
 *
 * Group commit: every change made while handling the events of one loop iteration
 * goes into one transaction, committed at the end of the iteration; the replies and
 * node commands that depend on those changes are held until the commit returns. So an
 * acknowledged submission is on disk, and a thousand submissions arriving together
 * cost one fsync, not a thousand. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctld.h"
#include "hostlist.h"

#define FAIL(...) (snprintf(err, errlen, __VA_ARGS__), -EIO)

#define LIVE "state IN ('PD','R','RS','CG')"

static const char *schema =
    "CREATE TABLE IF NOT EXISTS jobs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, user TEXT, uid INTEGER, gid INTEGER,"
    " state TEXT, final TEXT, type TEXT, nodes INTEGER, min_nodes INTEGER, max_nodes INTEGER,"
    " constraint_ TEXT, time_limit REAL, requeue INTEGER, script TEXT, cwd TEXT, env TEXT,"
    " out_path TEXT, err_path TEXT, submit REAL, start REAL, end_ REAL, exit_code INTEGER,"
    " signal INTEGER, restarts INTEGER, alloc TEXT, node_seconds REAL, alloc_since REAL,"
    " reason TEXT, launched INTEGER);"
    "CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state);"
    "CREATE INDEX IF NOT EXISTS jobs_end ON jobs(end_);"
    "CREATE TABLE IF NOT EXISTS job_events (job INTEGER, time REAL, event TEXT,"
    " nodes_before INTEGER, nodes_after INTEGER, alloc TEXT, detail TEXT);"
    "CREATE INDEX IF NOT EXISTS job_events_job ON job_events(job);"
    "CREATE TABLE IF NOT EXISTS nodes (name TEXT PRIMARY KEY, drain INTEGER, reason TEXT);"
    /* the operators' changes of the power corridor (energy.c); upper 0: none */
    "CREATE TABLE IF NOT EXISTS power_corridor (at REAL, lower REAL, upper REAL, by TEXT);"
    /* the number of the last committed batch (see the high-water mark below) */
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER);"
    "INSERT OR IGNORE INTO meta VALUES ('seq', 0);"
    /* How many live jobs the table holds, kept by the database itself: a damaged value
     * that still decodes (a state PD read as CD) would drop a job from the load
     * silently; the count says one is missing. */
    "INSERT OR IGNORE INTO meta SELECT 'live', count(*) FROM jobs WHERE " LIVE ";"
    "CREATE TRIGGER IF NOT EXISTS jobs_live_ins AFTER INSERT ON jobs BEGIN"
    " UPDATE meta SET value = value + (NEW.state IN ('PD','R','RS','CG')) WHERE key = 'live'; END;"
    "CREATE TRIGGER IF NOT EXISTS jobs_live_upd AFTER UPDATE OF state ON jobs BEGIN"
    " UPDATE meta SET value = value + (NEW.state IN ('PD','R','RS','CG'))"
    " - (OLD.state IN ('PD','R','RS','CG')) WHERE key = 'live'; END;"
    "CREATE TRIGGER IF NOT EXISTS jobs_live_del AFTER DELETE ON jobs BEGIN"
    " UPDATE meta SET value = value - (OLD.state IN ('PD','R','RS','CG')) WHERE key = 'live'; END;"
    /* ... and the sum of their ids: a damaged id that still decodes (job 16 read as 33)
     * keeps the count and would load another job in the place of one (found by
     * fuzz_db); the sum says so. */
    "INSERT OR IGNORE INTO meta SELECT 'live_ids', coalesce(sum(id), 0) FROM jobs WHERE " LIVE ";"
    "CREATE TRIGGER IF NOT EXISTS jobs_liveid_ins AFTER INSERT ON jobs BEGIN"
    " UPDATE meta SET value = value + NEW.id * (NEW.state IN ('PD','R','RS','CG'))"
    " WHERE key = 'live_ids'; END;"
    "CREATE TRIGGER IF NOT EXISTS jobs_liveid_upd AFTER UPDATE OF state ON jobs BEGIN"
    " UPDATE meta SET value = value + NEW.id * (NEW.state IN ('PD','R','RS','CG'))"
    " - OLD.id * (OLD.state IN ('PD','R','RS','CG')) WHERE key = 'live_ids'; END;"
    "CREATE TRIGGER IF NOT EXISTS jobs_liveid_del AFTER DELETE ON jobs BEGIN"
    " UPDATE meta SET value = value - OLD.id * (OLD.state IN ('PD','R','RS','CG'))"
    " WHERE key = 'live_ids'; END;";

/* Version 1: allocations are stored as node names (they were indices into Nodes, which
 * pointed elsewhere, or past the table, once an operator edited Nodes).
 * Version 2: jobs have their power per node, where it came from, and their energy
 * (columns added at the end, so that "SELECT *" keeps the older columns' places).
 * Version 3: jobs have their checkpoint agents (ckpt: JSON, "" without).
 * Version 4: jobs have their declared I/O intensity (io_intensity, 0: none known).
 * Version 5: jobs have their run's measured I/O intensity (io_measured, 0: none) and
 * where the intensity they are planned with came from (io_from: declared, measured).
 * Version 6: jobs have the class they wait in after a requeue (wait_class: 2 after a
 * node failure, first of all), which a restart keeps.
 * Version 7: the past runs a submission's power and I/O come from (db_power_history,
 * db_io_history) have indexes of their own, which hold only the finished runs that
 * measured something: through jobs_user_name, every submission read every earlier job
 * of its name and user, queued ones too, scripts and environments included (at 2,000
 * queued jobs of one name, 40 % of the controller's time per submission).
 * Version 8: jobs have the arguments of their script (args: a JSON array, "" without).
 * Version 9: pending jobs may wait apart from the engine (eligible.c): held (hold: 1 by
 * its user, 2 by an operator), until a time (begin), or for other jobs (depend).
 * Version 10: job arrays: an element's array (array_id, the id of its first element;
 * 0: not an element), its index (array_task) and how many of the array may run at once
 * (array_max, 0: any).
 * Version 11: jobs have the account they run under (account, "" none; accounts.c),
 * their nice, the partitions they may run in (partition, "" none; partitions.c), the
 * reservation they run in (reservation, "" none; reservations.c), and the nodes they asked for (nodesel: JSON of --constraint,
 * --gpus-per-node, --mem, --nodelist, --exclude; "" without), resolved at each start.
 * Version 12: jobs have the time they became eligible (eligible).
 * Version 13: jobs have their submitter's umask (umask, -1: not known, the node daemon's). */
#define SCHEMA_VERSION 13
#define STR_(x) #x
#define STR(x) STR_(x)

enum { ST_INSERT, ST_SAVE, ST_EVENT, ST_NODE, ST_SEQ, ST_ENERGY, ST_SAMPLED, ST__N };
static const char *const sql[ST__N] = {
    [ST_INSERT] = "INSERT INTO jobs (name, user, uid, gid, state, final, type, nodes,"
                  " min_nodes, max_nodes, constraint_, time_limit, requeue, script, cwd, env,"
                  " out_path, err_path, submit, start, end_, exit_code, signal, restarts, alloc,"
                  " node_seconds, alloc_since, reason, id, launched, power_min, power_max,"
                  " power_from, energy, ckpt, io_intensity, io_measured, io_from, wait_class,"
                  " args, hold, begin, depend, array_id, array_task, array_max, account, nice,"
                  " nodesel, partition, reservation, eligible, umask)"
                  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,"
                  " ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30,"
                  " ?31, ?32, ?33, ?34, ?35, ?36, ?37, ?38, ?39, ?40, ?41, ?42, ?43, ?44, ?45,"
                  " ?46, ?47, ?48, ?49, ?50, ?51, ?52, ?53)",
    [ST_SAVE] = "UPDATE jobs SET name = ?1, nodes = ?8, min_nodes = ?9, max_nodes = ?10,"
                " time_limit = ?12, state = ?5, final = ?6, start = ?20, end_ = ?21,"
                " exit_code = ?22, signal = ?23, restarts = ?24, alloc = ?25,"
                " node_seconds = ?26, alloc_since = ?27, reason = ?28, launched = ?30,"
                " energy = ?34, ckpt = ?35, io_measured = ?37, wait_class = ?39, hold = ?41,"
                " begin = ?42, depend = ?43, array_id = ?44, nice = ?48, eligible = ?52"
                " WHERE id = ?29",
    [ST_EVENT] = "INSERT INTO job_events VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [ST_NODE] = "INSERT OR REPLACE INTO nodes VALUES (?1, ?2, ?3)",
    [ST_SEQ] = "UPDATE meta SET value = ?1 WHERE key = 'seq'",
    [ST_ENERGY] = "UPDATE jobs SET energy = ?2 WHERE id = ?1",
    /* when the draw was last sampled (ms): a restart accounts the time it was away */
    [ST_SAMPLED] = "INSERT OR REPLACE INTO meta VALUES ('power_sampled', ?1)",
};

/* The database subsystem's private state. */
/* Statements a submission runs, prepared at their first use and kept (a table they
 * read may not exist before that): parsing them again for every submission took 14 %
 * of the controller's time (perf, sequential `ductile submit`). */
enum { Q_KEY_FIND, Q_KEY_PUT, Q_KEY_PRUNE, Q_POWER_PAST, Q_IO_PAST, Q_HEAD, Q__N };

struct db {
    sqlite3_stmt *st[ST__N];
    sqlite3_stmt *q[Q__N];   /* see Q_*: NULL until first used */
    bool keys_table;         /* submit_keys exists (made on the first key) */
    unsigned flags;          /* DB_RECOVER */
    char hwm_path[4096];
    int64_t seq;             /* the last committed batch */
    int64_t max_id;          /* the highest job id committed */
    int64_t next_id;         /* the next job id to give (never below max_id + 1) */
    int64_t batch_max_id;    /* the highest id inserted in the open batch */
    bool failed;             /* a statement of the open batch failed */
    int fail_errno;          /* what the failure was, for the clients */
    char fail_msg[200];
    bool degraded;           /* the last batch failed; cleared by the next good commit */
    char error[256];         /* "cannot save: ..." */
    char **gone;             /* names of stored nodes no longer in Nodes; index nnodes + k */
    int ngone;
    int hwm_fd;              /* open for the updates after each commit */
    uv_fs_t sync_req;        /* its fdatasync, in libuv's thread pool */
    bool sync_busy, sync_again;
    json_t *env_obj;         /* the last environment stored, and its text (env_text) */
    char *env_str;
};

/* --- the high-water mark ---
 *
 * A small file next to the database, ductile.db.hwm, written (and fdatasync'ed) after
 * every committed batch and before the batch's replies go out. It holds the batch
 * number and the highest job id committed, in two checksummed slots written in turn (a
 * torn write leaves the other one). It lives outside the database on purpose: what the
 * WAL held is lost with the WAL, but not this file. At start-up:
 *   - the database missing or empty while this file exists: refused (it existed);
 *   - the database's batch number behind this file's: committed (acknowledged) batches
 *     are missing (a deleted -wal file, a restored old copy): refused;
 *   - job ids continue after the highest of this file and the database, so they never
 *     go backwards even when the operator recovers from such a loss. */
#define HWM_MAGIC "DTHWM001"
#define HWM_SLOT 512

typedef struct hwm {
    int64_t seq, max_id;
} hwm_t;

static uint64_t fnv64(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

static void hwm_encode(const hwm_t *h, unsigned char *b)
{
    memset(b, 0, 32);
    memcpy(b, HWM_MAGIC, 8);
    memcpy(b + 8, &h->seq, 8);
    memcpy(b + 16, &h->max_id, 8);
    uint64_t sum = fnv64(b, 24);
    memcpy(b + 24, &sum, 8);
}

static bool hwm_decode(const unsigned char *b, hwm_t *h)
{
    uint64_t sum;
    memcpy(&sum, b + 24, 8);
    if (memcmp(b, HWM_MAGIC, 8) || sum != fnv64(b, 24))
        return false;
    memcpy(&h->seq, b + 8, 8);
    memcpy(&h->max_id, b + 16, 8);
    return h->seq >= 0 && h->max_id >= 0;
}

/* 1: read, 0: no file, -errno: unreadable (err says why). */
static int hwm_read(const char *path, hwm_t *out, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -errno;
    }
    unsigned char b[2 * HWM_SLOT];
    ssize_t n = pread(fd, b, sizeof(b), 0);
    close(fd);
    hwm_t h[2];
    bool ok0 = n >= 32 && hwm_decode(b, &h[0]);
    bool ok1 = n >= HWM_SLOT + 32 && hwm_decode(b + HWM_SLOT, &h[1]);
    if (!ok0 && !ok1) {
        snprintf(err, errlen, "%s is damaged (no valid record)", path);
        return -EIO;
    }
    *out = !ok1 || (ok0 && h[0].seq >= h[1].seq) ? h[0] : h[1];
    return 1;
}

static int fsync_dir_of(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    else
        snprintf(dir, sizeof(dir), ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = fsync(fd) < 0 ? -errno : 0;
    close(fd);
    return rc;
}

/* Writes the slot of h->seq's parity and makes it durable. */
static int hwm_write(const char *path, const hwm_t *h, bool create)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
    if (fd < 0)
        return -errno;
    unsigned char b[HWM_SLOT] = {0};
    hwm_encode(h, b);
    int rc = 0;
    if (create) { /* both slots, so that a torn first update still leaves one */
        if (pwrite(fd, b, HWM_SLOT, 0) != HWM_SLOT || pwrite(fd, b, HWM_SLOT, HWM_SLOT) != HWM_SLOT)
            rc = errno ? -errno : -EIO;
    } else if (pwrite(fd, b, HWM_SLOT, (off_t)(h->seq % 2) * HWM_SLOT) != HWM_SLOT) {
        rc = errno ? -errno : -EIO;
    }
    if (rc == 0 && fdatasync(fd) < 0)
        rc = -errno;
    close(fd);
    if (rc == 0 && create)
        rc = fsync_dir_of(path);
    return rc;
}

/* After each commit the mark is written at once (a process crash, or a WAL deleted
 * after one, finds it in the page cache) and made durable by an fdatasync in libuv's
 * thread pool: it does not hold the batch's replies. Done inline, it doubled the
 * fsyncs of every commit (bench/cluster (a)); in the background, a power loss can only
 * lose the mark's last updates, which weakens the next start's check by those
 * batches, never makes it refuse a sound database (the mark never runs ahead). */
static void hwm_sync_start(ctld_t *c);

static void on_hwm_synced(uv_fs_t *req)
{
    ctld_t *c = req->data;
    struct db *s = c->store;
    if (req->result < 0)
        fprintf(stderr, "ductiled: cannot sync %s: %s\n", s->hwm_path,
                uv_strerror((int)req->result));
    uv_fs_req_cleanup(req);
    s->sync_busy = false;
    if (s->sync_again)
        hwm_sync_start(c);
}

static void hwm_sync_start(ctld_t *c)
{
    struct db *s = c->store;
    if (s->sync_busy) {
        s->sync_again = true;
        return;
    }
    s->sync_again = false;
    if (!c->loop) { /* no loop (tests, tools): inline */
        if (fdatasync(s->hwm_fd) < 0)
            fprintf(stderr, "ductiled: cannot sync %s: %s\n", s->hwm_path, strerror(errno));
        return;
    }
    s->sync_req.data = c;
    if (uv_fs_fdatasync(c->loop, &s->sync_req, s->hwm_fd, on_hwm_synced) == 0)
        s->sync_busy = true;
}

static int hwm_update(ctld_t *c)
{
    struct db *s = c->store;
    hwm_t h = {s->seq, s->max_id};
    unsigned char b[HWM_SLOT] = {0};
    hwm_encode(&h, b);
    if (pwrite(s->hwm_fd, b, HWM_SLOT, (off_t)(h.seq % 2) * HWM_SLOT) != HWM_SLOT)
        return errno ? -errno : -EIO;
    hwm_sync_start(c);
    return 0;
}

/* --- node names ---
 * Stored allocations name their nodes. In memory a job holds indices: 0..nnodes-1 into
 * Nodes, and nnodes + k for the k-th stored name that is no longer configured (only
 * finished jobs, and live ones settled at load, ever hold those). */
const char *ctld_node_name(const ctld_t *c, int idx, bool *configured)
{
    const struct db *s = c->store;
    *configured = idx >= 0 && idx < c->cfg.nnodes;
    if (*configured)
        return c->cfg.nodes[idx];
    if (s && idx >= c->cfg.nnodes && idx - c->cfg.nnodes < s->ngone)
        return s->gone[idx - c->cfg.nnodes];
    return "?";
}

static int node_index_of(ctld_t *c, const char *name)
{
    int i = config_node_index(&c->cfg, name);
    if (i >= 0)
        return i;
    struct db *s = c->store;
    for (int k = 0; k < s->ngone; k++)
        if (!strcmp(s->gone[k], name))
            return c->cfg.nnodes + k;
    char **g = realloc(s->gone, (size_t)(s->ngone + 1) * sizeof(char *));
    if (!g)
        return -ENOMEM;
    s->gone = g;
    if (!(g[s->ngone] = strdup(name)))
        return -ENOMEM;
    return c->cfg.nnodes + s->ngone++;
}

static int exec_sql(sqlite3 *db, const char *q, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(db, q, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    snprintf(err, errlen, "%s", msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    return -EIO;
}

/* One integer from a query, or -EIO. */
static int query_int(sqlite3 *db, const char *q, int64_t *out, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
        return -EIO;
    }
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *out = sqlite3_column_int64(st, 0);
    else if (rc == SQLITE_DONE)
        *out = 0;
    else
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -EIO;
}

/* PRAGMA quick_check: "ok", or the first problems it lists. */
static int integrity_check(sqlite3 *db, char *err, size_t errlen, double *ms)
{
    double t0 = ctld_mono();
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "PRAGMA quick_check(5)", -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
        return -EIO;
    }
    size_t pos = 0;
    bool ok = false;
    int rc;
    err[0] = '\0';
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 0);
        if (t && !strcmp(t, "ok"))
            ok = true;
        else if (pos < errlen)
            pos += (size_t)snprintf(err + pos, errlen - pos, "%s%s", pos ? "; " : "", t ? t : "?");
    }
    if (rc != SQLITE_DONE) {
        ok = false;
        if (pos < errlen)
            snprintf(err + pos, errlen - pos, "%s%s", pos ? "; " : "", sqlite3_errmsg(db));
    }
    sqlite3_finalize(st);
    *ms = (ctld_mono() - t0) * 1e3;
    return ok ? 0 : -EIO;
}

/* Version 0 stored allocations as indices into Nodes: name them with the configuration
 * of this start (the one the indices were written with, unless Nodes was edited in
 * between; an index past the table becomes "#INDEX"). */
static int migrate_v1(ctld_t *c, char *err, size_t errlen)
{
    static const char *const upd[] = {
        "UPDATE jobs SET alloc = (SELECT json_group_array(CASE WHEN value >= 0 AND value < ?1"
        " THEN (SELECT name FROM cfg_nodes WHERE i = value) ELSE '#' || value END)"
        " FROM json_each(jobs.alloc)) WHERE json_valid(alloc) AND json_type(alloc, '$[0]') = 'integer'",
        "UPDATE job_events SET alloc = (SELECT json_group_array(CASE WHEN value >= 0 AND value < ?1"
        " THEN (SELECT name FROM cfg_nodes WHERE i = value) ELSE '#' || value END)"
        " FROM json_each(job_events.alloc)) WHERE json_valid(alloc) AND json_type(alloc, '$[0]') = 'integer'",
    };
    if (exec_sql(c->db, "BEGIN IMMEDIATE; CREATE TEMP TABLE cfg_nodes (i INTEGER PRIMARY KEY, name TEXT)",
                 err, errlen) < 0)
        return -EIO;
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(c->db, "INSERT INTO cfg_nodes VALUES (?1, ?2)", -1, &st, NULL);
    for (int i = 0; rc == SQLITE_OK && i < c->cfg.nnodes; i++) {
        sqlite3_bind_int(st, 1, i);
        sqlite3_bind_text(st, 2, c->cfg.nodes[i], -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    for (size_t k = 0; rc == SQLITE_OK && k < 2; k++) {
        if ((rc = sqlite3_prepare_v2(c->db, upd[k], -1, &st, NULL)) != SQLITE_OK)
            break;
        sqlite3_bind_int(st, 1, c->cfg.nnodes);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_finalize(st);
    }
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "upgrading the database: %s", sqlite3_errmsg(c->db));
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
        return -EIO;
    }
    char q[96];
    snprintf(q, sizeof(q), "DROP TABLE cfg_nodes; PRAGMA user_version = 1; COMMIT");
    if (exec_sql(c->db, q, err, errlen) < 0) {
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
        return -EIO;
    }
    return 0;
}

/* Their WHERE clauses are the history queries' own terms, word for word: SQLite uses a
 * partial index only for a query that repeats them. */
#define POWER_PAST "state IN ('CD','TO') AND energy > 0 AND node_seconds > 0"
#define IO_PAST "state IN ('CD','TO') AND io_measured > 0 AND io_measured <= 1"
#define HISTORY_INDEXES                                                                     \
    "CREATE INDEX IF NOT EXISTS jobs_power_past ON jobs(user, name, nodes, end_)"          \
    " WHERE " POWER_PAST ";"                                                               \
    "CREATE INDEX IF NOT EXISTS jobs_io_past ON jobs(user, name, nodes, end_) WHERE " IO_PAST ";"

static int migrate(ctld_t *c, char *err, size_t errlen)
{
    int64_t v;
    if (query_int(c->db, "PRAGMA user_version", &v, err, errlen) < 0)
        return -EIO;
    if (v < 1 && migrate_v1(c, err, errlen) < 0)
        return -EIO;
    if (v >= SCHEMA_VERSION)
        return 0;
    /* each column once (a database marked older than it is keeps what it has) */
    static const char *const add[][2] = {
        {"power_min", "ALTER TABLE jobs ADD COLUMN power_min REAL DEFAULT 0"},
        {"power_max", "ALTER TABLE jobs ADD COLUMN power_max REAL DEFAULT 0"},
        {"power_from", "ALTER TABLE jobs ADD COLUMN power_from TEXT DEFAULT ''"},
        {"energy", "ALTER TABLE jobs ADD COLUMN energy REAL DEFAULT 0"},
        {"ckpt", "ALTER TABLE jobs ADD COLUMN ckpt TEXT DEFAULT ''"},
        {"io_intensity", "ALTER TABLE jobs ADD COLUMN io_intensity REAL DEFAULT 0"},
        {"io_measured", "ALTER TABLE jobs ADD COLUMN io_measured REAL DEFAULT 0"},
        {"io_from", "ALTER TABLE jobs ADD COLUMN io_from TEXT DEFAULT ''"},
        {"wait_class", "ALTER TABLE jobs ADD COLUMN wait_class INTEGER DEFAULT 0"},
        {"args", "ALTER TABLE jobs ADD COLUMN args TEXT DEFAULT ''"},
        {"hold", "ALTER TABLE jobs ADD COLUMN hold INTEGER DEFAULT 0"},
        {"begin", "ALTER TABLE jobs ADD COLUMN begin REAL DEFAULT 0"},
        {"depend", "ALTER TABLE jobs ADD COLUMN depend TEXT DEFAULT ''"},
        {"array_id", "ALTER TABLE jobs ADD COLUMN array_id INTEGER DEFAULT 0"},
        {"array_task", "ALTER TABLE jobs ADD COLUMN array_task INTEGER DEFAULT -1"},
        {"array_max", "ALTER TABLE jobs ADD COLUMN array_max INTEGER DEFAULT 0"},
        {"account", "ALTER TABLE jobs ADD COLUMN account TEXT DEFAULT ''"},
        {"nice", "ALTER TABLE jobs ADD COLUMN nice INTEGER DEFAULT 0"},
        {"nodesel", "ALTER TABLE jobs ADD COLUMN nodesel TEXT DEFAULT ''"},
        {"partition", "ALTER TABLE jobs ADD COLUMN partition TEXT DEFAULT ''"},
        {"reservation", "ALTER TABLE jobs ADD COLUMN reservation TEXT DEFAULT ''"},
        {"eligible", "ALTER TABLE jobs ADD COLUMN eligible REAL DEFAULT 0"},
        {"umask", "ALTER TABLE jobs ADD COLUMN umask INTEGER DEFAULT -1"},
    };
    int rc = exec_sql(c->db, "BEGIN IMMEDIATE", err, errlen);
    for (size_t k = 0; rc == 0 && k < sizeof(add) / sizeof(add[0]); k++) {
        char q[128];
        int64_t has;
        snprintf(q, sizeof(q), "SELECT count(*) FROM pragma_table_info('jobs') WHERE name = '%s'",
                 add[k][0]);
        rc = query_int(c->db, q, &has, err, errlen);
        if (rc == 0 && !has)
            rc = exec_sql(c->db, add[k][1], err, errlen);
    }
    if (rc == 0)
        rc = exec_sql(c->db, "CREATE INDEX IF NOT EXISTS jobs_user_name ON jobs(user, name);"
                             HISTORY_INDEXES " PRAGMA user_version = " STR(SCHEMA_VERSION) "; COMMIT",
                      err, errlen);
    if (rc < 0) {
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
        return -EIO;
    }
    return 0;
}

static bool file_has_data(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && sb.st_size > 0;
}

int db_open(ctld_t *c, const char *path, unsigned flags, char *err, size_t errlen)
{
    struct db *s = calloc(1, sizeof(*s));
    if (!s)
        return FAIL("out of memory");
    c->store = s;
    s->hwm_fd = -1;
    s->flags = flags;
    bool recover = flags & DB_RECOVER;
    snprintf(s->hwm_path, sizeof(s->hwm_path), "%s.hwm", path);
    char why[512];
    hwm_t h = {0, 0};
    int found = hwm_read(s->hwm_path, &h, why, sizeof(why));
    if (found < 0) {
        if (!recover)
            return FAIL("%s; the database's history cannot be checked (start with --recover to"
                        " rebuild it from the database)", why);
        fprintf(stderr, "ductiled: --recover: %s: rebuilt from the database\n", why);
        found = 0;
    }
    bool existed = file_has_data(path);
    if (!existed) {
        if (found && !recover)
            return FAIL("the database %s is missing or empty, but %s says it existed (%" PRId64
                        " commits, job ids up to %" PRId64 "): restore it, or start with"
                        " --recover to begin an empty one",
                        path, s->hwm_path, h.seq, h.max_id);
        if (found)
            fprintf(stderr, "ductiled: --recover: the database %s was missing: starting an empty"
                            " one; job ids continue after %" PRId64 "\n", path, h.max_id);
        else
            fprintf(stderr, "ductiled: creating a new database %s\n", path);
    }
    if (sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
        return FAIL("cannot open the database %s: %s", path, sqlite3_errmsg(c->db));
    /* the controller's alone: it holds every job's script, environment and the keys of
     * their checkpoint agents (SQLite gives its -wal and -shm files the same mode) */
    if (chmod(path, 0600) < 0 && errno != ENOENT)
        fprintf(stderr, "ductiled: cannot make the database %s private: %s\n", path, strerror(errno));
    for (const char *sfx = "-wal"; sfx; sfx = strcmp(sfx, "-wal") ? NULL : "-shm") {
        char side[4200];
        snprintf(side, sizeof(side), "%s%s", path, sfx);
        chmod(side, 0600);
    }
    sqlite3_extended_result_codes(c->db, 1);
    sqlite3_busy_timeout(c->db, 5000);
    if (existed) {
        double ms = 0;
        if (integrity_check(c->db, why, sizeof(why), &ms) < 0) {
            if (!recover)
                return FAIL("the database %s is damaged (%s): restore it from a backup, or start"
                            " with --recover to keep what can be read", path, why);
            fprintf(stderr, "ductiled: --recover: the database %s is damaged (%s): loading what"
                            " can be read\n", path, why);
        } else {
            fprintf(stderr, "ductiled: database %s: integrity check ok (%.0f ms)\n", path, ms);
        }
    }
    /* a batch of thousands of rows (a 10,000-element array) stays in memory until its
     * commit instead of spilling pages to the WAL as it goes: 64 MiB, not 2 */
    if (exec_sql(c->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-65536;", why, sizeof(why)) < 0 ||
        exec_sql(c->db, schema, why, sizeof(why)) < 0)
        return FAIL("database %s: %s", path, why);
    if (!existed && exec_sql(c->db, "PRAGMA user_version = 1", why, sizeof(why)) < 0)
        return FAIL("database %s: %s", path, why);
    if (migrate(c, why, sizeof(why)) < 0)
        return FAIL("database %s: %s", path, why);
    /* an array's elements by its id (a dependency on an array, its throttle): without it
     * each lookup read the whole table, history included (each built once, on the first
     * start that has it) */
    if (exec_sql(c->db, "CREATE INDEX IF NOT EXISTS jobs_array ON jobs(array_id);"
                        /* a user's history, and one state's, newest first (db_history) */
                        "CREATE INDEX IF NOT EXISTS jobs_user_end ON jobs(user, end_);"
                        "CREATE INDEX IF NOT EXISTS jobs_state_end ON jobs(state, end_);",
                 why, sizeof(why)) < 0)
        return FAIL("database %s: %s", path, why);
    int64_t dbseq = 0, maxid = 0, aiseq = 0;
    if (query_int(c->db, "SELECT value FROM meta WHERE key = 'seq'", &dbseq, why, sizeof(why)) < 0 ||
        query_int(c->db, "SELECT coalesce(max(id), 0) FROM jobs", &maxid, why, sizeof(why)) < 0 ||
        query_int(c->db, "SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'jobs'",
                  &aiseq, why, sizeof(why)) < 0) {
        if (!recover)
            return FAIL("database %s: %s (start with --recover to keep what can be read)", path,
                        why);
        fprintf(stderr, "ductiled: --recover: database %s: %s\n", path, why);
    }
    /* A copy made by `ductile cluster backup` says so (db_backup.c) */
    int64_t copy_seq = 0;
    if (query_int(c->db, "SELECT coalesce((SELECT value FROM meta WHERE key = 'backup_seq'), 0)",
                  &copy_seq, why, sizeof(why)) == 0 && copy_seq > 0)
        fprintf(stderr, "ductiled: the database %s is a copy made by ductile cluster backup (commit "
                        "%" PRId64 ", job ids up to %" PRId64 ")\n", path, copy_seq, maxid);
    if (found && dbseq < h.seq) {
        char lacks[160] = "";
        /* the jobs acknowledged after the copy: not in it */
        if (h.max_id == maxid + 1)
            snprintf(lacks, sizeof(lacks), "; it lacks job %" PRId64, h.max_id);
        else if (h.max_id > maxid + 1)
            snprintf(lacks, sizeof(lacks), "; it lacks jobs %" PRId64 " to %" PRId64, maxid + 1,
                     h.max_id);
        if (!recover)
            return FAIL("the database %s is behind what was acknowledged: commit %" PRId64
                        " is on disk but commit %" PRId64 " was acknowledged (job ids up to %"
                        PRId64 ", the database has up to %" PRId64 ")%s; were its -wal file or"
                        " the database replaced? Restore them, or start with --recover to go on"
                        " without the missing changes",
                        path, dbseq, h.seq, h.max_id, maxid, lacks);
        fprintf(stderr, "ductiled: --recover: commits %" PRId64 " to %" PRId64 " are missing from"
                        " %s (job ids up to %" PRId64 " were given, the database has up to %"
                        PRId64 ")%s: going on without them; new jobs are numbered from %" PRId64
                        "\n", dbseq + 1, h.seq, path, h.max_id, maxid, lacks, h.max_id + 1);
    } else if (copy_seq > 0 && found) {
        fprintf(stderr, "ductiled: %s is not behind %s: if that mark was restored from the same "
                        "time as the copy, jobs acknowledged after the copy cannot be told and "
                        "their ids may be given again (restore the database alone)\n",
                path, s->hwm_path);
    }
    if (copy_seq > 0) /* said once: from now on it is the live database */
        exec_sql(c->db, "DELETE FROM meta WHERE key = 'backup_seq'", why, sizeof(why));
    if (!found && existed)
        fprintf(stderr, "ductiled: %s did not exist: written from the database\n", s->hwm_path);
    s->seq = dbseq > h.seq ? dbseq : h.seq;
    s->max_id = maxid > h.max_id ? maxid : h.max_id;
    if (aiseq > s->max_id)
        s->max_id = aiseq;
    s->next_id = s->max_id + 1;
    for (int i = 0; i < ST__N; i++)
        if (sqlite3_prepare_v3(c->db, sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL))
            return FAIL("database: %s", sqlite3_errmsg(c->db));
    /* The marker says from now on that a database exists here. */
    hwm_t now = {s->seq, s->max_id};
    int rc = hwm_write(s->hwm_path, &now, !found);
    if (rc < 0)
        return FAIL("cannot write %s: %s", s->hwm_path, strerror(-rc));
    if ((s->hwm_fd = open(s->hwm_path, O_WRONLY | O_CLOEXEC)) < 0)
        return FAIL("cannot open %s: %s", s->hwm_path, strerror(errno));
    return 0;
}

void db_marks(const ctld_t *c, int64_t *seq, int64_t *max_id)
{
    *seq = c->store->seq;
    *max_id = c->store->max_id;
}

void db_close(ctld_t *c)
{
    struct db *s = c->store;
    if (c->in_batch)
        db_commit(c);
    if (s) {
        if (s->hwm_fd >= 0) { /* the last update, durable before the exit */
            if (fdatasync(s->hwm_fd) < 0)
                fprintf(stderr, "ductiled: cannot sync %s: %s\n", s->hwm_path, strerror(errno));
            close(s->hwm_fd);
        }
        json_decref(s->env_obj);
        free(s->env_str);
        for (int i = 0; i < ST__N; i++)
            sqlite3_finalize(s->st[i]);
        for (int i = 0; i < Q__N; i++)
            sqlite3_finalize(s->q[i]);
        for (int k = 0; k < s->ngone; k++)
            free(s->gone[k]);
        free(s->gone);
        free(s);
        c->store = NULL;
    }
    sqlite3_close(c->db);
    c->db = NULL;
}

/* The first failure of a batch: it will be rolled back at db_commit. */
static void batch_fail(ctld_t *c, const char *what)
{
    struct db *s = c->store;
    if (s->failed)
        return;
    s->failed = true;
    int code = sqlite3_extended_errcode(c->db);
    int sys = sqlite3_system_errno(c->db);
    s->fail_errno = (code & 0xff) == SQLITE_FULL ? ENOSPC : sys ? sys : EIO;
    snprintf(s->fail_msg, sizeof(s->fail_msg), "%s: %s", what, sqlite3_errmsg(c->db));
    fprintf(stderr, "ductiled: database: %s\n", s->fail_msg);
}

void db_batch_fail(ctld_t *c, const char *what)
{
    if (c->in_batch)
        batch_fail(c, what);
}

int db_write_begin(ctld_t *c)
{
    if (c->in_batch)
        return c->store->failed ? -EIO : 0;
    if (sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        /* No transaction is open; the batch still counts as failed, so that whatever
         * the caller changed in memory is undone with the rest. */
        c->in_batch = true;
        batch_fail(c, "BEGIN");
        return -EIO;
    }
    c->in_batch = true;
    c->store->batch_max_id = 0;
    return 0;
}

int db_commit(ctld_t *c)
{
    struct db *s = c->store;
    if (!c->in_batch)
        return 0;
    c->in_batch = false;
    double t0 = stats_clock();
    if (!s->failed) {
        sqlite3_stmt *st = s->st[ST_SEQ];
        sqlite3_bind_int64(st, 1, s->seq + 1);
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE)
            batch_fail(c, "recording the commit");
    }
    if (!s->failed && sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        batch_fail(c, "COMMIT");
    if (s->failed) {
        if (!sqlite3_get_autocommit(c->db))
            sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
        /* the rollback may have taken submit_keys, made in this batch, with it */
        for (int i = 0; i < Q__N; i++) {
            sqlite3_finalize(s->q[i]);
            s->q[i] = NULL;
        }
        s->keys_table = false;
        snprintf(s->error, sizeof(s->error), "cannot save: %s",
                 s->fail_errno == ENOSPC ? "no space left on device" : s->fail_msg);
        fprintf(stderr, "ductiled: %s: the batch was rolled back\n", s->error);
        s->failed = false;
        s->degraded = true;
        return -EIO;
    }
    s->seq++;
    if (s->batch_max_id > s->max_id)
        s->max_id = s->batch_max_id;
    if (s->degraded)
        fprintf(stderr, "ductiled: the database saves again\n");
    s->degraded = false;
    int rc = hwm_update(c);
    if (rc < 0) /* the batch is on disk: only the check of the next start is weaker */
        fprintf(stderr, "ductiled: cannot update %s: %s\n", s->hwm_path, strerror(-rc));
    stats_add(&c->commit_stats, stats_clock() - t0);
    return 0;
}

const char *db_error(const ctld_t *c) { return c->store->error; }
bool db_degraded(const ctld_t *c) { return c->store->degraded; }

/* The allocation as stored: a JSON array of node names, in rank order. */
static char *alloc_json(const ctld_t *c, const int *nodes, int n)
{
    json_t *a = json_array();
    for (int i = 0; a && i < n; i++) {
        bool configured;
        json_array_append_new(a, json_string(ctld_node_name(c, nodes[i], &configured)));
    }
    char *s = a ? json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    return s;
}

/* The job's checkpoint agents as stored: "" without. */
static char *ckpt_json(const job_t *j)
{
    if (!j->ck_want)
        return strdup("");
    json_t *o = json_pack("{s:b,s:b,s:s,s:s,s:s,s:f,s:f}", "want", 1, "settled",
                          j->ck_agents != NULL, "agents", j->ck_agents ? j->ck_agents : "",
                          "nodes", j->ck_where ? j->ck_where : "", "key", j->ck_key,
                          "node_seconds", j->ck_node_s, "counted_to", j->ck_acct_at);
    if (o && j->ck_slots)
        json_object_set_new(o, "slots", json_string(j->ck_slots));
    if (o && j->ck_nretire > 0) { /* agents that left it at a shrink, not stopped yet */
        json_t *l = json_array();
        for (int r = 0; r < j->ck_nretire; r++)
            json_array_append_new(l, json_pack("[i,i]", j->ck_rnode[r], j->ck_rslot[r]));
        json_object_set_new(o, "leaving", l);
    }
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return s;
}

/* A job's environment as stored. The elements of an array share their first's (arrays.c)
 * and every save writes it again, so the text of the last one is kept: a 10,000-element
 * array wrote its 2 KB environment out 10,000 times. The kept object holds a reference,
 * so that its address cannot come to name another. Borrowed: valid until the next call. */
static const char *env_text(struct db *s, json_t *env)
{
    if (!env)
        return NULL;
    if (env != s->env_obj) {
        char *t = json_dumps(env, JSON_COMPACT);
        if (!t)
            return NULL;
        json_decref(s->env_obj);
        free(s->env_str);
        s->env_obj = json_incref(env);
        s->env_str = t;
    }
    return s->env_str;
}

/* And the other way: an environment as read, the last one's object again when it is the
 * same (an array's elements, loaded one after the other, share one as when submitted). */
static json_t *env_read(struct db *s, const char *text)
{
    if (s->env_str && !strcmp(text, s->env_str))
        return json_incref(s->env_obj);
    json_t *env = json_loads(text, 0, NULL);
    char *t = env ? strdup(text) : NULL;
    if (t) {
        json_decref(s->env_obj);
        free(s->env_str);
        s->env_obj = json_incref(env);
        s->env_str = t;
    }
    return env;
}

static int bind_job(const ctld_t *c, sqlite3_stmt *st, const job_t *j, char **alloc,
                    const char **env, char **ck, char **args)
{
    *alloc = alloc_json(c, j->alloc, j->nalloc);
    *env = env_text(c->store, j->env);
    *ck = ckpt_json(j);
    *args = j->args ? json_dumps(j->args, JSON_COMPACT) : NULL;
    if (!*alloc || (j->env && !*env) || !*ck || (j->args && !*args))
        return -ENOMEM;
    sqlite3_bind_text(st, 1, j->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, j->user, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, j->uid);
    sqlite3_bind_int64(st, 4, j->gid);
    sqlite3_bind_text(st, 5, jstate_code(j->state), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, jstate_code(j->final), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, sched_type_name(j->type), -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 8, j->nodes);
    sqlite3_bind_int(st, 9, j->min_nodes);
    sqlite3_bind_int(st, 10, j->max_nodes);
    sqlite3_bind_text(st, 11, sched_constraint_name(j->constraint), -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 12, j->time_limit);
    sqlite3_bind_int(st, 13, j->requeue);
    /* An array's elements share their first's script and environment: stored once, with
     * it (row_job reads them back from there). 10,000 copies of a 1 MiB script made one
     * submission write 10 GB. */
    bool element = j->array_id > 0 && j->array_id != j->id;
    sqlite3_bind_text(st, 14, element ? NULL : j->script, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 15, j->cwd, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 16, element ? NULL : *env, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 17, j->out_path, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 18, j->err_path, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 19, j->submit);
    sqlite3_bind_double(st, 20, j->start);
    sqlite3_bind_double(st, 21, j->end);
    sqlite3_bind_int(st, 22, j->exit_code);
    sqlite3_bind_int(st, 23, j->signal);
    sqlite3_bind_int(st, 24, j->restarts);
    sqlite3_bind_text(st, 25, *alloc, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 26, j->node_seconds);
    sqlite3_bind_double(st, 27, j->alloc_since);
    sqlite3_bind_text(st, 28, j->reason, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 30, j->launched);
    sqlite3_bind_double(st, 31, j->power_min);
    sqlite3_bind_double(st, 32, j->power_max);
    sqlite3_bind_text(st, 33, j->power_from, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 34, j->energy);
    sqlite3_bind_text(st, 35, *ck, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 36, j->io_intensity);
    sqlite3_bind_double(st, 37, j->io_measured);
    sqlite3_bind_text(st, 38, j->io_from, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 39, j->wait_class);
    sqlite3_bind_text(st, 40, *args ? *args : "", -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 41, j->hold);
    sqlite3_bind_double(st, 42, j->begin);
    sqlite3_bind_text(st, 43, j->depend ? j->depend : "", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 44, j->array_id);
    sqlite3_bind_int(st, 45, j->array_task);
    sqlite3_bind_int(st, 46, j->array_max);
    sqlite3_bind_text(st, 47, j->account ? j->account : "", -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 48, j->nice);
    sqlite3_bind_double(st, 52, j->eligible_at);
    return 0;
}

/* Runs a write of the batch; a failure fails the whole batch (db_commit rolls it back). */
static int run(sqlite3_stmt *st, ctld_t *c, const char *what)
{
    int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
        batch_fail(c, what);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? 0 : -EIO;
}

int db_job_insert(ctld_t *c, job_t *j)
{
    struct db *s = c->store;
    if (db_write_begin(c) < 0)
        return -EIO;
    char *alloc, *ck, *args;
    const char *env;
    int rc = bind_job(c, s->st[ST_INSERT], j, &alloc, &env, &ck, &args);
    /* Ids come from the high-water mark, not from the table: a lost WAL cannot make
     * them go backwards, and an id of a rolled-back batch is not given again. */
    int64_t id = s->next_id;
    sqlite3_bind_int64(s->st[ST_INSERT], 29, id);
    char *sel = nsel_to_text(&j->sel); /* only inserted: a job's selection never changes */
    sqlite3_bind_text(s->st[ST_INSERT], 49, sel ? sel : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s->st[ST_INSERT], 50, j->partition ? j->partition : "", -1,
                      SQLITE_TRANSIENT);
    sqlite3_bind_text(s->st[ST_INSERT], 51, j->reservation ? j->reservation : "", -1,
                      SQLITE_TRANSIENT);
    sqlite3_bind_int(s->st[ST_INSERT], 53, j->umask); /* never changes either */
    free(sel);
    if (rc == 0)
        rc = run(s->st[ST_INSERT], c, "saving a new job");
    else
        batch_fail(c, "out of memory");
    free(alloc);
    free(ck);
    free(args);
    if (rc == 0) {
        j->id = id;
        s->next_id++;
        s->batch_max_id = id;
    }
    return rc;
}

int db_job_save(ctld_t *c, const job_t *j)
{
    struct db *s = c->store;
    if (db_write_begin(c) < 0)
        return -EIO;
    char *alloc, *ck, *args;
    const char *env;
    int rc = bind_job(c, s->st[ST_SAVE], j, &alloc, &env, &ck, &args);
    sqlite3_bind_int64(s->st[ST_SAVE], 29, j->id);
    if (rc == 0)
        rc = run(s->st[ST_SAVE], c, "saving a job");
    else
        batch_fail(c, "out of memory");
    free(alloc);
    free(ck);
    free(args);
    return rc;
}

int db_job_event(ctld_t *c, int64_t job, double t, const char *event, int before, int after,
                 const int *nodes, int n, const char *detail)
{
    if (db_write_begin(c) < 0)
        return -EIO;
    sqlite3_stmt *st = c->store->st[ST_EVENT];
    char *alloc = alloc_json(c, nodes, n);
    sqlite3_bind_int64(st, 1, job);
    sqlite3_bind_double(st, 2, t);
    sqlite3_bind_text(st, 3, event, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, before);
    sqlite3_bind_int(st, 5, after);
    sqlite3_bind_text(st, 6, alloc, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, detail, -1, SQLITE_STATIC);
    int rc = run(st, c, "saving a job event");
    free(alloc);
    return rc;
}

int db_node_save(ctld_t *c, const node_t *n)
{
    if (db_write_begin(c) < 0)
        return -EIO;
    sqlite3_stmt *st = c->store->st[ST_NODE];
    sqlite3_bind_text(st, 1, n->name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, n->drain);
    sqlite3_bind_text(st, 3, n->reason, -1, SQLITE_STATIC);
    return run(st, c, "saving a node");
}

static int col_str(sqlite3_stmt *st, int i, char **out)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    *out = t ? strdup((const char *)t) : NULL;
    return t && !*out ? -ENOMEM : 0;
}

static sqlite3_stmt *cached(ctld_t *c, int q, const char *text);
static void done(sqlite3_stmt *st);

/* An array's element, stored without its script and environment (bind_job): its
 * first element's. A first element gone from the table (a database recovered in part)
 * leaves it an empty script, which fails when it runs. */
static int from_head(ctld_t *c, job_t *j)
{
    sqlite3_stmt *st = cached(c, Q_HEAD, "SELECT script, env FROM jobs WHERE id = ?1");
    if (!st)
        return -EIO;
    sqlite3_bind_int64(st, 1, j->array_id);
    int rc = 0;
    if (sqlite3_step(st) == SQLITE_ROW) {
        free(j->script);
        rc = col_str(st, 0, &j->script);
        const char *e = (const char *)sqlite3_column_text(st, 1);
        json_t *env = e ? env_read(c->store, e) : NULL;
        if (json_is_array(env)) {
            json_decref(j->env);
            j->env = json_incref(env);
        }
        json_decref(env);
    }
    if (rc == 0 && !j->script && !(j->script = strdup("")))
        rc = -ENOMEM;
    done(st);
    return rc;
}

/* The columns added by upgrades (migrate()), found by name: a database upgraded from
 * an older version has them in the order they were added, which need not be the order
 * of a new one. Past the first 30 (the table as created); -1: none. */
enum { XC_PMIN, XC_PMAX, XC_PFROM, XC_ENERGY, XC_CKPT, XC_IO, XC_IOM, XC_IOFROM, XC_CLASS,
       XC_ARGS, XC_HOLD, XC_BEGIN, XC_DEPEND, XC_ARRAY, XC_ATASK, XC_AMAX, XC_ACCOUNT,
       XC_NICE, XC_NODESEL, XC_PARTITION, XC_RESV, XC_ELIGIBLE, XC_UMASK, XC__N };
static void added_columns(sqlite3_stmt *st, int *at)
{
    static const char *const names[XC__N] = {"power_min", "power_max", "power_from",
                                             "energy", "ckpt", "io_intensity", "io_measured",
                                             "io_from", "wait_class", "args", "hold",
                                             "begin", "depend", "array_id", "array_task",
                                             "array_max", "account", "nice", "nodesel",
                                             "partition", "reservation", "eligible",
                                             "umask"};
    int n = sqlite3_column_count(st);
    for (int x = 0; x < XC__N; x++) {
        at[x] = -1;
        for (int k = 30; k < n; k++) {
            const char *name = sqlite3_column_name(st, k);
            if (name && !strcmp(name, names[x])) {
                at[x] = k;
                break;
            }
        }
    }
}
static double col_num(sqlite3_stmt *st, int i) { return i < 0 ? 0 : sqlite3_column_double(st, i); }
static const char *col_text(sqlite3_stmt *st, int i)
{
    return i < 0 ? NULL : (const char *)sqlite3_column_text(st, i);
}

/* Rebuilds a job from a row of "SELECT * FROM jobs". A value that does not decode is
 * an error (a damaged row), never a default. NULL with err set on failure. */
static job_t *row_job(ctld_t *c, sqlite3_stmt *st, char *err, size_t errlen)
{
    job_t *j = job_new();
    if (!j) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    j->id = sqlite3_column_int64(st, 0);
    const char *bad = NULL;
    int rc = col_str(st, 1, &j->name) | col_str(st, 2, &j->user);
    j->uid = (uid_t)sqlite3_column_int64(st, 3);
    j->gid = (gid_t)sqlite3_column_int64(st, 4);
    const char *s = (const char *)sqlite3_column_text(st, 5);
    if (!s || jstate_parse(s, &j->state) < 0)
        bad = "state";
    s = (const char *)sqlite3_column_text(st, 6);
    if (!s || jstate_parse(s, &j->final) < 0)
        bad = "final state";
    s = (const char *)sqlite3_column_text(st, 7);
    if (!s || sched_type_parse(s, &j->type) < 0)
        bad = "type";
    j->nodes = sqlite3_column_int(st, 8);
    j->min_nodes = sqlite3_column_int(st, 9);
    j->max_nodes = sqlite3_column_int(st, 10);
    s = (const char *)sqlite3_column_text(st, 11);
    if (!s || sched_constraint_parse(s, &j->constraint) < 0)
        bad = "constraint";
    j->time_limit = sqlite3_column_double(st, 12);
    j->requeue = sqlite3_column_int(st, 13);
    rc |= col_str(st, 14, &j->script) | col_str(st, 15, &j->cwd);
    s = (const char *)sqlite3_column_text(st, 16);
    j->env = s ? env_read(c->store, s) : json_array();
    if (!json_is_array(j->env))
        bad = "environment";
    rc |= col_str(st, 17, &j->out_path) | col_str(st, 18, &j->err_path);
    j->submit = sqlite3_column_double(st, 19);
    j->start = sqlite3_column_double(st, 20);
    j->end = sqlite3_column_double(st, 21);
    j->exit_code = sqlite3_column_int(st, 22);
    j->signal = sqlite3_column_int(st, 23);
    j->restarts = sqlite3_column_int(st, 24);
    s = (const char *)sqlite3_column_text(st, 25);
    json_t *a = s ? json_loads(s, 0, NULL) : json_array();
    if (!json_is_array(a) || json_array_size(a) > (1u << 24)) {
        bad = "allocation";
    } else if (json_array_size(a)) {
        j->alloc = malloc(json_array_size(a) * sizeof(int));
        if (!j->alloc)
            rc = -ENOMEM;
        size_t i;
        json_t *v;
        json_array_foreach(a, i, v) {
            if (!j->alloc)
                break;
            int idx = -1;
            if (json_is_string(v)) {
                idx = node_index_of(c, json_string_value(v));
            } else if (json_is_integer(v)) { /* version 0: an index (migrate() names them) */
                json_int_t k = json_integer_value(v);
                if (k >= 0 && k < c->cfg.nnodes)
                    idx = (int)k;
                else {
                    char name[32];
                    snprintf(name, sizeof(name), "#%lld", (long long)k);
                    idx = node_index_of(c, name);
                }
            }
            if (idx < 0) {
                bad = "allocation";
                break;
            }
            j->alloc[j->nalloc++] = idx;
        }
    }
    json_decref(a);
    j->node_seconds = sqlite3_column_double(st, 26);
    j->alloc_since = sqlite3_column_double(st, 27);
    s = (const char *)sqlite3_column_text(st, 28);
    snprintf(j->reason, sizeof(j->reason), "%s", s ? s : "");
    j->launched = sqlite3_column_int(st, 29);
    int at[XC__N];
    added_columns(st, at);
    j->power_min = col_num(st, at[XC_PMIN]);
    j->power_max = col_num(st, at[XC_PMAX]);
    s = col_text(st, at[XC_PFROM]);
    snprintf(j->power_from, sizeof(j->power_from), "%s", s ? s : "");
    j->energy = col_num(st, at[XC_ENERGY]);
    j->io_intensity = col_num(st, at[XC_IO]);
    if (!(j->io_intensity >= 0 && j->io_intensity <= 1))
        bad = "I/O intensity";
    j->io_measured = col_num(st, at[XC_IOM]);
    if (!(j->io_measured >= 0 && j->io_measured <= 1))
        bad = "measured I/O intensity";
    s = col_text(st, at[XC_IOFROM]);
    snprintf(j->io_from, sizeof(j->io_from), "%s",
             s && (!strcmp(s, "declared") || !strcmp(s, "measured")) ? s : "");
    j->wait_class = at[XC_CLASS] < 0 ? 0 : sqlite3_column_int(st, at[XC_CLASS]);
    if (j->wait_class < SCHED_CLASS_NORMAL || j->wait_class > SCHED_CLASS_FAILED)
        bad = "class it waits in";
    j->hold = at[XC_HOLD] < 0 ? 0 : sqlite3_column_int(st, at[XC_HOLD]);
    if (j->hold < 0 || j->hold > 2)
        bad = "hold";
    j->begin = col_num(st, at[XC_BEGIN]);
    if (!(j->begin >= 0))
        bad = "begin time";
    j->array_id = at[XC_ARRAY] < 0 ? 0 : sqlite3_column_int64(st, at[XC_ARRAY]);
    j->array_task = at[XC_ATASK] < 0 ? -1 : sqlite3_column_int(st, at[XC_ATASK]);
    j->array_max = at[XC_AMAX] < 0 ? 0 : sqlite3_column_int(st, at[XC_AMAX]);
    if (j->array_id < 0 || j->array_id > j->id || j->array_task < -1 || j->array_max < 0 ||
        (j->array_id > 0) != (j->array_task >= 0))
        bad = "array";
    else if (j->array_id > 0 && j->array_id != j->id && sqlite3_column_type(st, 14) == SQLITE_NULL)
        rc |= from_head(c, j);
    s = col_text(st, at[XC_DEPEND]);
    if (s && *s && !(j->depend = strdup(s)))
        rc = -ENOMEM;
    s = col_text(st, at[XC_ACCOUNT]);
    if (s && *s && !(j->account = strdup(s)))
        rc = -ENOMEM;
    j->account_id = accounts_id(c, j->account); /* 0 when it is gone */
    accounts_job_limits(c, j);
    j->nice = at[XC_NICE] < 0 ? 0 : sqlite3_column_int(st, at[XC_NICE]);
    j->eligible_at = at[XC_ELIGIBLE] < 0 ? 0 : sqlite3_column_double(st, at[XC_ELIGIBLE]);
    j->umask = at[XC_UMASK] < 0 ? -1 : sqlite3_column_int(st, at[XC_UMASK]);
    if (j->umask < -1 || j->umask > 0777)
        bad = "umask";
    s = col_text(st, at[XC_PARTITION]);
    if (s && *s && !(j->partition = strdup(s)))
        rc = -ENOMEM;
    s = col_text(st, at[XC_RESV]);
    if (s && *s && !(j->reservation = strdup(s)))
        rc = -ENOMEM;
    if (j->reservation && !jstate_final(j->state))
        j->resv_id = resv_id_of(c, j->reservation); /* 0: it ended */
    if (nsel_from_text(col_text(st, at[XC_NODESEL]), &j->sel) < 0)
        bad = "node selection";
    s = col_text(st, at[XC_ARGS]);
    if (s && *s) {
        j->args = json_loads(s, 0, NULL);
        size_t ai;
        json_t *av;
        if (!json_is_array(j->args))
            bad = "script arguments";
        json_array_foreach(j->args, ai, av) if (!json_is_string(av)) bad = "script arguments";
    }
    s = col_text(st, at[XC_CKPT]);
    if (s && *s && !bad) {
        json_t *ck = json_loads(s, 0, NULL);
        const char *ag = NULL, *wh = NULL, *key = NULL;
        if (!ck || json_unpack(ck, "{s:s,s:s,s:s}", "agents", &ag, "nodes", &wh, "key", &key) ||
            strlen(key) >= sizeof(j->ck_key))
            bad = "checkpoint agents";
        else {
            j->ck_want = true;
            /* settled with none ("", the files) is not "not asked yet" (NULL) */
            j->ck_agents = *ag || json_is_true(json_object_get(ck, "settled")) ? strdup(ag) : NULL;
            j->ck_where = *wh ? strdup(wh) : NULL;
            const char *sl = json_string_value(json_object_get(ck, "slots")); /* (absent: 0, 1, ..) */
            j->ck_slots = sl && *sl ? strdup(sl) : NULL;
            size_t li;
            json_t *le;
            json_array_foreach(json_object_get(ck, "leaving"), li, le) {
                int node = (int)json_integer_value(json_array_get(le, 0));
                int slot = (int)json_integer_value(json_array_get(le, 1));
                if (node >= 0 && node < c->cfg.nnodes && slot >= 0 &&
                    j->ck_nretire < (int)(sizeof(j->ck_rnode) / sizeof(int))) {
                    j->ck_rnode[j->ck_nretire] = node;
                    j->ck_rslot[j->ck_nretire++] = slot;
                }
            }
            snprintf(j->ck_key, sizeof(j->ck_key), "%s", key);
            /* (absent before they were counted) */
            j->ck_node_s = json_number_value(json_object_get(ck, "node_seconds"));
            j->ck_acct_at = json_number_value(json_object_get(ck, "counted_to"));
        }
        json_decref(ck);
    }
    if (rc || bad || j->id <= 0) {
        if (rc)
            snprintf(err, errlen, "out of memory");
        else
            snprintf(err, errlen, "job %lld: its %s does not decode", (long long)j->id,
                     bad ? bad : "id");
        job_free(j);
        return NULL;
    }
    return j;
}

/* A live job that held nodes no longer in Nodes: it cannot be restored where it ran.
 * A running job ends NODE_FAIL (requeued with --requeue: the node daemons that still
 * have it are told to clean it up when they register, as for any job they are not
 * given), a completing one ends as it was ending. Its nodes keep their names.
 * Returns true if the job is settled (finished here), false if it goes on. */
static bool settle_removed_nodes(ctld_t *c, job_t *j)
{
    if (j->state == JS_PENDING)
        return false;
    int *gone = malloc((size_t)j->nalloc * sizeof(int) + 1), ngone = 0;
    if (!gone)
        return false;
    for (int i = 0; i < j->nalloc; i++)
        if (j->alloc[i] >= c->cfg.nnodes)
            gone[ngone++] = j->alloc[i];
    if (!ngone) {
        free(gone);
        return false;
    }
    char *names = nodes_format(c, gone, ngone);
    free(gone);
    /* only the names: nodes_format adds its note after them */
    if (names && strchr(names, ' '))
        *strchr(names, ' ') = '\0';
    double now = ctld_now();
    bool requeue = j->state != JS_COMPLETING && j->requeue;
    jstate_t final = j->state == JS_COMPLETING ? j->final : JS_NODE_FAIL;
    if (final == JS_PENDING)
        requeue = true; /* it was being requeued */
    fprintf(stderr, "ductiled: job %lld: nodes %s are no longer configured: %s\n",
            (long long)j->id, names ? names : "?",
            requeue ? "the job is requeued" : "the job ends");
    if (j->alloc_since > 0 && now > j->alloc_since)
        j->node_seconds += (double)j->nalloc * (now - j->alloc_since);
    j->alloc_since = now;
    if (requeue) {
        db_job_event(c, j->id, now, "requeue", 0, 0, NULL, 0, "NodeRemoved");
        free(j->alloc);
        j->alloc = NULL;
        j->nalloc = 0;
        jobs_set_restored_state(j, JS_PENDING, "its nodes are no longer configured");
        j->launched = false;
        j->restarts++;
        snprintf(j->reason, sizeof(j->reason), "NodeRemoved:%s", names ? names : "?");
        db_job_save(c, j);
        free(names);
        return false;
    }
    jobs_set_restored_state(j, final, "its nodes are no longer configured");
    j->end = now;
    if (final == JS_NODE_FAIL || !j->reason[0])
        snprintf(j->reason, sizeof(j->reason), "NodeRemoved:%s", names ? names : "?");
    db_job_save(c, j);
    db_job_event(c, j->id, now, "end", j->nalloc, 0, j->alloc, j->nalloc, jstate_code(final));
    free(names);
    job_free(j);
    return true;
}

/* Every row of a query, or an error naming the first that does not decode. In
 * recovery (--recover) a damaged row is reported and skipped. */
/* A live job read back: counted (the count and the sum of ids are checked against
 * the ones the triggers kept), then settled or handed to the caller. */
static void take_loaded(ctld_t *c, job_t *j, void (*fn)(ctld_t *c, job_t *j), int64_t *loaded,
                        int64_t *loaded_ids)
{
    (*loaded)++;
    *loaded_ids += j->id;
    if (!settle_removed_nodes(c, j))
        fn(c, j);
}

int db_load(ctld_t *c, void (*fn)(ctld_t *c, job_t *j), char *err, size_t errlen)
{
    bool recover = c->store->flags & DB_RECOVER;
    sqlite3_stmt *st;
    char why[256];
    int64_t loaded = 0, skipped = 0;
    /* read before the load settles anything (its writes move the count) */
    int64_t live = -1, live_ids = -1, loaded_ids = 0;
    int live_rc = query_int(c->db, "SELECT value FROM meta WHERE key = 'live'", &live, why,
                            sizeof(why));
    if (live_rc == 0)
        live_rc = query_int(c->db, "SELECT value FROM meta WHERE key = 'live_ids'", &live_ids,
                            why, sizeof(why));
    if (sqlite3_prepare_v2(c->db, "SELECT * FROM jobs WHERE state IN ('PD','R','RS','CG') ORDER BY id",
                           -1, &st, NULL))
        return FAIL("database: reading the jobs: %s", sqlite3_errmsg(c->db));
    idmap_t *seen = idmap_create(); /* ids loaded so far */
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        job_t *j = row_job(c, st, why, sizeof(why));
        if (j && jstate_final(j->state)) { /* the index said live, the row does not */
            snprintf(why, sizeof(why), "job %lld: its state %s disagrees with the index",
                     (long long)j->id, jstate_code(j->state));
            job_free(j);
            j = NULL;
        }
        if (j && seen && idmap_get(seen, j->id)) { /* a damaged id made two rows one */
            snprintf(why, sizeof(why), "job %lld is stored twice", (long long)j->id);
            job_free(j);
            j = NULL;
        }
        if (j && seen)
            idmap_put(seen, j->id, (void *)1);
        if (!j) {
            if (!recover) {
                sqlite3_finalize(st);
                idmap_destroy(seen);
                return FAIL("database: %s (start with --recover to skip it)", why);
            }
            fprintf(stderr, "ductiled: --recover: %s: skipped\n", why);
            skipped++;
            continue;
        }
        take_loaded(c, j, fn, &loaded, &loaded_ids);
    }
    idmap_destroy(seen);
    if (rc != SQLITE_DONE) {
        snprintf(why, sizeof(why), "%s", sqlite3_errmsg(c->db));
        sqlite3_finalize(st);
        if (!recover)
            return FAIL("database: reading the jobs after %lld of them: %s (start with --recover"
                        " to keep what can be read)", (long long)loaded, why);
        fprintf(stderr, "ductiled: --recover: reading the jobs stopped after %lld of them: %s;"
                        " reading the others one by one\n", (long long)loaded, why);
        /* Past the damage: one id at a time, up to the highest id ever given. */
        sqlite3_stmt *one;
        if (sqlite3_prepare_v2(c->db, "SELECT * FROM jobs WHERE id = ?1 AND state IN"
                                      " ('PD','R','RS','CG')", -1, &one, NULL) == SQLITE_OK) {
            for (int64_t id = 1; id <= c->store->max_id; id++) {
                if (idmap_get(c->jobs, id))
                    continue;
                sqlite3_bind_int64(one, 1, id);
                int r = sqlite3_step(one);
                job_t *j = r == SQLITE_ROW ? row_job(c, one, why, sizeof(why)) : NULL;
                sqlite3_reset(one);
                if (r == SQLITE_DONE)
                    continue; /* finished, or never was */
                if (!j) {
                    fprintf(stderr, "ductiled: --recover: job %lld cannot be read: lost\n",
                            (long long)id);
                    skipped++;
                    continue;
                }
                take_loaded(c, j, fn, &loaded, &loaded_ids);
            }
            sqlite3_finalize(one);
        }
    } else {
        sqlite3_finalize(st);
    }
    if (live_rc == 0 && live == loaded + skipped && !skipped && live_ids != loaded_ids) {
        if (!recover)
            return FAIL("database: the live jobs found are not those recorded (a damaged job"
                        " id?); start with --recover to go on with those found");
        fprintf(stderr, "ductiled: --recover: the live jobs found are not those recorded\n");
        live = -1; /* recount below */
    }
    if (live_rc < 0 || live != loaded + skipped) {
        if (!recover)
            return FAIL("database: %lld live jobs are recorded but %lld were found (a damaged"
                        " row?); start with --recover to go on with those found",
                        (long long)live, (long long)(loaded + skipped));
        fprintf(stderr, "ductiled: --recover: %lld live jobs are recorded but %lld were found\n",
                (long long)live, (long long)(loaded + skipped));
        skipped = live > loaded ? live - loaded : skipped;
        if (db_write_begin(c) == 0) { /* the count starts again from what is there */
            char q[300];
            snprintf(q, sizeof(q), "UPDATE meta SET value = (SELECT count(*) FROM jobs WHERE "
                                   LIVE ") WHERE key = 'live';"
                                   "UPDATE meta SET value = (SELECT coalesce(sum(id), 0) FROM"
                                   " jobs WHERE " LIVE ") WHERE key = 'live_ids'");
            if (exec_sql(c->db, q, why, sizeof(why)) < 0)
                batch_fail(c, "recounting the live jobs");
        }
    }
    if (skipped)
        fprintf(stderr, "ductiled: --recover: %lld live jobs loaded, %lld could not be read\n",
                (long long)loaded, (long long)skipped);
    if (sqlite3_prepare_v2(c->db, "SELECT name, drain, reason FROM nodes", -1, &st, NULL))
        return FAIL("database: reading the nodes: %s", sqlite3_errmsg(c->db));
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        int i = name ? config_node_index(&c->cfg, name) : -1;
        if (i < 0)
            continue; /* a node no longer in the configuration */
        c->nodes[i].drain = sqlite3_column_int(st, 1);
        const char *r = (const char *)sqlite3_column_text(st, 2);
        snprintf(c->nodes[i].reason, sizeof(c->nodes[i].reason), "%s", r ? r : "");
    }
    snprintf(why, sizeof(why), "%s", sqlite3_errmsg(c->db));
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        if (!recover)
            return FAIL("database: reading the nodes: %s (start with --recover to skip them)", why);
        fprintf(stderr, "ductiled: --recover: reading the nodes: %s: drain states lost\n", why);
    }
    return 0;
}

int db_array_states(ctld_t *c, int64_t array, int *live, int *ok, int *failed, int *started)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db, "SELECT coalesce(sum(" LIVE "), 0),"
                           " coalesce(sum(state = 'CD'), 0),"
                           " coalesce(sum(state IN ('F','CA','TO','NF','OOM')), 0),"
                           " coalesce(sum(start > 0), 0) FROM jobs WHERE array_id = ?1",
                           -1, &st, NULL))
        return -EIO;
    sqlite3_bind_int64(st, 1, array);
    int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : -EIO;
    if (rc == 0) {
        *live = sqlite3_column_int(st, 0);
        *ok = sqlite3_column_int(st, 1);
        *failed = sqlite3_column_int(st, 2);
        *started = sqlite3_column_int(st, 3);
    }
    sqlite3_finalize(st);
    return rc;
}

json_t *db_array_members(ctld_t *c, int64_t array)
{
    json_t *out = json_array();
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db, "SELECT id FROM jobs WHERE array_id = ?1 ORDER BY id", -1, &st,
                           NULL))
        return out;
    sqlite3_bind_int64(st, 1, array);
    while (sqlite3_step(st) == SQLITE_ROW)
        json_array_append_new(out, json_integer(sqlite3_column_int64(st, 0)));
    sqlite3_finalize(st);
    return out;
}

int db_job_final(ctld_t *c, int64_t id, jstate_t *state)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db, "SELECT state FROM jobs WHERE id = ?1", -1, &st, NULL))
        return -EIO;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    int out = rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -EIO;
    const char *code = out == 1 ? (const char *)sqlite3_column_text(st, 0) : NULL;
    if (out == 1 && (!code || jstate_parse(code, state) < 0))
        out = -EIO;
    sqlite3_finalize(st);
    return out;
}

int db_array_element(ctld_t *c, int64_t array, int task, int64_t *id)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db, "SELECT id FROM jobs WHERE array_id = ?1 AND array_task = ?2",
                           -1, &st, NULL))
        return -EIO;
    sqlite3_bind_int64(st, 1, array);
    sqlite3_bind_int(st, 2, task);
    int rc = sqlite3_step(st);
    int out = rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -EIO;
    if (out == 1)
        *id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return out;
}

job_t *db_job_find_finished(ctld_t *c, int64_t id)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db, "SELECT * FROM jobs WHERE id = ?1", -1, &st, NULL))
        return NULL;
    sqlite3_bind_int64(st, 1, id);
    char why[256];
    job_t *j = NULL;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && !(j = row_job(c, st, why, sizeof(why))))
        fprintf(stderr, "ductiled: database: %s\n", why);
    else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        fprintf(stderr, "ductiled: database: job %lld: %s\n", (long long)id, sqlite3_errmsg(c->db));
    sqlite3_finalize(st);
    return j;
}

int db_history(ctld_t *c, const char *user, const char *state, double since, double until,
               int limit, double stop_ms, hist_cursor_t *cur, json_t *out, char *err,
               size_t errlen)
{
    /* Each variant walks an index in the order asked for and stops at the page's end: a
     * filter that an index does not lead with (user = ?1 under the state's index) made
     * SQLite sort every ended job first (5 s for a page of 1,000 out of 300,000). The
     * unary + keeps the state's own index out of the unfiltered walk. The last column:
     * the job's sizes in order, "1>4>2" (start, then each resize), its runs apart, "3,3"
     * (requeued). */
    static const char *const where[] = {
        " FROM jobs WHERE +state IN ('CD','F','CA','TO','NF','OOM')",
        " FROM jobs WHERE user = ?1 AND +state IN ('CD','F','CA','TO','NF','OOM')",
        " FROM jobs WHERE state = ?2",
        " FROM jobs WHERE user = ?1 AND +state = ?2",
    };
    char q[1024];
    snprintf(q, sizeof(q),
             "SELECT *, (SELECT substr(group_concat(CASE e.event WHEN 'start' THEN ','"
             " ELSE '>' END || e.nodes_after, ''), 2) FROM job_events e"
             " WHERE e.job = jobs.id AND e.event IN ('start','expand','shrink'))"
             "%s AND end_ >= ?3 AND end_ <= ?6 AND (end_ < ?6 OR id < ?7)"
             " ORDER BY end_ DESC, id DESC LIMIT ?4",
             where[(user ? 1 : 0) + (state ? 2 : 0)]);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db, q, -1, &st, NULL))
        return FAIL("database: %s", sqlite3_errmsg(c->db));
    sqlite3_bind_text(st, 1, user, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, state, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 3, since);
    sqlite3_bind_int(st, 4, limit + 1); /* one more says whether a next page exists */
    /* one plain upper bound, the page's start or --until, no "?5 <= 0 OR": SQLite walks
     * an index from a bound it can see, and each page began again from the newest row
     * (quadratic in the pages) */
    double top = until > 0 ? until : HUGE_VAL;
    bool after = cur->end > 0 && cur->end <= top;
    sqlite3_bind_double(st, 6, after ? cur->end : top);
    sqlite3_bind_int64(st, 7, after ? cur->id : INT64_MAX);
    int rc, n = 0;
    char why[256];
    hist_cursor_t last = *cur;
    bool more = false;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == limit || (n > 0 && stats_clock() > stop_ms)) {
            more = true;
            break;
        }
        job_t *j = row_job(c, st, why, sizeof(why));
        if (!j) {
            sqlite3_finalize(st);
            return FAIL("database: %s", why);
        }
        json_t *o = job_to_json(c, j, false);
        const char *sizes = (const char *)sqlite3_column_text(st, sqlite3_column_count(st) - 1);
        json_object_set_new(o, "sizes", json_string(sizes ? sizes : ""));
        json_array_append_new(out, o);
        last.end = j->end;
        last.id = j->id;
        n++;
        job_free(j);
    }
    snprintf(why, sizeof(why), "%s", sqlite3_errmsg(c->db));
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return FAIL("database: reading the history: %s", why);
    *cur = more ? last : (hist_cursor_t){0, 0};
    return more;
}

int db_job_events(ctld_t *c, int64_t job, json_t *out)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db, "SELECT time, event, nodes_before, nodes_after, detail"
                                  " FROM job_events WHERE job = ?1 ORDER BY rowid", -1, &st, NULL))
        return -EIO;
    sqlite3_bind_int64(st, 1, job);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *d = (const char *)sqlite3_column_text(st, 4);
        json_array_append_new(out, json_pack("{s:f,s:s,s:i,s:i,s:s}", "time",
                                             sqlite3_column_double(st, 0), "event",
                                             (const char *)sqlite3_column_text(st, 1), "before",
                                             sqlite3_column_int(st, 2), "after",
                                             sqlite3_column_int(st, 3), "detail", d ? d : ""));
    }
    sqlite3_finalize(st);
    return 0;
}

/* --- Submission keys ---------------------------------------------------------------
 * A client whose connection broke after its job was committed cannot tell whether it
 * was; it retries with the same key, and the key's row, committed in the same
 * transaction as the job, gives back the first job's id. Keys are per user (uid is
 * part of the primary key): guessing another user's key makes a new job, never
 * reveals theirs. The table is created on first use (a database that never stored a
 * key has none); rows older than a week are pruned as new ones come (a retry comes
 * within seconds or minutes). */
#define KEY_TTL (7 * 86400.0)

/* Statement q (its SQL: text), prepared once; NULL if it cannot be (the message is
 * sqlite3_errmsg's). Give it back with done(). */
static sqlite3_stmt *cached(ctld_t *c, int q, const char *text)
{
    struct db *s = c->store;
    if (!s->q[q] &&
        sqlite3_prepare_v3(c->db, text, -1, SQLITE_PREPARE_PERSISTENT, &s->q[q], NULL) != SQLITE_OK)
        s->q[q] = NULL;
    return s->q[q];
}

static void done(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

static int key_table(ctld_t *c)
{
    if (c->store->keys_table)
        return 0;
    c->store->keys_table = true;
    return sqlite3_exec(c->db,
                        "CREATE TABLE IF NOT EXISTS submit_keys (uid INTEGER NOT NULL,"
                        " key TEXT NOT NULL, job INTEGER NOT NULL, time REAL NOT NULL,"
                        " PRIMARY KEY (uid, key));"
                        "CREATE INDEX IF NOT EXISTS submit_keys_time ON submit_keys(time);",
                        NULL, NULL, NULL) == SQLITE_OK ? 0 : (c->store->keys_table = false, -EIO);
}

int db_submit_key_find(ctld_t *c, uid_t uid, const char *key, int64_t *job)
{
    sqlite3_stmt *st =
        cached(c, Q_KEY_FIND, "SELECT job FROM submit_keys WHERE uid = ?1 AND key = ?2");
    if (!st) {
        /* no table yet: no key was ever stored */
        if (strstr(sqlite3_errmsg(c->db), "no such table"))
            return 0;
        fprintf(stderr, "ductiled: database: %s\n", sqlite3_errmsg(c->db));
        return -EIO;
    }
    sqlite3_bind_int64(st, 1, uid);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    int found = rc == SQLITE_ROW;
    if (found)
        *job = sqlite3_column_int64(st, 0);
    done(st);
    if (!found && rc != SQLITE_DONE)
        return -EIO;
    return found;
}

int db_submit_key_put(ctld_t *c, uid_t uid, const char *key, int64_t job, double now)
{
    if (db_write_begin(c) < 0 || key_table(c) < 0)
        return -EIO;
    sqlite3_stmt *st = cached(c, Q_KEY_PUT, "INSERT INTO submit_keys VALUES (?1, ?2, ?3, ?4)");
    if (!st) {
        fprintf(stderr, "ductiled: database: %s\n", sqlite3_errmsg(c->db));
        return -EIO;
    }
    sqlite3_bind_int64(st, 1, uid);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, job);
    sqlite3_bind_double(st, 4, now);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
    if (rc < 0)
        fprintf(stderr, "ductiled: database: %s\n", sqlite3_errmsg(c->db));
    done(st);
    if (rc == 0 && (st = cached(c, Q_KEY_PRUNE, "DELETE FROM submit_keys WHERE time < ?1"))) {
        sqlite3_bind_double(st, 1, now - KEY_TTL);
        sqlite3_step(st);
        done(st);
    }
    return rc;
}

/* ---- power (energy.c) ---------------------------------------------------------- */

int db_corridor_add(ctld_t *c, double at, double lower, double upper, const char *by)
{
    if (db_write_begin(c) < 0)
        return -EIO;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db, "INSERT INTO power_corridor VALUES (?1, ?2, ?3, ?4)", -1, &st,
                           NULL)) {
        batch_fail(c, "saving the power corridor");
        return -EIO;
    }
    sqlite3_bind_double(st, 1, at);
    sqlite3_bind_double(st, 2, lower);
    sqlite3_bind_double(st, 3, upper > 0 && upper < INFINITY ? upper : 0);
    sqlite3_bind_text(st, 4, by, -1, SQLITE_STATIC);
    int rc = run(st, c, "saving the power corridor");
    sqlite3_finalize(st);
    return rc;
}

int db_corridor_reset(ctld_t *c)
{
    if (db_write_begin(c) < 0)
        return -EIO;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db, "DELETE FROM power_corridor", -1, &st, NULL)) {
        batch_fail(c, "resetting the power corridor");
        return -EIO;
    }
    int rc = run(st, c, "resetting the power corridor");
    sqlite3_finalize(st);
    return rc;
}

int db_corridor_load(ctld_t *c, void (*fn)(double, double, double, const char *, void *), void *arg)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db, "SELECT at, lower, upper, by FROM power_corridor ORDER BY rowid",
                           -1, &st, NULL))
        return -EIO;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *by = (const char *)sqlite3_column_text(st, 3);
        fn(sqlite3_column_double(st, 0), sqlite3_column_double(st, 1),
           sqlite3_column_double(st, 2), by ? by : "operator", arg);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -EIO;
}

/* A query over the past runs of one user's job name and size (?1, ?2, ?3); NULL on
 * error. */
static sqlite3_stmt *history_query(ctld_t *c, int q, const char *query, const char *user,
                                   const char *name, int nodes)
{
    sqlite3_stmt *st = cached(c, q, query);
    if (!st)
        return NULL;
    sqlite3_bind_text(st, 1, user, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, nodes);
    return st;
}

int db_power_history(ctld_t *c, const char *user, const char *name, int nodes, double *lo,
                     double *hi)
{
    /* a job's mean draw per node: its energy over its node-seconds */
    sqlite3_stmt *st = history_query(
        c, Q_POWER_PAST,
        "SELECT min(w), max(w), count(*) FROM (SELECT energy / node_seconds AS w FROM jobs"
        " WHERE user = ?1 AND name = ?2 AND nodes = ?3 AND " POWER_PAST
        " ORDER BY end_ DESC LIMIT 10)",
        user, name, nodes);
    if (!st)
        return -EIO;
    int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : -EIO;
    if (rc == 0 && sqlite3_column_int(st, 2) > 0) {
        *lo = sqlite3_column_double(st, 0);
        *hi = sqlite3_column_double(st, 1);
        rc = 1;
    }
    done(st);
    return rc;
}

int db_io_history(ctld_t *c, const char *user, const char *name, int nodes, double *io)
{
    sqlite3_stmt *st = history_query(
        c, Q_IO_PAST,
        "SELECT io_measured FROM jobs WHERE user = ?1 AND name = ?2 AND nodes = ?3 AND " IO_PAST
        " ORDER BY end_ DESC, id DESC LIMIT 1",
        user, name, nodes);
    if (!st)
        return -EIO;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *io = sqlite3_column_double(st, 0);
        rc = 1;
    } else {
        rc = rc == SQLITE_DONE ? 0 : -EIO;
    }
    done(st);
    return rc;
}

/* One statement of the open batch with its bindings done by the caller. */
static int run_in_batch(ctld_t *c, int which)
{
    return db_write_begin(c) < 0 ? -EIO : run(c->store->st[which], c, "saving the energy of jobs");
}

int db_job_energy(ctld_t *c, int64_t id, double energy)
{
    sqlite3_stmt *st = c->store->st[ST_ENERGY];
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_double(st, 2, energy);
    return run_in_batch(c, ST_ENERGY);
}

int db_power_sampled_put(ctld_t *c, double t)
{
    sqlite3_bind_int64(c->store->st[ST_SAMPLED], 1, (sqlite3_int64)(t * 1000));
    return run_in_batch(c, ST_SAMPLED);
}

double db_power_sampled(ctld_t *c)
{
    int64_t v = 0;
    char err[128];
    query_int(c->db, "SELECT value FROM meta WHERE key = 'power_sampled'", &v, err, sizeof(err));
    return (double)v / 1000;
}
