/* ductiled: start-up, listeners, the loop's commit point, timers and signals. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctld.h"


/* --- connections --- */

static bool node_message(const char *type)
{
    return !strcmp(type, "register") || !strcmp(type, "ping") || !strcmp(type, "job_ended") ||
           !strcmp(type, "cleanup_done") || !strcmp(type, "job_ready") ||
           !strcmp(type, "job_started") || !strncmp(type, "app_", 4) ||
           !strcmp(type, "step_output") || !strcmp(type, "step_exit") ||
           !strcmp(type, "step_input_ack") ||
           !strncmp(type, "agent_", 6);
}

static void on_message(conn_t *conn, json_t *msg, void *arg);
static void on_close(conn_t *conn, void *arg);
static const conn_ops_t ops = {.on_message = on_message, .on_close = on_close};

/* A node daemon relays a local client of its node (a process of a job, or a user
 * logged in there): the client is a channel of the node's connection, served as any
 * other client, as the user the node daemon vouches for (conn.h, channels). */
static void relay_in(ctld_t *c, conn_t *carrier, const json_t *msg, const char *type)
{
    char err[128];
    int64_t chan, uid, gid;
    if (proto_int(msg, "chan", 1, INT64_MAX, &chan, err, sizeof(err)) < 0)
        return;
    conn_t *ch = conn_channel_find(carrier, chan);
    if (!strcmp(type, "relay_close")) {
        conn_channel_ended(ch);
        return;
    }
    json_t *inner = json_object_get(msg, "msg");
    if (!json_is_object(inner))
        return;
    if (!ch) {
        if (proto_int(msg, "uid", 0, UINT32_MAX - 1, &uid, err, sizeof(err)) < 0 ||
            proto_int(msg, "gid", 0, UINT32_MAX - 1, &gid, err, sizeof(err)) < 0 ||
            !(ch = conn_open_channel(carrier, chan, (uid_t)uid, (gid_t)gid, &ops, c))) {
            conn_send_new(carrier, json_pack("{s:s,s:I}", "type", "relay_close", "chan",
                                             (json_int_t)chan));
            return;
        }
    }
    conn_channel_deliver(ch, inner);
}

static void on_message(conn_t *conn, json_t *msg, void *arg)
{
    ctld_t *c = arg;
    const char *type;
    char err[128];
    if (proto_type(msg, &type, err, sizeof(err)) < 0) {
        conn_send_new(conn, proto_err_reply(PROTO_E_NONE, err));
        return;
    }
    bool relay = !strcmp(type, "relay") || !strcmp(type, "relay_close");
    if (node_message(type) || relay) {
        /* Only holders of the cluster key speak for nodes. */
        if (!conn_is_local(conn) && (c->cfg.auth_type == CONFIG_AUTH_KEY || conn_uid(conn) == 0)) {
            conn_set_persistent(conn); /* a node daemon: it heartbeats, never idle-close it */
            if (relay)
                relay_in(c, conn, msg, type);
            else
                nodes_on_message(c, conn, msg, type);
        } else
            conn_send_new(conn, proto_err_reply(PROTO_E_NONE,
                                          "permission denied: not a node daemon"));
        return;
    }
    double t0 = stats_clock();
    char what[40];
    snprintf(what, sizeof(what), "%s", type); /* msg may be gone after it */
    rpc_on_message(c, conn, msg);
    stats_loop_work(&c->loop_stats, what, stats_clock() - t0, ctld_now());
}

static void on_close(conn_t *conn, void *arg)
{
    ctld_t *c = arg;
    ctld_forget_conn(c, conn);
    arrays_forget_conn(c, conn);
    nodes_conn_closed(c, conn);
    steps_conn_closed(c, conn);
    backup_conn_closed(conn);
}

/* Admission control and timeouts shared by both listeners (conn.h). */
static conn_guard_t *guard;

static conn_cfg_t conn_cfg(ctld_t *c)
{
    return (conn_cfg_t){
        .auth = c->cfg.auth_type == CONFIG_AUTH_MUNGE ? PROTO_AUTH_MUNGE : PROTO_AUTH_KEY,
        .key = c->key,
        .munge_socket = c->cfg.munge_socket,
        .max_payload = (size_t)c->cfg.max_script_size + (1u << 20),
        .guard = guard,
    };
}

/* Root and Operators may use the reserved connections and have no per-user cap. */
static bool privileged(uid_t uid, void *arg)
{
    ctld_t *c = arg;
    if (uid == 0)
        return true;
    struct passwd pw, *res = NULL;
    char buf[4096];
    return getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res &&
           config_is_operator(&c->cfg, pw.pw_name);
}

/* Every connection is a descriptor: take the hard limit, and keep MaxConnections under
 * it with room for the database, logs and listeners, so that the limit is ours to
 * enforce (with the reserve) and never the kernel's EMFILE, which refuses everyone. */
static int guard_create(ctld_t *c, char *err, size_t errlen)
{
    int max = c->cfg.max_connections;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        if (rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
            setrlimit(RLIMIT_NOFILE, &rl);
            getrlimit(RLIMIT_NOFILE, &rl);
        }
        if (rl.rlim_cur != RLIM_INFINITY && (rlim_t)max + 64 > rl.rlim_cur) {
            max = rl.rlim_cur > 64 + 16 ? (int)(rl.rlim_cur - 64) : 16;
            fprintf(stderr, "ductiled: MaxConnections lowered from %d to %d (open files "
                            "limit %llu)\n", c->cfg.max_connections, max,
                    (unsigned long long)rl.rlim_cur);
        }
    }
    int reserve = c->cfg.reserved_connections < max ? c->cfg.reserved_connections : max / 2;
    conn_limits_t lim = {
        .max_conns = max,
        .reserve = reserve,
        .per_user = c->cfg.max_connections_per_user,
        .per_host = c->cfg.max_connections_per_host,
        /* within what the open-files limit left, as MaxConnections */
        .max_unauth = c->cfg.max_unauth_connections <= max - reserve ? c->cfg.max_unauth_connections
                                                                     : max / 4,
        .auth_timeout = c->cfg.auth_timeout,
        .frame_timeout = c->cfg.frame_timeout,
        .idle_timeout = c->cfg.idle_timeout,
        .privileged = privileged,
        .arg = c,
    };
    if (!(guard = conn_guard_create(c->loop, &lim))) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

static void on_connection(uv_stream_t *server, int status)
{
    ctld_t *c = server->data;
    if (status < 0)
        return;
    conn_cfg_t cc = conn_cfg(c);
    conn_accept(server, &cc, &ops, c);
}

/* --- the loop's rhythm --- */

static void stop(ctld_t *c);

static bool is_node_conn(ctld_t *c, conn_t *conn)
{
    for (int i = 0; i < c->nnodes; i++)
        if (c->nodes[i].conn == conn)
            return true;
    return false;
}

static void free_job(int64_t id, void *val, void *arg)
{
    (void)id;
    (void)arg;
    job_free(val);
}

/* The engine for the configuration's policy, with its settings from ductile.conf. */
static int engine_create(ctld_t *c, char *err, size_t errlen)
{
    int rc = sched_create(c->nnodes, c->cfg.policy, &c->sched, err, errlen);
    if (rc == 0)
        sched_set_backoff(c->sched, c->cfg.resize_backoff, c->cfg.resize_backoff_max);
    if (rc == 0)
        rc = energy_engine(c, err, errlen); /* the corridor, once energy_init has run */
    return rc;
}

/* A batch did not commit (a full disk, an I/O error): it was rolled back, so memory
 * claims what the disk does not have. Undo it the way a restart would, without one:
 *   - the replies of the batch that said ok now say why it failed ("cannot save: no
 *     space left on device"); the node commands of the batch are dropped;
 *   - the live jobs and the engine are reloaded from the database;
 *   - every node daemon is asked to register again, on the connection it has (the
 *     clients and steps it relays go on): it says what it runs (and the results it
 *     still holds unacknowledged), and registration reconciles that with the reloaded
 *     jobs, as after a controller restart. Until it does, nothing is started on it
 *     (node_usable: its report is awaited).
 * Reads keep working throughout; writes are tried again by the next requests, and
 * scheduling passes only on SchedulerTick until a batch commits again. */
static int rebuild(ctld_t *c, char *err, size_t errlen);

static int reload(ctld_t *c, char *err, size_t errlen)
{
    ctld_fail_deferred(c, db_error(c), is_node_conn);
    return rebuild(c, err, errlen);
}

/* The live jobs and the engine (for the configured policy) from the database, and every
 * node daemon's report asked for again: after a failed commit, or for a new Policy. */
static int rebuild(ctld_t *c, char *err, size_t errlen)
{
    /* their connections stay (the steps and clients they relay go on): each reports
     * again what it holds, as on a new connection, asked within a second (not at once:
     * a report that brings a job's end back would fail on a full disk again, and
     * reload again, each turn) */
    for (int i = 0; i < c->nnodes; i++)
        if (c->nodes[i].conn) {
            c->nodes[i].report_awaited = true; /* asked by nodes_check_timeouts */
            c->nodes[i].report_asked = 0;
            c->reports_pending = true;
        }
    idmap_foreach(c->jobs, free_job, NULL);
    idmap_destroy(c->jobs);
    idmap_destroy(c->placed);
    idmap_destroy(c->waiting);
    c->waiting = NULL;
    c->jobs = idmap_create();
    c->placed = idmap_create();
    c->njobs_live = 0;
    quota_free(c); /* counted again as the jobs come back */
    sched_destroy(c->sched);
    c->sched = NULL;
    if (!c->jobs || !c->placed || engine_create(c, err, errlen) < 0)
        return -ENOMEM;
    int rc = accounts_load(c, err, errlen);
    if (rc == 0)
        rc = resv_load(c, err, errlen);
    if (rc == 0)
        rc = parts_load(c, err, errlen);
    if (rc == 0)
        rc = db_load(c, jobs_restore, err, errlen);
    if (rc < 0)
        return rc;
    jobs_after_restore(c);
    arrays_restore(c);
    for (int i = 0; i < c->nnodes; i++)
        sched_set_node_available(c->sched, i, node_usable(&c->nodes[i]));
    return 0;
}

static void commit(ctld_t *c)
{
    if (db_commit(c) == 0)
        return;
    char err[1024];
    if (reload(c, err, sizeof(err)) < 0) {
        /* The database cannot even be read back: nothing sound is left to serve. */
        fprintf(stderr, "ductiled: reloading after a failed commit: %s\n", err);
        exit(1);
    }
    fprintf(stderr, "ductiled: reloaded %lld live jobs from the database\n",
            (long long)c->njobs_live);
}

static bool tick_due;

/* After the loop has handled this iteration's events: make them durable, then
 * answer. */
static void on_check(uv_check_t *h)
{
    ctld_t *c = h->data;
    double t0 = stats_clock();
    if (c->sched_wanted && !jobs_pass_paced(c)) {
        if (nodes_reports_pending(c)) {
            /* after a reload, the nodes that have not reported again count as unavailable:
             * a pass now would start jobs past wider ones waiting for them (their
             * registrations ask for one; 11 s at most, see nodes_check_timeouts) */
            c->sched_wanted = false;
            uv_idle_stop(&c->sched_idle);
        } else if (!db_degraded(c) || tick_due) {
            jobs_schedule(c);
            stats_loop_work(&c->loop_stats, "pass", stats_clock() - t0, ctld_now());
        } else { /* the disk refused the last batch: retry on the tick, do not spin */
            c->sched_wanted = false;
            uv_idle_stop(&c->sched_idle);
        }
    }
    tick_due = false;
    if (c->in_batch) {
        t0 = stats_clock();
        commit(c);
        stats_loop_work(&c->loop_stats, "commit", stats_clock() - t0, ctld_now());
    }
    if (c->engine_switch && !c->in_batch && !db_degraded(c)) {
        /* ductile reconfigure with a new Policy: everything is saved, so the database
         * holds what memory does */
        c->engine_switch = false;
        char err[1024];
        if (rebuild(c, err, sizeof(err)) < 0) {
            fprintf(stderr, "ductiled: building the engine for Policy %s: %s\n", c->cfg.policy, err);
            exit(1);
        }
        fprintf(stderr, "ductiled: Policy %s in effect: the engine rebuilt with %lld live jobs "
                "from the database\n", sched_policy_spec(c->sched), (long long)c->njobs_live);
        jobs_want_schedule(c);
    }
    arrays_committed(c); /* (after a failed commit, reload took them back: none) */
    if (c->deferred)
        ctld_flush_deferred(c);
    stats_loop_turn(&c->loop_stats, c->loop, ctld_now());
    if (c->stopping)
        stop(c);
}

static void on_tick(uv_timer_t *h)
{
    ctld_t *c = h->data;
    tick_due = true;
    c->elig_due = true; /* begin times come (eligible.c) */
    accounts_save_usage(c, false);
    resv_tick(c);
    jobs_want_schedule(c);
}

static void on_watchdog(uv_timer_t *h)
{
    ctld_t *c = h->data;
    /* Late by more than a second: the loop was held (a long turn), or the process or its
     * host stopped. The nodes' heartbeats of that time wait unread in the sockets (timers
     * run before the loop reads them): that time is not their silence. */
    double now = ctld_mono();
    if (c->watchdog_last > 0 && now - c->watchdog_last > 2.0)
        c->stalled += now - c->watchdog_last - 1.0;
    c->watchdog_last = now;
    nodes_check_timeouts(c);
    jobs_check_timeouts(c);
    ckptsvc_check(c);
    steps_tick(c, ctld_now());
}

static void on_hangup(uv_signal_t *h, int sig)
{
    (void)sig;
    config_changes_t ch;
    char err[1024];
    ctld_reconfigure(h->data, &ch, err, sizeof(err));
}

static void on_signal(uv_signal_t *h, int sig)
{
    (void)sig;
    ctld_t *c = h->data;
    c->stopping = true;
    stop(c);
}

static void close_walk(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static void stop(ctld_t *c)
{
    static bool done;
    if (done)
        return;
    done = true;
    c->stopping = true;
    accounts_save_usage(c, true);
    if (c->in_batch && db_commit(c) < 0)
        ctld_fail_deferred(c, db_error(c), is_node_conn);
    else
        arrays_committed(c);
    ctld_flush_deferred(c);
    uv_walk(c->loop, close_walk, NULL);
}

static int listen_unix(ctld_t *c, char *err, size_t errlen)
{
    const char *path = c->cfg.control_socket;
    unlink(path); /* a stale socket of a previous run */
    uv_pipe_init(c->loop, &c->local, 0);
    c->local.data = c;
    int rc = uv_pipe_bind(&c->local, path);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&c->local, 512, on_connection);
    if (rc < 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", path, uv_strerror(rc));
        return rc;
    }
    chmod(path, 0666); /* anyone may ask; the kernel says who asks */
    return 0;
}

static int listen_tcp(ctld_t *c, char *err, size_t errlen)
{
    struct sockaddr_storage sa;
    if (uv_ip4_addr(c->cfg.control_addr, c->cfg.control_port, (struct sockaddr_in *)&sa) < 0 &&
        uv_ip6_addr(c->cfg.control_addr, c->cfg.control_port, (struct sockaddr_in6 *)&sa) < 0) {
        snprintf(err, errlen, "ControlAddr %s is not an IP address", c->cfg.control_addr);
        return -EINVAL;
    }
    /* A controller restarted right after a kill -9 may find its predecessor still
     * exiting, its port held until thousands of connections are torn down: give it
     * 10 s before refusing (as libuv does, with SO_REUSEADDR). */
    for (int tries = 0; tries < 100; tries++) {
        int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
        socklen_t len = sa.ss_family == AF_INET ? sizeof(struct sockaddr_in)
                                                : sizeof(struct sockaddr_in6);
        int busy = fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0 &&
                   bind(fd, (struct sockaddr *)&sa, len) < 0 && errno == EADDRINUSE;
        if (fd >= 0)
            close(fd);
        if (!busy)
            break;
        if (tries == 0)
            fprintf(stderr, "ductiled: %s:%d is in use: waiting up to 10 s for it (a previous "
                    "controller still exiting?)\n", c->cfg.control_addr, c->cfg.control_port);
        usleep(100 * 1000);
    }
    uv_tcp_init(c->loop, &c->tcp);
    c->tcp.data = c;
    int rc = uv_tcp_bind(&c->tcp, (struct sockaddr *)&sa, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&c->tcp, 4096, on_connection); /* node storms */
    if (rc < 0) {
        snprintf(err, errlen, "cannot listen on %s:%d: %s", c->cfg.control_addr,
                 c->cfg.control_port, uv_strerror(rc));
        return rc;
    }
    return 0;
}

static int mkdirs(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    return mkdir(buf, 0755) == 0 || errno == EEXIST ? 0 : -errno;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: ductiled --conf FILE [--recover]\n\nThe Ductile controller. It runs in "
               "the foreground and logs to stderr.\n\n"
               "  --recover  start even though the database (StateDir/ductile.db) is damaged,\n"
               "             missing where one existed, or behind what was acknowledged: keep\n"
               "             what can be read, log every job that is lost, never reuse a job\n"
               "             id. Without it such a start is refused.\n");
}

int main(int argc, char **argv)
{
    const char *conf = getenv("DUCTILE_CONF");
    unsigned dbflags = 0;
    static const struct option lopts[] = {{"conf", required_argument, 0, 'c'},
                                          {"recover", no_argument, 0, 'R'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int o;
    while ((o = getopt_long(argc, argv, "c:h", lopts, NULL)) != -1) {
        if (o == 'c')
            conf = optarg;
        else if (o == 'R')
            dbflags |= DB_RECOVER;
        else {
            usage(o == 'h' ? stdout : stderr);
            return o == 'h' ? 0 : 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ductiled: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (!conf) {
        usage(stderr);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    static ctld_t c;
    char err[1024];
    char cwd[2048];
    if (conf[0] == '/' || !getcwd(cwd, sizeof(cwd)))
        snprintf(c.conf_path, sizeof(c.conf_path), "%s", conf);
    else
        snprintf(c.conf_path, sizeof(c.conf_path), "%s/%s", cwd, conf);
    if (config_load(conf, &c.cfg, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductiled: %s\n", err);
        return 1;
    }
    if (mkdirs(c.cfg.state_dir) < 0) {
        fprintf(stderr, "ductiled: cannot create %s: %s\n", c.cfg.state_dir, strerror(errno));
        return 1;
    }
    if (c.cfg.auth_type == CONFIG_AUTH_KEY &&
        proto_key_load(c.cfg.auth_key_file, c.key, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductiled: %s\n", err);
        return 1;
    }
    c.loop = uv_default_loop();
    c.jobs = idmap_create();
    c.placed = idmap_create();
    c.steps = idmap_create();
    nodes_init(&c);
    if (engine_create(&c, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductiled: Policy: %s\n", err);
        return 1;
    }
    char dbpath[4096];
    snprintf(dbpath, sizeof(dbpath), "%s/ductile.db", c.cfg.state_dir);
    double t_open = stats_clock();
    if (db_open(&c, dbpath, dbflags, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductiled: %s\n", err);
        return 1;
    }
    double t_load = stats_clock();
    if (accounts_load(&c, err, sizeof(err)) < 0 || resv_load(&c, err, sizeof(err)) < 0 ||
        parts_load(&c, err, sizeof(err)) < 0 || db_load(&c, jobs_restore, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductiled: %s\n", err);
        return 1;
    }
    jobs_after_restore(&c);
    arrays_restore(&c); /* the arrays that were being made: the rest of them */
    /* at start only (not after a batch rolled back, when they are still in memory): the
     * steps that ran when the controller stopped wait for their clients to re-attach;
     * those of older databases, which kept no live steps, ended with it */
    steps_restore(&c);
    db_steps_close_open(&c, ctld_now());
    fprintf(stderr, "ductiled: database opened in %.0f ms, %lld live jobs loaded in %.0f ms\n",
            t_load - t_open, (long long)c.njobs_live, stats_clock() - t_load);
    /* Running jobs keep the nodes they were restored on; no node takes new work until
     * its daemon has registered (and told us what it still runs). */
    for (int i = 0; i < c.nnodes; i++)
        sched_set_node_available(c.sched, i, false);
    if (guard_create(&c, err, sizeof(err)) < 0 || listen_unix(&c, err, sizeof(err)) < 0 ||
        listen_tcp(&c, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductiled: %s\n", err);
        return 1;
    }
    uv_check_init(c.loop, &c.commit_check);
    c.commit_check.data = &c;
    uv_check_start(&c.commit_check, on_check);
    uv_idle_init(c.loop, &c.sched_idle);
    c.sched_idle.data = &c;
    uv_timer_init(c.loop, &c.sched_pace);
    c.sched_pace.data = &c;
    uv_timer_init(c.loop, &c.tick);
    c.tick.data = &c;
    uint64_t tick_ms = (uint64_t)(c.cfg.scheduler_tick * 1000);
    uv_timer_start(&c.tick, on_tick, tick_ms, tick_ms);
    uv_timer_init(c.loop, &c.watchdog);
    c.watchdog.data = &c;
    uv_timer_start(&c.watchdog, on_watchdog, 1000, 1000);
    c.watchdog_last = ctld_mono(); /* a stop before its first run is a stop too */
    /* after the loop's handles: a corridor change that is due wants a pass */
    if (energy_init(&c, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductiled: %s\n", err);
        return 1;
    }
    uv_signal_init(c.loop, &c.sigterm);
    c.sigterm.data = &c;
    uv_signal_start(&c.sigterm, on_signal, SIGTERM);
    uv_signal_init(c.loop, &c.sigint);
    c.sigint.data = &c;
    uv_signal_start(&c.sigint, on_signal, SIGINT);
    uv_signal_init(c.loop, &c.sighup);
    c.sighup.data = &c;
    uv_signal_start(&c.sighup, on_hangup, SIGHUP);
    fprintf(stderr, "ductiled: cluster %s, %d nodes, policy %s, listening on %s and %s:%d\n",
            c.cfg.cluster_name, c.nnodes, sched_policy_spec(c.sched), c.cfg.control_socket,
            c.cfg.control_addr, c.cfg.control_port);
    stats_loop_init(&c.loop_stats, c.loop);
    uv_run(c.loop, UV_RUN_DEFAULT);
    energy_close(&c);
    accounts_free(&c);
    db_close(&c);
    unlink(c.cfg.control_socket);
    fprintf(stderr, "ductiled: stopped\n");
    return 0;
}
