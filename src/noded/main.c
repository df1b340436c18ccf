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
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "noded.h"

static void connect_ctl(noded_t *d);
static void on_reconnect(uv_timer_t *t);

static void on_message(conn_t *c, json_t *msg, void *arg)
{
    noded_t *d = arg;
    if (c == d->ctl) {
        d->last_heard = uv_now(d->loop);
        d->ctl_refused = false;
        d->cut_off_fenced = false;
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
        if (!d->stopping)
            uv_timer_start(&d->reconnect, on_reconnect, d->registered_once ? 1000 : 100, 0);
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
    /* Queued until the hello arrives; tells the controller what we still hold. */
    long mem = sysconf(_SC_PHYS_PAGES) / 1024 * sysconf(_SC_PAGESIZE) / 1024;
    json_t *reg = json_pack("{s:s,s:s,s:i,s:I,s:o}", "type", "register", "node", d->name, "cpus",
                            d->cfg.cores_per_node, "memory_mb", (json_int_t)mem, "jobs",
                            jobs_report(d));
    /* Steps: the tasks we hold, and whether this daemon ever registered (if not, it is
     * a new incarnation and holds none of its predecessor's tasks). */
    json_object_set_new(reg, "steps", steps_report(d));
    json_object_set_new(reg, "first", json_boolean(!d->registered_once));
    /* every job message names its run: a controller refuses a daemon that does not */
    json_object_set_new(reg, "runs", json_true());
    /* where other nodes send the output of steps whose client runs here */
    json_object_set_new(reg, "step_port", json_integer(d->step_port));
    /* the jobs whose checkpoint agents run here (a checkpoint node) */
    json_object_set_new(reg, "agents", agents_report(d));
    conn_send_new(d->ctl, reg);
}

static void on_reconnect(uv_timer_t *t) { connect_ctl(t->data); }

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
        d->cut_off_fenced = true;
        jobs_fence_cut_off(d, silence);
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
    noded_t *d = h->data;
    d->stopping = true;
    /* Jobs keep running: a daemon restart is not their end (its next incarnation
     * reconciles them with the controller); `ductile cluster down` ends an emulated
     * cluster's jobs itself. */
    if (d->ctl)
        conn_close(d->ctl);
    uv_walk(d->loop, close_walk, NULL);
}

int main(int argc, char **argv)
{
    const char *conf = getenv("DUCTILE_CONF"), *name = NULL;
    static const struct option lopts[] = {{"conf", required_argument, 0, 'c'},
                                          {"node", required_argument, 0, 'n'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int o;
    while ((o = getopt_long(argc, argv, "c:n:h", lopts, NULL)) != -1) {
        if (o == 'c')
            conf = optarg;
        else if (o == 'n')
            name = optarg;
        else {
            fprintf(o == 'h' ? stdout : stderr, "usage: ductile-noded --conf FILE --node NAME\n");
            return o == 'h' ? 0 : 2;
        }
    }
    if (!conf || !name) {
        fprintf(stderr, "usage: ductile-noded --conf FILE --node NAME\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    static noded_t d;
    char err[1024];
    if (config_load(conf, &d.cfg, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductile-noded: %s\n", err);
        return 1;
    }
    if (!realpath(conf, d.conf_path))
        snprintf(d.conf_path, sizeof(d.conf_path), "%s", conf);
    d.index = config_node_index(&d.cfg, name);
    if (d.index < 0) {
        fprintf(stderr, "ductile-noded: node '%s' is not in Nodes of %s\n", name, conf);
        return 1;
    }
    d.name = d.cfg.nodes[d.index];
    if (d.cfg.auth_type == CONFIG_AUTH_KEY &&
        proto_key_load(d.cfg.auth_key_file, d.key, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductile-noded: %s\n", err);
        return 1;
    }
    snprintf(d.spool, sizeof(d.spool), "%s/spool/%s", d.cfg.state_dir, d.name);
    /* Scripts are written here owned by their users (0700 each): the directories must
     * let a user reach a file it owns without listing anyone else's. */
    if (fsutil_mkdirs(d.spool, 0711) < 0) {
        fprintf(stderr, "ductile-noded: cannot create %s: %s\n", d.spool, strerror(errno));
        return 1;
    }
    /* One daemon per node: a second one would take the first one's jobs for leftovers
     * of its own. The lock goes with the process, however it ends. */
    char lock[4200];
    snprintf(lock, sizeof(lock), "%s/noded.lock", d.spool);
    int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    /* A daemon restarted right after a kill -9 may find its predecessor still exiting:
     * give it 10 s before refusing. */
    for (int tries = 0; lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) < 0 && tries < 100; tries++) {
        if (tries == 0)
            fprintf(stderr, "ductile-noded %s: waiting for the previous daemon of this node "
                    "to exit\n", name);
        usleep(100 * 1000);
    }
    if (lfd < 0 || flock(lfd, LOCK_EX | LOCK_NB) < 0) {
        fprintf(stderr, "ductile-noded: another ductile-noded runs for node %s (%s is locked)\n",
                d.name, lock);
        return 1;
    }
    /* One cgroup subtree per node of a cluster (emulated clusters on one host name
     * their nodes alike: the state directory tells them apart). It is the same for
     * every start of the daemon, so a restarted daemon finds what its earlier
     * incarnation left there (runs.c). */
    char root[256];
    if (launch_cgroup_root(root, sizeof(root)) == 0) {
        uint32_t h = 2166136261u;
        for (const char *p = d.cfg.state_dir; *p; p++)
            h = (h ^ (uint8_t)*p) * 16777619u;
        snprintf(d.cgroup_parent, sizeof(d.cgroup_parent), "ductile/%s-%08x/%s",
                 d.cfg.cluster_name, h, d.name);
        snprintf(d.cgroup_root, sizeof(d.cgroup_root), "%s", root);
        fprintf(stderr, "ductile-noded %s: jobs' cgroups under %s/%s\n", d.name, root,
                d.cgroup_parent);
    }
    if (nodepower_init(&d.power, d.cfg.power_source, d.cfg.powercap_dir) < 0) {
        fprintf(stderr, "ductile-noded %s: PowerSource = rapl: %s\n", d.name, d.power.why);
        return 1;
    }
    if (d.power.why[0])
        fprintf(stderr, "ductile-noded %s: PowerSource = auto: %s; using the model\n", d.name,
                d.power.why);
    /* Orphans of jobs come to us, not to init: we reap them, and no process of a job
     * escapes to a parent that might never reap it. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    d.loop = uv_default_loop();
    d.jobs = idmap_create();
    d.chans = idmap_create();
    uv_timer_init(d.loop, &d.reconnect);
    d.reconnect.data = &d;
    uv_timer_init(d.loop, &d.heartbeat);
    d.heartbeat.data = &d;
    uint64_t hb = (uint64_t)(d.cfg.heartbeat_interval * 1000);
    uv_timer_start(&d.heartbeat, on_heartbeat, hb, hb);
    uv_signal_init(d.loop, &d.sigchld);
    d.sigchld.data = &d;
    uv_signal_start(&d.sigchld, on_sigchld, SIGCHLD);
    uv_signal_init(d.loop, &d.sigterm);
    d.sigterm.data = &d;
    uv_signal_start(&d.sigterm, on_stop, SIGTERM);
    uv_signal_init(d.loop, &d.sigint);
    d.sigint.data = &d;
    uv_signal_start(&d.sigint, on_stop, SIGINT);
    /* Every relayed client and every node sending step output here is a descriptor:
     * take the hard limit for ourselves, and give jobs the limit we were started with. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        launch_set_job_nofile(&rl);
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (apps_init(&d, err, sizeof(err)) < 0 || peers_init(&d, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductile-noded: %s\n", err);
        return 1;
    }
    runs_recover(&d); /* before registering: the report names what we found */
    connect_ctl(&d);
    fprintf(stderr, "ductile-noded %s: started (controller %s:%d)\n", d.name,
            d.cfg.control_addr, d.cfg.control_port);
    uv_run(d.loop, UV_RUN_DEFAULT);
    /* Our cgroups go with us once nothing is left in them (a job that outlives the
     * daemon keeps its own, found again at the next start). */
    launch_cgroup_prune(d.cgroup_parent[0] ? d.cgroup_parent : NULL, true);
    fprintf(stderr, "ductile-noded %s: stopped\n", d.name);
    return 0;
}
