/* ductile-noded: start-up, the connection to the controller, heartbeats, signals. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "hostlist.h"
#include "noded.h"

/* The reconnect timer is also the deadline of a connection made: a controller whose
 * accept queue overflowed (thousands of nodes connecting at once) drops a connection
 * that the node believes established, and says nothing on it, ever. Without the
 * controller's answer to our registration within REGISTER_WAIT_MS of connecting, the
 * node connects again. */
#define REGISTER_WAIT_MS 10000

static void connect_ctl(noded_t *d);
static void on_reconnect(uv_timer_t *t);

static void on_message(conn_t *c, json_t *msg, void *arg)
{
    noded_t *d = arg;
    if (c == d->ctl) {
        uint64_t now = uv_now(d->loop);
        if (d->last_heard && now - d->last_heard > (uint64_t)(d->cfg.node_timeout * 1000)) {
            d->ctl_back = now; /* peers that ask are told how long ago (peers.c) */
            if (d->ctl_cut_said)
                fprintf(stderr, "ductile-noded %s: the controller is heard again after %.0f s\n",
                        d->name, (double)(now - d->last_heard) / 1000.0);
        }
        d->ctl_cut_said = false;
        d->last_heard = now;
        d->ctl_refused = false;
        d->cut_off_fenced = false;
        if (d->ctl_slow_said)
            fprintf(stderr, "ductile-noded %s: the controller answers again\n", d->name);
        d->ctl_slow_said = false;
    }
    noded_dispatch(d, msg);
}

static void on_close(conn_t *c, void *arg)
{
    noded_t *d = arg;
    if (d->ctl == c) {
        d->ctl = NULL;
        d->registered = false;
        /* refused: the controller's host answers, only its daemon is down (a restart);
         * it will not have declared us down when it returns */
        d->ctl_refused = conn_error(c) == UV_ECONNREFUSED;
        /* say why we cannot connect, once per reason (retries are every second) */
        static int last_error;
        if (conn_error(c) && conn_error(c) != last_error)
            fprintf(stderr, "ductile-noded %s: cannot connect to the controller at %s:%d: %s; "
                    "retrying every second\n", d->name, d->cfg.control_addr,
                    d->cfg.control_port, uv_strerror(conn_error(c)));
        last_error = conn_error(c);
        apps_ctl_lost(d);
        /* every 1 s (0.1 s until first registered), spread by +-50 %: thousands of
         * nodes that lost a restarting controller together do not return together */
        uint64_t base = d->registered_once ? 1000 : 100;
        if (!d->stopping)
            uv_timer_start(&d->reconnect, on_reconnect, base / 2 + (uint64_t)rand() % base, 0);
    }
}

static const conn_ops_t ops = {.on_message = on_message, .on_close = on_close};

static void connect_ctl(noded_t *d)
{
    if (d->ctl || d->stopping)
        return;
    conn_cfg_t cc = {
        .auth = d->cfg.auth_type == CONFIG_AUTH_MUNGE ? PROTO_AUTH_MUNGE : PROTO_AUTH_KEY,
        .key = d->key,
        .munge_socket = d->cfg.munge_socket,
        /* the controller's answers to relayed clients (apps.c) can be as large as its
         * answers to any client (a long queue): not bounded by the size of a script */
        .max_payload = PROTO_MAX_PAYLOAD,
    };
    d->ctl = conn_connect_tcp(d->loop, d->cfg.control_addr, d->cfg.control_port, &cc, &ops, d);
    if (!d->ctl) {
        uv_timer_start(&d->reconnect, on_reconnect, 1000, 0);
        return;
    }
    uv_timer_start(&d->reconnect, on_reconnect, REGISTER_WAIT_MS, 0);
    noded_send_register(d); /* queued until the hello arrives */
}

static void on_reconnect(uv_timer_t *t)
{
    noded_t *d = t->data;
    if (d->ctl && !d->registered) {
        static bool said; /* once per process: every node of it would say the same */
        if (!said)
            fprintf(stderr, "ductile-noded %s: no answer from the controller within %d s of "
                    "connecting; connecting again\n", d->name, REGISTER_WAIT_MS / 1000);
        said = true;
        conn_close(d->ctl); /* on_close connects again */
        return;
    }
    connect_ctl(d);
}

static void on_heartbeat(uv_timer_t *t)
{
    noded_t *d = t->data;
    /* A tick long overdue: the daemon (or its host) was frozen past NodeTimeout. */
    uv_update_time(d->loop);
    uint64_t now = uv_now(d->loop);
    double gap = d->last_beat ? (double)(now - d->last_beat) / 1000.0 : 0;
    d->last_beat = now;
    if (gap > d->cfg.node_timeout)
        jobs_fence(d, gap);
    double silence = d->last_heard ? (double)(now - d->last_heard) / 1000.0 : 0;
    if (d->registered_once && !d->ctl_refused && !d->cut_off_fenced &&
        silence > d->cfg.node_timeout) {
        /* The controller's host still acknowledges what we send: its process is slow (a
         * long turn, stopped for a moment), not gone, and it does not count that time
         * against us (ctld main.c, on_watchdog): ending the jobs would be the only harm. */
        double ack = conn_peer_ack_age(d->ctl);
        if (ack >= 0 && ack < d->cfg.node_timeout / 2) {
            if (!d->ctl_slow_said)
                fprintf(stderr, "ductile-noded %s: no answer from the controller for %.0f s, "
                        "but its host acknowledges what this node sends: it is slow, not cut "
                        "off; the jobs here go on\n", d->name, silence);
            d->ctl_slow_said = true;
        } else if (!d->ask) {
            peers_ask_controller(d, silence);
        }
    }
    json_t *ping = json_pack("{s:s}", "type", "ping");
    if (ping) {
        metering_ping(d, ping);
        agents_ping(d, ping);
    }
    noded_send(d, ping);
    apps_check_pending(d);
}

static void on_sigchld(uv_signal_t *h, int sig)
{
    (void)sig;
    jobs_reap(h->data);
}

static void close_walk(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static void on_stop(uv_signal_t *h, int sig)
{
    (void)sig;
    /* Jobs keep running: a daemon restart is not their end (its next incarnation
     * reconciles them with the controller); `ductile cluster down` ends an emulated
     * cluster's jobs itself. */
    for (noded_t *d = noded_all; d < noded_all + noded_nall; d++) {
        d->stopping = true;
        if (d->ctl)
            conn_close(d->ctl);
    }
    uv_walk(h->loop, close_walk, NULL);
}

/* The id of this node's state: StateDir/noded-id, made (random) at the first start on
 * that state and kept. A state that a daemon without the file ran on (an upgrade with
 * jobs running) keeps what that daemon used, a hash of the StateDir path, when its
 * cgroups are there. */
static int state_id(noded_t *d, const char *root, uint32_t *id)
{
    char path[4200], text[16] = "";
    snprintf(path, sizeof(path), "%s/noded-id", d->cfg.state_dir);
    for (int tries = 0; tries < 3; tries++) {
        FILE *f = fopen(path, "re");
        if (f) {
            char *end = NULL;
            unsigned long v = fgets(text, sizeof(text), f) ? strtoul(text, &end, 16) : 0;
            fclose(f);
            if (end && end != text && (*end == '\n' || !*end) && v <= 0xffffffffu) {
                *id = (uint32_t)v;
                return 0;
            }
            fprintf(stderr, "ductile-noded: %s is not an id (8 hex digits): remove it to make "
                    "a new one\n", path);
            return -1;
        }
        if (errno != ENOENT)
            break;
        uint32_t h = 2166136261u, v;
        for (const char *p = d->cfg.state_dir; *p; p++)
            h = (h ^ (uint8_t)*p) * 16777619u;
        char old[700];
        snprintf(old, sizeof(old), "%s/ductile/%s-%08x", root, d->cfg.cluster_name, h);
        struct stat st;
        if (stat(old, &st) == 0)
            v = h; /* the cgroups of a daemon before the id */
        else if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
            break;
        /* written aside, then linked in: of daemons starting together, the first wins */
        char tmp[4300];
        snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)getpid());
        f = fopen(tmp, "we");
        if (!f)
            break;
        fprintf(f, "%08x\n", v);
        bool ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
        fclose(f);
        if (ok && link(tmp, path) < 0 && errno != EEXIST)
            ok = false;
        unlink(tmp);
        if (!ok)
            break;
    }
    fprintf(stderr, "ductile-noded: cannot make %s: %s\n", path, strerror(errno));
    return -1;
}

/* Node d's own state: its spool and lock, cgroups, power readings, local socket and
 * step port, what an earlier daemon of it left; then it connects. cfg is shared by
 * every node of the process. */
static int node_start(noded_t *d, const config_t *cfg, const char *conf_path, int index,
                      const uint8_t *key, uv_loop_t *loop)
{
    char err[1024];
    d->cfg = *cfg;
    snprintf(d->conf_path, sizeof(d->conf_path), "%s", conf_path);
    memcpy(d->key, key, sizeof(d->key));
    d->index = index;
    d->name = cfg->nodes[index];
    d->loop = loop;
    snprintf(d->spool, sizeof(d->spool), "%s/spool/%s", d->cfg.state_dir, d->name);
    /* Scripts are written here owned by their users (0700 each): the directories must
     * let a user reach a file it owns without listing anyone else's. */
    if (fsutil_mkdirs(d->spool, 0711) < 0) {
        fprintf(stderr, "ductile-noded: cannot create %s: %s\n", d->spool, strerror(errno));
        return -1;
    }
    /* One daemon per node: a second one would take the first one's jobs for leftovers
     * of its own. The lock goes with the process, however it ends. */
    char lock[4200];
    snprintf(lock, sizeof(lock), "%s/noded.lock", d->spool);
    int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    /* A daemon restarted right after a kill -9 may find its predecessor still exiting:
     * give it 10 s before refusing. */
    for (int tries = 0; lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) < 0 && tries < 100; tries++) {
        if (tries == 0)
            fprintf(stderr, "ductile-noded %s: waiting for the previous daemon of this node "
                    "to exit\n", d->name);
        usleep(100 * 1000);
    }
    if (lfd < 0 || flock(lfd, LOCK_EX | LOCK_NB) < 0) {
        fprintf(stderr, "ductile-noded: another ductile-noded runs for node %s (%s is locked)\n",
                d->name, lock);
        return -1;
    }
    /* One cgroup subtree per node of a cluster, named by the id of its state (emulated
     * clusters on one host name their nodes alike; two clusters of the same name and
     * StateDir path in two containers of one kernel shared their jobs' cgroups, and
     * one's start ended the other's jobs: the id is made with the state, state_id). It
     * is the same for every start of the daemon, so a restarted daemon finds what its
     * earlier incarnation left there (runs.c). */
    char root[256];
    if (launch_cgroup_root(root, sizeof(root)) == 0) {
        uint32_t h;
        if (state_id(d, root, &h) < 0)
            return -1;
        snprintf(d->cgroup_parent, sizeof(d->cgroup_parent), "ductile/%s-%08x/%s",
                 d->cfg.cluster_name, h, d->name);
        snprintf(d->cgroup_root, sizeof(d->cgroup_root), "%s", root);
        if (noded_nall == 1)
            fprintf(stderr, "ductile-noded %s: jobs' cgroups under %s/%s\n", d->name, root,
                    d->cgroup_parent);
        /* one hierarchy for every node of this process: asked once (an emulated
         * cluster's daemon may hold thousands), each node's own cgroup enables the
         * controllers at its first job (launch.c) */
        d->limits = d == noded_all ? launch_cgroup_limits(d->cgroup_parent) : noded_all->limits;
    }
    bool mem = d->limits & LAUNCH_LIMIT_MEMORY, pids = d->limits & LAUNCH_LIMIT_PIDS;
    if (d == noded_all && !(mem && pids))
        fprintf(stderr, "ductile-noded %s: jobs' %s%s%s not enforced here: no cgroup v2 %s "
                "controller%s\n", d->name, mem ? "" : "memory (--mem)", mem || pids ? "" : " and ",
                pids ? "" : "processes (MaxProcessesPerJob)",
                mem ? "pids" : pids ? "memory" : "memory and pids", mem || pids ? "" : "s");
    if (nodepower_init(&d->power, d->cfg.power_source, d->cfg.powercap_dir) < 0) {
        fprintf(stderr, "ductile-noded %s: PowerSource = rapl: %s\n", d->name, d->power.why);
        return -1;
    }
    if (d->power.why[0] && d == noded_all)
        fprintf(stderr, "ductile-noded %s: PowerSource = auto: %s; using the model\n", d->name,
                d->power.why);
    d->jobs = idmap_create();
    d->chans = idmap_create();
    uv_timer_init(d->loop, &d->reconnect);
    d->reconnect.data = d;
    uv_timer_init(d->loop, &d->heartbeat);
    d->heartbeat.data = d;
    uv_timer_init(d->loop, &d->tasks_poll);
    d->tasks_poll.data = d;
    uint64_t hb = (uint64_t)(d->cfg.heartbeat_interval * 1000);
    /* the nodes of one process beat at spread times, as separate hosts would */
    uint64_t first = hb + (noded_nall > 1 ? hb * (uint64_t)(d - noded_all) / (uint64_t)noded_nall : 0);
    uv_timer_start(&d->heartbeat, on_heartbeat, first, hb);
    if (apps_init(d, err, sizeof(err)) < 0 || peers_init(d, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductile-noded %s: %s\n", d->name, err);
        return -1;
    }
    runs_recover(d); /* before registering: the report names what we found */
    connect_ctl(d);
    if (noded_nall == 1)
        fprintf(stderr, "ductile-noded %s: started (controller %s:%d)\n", d->name,
                d->cfg.control_addr, d->cfg.control_port);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: ductile-noded --conf FILE --node NAME\n"
               "       ductile-noded --conf FILE --nodes LIST   (several emulated nodes in one "
               "process, for tests and benchmarks: n[0001-2500])\n");
}

int main(int argc, char **argv)
{
    const char *conf = getenv("DUCTILE_CONF"), *name = NULL, *list = NULL;
    static const struct option lopts[] = {{"conf", required_argument, 0, 'c'},
                                          {"node", required_argument, 0, 'n'},
                                          {"nodes", required_argument, 0, 'N'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int o;
    while ((o = getopt_long(argc, argv, "c:n:N:h", lopts, NULL)) != -1) {
        if (o == 'c')
            conf = optarg;
        else if (o == 'n')
            name = optarg;
        else if (o == 'N')
            list = optarg;
        else {
            usage(o == 'h' ? stdout : stderr);
            return o == 'h' ? 0 : 2;
        }
    }
    if (!conf || !name == !list) {
        usage(stderr);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    srand((unsigned)getpid());
    static config_t cfg;
    char err[1024], conf_path[4096];
    if (config_load(conf, &cfg, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductile-noded: %s\n", err);
        return 1;
    }
    if (!realpath(conf, conf_path))
        snprintf(conf_path, sizeof(conf_path), "%s", conf);
    char **names = NULL;
    int count = 0;
    if (hostlist_expand(list ? list : name, &names, &count, err, sizeof(err)) < 0 || count < 1) {
        fprintf(stderr, "ductile-noded: --node%s %s: %s\n", list ? "s" : "", list ? list : name,
                count < 1 && !err[0] ? "no node named" : err);
        return 2;
    }
    int *index = calloc((size_t)count, sizeof(int));
    for (int i = 0; index && i < count; i++)
        if ((index[i] = config_node_index(&cfg, names[i])) < 0) {
            fprintf(stderr, "ductile-noded: node '%s' is not in Nodes of %s\n", names[i], conf);
            return 1;
        }
    if (!index)
        return 1;
    if (count > 1 && cfg.node_port != 0) {
        fprintf(stderr, "ductile-noded: --nodes needs NodePort = 0 in %s: every node of the "
                "process takes step output on a port of its own\n", conf);
        return 1;
    }
    uint8_t key[32] = {0};
    if (cfg.auth_type == CONFIG_AUTH_KEY &&
        proto_key_load(cfg.auth_key_file, key, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductile-noded: %s\n", err);
        return 1;
    }
    /* Orphans of jobs come to us, not to init: we reap them, and no process of a job
     * escapes to a parent that might never reap it. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    uv_loop_t *loop = uv_default_loop();
    /* Every relayed client and every node sending step output here is a descriptor:
     * take the hard limit for ourselves, and give jobs the limit we were started with. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        launch_set_job_nofile(&rl);
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    noded_all = calloc((size_t)count, sizeof(noded_t));
    if (!noded_all)
        return 1;
    noded_nall = count;
    static uv_signal_t sigchld, sigterm, sigint;
    uv_signal_init(loop, &sigchld);
    sigchld.data = noded_all;
    uv_signal_start(&sigchld, on_sigchld, SIGCHLD);
    uv_signal_init(loop, &sigterm);
    uv_signal_start(&sigterm, on_stop, SIGTERM);
    uv_signal_init(loop, &sigint);
    uv_signal_start(&sigint, on_stop, SIGINT);
    for (int i = 0; i < count; i++)
        if (node_start(&noded_all[i], &cfg, conf_path, index[i], key, loop) < 0)
            return 1;
    if (count > 1)
        fprintf(stderr, "ductile-noded: %d nodes %s started (controller %s:%d)\n", count, list,
                cfg.control_addr, cfg.control_port);
    hostlist_free(names, count);
    free(index);
    uv_run(loop, UV_RUN_DEFAULT);
    /* Our cgroups go with us once nothing is left in them (a job that outlives the
     * daemon keeps its own, found again at the next start). */
    for (noded_t *d = noded_all; d < noded_all + noded_nall; d++)
        launch_cgroup_prune(d->cgroup_parent[0] ? d->cgroup_parent : NULL, true);
    if (noded_nall == 1)
        fprintf(stderr, "ductile-noded %s: stopped\n", noded_all->name);
    else
        fprintf(stderr, "ductile-noded: %d nodes %s stopped\n", noded_nall, list);
    return 0;
}
