/* ductile cluster up|down|status: a local emulated cluster, the embedded default.
 * One controller and N node daemons on loopback, each node with its own name, all
 * under one directory (configuration, key, database, logs, sockets, pid files). */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "fsutil.h"
#include "hostlist.h"
#include "launch.h"
#include "proto.h"
#include "sched.h"
#include "strparse.h"
#include "util.h"


/* The daemons live next to this binary. */
static int sibling(const char *name, char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n < 0)
        return -errno;
    self[n] = '\0';
    snprintf(out, len, "%s/%s", dirname(self), name);
    return access(out, X_OK) == 0 ? 0 : -ENOENT;
}

static bool port_free(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                             .sin_port = htons((uint16_t)port)};
    bool ok = fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

/* A port for the controller, free now and below the kernel's ephemeral range: the
 * controller binds it only later (and again after a restart), and a port the kernel
 * hands out to any connection or listener meanwhile would be taken. */
static int free_port(void)
{
    int lo = 32768, hi = 60999;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (f) {
        if (fscanf(f, "%d %d", &lo, &hi) != 2)
            lo = 32768;
        fclose(f);
    }
    int first = lo - 12000 > 1024 ? lo - 12000 : 1024, span = lo - first;
    unsigned seed = (unsigned)getpid() ^ (unsigned)time(NULL);
    for (int i = 0; span > 0 && i < 200; i++) {
        int port = first + (int)(rand_r(&seed) % (unsigned)span);
        if (port_free(port))
            return port;
    }
    /* no room below the ephemeral range: any free port */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sa);
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* Starts a daemon in the background, its output in log, its pid in pidfile. */
static pid_t spawn(char *const argv[], const char *log, const char *pidfile)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        setsid();
        /* the daemon's alone: it names users, their jobs and their paths (one kept
         * from an earlier run of the cluster too) */
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0 || nul < 0 || fchmod(fd, 0600) < 0)
            _exit(127);
        dup2(nul, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        execv(argv[0], argv);
        _exit(127);
    }
    FILE *f = fopen(pidfile, "w");
    if (f) {
        fprintf(f, "%d\n", (int)pid);
        fclose(f);
    }
    return pid;
}

/* A refused `cluster up` leaves no directory it made (its key and empty log/). */
static void undo_dir(const char *adir, bool made)
{
    char p[PATH_MAX + 16];
    if (!made)
        return;
    snprintf(p, sizeof(p), "%s/cluster.key", adir);
    unlink(p);
    snprintf(p, sizeof(p), "%s/log", adir);
    rmdir(p);
    snprintf(p, sizeof(p), "%s/state", adir);
    rmdir(p);
    rmdir(adir);
}

/* Keys the configuration of `cluster up` always has (--set cannot give them twice). */
static bool set_by_up(const char *kv)
{
    static const char *const keys[] = {"ClusterName", "ControlAddr", "ControlPort",
                                       "ControlSocket", "Nodes", "CoresPerNode", "StateDir",
                                       "LogDir", "Policy", "SchedulerTick", "NodeTimeout",
                                       "ResizeTimeout", "AuthType", "AuthKeyFile",
                                       "MungeSocket"};
    size_t n = strcspn(kv, "= \t");
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (strlen(keys[i]) == n && !strncasecmp(kv, keys[i], n))
            return true;
    return false;
}

static int cluster_up(int argc, char **argv)
{
    static const struct option lopts[] = {{"nodes", required_argument, 0, 'N'},
                                          {"dir", required_argument, 0, 'd'},
                                          {"policy", required_argument, 0, 'p'},
                                          {"tick", required_argument, 0, 't'},
                                          {"node-timeout", required_argument, 0, 'T'},
                                          {"auth", required_argument, 0, 'a'},
                                          {"resize-timeout", required_argument, 0, 'R'},
                                          {"munge-socket", required_argument, 0, 'm'},
                                          {"set", required_argument, 0, 's'},
                                          {"nodes-per-daemon", required_argument, 0, 'K'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    long nodes = 0, per = 1;
    const char *dir = NULL, *policy = "easy", *tick = "10", *timeout = "30";
    const char *auth = "key", *munge_socket = "", *rtimeout = "60";
    const char *sets[32];
    int nsets = 0, o;
    opterr = 0;
    optind = 1;
    while ((o = getopt_long(argc, argv, "N:d:p:h", lopts, NULL)) != -1) {
        switch (o) {
        case 'N':
            if (strparse_long(optarg, 1, 100000, &nodes) < 0)
                return cmd_fail("cluster up: --nodes must be 1..100000");
            break;
        case 'K':
            if (strparse_long(optarg, 1, 100000, &per) < 0)
                return cmd_fail("cluster up: --nodes-per-daemon must be 1..100000");
            break;
        case 'd': dir = optarg; break;
        case 'p': policy = optarg; break;
        case 't': tick = optarg; break;
        case 'T': timeout = optarg; break;
        case 'a':
            if (strcmp(optarg, "key") && strcmp(optarg, "munge"))
                return cmd_fail("cluster up: --auth is key or munge");
            auth = optarg;
            break;
        case 'm': munge_socket = optarg; break;
        case 'R': rtimeout = optarg; break;
        case 's':
            if (!strchr(optarg, '=') || strchr(optarg, '\n') || nsets == 32)
                return cmd_fail("cluster up: --set takes KEY=VALUE (a ductile.conf line; at "
                                "most 32)");
            if (set_by_up(optarg))
                return cmd_fail("cluster up: --set %.*s: cluster up writes that key itself "
                                "(see its options: ductile cluster up --help)",
                                (int)strcspn(optarg, "="), optarg);
            sets[nsets++] = optarg;
            break;
        case 'h':
            printf("usage: ductile cluster up --nodes N [--dir DIR] [--policy P]\n"
                   "  [--tick SECONDS] [--node-timeout SECONDS] [--resize-timeout SECONDS]\n"
                   "  [--auth key|munge] [--nodes-per-daemon K]  (K emulated nodes in each "
                   "node daemon:\n"
                   "  for tests and benchmarks of large clusters)\n"
                   "  [--munge-socket PATH] [--set KEY=VALUE]...  (any ductile.conf key)\n");
            return 0;
        default:
            return cmd_fail("cluster up: bad option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cmd_fail("cluster up: unexpected argument '%s'", argv[optind]);
    if (!nodes)
        return cmd_fail("cluster up: --nodes N is required");
    if ((nodes + per - 1) / per > 4096)
        return cmd_fail("cluster up: %ld nodes need --nodes-per-daemon %ld or more (at most "
                        "4096 node daemons)", nodes, (nodes + 4095) / 4096);
    char dbuf[PATH_MAX];
    if (!dir) {
        snprintf(dbuf, sizeof(dbuf), "%s/ductile-cluster", getenv("HOME") ? getenv("HOME") : "/tmp");
        dir = dbuf;
    }
    char ctld[PATH_MAX], noded[PATH_MAX];
    if (sibling("ductiled", ctld, sizeof(ctld)) < 0 || sibling("ductile-noded", noded, sizeof(noded)) < 0)
        return cmd_fail("cluster up: ductiled and ductile-noded must be next to this program");
    bool made = mkdir(dir, 0755) == 0; /* ours: removed again if the setup is refused */
    if (!made && errno == ENOENT) { /* its parents too, as mkdir -p */
        int rc = fsutil_mkdirs(dir, 0755);
        made = rc == 0;
        errno = rc < 0 ? -rc : 0;
    }
    if (!made && errno != EEXIST)
        return cmd_fail("cannot create %s: %s", dir, strerror(errno));
    char adir[PATH_MAX];
    if (!realpath(dir, adir))
        return cmd_fail("cannot resolve %s: %s", dir, strerror(errno));
    char path[PATH_MAX + 64], logd[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/ctld.pid", adir);
    if (access(path, F_OK) == 0)
        return cmd_fail("a cluster seems to run in %s already (ductile cluster down --dir %s)",
                        adir, adir);
    /* The logs name other users' jobs and paths: root's alone. The state directory
     * holds the database: not to be listed, but passable to the node daemons' sockets
     * in its spool (the controller would make it 0755). Made so again over an earlier
     * run's. */
    snprintf(logd, sizeof(logd), "%s/log", adir);
    snprintf(path, sizeof(path), "%s/state", adir);
    if ((mkdir(logd, 0700) < 0 && errno != EEXIST) || chmod(logd, 0700) < 0 ||
        (mkdir(path, 0711) < 0 && errno != EEXIST) || chmod(path, 0711) < 0) {
        int e = errno;
        undo_dir(adir, made);
        return cmd_fail("cannot make %s/log and %s/state private: %s", adir, adir, strerror(e));
    }
    char err[1024];
    snprintf(path, sizeof(path), "%s/cluster.key", adir);
    if (access(path, F_OK) != 0 && proto_key_create(path, err, sizeof(err)) < 0)
        return cmd_fail("%s", err);
    int port = free_port();
    char conf[PATH_MAX + 32];
    snprintf(conf, sizeof(conf), "%s/ductile.conf", adir);
    FILE *f = fopen(conf, "w");
    if (!f)
        return cmd_fail("cannot write %s: %s", conf, strerror(errno));
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    fprintf(f, "# A local emulated cluster, made by 'ductile cluster up'.\n"
               "ClusterName = local\n"
               "ControlAddr = 127.0.0.1\n"
               "ControlPort = %d\n"
               "ControlSocket = %s/ctld.sock\n"
               "Nodes = n[%s1-%ld]\n"
               "CoresPerNode = %ld\n"
               "StateDir = %s/state\n"
               "LogDir = %s/log\n"
               "Policy = %s\n"
               "SchedulerTick = %s\n"
               "NodeTimeout = %s\n"
               "ResizeTimeout = %s\n"
               "AuthType = %s\n"
               "AuthKeyFile = %s/cluster.key\n"
               "MungeSocket = \"%s\"\n",
            port, adir, nodes >= 10 ? "0" : "", nodes, ncpu / nodes > 0 ? ncpu / nodes : 1, adir,
            adir, policy, tick, timeout, rtimeout, auth, adir, munge_socket);
    if (per > 1) /* real nodes have an address each: the cap is for floods from one */
        fprintf(f, "# every emulated node connects from 127.0.0.1\n"
                   "MaxConnectionsPerHost = 0\n");
    fflush(f); /* the lines before the --set ones, to name a bad one as given */
    long base = 0;
    FILE *r = fopen(conf, "r");
    for (int ch; r && (ch = fgetc(r)) != EOF;)
        base += ch == '\n';
    if (r)
        fclose(r);
    for (int i = 0; i < nsets; i++) {
        const char *eq = strchr(sets[i], '=');
        fprintf(f, "%.*s = %s\n", (int)(eq - sets[i]), sets[i], eq + 1);
    }
    fclose(f);
    /* Check it before starting anything: a bad --policy is an error here, not in a log. */
    config_t cfg = {0};
    if (config_load(conf, &cfg, err, sizeof(err)) < 0) {
        unlink(conf);
        undo_dir(adir, made);
        /* "conf:LINE: message": the file is gone, so name what the user gave */
        size_t cl = strlen(conf);
        char *end = NULL;
        long line = !strncmp(err, conf, cl) && err[cl] == ':' ? strtol(err + cl + 1, &end, 10) : 0;
        const char *msg = end && *end == ':' ? end + 1 + (end[1] == ' ') : err;
        if (line > base && line - base <= nsets)
            return cmd_fail("cluster up: --set %s: %s", sets[line - base - 1], msg);
        return cmd_fail("cluster up: %s", msg);
    }
    sched_t *probe;
    int prc = sched_create(cfg.nnodes, cfg.policy, &probe, err, sizeof(err));
    if (prc < 0) {
        config_free(&cfg);
        unlink(conf);
        undo_dir(adir, made);
        return cmd_fail("--policy: %s", err);
    }
    sched_destroy(probe);
    char log[PATH_MAX + 64], pidf[PATH_MAX + 64];
    snprintf(log, sizeof(log), "%s/ductiled.log", logd);
    snprintf(pidf, sizeof(pidf), "%s/ctld.pid", adir);
    char *cargv[] = {ctld, "--conf", conf, NULL};
    if (spawn(cargv, log, pidf) < 0)
        return cmd_fail("cannot start ductiled: %s", strerror(errno));
    for (int i = 0; i < cfg.nnodes; i += (int)per) {
        int last = i + (int)per < cfg.nnodes ? i + (int)per - 1 : cfg.nnodes - 1;
        char group[256];
        snprintf(log, sizeof(log), "%s/noded-%s.log", logd, cfg.nodes[i]);
        snprintf(pidf, sizeof(pidf), "%s/noded-%s.pid", adir, cfg.nodes[i]);
        hostlist_compress(&cfg.nodes[i], last - i + 1, group, sizeof(group));
        char *nargv[] = {noded, "--conf", conf, per > 1 ? "--nodes" : "--node", group, NULL};
        pid_t pid = spawn(nargv, log, pidf);
        if (pid < 0)
            return cmd_fail("cannot start ductile-noded: %s", strerror(errno));
        for (int k = i + 1; k <= last; k++) { /* each node's pid file names its daemon */
            snprintf(pidf, sizeof(pidf), "%s/noded-%s.pid", adir, cfg.nodes[k]);
            FILE *pf = fopen(pidf, "w");
            if (pf) {
                fprintf(pf, "%d\n", (int)pid);
                fclose(pf);
            }
        }
    }
    /* Wait until every node has registered. */
    double deadline = cu_mono() + 30 + (double)cfg.nnodes / 200;
    int up = 0;
    while (cu_mono() < deadline) {
        client_t *c;
        json_t *rep = NULL, *req = json_pack("{s:s}", "type", "status");
        if (client_open_unix(cfg.control_socket, &c, err, sizeof(err)) == 0) {
            if (client_call(c, req, &rep, 5, err, sizeof(err)) == 0)
                up = (int)json_integer_value(json_object_get(rep, "nodes_up"));
            client_close(c);
        }
        json_decref(req);
        json_decref(rep);
        if (up == cfg.nnodes)
            break;
        usleep(20000);
    }
    int n = cfg.nnodes;
    config_free(&cfg);
    if (up != n)
        return cmd_fail("only %d of %d nodes came up within %.0f s (logs in %s)", up, n,
                        30 + (double)n / 200, logd);
    printf("Cluster up: %d nodes, policy %s, in %s\n", n, policy, adir);
    printf("export DUCTILE_CONF=%s\n", conf);
    return 0;
}

static pid_t read_pid(const char *path)
{
    FILE *f = fopen(path, "r");
    int pid = 0;
    if (f) {
        if (fscanf(f, "%d", &pid) != 1)
            pid = 0;
        fclose(f);
    }
    return (pid_t)pid;
}

/* Alive and not a zombie (an exited daemon whose parent never reaps it). */
static bool alive(pid_t pid)
{
    if (kill(pid, 0) < 0)
        return false;
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')');
    return !(rp && rp[1] == ' ' && rp[2] == 'Z');
}

/* TERM, then wait; KILL after a grace period. */
static void stop_pid(const char *pidfile, double grace)
{
    pid_t pid = read_pid(pidfile);
    if (pid > 0 && kill(pid, SIGTERM) == 0) {
        double deadline = cu_mono() + grace;
        while (cu_mono() < deadline && alive(pid)) {
            waitpid(pid, NULL, WNOHANG);
            usleep(5000);
        }
        if (alive(pid))
            kill(pid, SIGKILL);
    }
    unlink(pidfile);
}

static const char *dir_of_conf(const char *dir, char *buf, size_t len)
{
    if (dir)
        return dir;
    const char *conf = getenv("DUCTILE_CONF");
    if (!conf)
        return NULL;
    snprintf(buf, len, "%s", conf);
    return dirname(buf);
}

/* --- ending the cluster's jobs (cluster down) ----------------------------------------
 * Node daemons leave jobs running when they stop, as they must on a real node (a daemon
 * restart is not a job's end). An emulated cluster going down is different: nothing of
 * it may stay behind. So `down` cancels every job through the controller, waits for the
 * node daemons to end them, then kills whatever is left: the processes of the cluster's
 * cgroups, and any process a node daemon of this cluster started (found by the socket
 * path the daemon puts in every job's environment). */

/* One request to the controller without printing anything: NULL if it is not there. */
static json_t *quiet_call(const config_t *cfg, json_t *req)
{
    char err[512];
    client_t *c;
    json_t *rep = NULL;
    if (client_open_unix(cfg->control_socket, &c, err, sizeof(err)) == 0) {
        if (client_call(c, req, &rep, 10, err, sizeof(err)) < 0)
            rep = NULL;
        client_close(c);
    }
    json_decref(req);
    return rep;
}

static json_t *live_jobs(const config_t *cfg)
{
    json_t *rep = cu_paged(quiet_call, cfg, json_pack("{s:s}", "type", "queue"), 0);
    json_t *jobs = rep ? json_incref(json_object_get(rep, "jobs")) : NULL;
    json_decref(rep);
    return json_is_array(jobs) ? jobs : (json_decref(jobs), NULL);
}

#define CANCEL_CHUNK 250 /* no more than the controller acts on in one request (rpc.c) */

/* Cancels every live job and waits up to `wait` seconds for them to end. Prints each
 * job it ended; returns how many are still live at the deadline. */
static int cancel_jobs(const config_t *cfg, double wait)
{
    json_t *jobs = live_jobs(cfg);
    if (!jobs)
        return 0; /* no controller: the kill below is all we can do */
    /* a thousand a request: one connection per job made a full queue's cluster take
     * minutes to go down (100,000 queued jobs, bench/scale) */
    size_t i, n = json_array_size(jobs);
    for (size_t from = 0; from < n; from += CANCEL_CHUNK) {
        json_t *ids = json_array();
        for (i = from; i < n && i < from + CANCEL_CHUNK; i++)
            json_array_append(ids, json_object_get(json_array_get(jobs, i), "id"));
        json_decref(quiet_call(cfg, json_pack("{s:s,s:o}", "type", "cancel", "jobs", ids)));
        for (i = from; i < n && i < from + CANCEL_CHUNK; i++) {
            json_t *j = json_array_get(jobs, i);
            const char *st = json_string_value(json_object_get(j, "state"));
            const char *name = json_string_value(json_object_get(j, "name"));
            printf("Ended job %lld (%s, was %s)\n",
                   (long long)json_integer_value(json_object_get(j, "id")), name ? name : "",
                   st ? st : "?");
        }
    }
    json_decref(jobs);
    double deadline = cu_mono() + wait;
    int left = 0;
    while (cu_mono() < deadline) {
        json_t *now = live_jobs(cfg);
        left = now ? (int)json_array_size(now) : 0;
        json_decref(now);
        if (left == 0)
            break;
        usleep(50000);
    }
    return left;
}

/* The cgroup subtree the node daemons of this cluster make their jobs' cgroups in:
 * "<cgroup2 mount>/ductile/<ClusterName>-<FNV-1a of StateDir>", as ductile-noded
 * (src/noded/main.c) names it. */
static int cluster_cgroup(const config_t *cfg, char *out, size_t len)
{
    char root[PATH_MAX];
    int rc = launch_cgroup_root(root, sizeof(root));
    if (rc < 0)
        return rc;
    uint32_t h = 2166136261u;
    for (const char *p = cfg->state_dir; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    int n = snprintf(out, len, "%s/ductile/%s-%08x", root, cfg->cluster_name, h);
    return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

/* Kills every process in the cgroup tree at dir (depth first), then removes its
 * directories once empty. Returns the number of processes signalled. */
static int kill_cgroup_tree(const char *dir, double deadline)
{
    int n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_type != DT_DIR || e->d_name[0] == '.')
            continue;
        char sub[PATH_MAX];
        if (snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) < (int)sizeof(sub))
            n += kill_cgroup_tree(sub, deadline);
    }
    closedir(d);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
    for (;;) {
        FILE *f = fopen(path, "r");
        int pid, found = 0;
        while (f && fscanf(f, "%d", &pid) == 1) {
            if (pid > 0 && kill(pid, SIGKILL) == 0)
                n++;
            found++;
        }
        if (f)
            fclose(f);
        if (!found || cu_mono() > deadline)
            break;
        usleep(10000);
    }
    rmdir(dir); /* fails harmlessly while a process is still leaving */
    return n;
}

/* Processes a node daemon of this cluster started: their environment names the
 * daemon's socket under our StateDir. */
static int kill_by_environment(const config_t *cfg)
{
    char want[PATH_MAX + 64];
    int wl = snprintf(want, sizeof(want), "DUCTILE_NODED_SOCKET=%s/spool/", cfg->state_dir);
    if (wl <= 0 || (size_t)wl >= sizeof(want))
        return 0;
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    static char env[1 << 16];
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 1 || pid == (long)getpid())
            continue;
        char path[64];
        snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t len = read(fd, env, sizeof(env) - 1);
        close(fd);
        if (len <= 0)
            continue;
        env[len] = '\0';
        for (ssize_t off = 0; off < len; off += (ssize_t)strlen(env + off) + 1) {
            if (!strncmp(env + off, want, (size_t)wl)) {
                if (kill((pid_t)pid, SIGKILL) == 0)
                    n++;
                break;
            }
        }
    }
    closedir(d);
    return n;
}

static int cluster_down(int argc, char **argv)
{
    static const struct option lopts[] = {{"dir", required_argument, 0, 'd'},
                                          {"keep-jobs", no_argument, 0, 'k'},
                                          {"wait", required_argument, 0, 'w'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    const char *dir = NULL;
    bool keep = false;
    double wait = 10;
    int o;
    opterr = 0;
    optind = 1;
    while ((o = getopt_long(argc, argv, "d:h", lopts, NULL)) != -1) {
        char *end;
        switch (o) {
        case 'd': dir = optarg; break;
        case 'k': keep = true; break;
        case 'w':
            errno = 0;
            wait = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(wait >= 0 && wait <= 3600))
                return cmd_fail("cluster down: --wait is a number of seconds, 0..3600");
            break;
        case 'h':
            printf("usage: ductile cluster down [--dir DIR] [--keep-jobs] [--wait SECONDS]\n"
                   "Cancels the cluster's jobs, waits up to --wait seconds (10) for them to\n"
                   "end, stops the daemons and kills what is left of the jobs.\n"
                   "--keep-jobs stops the daemons only: jobs keep running, as on a real node.\n");
            return 0;
        default:
            return cmd_fail("cluster down: bad option '%s' (try --help)", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cmd_fail("cluster down: unexpected argument '%s'", argv[optind]);
    char buf[PATH_MAX];
    dir = dir_of_conf(dir, buf, sizeof(buf));
    if (!dir)
        return cmd_fail("cluster down: give --dir DIR or set DUCTILE_CONF");
    char path[PATH_MAX + 64], conf[PATH_MAX + 32];
    snprintf(conf, sizeof(conf), "%s/ductile.conf", dir);
    config_t cfg = {0};
    char err[1024];
    if (config_load(conf, &cfg, err, sizeof(err)) < 0) /* its nodes and sockets are in it */
        return cmd_fail("%s\ncluster down needs the file to find the cluster's daemons and "
                        "jobs: correct it and run cluster down again (nothing was stopped)", err);
    int left = keep ? 0 : cancel_jobs(&cfg, wait);
    for (int i = 0; i < cfg.nnodes; i++) {
        snprintf(path, sizeof(path), "%s/noded-%s.pid", dir, cfg.nodes[i]);
        stop_pid(path, 10);
    }
    snprintf(path, sizeof(path), "%s/ctld.pid", dir);
    stop_pid(path, 10);
    if (keep) {
        printf("Jobs left running (--keep-jobs)\n");
    } else {
        int killed = 0;
        char cg[PATH_MAX];
        if (cluster_cgroup(&cfg, cg, sizeof(cg)) == 0)
            killed += kill_cgroup_tree(cg, cu_mono() + 5);
        killed += kill_by_environment(&cfg);
        if (left || killed)
            printf("Killed %d leftover process%s (%d job%s had not ended after %g s)\n", killed,
                   killed == 1 ? "" : "es", left, left == 1 ? "" : "s", wait);
    }
    config_free(&cfg);
    printf("Cluster down: %s\n", dir);
    return 0;
}

/* One line of the controller's timings (stats.c): nothing before the first. */
static void print_timings(const char *what, json_t *t)
{
    json_int_t count = json_integer_value(json_object_get(t, "count"));
    if (count <= 0)
        return;
    double f[4];
    const char *keys[] = {"last_ms", "median_ms", "p99_ms", "max_ms"};
    for (int i = 0; i < 4; i++)
        f[i] = json_number_value(json_object_get(t, keys[i]));
    printf("%s: %lld, last %.3f ms, median %.3f ms, 99th percentile %.3f ms (of the last %lld),"
           " longest %.3f ms\n", what, (long long)count, f[0], f[1], f[2],
           (long long)json_integer_value(json_object_get(t, "kept")), f[3]);
}

static int cluster_status(int argc, char **argv)
{
    const char *conf = NULL;
    bool as_json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--conf") && i + 1 < argc)
            conf = argv[++i];
        else if (!strcmp(argv[i], "--json"))
            as_json = true;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: ductile cluster status [--json] [--conf FILE]\n"
                   "  the cluster's nodes and jobs counted, the scheduling passes' and the\n"
                   "  commits' times, and the controller's loop (its longest turn)\n");
            return 0;
        } else
            return cmd_fail("cluster status: unexpected argument '%s' (usage: ductile cluster "
                            "status [--json] [--conf FILE])", argv[i]);
    }
    config_t cfg = {0};
    if (cu_load_conf(conf, &cfg))
        return 1;
    json_t *rep = cu_call(&cfg, json_pack("{s:s}", "type", "status"));
    config_free(&cfg);
    if (!rep)
        return 1;
    if (as_json) {
        json_object_del(rep, "ok");
        cu_print_json(rep);
        json_decref(rep);
        return 0;
    }
    printf("cluster %s: %lld of %lld nodes up, %lld jobs (%lld pending), policy %s\n",
           cu_str(rep, "cluster"), (long long)json_integer_value(json_object_get(rep, "nodes_up")),
           (long long)json_integer_value(json_object_get(rep, "nodes")),
           (long long)json_integer_value(json_object_get(rep, "jobs")),
           (long long)json_integer_value(json_object_get(rep, "pending")), cu_str(rep, "policy"));
    const json_t *sus = json_object_get(rep, "suspect_s");
    if (sus) /* docs/reliability.md, "Cut off, or the controller?" */
        printf("most nodes fell silent at once: the controller suspects its own network "
               "(for %.0f s now) and calls none of them down (`ductile drain NODES --down` if "
               "they failed)\n", json_number_value(sus));
    print_timings("scheduling passes", json_object_get(rep, "passes"));
    print_timings("commits", json_object_get(rep, "commits"));
    const json_t *l = json_object_get(rep, "loop");
    if (l) /* a controller before this one says nothing of its loop */
        printf("loop: longest turn %.3f ms, %lld of %lld turns over %.0f ms; longest piece of "
               "work %.3f ms (%s)\n", json_real_value(json_object_get(l, "longest_turn_ms")),
               (long long)json_integer_value(json_object_get(l, "slow_turns")),
               (long long)json_integer_value(json_object_get(l, "turns")),
               json_real_value(json_object_get(l, "slow_ms")),
               json_real_value(json_object_get(l, "longest_work_ms")),
               *cu_str(l, "longest_work") ? cu_str(l, "longest_work") : "none");
    json_decref(rep);
    return 0;
}

/* ductile cluster backup FILE: a copy of the controller's database, made while it runs
 * (docs/operations.md) */
static int cluster_backup(int argc, char **argv)
{
    const char *conf = NULL, *file = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--conf") && i + 1 < argc)
            conf = argv[++i];
        else if (argv[i][0] != '-' && !file)
            file = argv[i];
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: ductile cluster backup FILE [--conf FILE]\n"
                   "  a copy of the controller's database in FILE, a new file on the\n"
                   "  controller's host, made while it runs (operators; docs/operations.md)\n");
            return 0;
        } else
            return cmd_fail("cluster backup: unexpected argument '%s' (usage: ductile cluster "
                            "backup FILE [--conf FILE])", argv[i]);
    }
    if (!file)
        return cmd_fail("usage: ductile cluster backup FILE [--conf FILE] (FILE: a new file on "
                        "the controller's host, written by the controller)");
    char abs[8200];
    if (file[0] != '/') { /* as the user means it: from here */
        char cwd[4096];
        if (!getcwd(cwd, sizeof(cwd)) || strlen(file) > 4000)
            return cmd_fail("cluster backup: %s: give an absolute path", file);
        snprintf(abs, sizeof(abs), "%s/%s", cwd, file);
        file = abs;
    }
    config_t cfg = {0};
    if (cu_load_conf(conf, &cfg))
        return 1;
    json_t *rep = cu_call(&cfg, json_pack("{s:s,s:s}", "type", "backup", "file", file));
    config_free(&cfg);
    if (!rep)
        return 1;
    printf("backed up to %s: commit %lld, job ids up to %lld (%lld pages, %.0f ms)\n",
           cu_str(rep, "file"), (long long)json_integer_value(json_object_get(rep, "commit")),
           (long long)json_integer_value(json_object_get(rep, "max_id")),
           (long long)json_integer_value(json_object_get(rep, "pages")),
           json_real_value(json_object_get(rep, "ms")));
    json_decref(rep);
    return 0;
}

int cmd_cluster(int argc, char **argv)
{
    if (argc < 2)
        return cmd_fail("usage: ductile cluster up|down|status|backup [options]");
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        printf("usage: ductile cluster up|down|status|backup [options]\n"
               "  up      start a local cluster (ductile cluster up --help)\n"
               "  down    stop it (ductile cluster down --help)\n"
               "  status  what runs: nodes up, jobs, the policy ([--json] [--conf FILE])\n"
               "  backup  FILE: a copy of the controller's database, made while it runs (root\n"
               "          and Operators; a new file on the controller's host)\n");
        return 0;
    }
    if (!strcmp(argv[1], "up"))
        return cluster_up(argc - 1, argv + 1);
    if (!strcmp(argv[1], "down"))
        return cluster_down(argc - 1, argv + 1);
    if (!strcmp(argv[1], "status"))
        return cluster_status(argc - 1, argv + 1);
    if (!strcmp(argv[1], "backup"))
        return cluster_backup(argc - 1, argv + 1);
    return cmd_fail("cluster: unknown action '%s' (up, down, status, backup)", argv[1]);
}
