/* libductile's MPI layer: one communicator over groups of processes, one group per
 * node, that grows and shrinks by whole groups.
 *
 * Each group is its own mpirun (started by `ductile mpirun`). Groups join through
 * MPI_Comm_accept / MPI_Comm_connect on a port the leader (rank 0, on the job's first
 * node) opens at start-up; every join merges one group into the communicator, and the
 * groups already in take part in the following accepts. A group leaves by freeing its
 * communicators and finalizing: it is connected to nobody once they are freed. The
 * leader answers the controller's offers through the process layer (dt_core.c). */
#define _GNU_SOURCE
#include <mpi.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dt_internal.h"

extern char **environ;

#define NEW_KEY (1 << 30) /* split keys of joining processes: after everyone there */
#define TAG 4711

static MPI_Comm comm = MPI_COMM_NULL;        /* dt_comm() */
static int status_;                          /* DT_STATUS_NEW or DT_STATUS_JOINING */
static int joined = 1;                       /* 0 for a joining process until it has */
static int malleable;                        /* offers can come (same on every rank) */
static int leader;                           /* rank 0: answers offers, owns the port */
static char dir[PATH_MAX];                   /* DT_MPI_DIR: port, markers */
static char node[DT_NAME_MAX];               /* this process's node */
static int group, ppn;
static char exe[PATH_MAX], **app_args;       /* how to start another group */
static int napp_args;
static pid_t kids[DT_MAX_NODES];             /* leader: `ductile mpirun --join` children */
static char kid_node[DT_MAX_NODES][DT_NAME_MAX]; /* ... and the node of each */
static char kid_left[DT_MAX_NODES];          /* ... 1: its group left (a shrink): it ends */
static int nkids;
static double mtct_period = 1.0, last_report; /* leader: MTCT reports */
static int poll_offers = 1;                  /* leader: look at offers (inhibitor) */
static pid_t started[64];                    /* ... of the expansion under way */
static int nstarted;
static int my_rank = -1;                     /* in dt_comm(), for messages */

/* The adaptation in progress (op 0: none). */
static struct {
    int op, n;
    char nodes[64][DT_NAME_MAX];
    dt_offer_t offer;
    int role, window;
    int built;          /* a joining process: its window was made in dt_init_adapt */
    int before, after;  /* nodes, as the offer says (0: unknown, a joining process) */
    double timeout;     /* seconds the window may last: the offer's */
    MPI_Comm inter, next;
    int old_size, next_rank, next_size;
    int *new_of_old; /* shrink: new rank of each old rank, -1 leaving */
} ad;

static int mpi_fail(const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "libductile: %s: %s\n", what, msg);
    return -EIO;
}

#define MPI_TRY(what, call)                                                                \
    do {                                                                                   \
        int rc_ = (call);                                                                  \
        if (rc_ != MPI_SUCCESS)                                                            \
            return mpi_fail(what, rc_);                                                    \
    } while (0)

double dt_mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void dt_nap(void)
{
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
}

static int env_int(const char *name, int dflt)
{
    const char *s = getenv(name);
    return s && *s ? atoi(s) : dflt;
}

/* ---- The watchdog over the adaptation window.
 *
 * Inside the window every process waits in collectives with processes that may die (a
 * joining group killed after its MPI_Init) or never come, and with one MPI thread the
 * main thread cannot be woken there. So a thread watches each window: the leader's the
 * groups it started (`ductile mpirun --join` children: one that ends inside the window
 * is a group gone) and every process's a deadline, the offer's timeout (the controller
 * applies the same ResizeTimeout once the leader accepted). When either fires it says
 * what failed, on which node and in which phase; the leader reports the failed resize
 * to the controller (which ends the job), and the process stops (its group's mpirun
 * then ends the rest of its group). Non-leaders give the leader WD_GRACE seconds more,
 * so that the leader, which knows most, speaks first. The thread makes no MPI call. */
#define WD_GRACE 3.0

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    int armed, running;
    int watching; /* leader, between windows: still watching the groups it started */
    double deadline, seconds;
    char phase[200];
} wd = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* What the main thread is doing inside the window, for the watchdog's message. */
static void set_phase(const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&wd.mu);
    va_start(ap, fmt);
    vsnprintf(wd.phase, sizeof(wd.phase), fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&wd.mu);
}

/* The window in words: "expand 1 -> 2 nodes (joining: n2)". */
static void describe(char *buf, size_t len)
{
    char nodes[256] = "";
    size_t used = 0;
    for (int i = 0; i < ad.n && used + DT_NAME_MAX + 2 < sizeof(nodes); i++)
        used += (size_t)snprintf(nodes + used, sizeof(nodes) - used, "%s%s", i ? "," : "",
                                 ad.nodes[i]);
    const char *op = ad.op == DT_SHRINK ? "shrink" : "expand";
    if (ad.role == DT_ROLE_JOINING && !ad.n)
        snprintf(buf, len, "%s (this process joins on %s)", op, node);
    else if (ad.before > 0)
        snprintf(buf, len, "%s %d -> %d nodes (%s: %s)", op, ad.before, ad.after,
                 ad.op == DT_SHRINK ? "leaving" : "joining", nodes);
    else
        snprintf(buf, len, "%s (%s: %s)", op, ad.op == DT_SHRINK ? "leaving" : "joining", nodes);
}

/* With wd.mu held: report and stop this process. */
static void wd_fire(const char *cause)
{
    char what[400], why[200];
    char who[32] = "joining";
    describe(what, sizeof(what));
    if (my_rank >= 0)
        snprintf(who, sizeof(who), "rank %d", my_rank);
    fprintf(stderr, "libductile: %s %s: the %s failed: %s, in phase '%s'; stopping this process\n",
            node, who, what, cause, wd.phase);
    if (leader && ad.offer.id > 0) {
        /* the controller kills the job at once: give the line above a moment to pass
         * through this group's mpirun to the job's output first */
        struct timespec ts = {0, 300000000};
        nanosleep(&ts, NULL);
        snprintf(why, sizeof(why), "%.100s (phase: %.80s)", cause, wd.phase);
        if (dt_resize_failed(&ad.offer, why) < 0)
            fprintf(stderr, "libductile: could not report the failed resize: %s\n", dt_strerror());
    }
    for (int i = 0; i < nkids; i++) /* the groups this process started */
        kill(kids[i], SIGTERM);
    _exit(1);
}

static void status_words(int st, char *buf, size_t len)
{
    if (WIFSIGNALED(st))
        snprintf(buf, len, "killed by signal %d", WTERMSIG(st));
    else
        snprintf(buf, len, "exit status %d", WEXITSTATUS(st));
}

/* With wd.mu held: kids[i] is reaped. */
static void forget_kid(int i)
{
    kids[i] = kids[--nkids];
    kid_left[i] = kid_left[nkids];
    memcpy(kid_node[i], kid_node[nkids], DT_NAME_MAX);
}

/* With wd.mu held (leader): a group that ended inside the window, or one that failed
 * (killed, or a non-zero status) between windows: the other processes would wait for
 * it in their next collective for ever, so the application stops with the reason. */
static void wd_check_kids(void)
{
    for (int i = 0; i < nkids; i++) {
        int st;
        if (waitpid(kids[i], &st, WNOHANG) != kids[i])
            continue;
        bool failed = WIFSIGNALED(st) || WEXITSTATUS(st) != 0;
        if (kid_left[i] || (!wd.armed && !failed)) { /* left with a shrink, or ended well */
            forget_kid(i--);
            continue;
        }
        char how[64], cause[200];
        status_words(st, how, sizeof(how));
        snprintf(cause, sizeof(cause), "the group on %s ended (%s)", kid_node[i], how);
        if (wd.armed)
            wd_fire(cause);
        fprintf(stderr, "libductile: %s rank %d: %s, outside any resize: the application "
                "cannot go on without it; stopping this process\n", node, my_rank, cause);
        for (int k = 0; k < nkids; k++)
            if (k != i)
                kill(kids[k], SIGTERM);
        _exit(1);
    }
}

static void *wd_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&wd.mu);
    while (wd.armed || wd.watching) {
        if (leader)
            wd_check_kids();
        if (wd.armed && dt_mono() > wd.deadline) {
            char cause[200];
            snprintf(cause, sizeof(cause),
                     "the window did not close in time (%.0f s after it opened; the controller "
                     "allows ResizeTimeout)", wd.seconds);
            wd_fire(cause);
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&wd.cv, &wd.mu, &ts);
    }
    pthread_mutex_unlock(&wd.mu);
    return NULL;
}

/* The window opens: the watchdog fires after `seconds`. */
static void wd_arm(double seconds)
{
    pthread_mutex_lock(&wd.mu);
    wd.seconds = seconds;
    wd.deadline = dt_mono() + seconds;
    if (!wd.armed && wd.running) {
        wd.armed = 1; /* the leader's thread, watching its groups since the last window */
    } else if (!wd.armed) {
        wd.armed = 1;
        int rc = pthread_create(&wd.thread, NULL, wd_main, NULL);
        wd.running = rc == 0;
        if (rc)
            fprintf(stderr, "libductile: no watchdog over this adaptation: %s\n", strerror(rc));
    }
    pthread_mutex_unlock(&wd.mu);
}

/* The window closes. The leader's thread goes on watching the groups it started
 * (until dt_finalize: final), the others' stops. */
static void wd_stop(bool final)
{
    pthread_mutex_lock(&wd.mu);
    int running = wd.running;
    wd.armed = 0;
    wd.watching = !final && leader && nkids > 0 && running;
    if (wd.watching) {
        pthread_mutex_unlock(&wd.mu);
        return;
    }
    wd.running = 0;
    pthread_cond_signal(&wd.cv);
    pthread_mutex_unlock(&wd.mu);
    if (running)
        pthread_join(wd.thread, NULL);
}

static void wd_disarm(void) { wd_stop(false); }

/* Groups join one at a time, each through a port of its own: the k-th group of a join
 * `tag` connects to the port the leader publishes in DIR/port.<tag>.<k>. (Open MPI 4.1
 * mixes up several groups connecting to one port at once.) */
static void port_path(char *buf, size_t len, const char *tag, int k)
{
    snprintf(buf, len, "%s/port.%s.%d", dir, tag, k);
}

/* The members of cur (rank 0: the leader) take in groups first..count-1 of `tag`, in
 * order; each group that arrives takes part in the following accepts. cur is the
 * caller's; the result is a new communicator (or cur itself when nothing joins). */
static int take_in(MPI_Comm cur, const char *tag, int first, int count, MPI_Comm *out)
{
    MPI_Comm c = cur;
    for (int k = first; k < count; k++) {
        char port[MPI_MAX_PORT_NAME] = "", path[PATH_MAX + 64], tmp[PATH_MAX + 80];
        if (leader) {
            MPI_TRY("MPI_Open_port", MPI_Open_port(MPI_INFO_NULL, port));
            port_path(path, sizeof(path), tag, k);
            snprintf(tmp, sizeof(tmp), "%s.tmp", path);
            FILE *f = fopen(tmp, "w");
            if (!f || fputs(port, f) < 0 || fclose(f) != 0 || rename(tmp, path) < 0) {
                fprintf(stderr, "libductile: cannot write %s: %s\n", path, strerror(errno));
                MPI_Abort(c, 1);
            }
        }
        MPI_Comm inter, merged;
        if (strcmp(tag, "init") && k < ad.n)
            set_phase("MPI_Comm_accept of the group on %s", ad.nodes[k]);
        else
            set_phase("MPI_Comm_accept of group %d", k);
        MPI_TRY("accept", MPI_Comm_accept(port, MPI_INFO_NULL, 0, c, &inter));
        if (leader) {
            MPI_Close_port(port);
            unlink(path);
        }
        set_phase("MPI_Intercomm_merge with group %d", k);
        MPI_TRY("merge", MPI_Intercomm_merge(inter, 0, &merged));
        MPI_Comm_free(&inter);
        MPI_Bcast(&count, 1, MPI_INT, 0, merged);
        if (c != cur)
            MPI_Comm_free(&c);
        c = merged;
    }
    *out = c;
    return 0;
}

/* A new group (all of its MPI_COMM_WORLD), the k-th of join `tag`, connects to the
 * application, then helps to take in the groups after it. */
static int connect_group(const char *tag, int k, MPI_Comm *out)
{
    char port[MPI_MAX_PORT_NAME] = "", path[PATH_MAX + 64];
    port_path(path, sizeof(path), tag, k);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        FILE *f = NULL;
        for (double end = dt_mono() + 120; !(f = fopen(path, "r")) && dt_mono() < end;)
            dt_nap();
        if (!f || !fgets(port, sizeof(port), f)) {
            fprintf(stderr, "libductile: no port to join at %s\n", path);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        fclose(f);
    }
    MPI_Comm inter, merged;
    set_phase("MPI_Comm_connect to the application");
    MPI_TRY("connect", MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
    set_phase("MPI_Intercomm_merge with the application");
    MPI_TRY("merge", MPI_Intercomm_merge(inter, 1, &merged));
    MPI_Comm_free(&inter);
    int count;
    MPI_Bcast(&count, 1, MPI_INT, 0, merged);
    int rc = take_in(merged, tag, k + 1, count, out);
    if (*out != merged)
        MPI_Comm_free(&merged);
    return rc;
}

static void save_args(int argc, char **argv)
{
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = '\0';
    napp_args = argc > 1 ? argc - 1 : 0;
    app_args = calloc((size_t)napp_args + 1, sizeof(char *));
    for (int i = 0; app_args && i < napp_args; i++)
        app_args[i] = strdup(argv[i + 1]);
}

/* A group's own Open MPI job family (see exec_unique in src/cmd/cmd_mpirun.c): the
 * launcher claimed the one it predicted for this group's mpirun; when Open MPI chose
 * another (a version that names its jobs otherwise), claim that one here, and when it
 * is taken, stop with a clear error rather than hang in the first accept. Rank 0. */
static int check_jobfam(void)
{
    const char *jobid = getenv("OMPI_MCA_ess_base_jobid"), *claimed = getenv("DT_MPI_JOBFAM");
    if (!jobid)
        return 0;
    unsigned long fam = strtoul(jobid, NULL, 10) >> 16;
    if (claimed && strtoul(claimed, NULL, 10) == fam)
        return 0;
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/jobfam.%lu", dir, fam);
    int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
    if (fd >= 0 || errno != EEXIST) { /* claimed, or no way to tell */
        if (fd >= 0)
            close(fd);
        return 0;
    }
    fprintf(stderr,
            "libductile: this group's Open MPI job family %lu is another group's too "
            "(predicted %s): it cannot connect; start it again\n",
            fam, claimed ? claimed : "none");
    return -EEXIST;
}

/* A joining process: the seconds its window may last (the leader's word). */
static double window_seconds(const char *tag)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/window.%s", dir, tag);
    FILE *f = fopen(path, "r");
    double t = 0;
    if (f) {
        if (fscanf(f, "%lf", &t) != 1)
            t = 0;
        fclose(f);
    }
    return t > 0 ? t : 60;
}

static int begin_expand(void);

int dt_init_adapt(int *argc, char ***argv, int *status)
{
    int provided;
    /* one thread calls MPI; the watchdog's (below) never does */
    MPI_TRY("MPI_Init", MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided));
    *status = status_ = DT_STATUS_NEW;
    dt_debug_init();
    const char *d = getenv("DT_MPI_DIR");
    if (!d) {
        /* a plain MPI run: the world, for ever */
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        dt_debug_reset(comm);
        return 0;
    }
    snprintf(dir, sizeof(dir), "%s", d);
    snprintf(node, sizeof(node), "%s", getenv("DUCTILE_NODENAME") ? getenv("DUCTILE_NODENAME") : "");
    ppn = env_int("DT_MPI_PPN", 1);
    group = env_int("DT_MPI_GROUP", env_int("DUCTILE_PROCID", 0));
    save_args(*argc, *argv);
    int grank, fam_ok = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &grank);
    if (grank == 0)
        fam_ok = check_jobfam() == 0;
    MPI_Bcast(&fam_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!fam_ok)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (getenv("DT_MPI_JOIN")) {
        /* A joining process joins here, so that dt_comm() is the communicator after
         * the expansion (its rank and size final) when this returns; the window stays
         * open: dt_probe_adapt says JOINING and dt_adapt_begin gives what was built. */
        *status = status_ = DT_STATUS_JOINING;
        joined = 0;
        malleable = 1;
        ad.op = DT_EXPAND;
        ad.role = DT_ROLE_JOINING;
        const char *tag = getenv("DT_MPI_TAG") ? getenv("DT_MPI_TAG") : "";
        set_phase("waiting for the leader (after MPI_Init)");
        wd_arm(window_seconds(tag) + 2 * WD_GRACE);
        if (grank == 0) { /* tell the leader this group is up */
            char path[PATH_MAX + 128];
            snprintf(path, sizeof(path), "%s/ready.%s", dir, node);
            int fd = open(path, O_CREAT | O_WRONLY, 0600);
            if (fd >= 0)
                close(fd);
        }
        int rc = begin_expand();
        if (rc < 0)
            return rc;
        ad.built = 1;
        comm = ad.next;
        my_rank = ad.next_rank;
        set_phase("the application's code before dt_adapt_begin (joining)");
        return 0;
    }
    MPI_Comm merged;
    int rc;
    leader = group == 0 && grank == 0;
    if (group == 0)
        rc = take_in(MPI_COMM_WORLD, "init", 1, env_int("DT_MPI_NGROUPS", 1), &merged);
    else
        rc = connect_group("init", group, &merged);
    if (rc < 0)
        return rc;
    MPI_TRY("split", MPI_Comm_split(merged, 0, group * 65536 + grank, &comm));
    if (merged != MPI_COMM_WORLD)
        MPI_Comm_free(&merged);
    if (leader) {
        malleable = dt_attach(1) == 0;
        if (!malleable)
            fprintf(stderr, "libductile: this run will not resize: %s\n", dt_strerror());
    }
    MPI_Bcast(&malleable, 1, MPI_INT, 0, comm);
    MPI_Comm_rank(comm, &my_rank);
    dt_debug_reset(comm);
    const char *period = getenv("DT_MTCT_PERIOD");
    if (period && atof(period) > 0)
        mtct_period = atof(period);
    last_report = dt_mono();
    double ignored;
    dt_pmpi_window(&ignored);
    return 0;
}

MPI_Comm dt_comm(void) { return comm; }

static void reap(int block)
{
    pthread_mutex_lock(&wd.mu);
    if (!block && wd.running) { /* the watchdog reaps, and tells a failed group */
        pthread_mutex_unlock(&wd.mu);
        return;
    }
    for (int i = 0; i < nkids;) {
        if (waitpid(kids[i], NULL, block ? 0 : WNOHANG) == kids[i])
            forget_kid(i);
        else
            i++;
    }
    pthread_mutex_unlock(&wd.mu);
}

/* Every process's MPI share of its recent wall time; the leader reports the mean. */
static void report_mtct(void)
{
    double mpi, wall = dt_pmpi_window(&mpi), ratio = wall > 0 ? mpi / wall : 0, sum = 0;
    int n;
    MPI_Comm_size(comm, &n);
    PMPI_Reduce(&ratio, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    if (leader && dt_report_mtct(sum / n) < 0)
        fprintf(stderr, "libductile: MTCT report: %s\n", dt_strerror());
}

int dt_mpi_joining(void) { return !joined; }

int dt_probe_adapt(int *pending, int *role) { return dt_mpi_probe(pending, role, "dt_probe_adapt"); }

int dt_mpi_probe(int *pending, int *role, const char *api)
{
    *pending = 0;
    *role = DT_ROLE_STAYING;
    if (!joined) {
        *pending = 1;
        *role = ad.role = DT_ROLE_JOINING;
        return 0;
    }
    dt_debug_sync(api, node);
    if (!malleable || ad.op)
        return 0;
    /* op, nodes, MTCT report, the window's seconds (ms), nodes before, after */
    int msg[6] = {0, 0, 0, 0, 0, 0};
    double got = dt_mono();
    if (leader) {
        reap(0);
        if (dt_mono() - last_report >= mtct_period) {
            msg[2] = 1;
            last_report = dt_mono();
        }
        dt_offer_t *o = &ad.offer;
        if (poll_offers && dt_poll_offer(o) == 1 && (o->op == DT_EXPAND || o->op == DT_SHRINK)) {
            if (o->nnodes > 64 || o->nnodes < 1) {
                dt_offer_decline(o);
            } else if (!dt_dmr_offer_ok(o)) {
                dt_offer_decline(o);
                dt_dmr_declined_outside();
            } else {
                msg[0] = o->op;
                msg[1] = o->nnodes;
                msg[3] = (int)((o->timeout > 1 && o->timeout < 1e6 ? o->timeout : 60) * 1000);
                msg[4] = o->before;
                msg[5] = o->after;
                for (int i = 0; i < o->nnodes; i++)
                    snprintf(ad.nodes[i], DT_NAME_MAX, "%s", o->nodes[i]);
            }
        }
    }
    MPI_TRY("probe", MPI_Bcast(msg, 6, MPI_INT, 0, comm));
    if (msg[2])
        report_mtct();
    if (!msg[0])
        return 0;
    ad.op = msg[0];
    ad.n = msg[1];
    ad.timeout = msg[3] / 1000.0;
    ad.before = msg[4];
    ad.after = msg[5];
    ad.role = DT_ROLE_STAYING;
    MPI_Bcast(ad.nodes, ad.n * DT_NAME_MAX, MPI_CHAR, 0, comm);
    for (int i = 0; ad.op == DT_SHRINK && i < ad.n; i++)
        if (!strcmp(ad.nodes[i], node))
            ad.role = DT_ROLE_LEAVING;
    MPI_Comm_rank(comm, &my_rank);
    /* the window is open from here: the leader's deadline runs from the offer's arrival,
     * a second before the controller's (ResizeTimeout from the accept, which comes
     * later), so that the leader, which can say where it is stuck, speaks first */
    set_phase("the application's code between %s and dt_adapt_begin", api);
    double left = ad.timeout - (dt_mono() - got);
    wd_arm((left > 2 ? left - 1 : left) + (leader ? 0 : WD_GRACE));
    *pending = 1;
    *role = ad.role;
    return 0;
}

/* The leader starts one group on each joining node. */
static int start_groups(void)
{
    const char *ductile = getenv("DT_MPI_DUCTILE");
    for (int i = 0; i < ad.n; i++) {
        char ready[PATH_MAX + 128];
        snprintf(ready, sizeof(ready), "%s/ready.%s", dir, ad.nodes[i]);
        unlink(ready);
    }
    nstarted = 0;
    char tag[32];
    snprintf(tag, sizeof(tag), "%ld", ad.offer.id);
    /* the joining processes' watchdogs: as long as this window may last */
    char wpath[PATH_MAX + 64];
    snprintf(wpath, sizeof(wpath), "%s/window.%s", dir, tag);
    FILE *wf = fopen(wpath, "w");
    if (wf) {
        double left;
        pthread_mutex_lock(&wd.mu);
        left = wd.deadline - dt_mono();
        pthread_mutex_unlock(&wd.mu);
        fprintf(wf, "%.3f\n", left > 1 ? left : 1);
        fclose(wf);
    }
    for (int i = 0; i < ad.n; i++) {
        char gs[16];
        snprintf(gs, sizeof(gs), "%d", i);
        int na = 0;
        char **argv = calloc((size_t)napp_args + 10, sizeof(char *));
        if (!argv)
            return -ENOMEM;
        argv[na++] = (char *)(ductile ? ductile : "ductile");
        argv[na++] = "mpirun";
        argv[na++] = "--join";
        argv[na++] = gs;
        argv[na++] = "--node";
        argv[na++] = ad.nodes[i];
        argv[na++] = "--tag";
        argv[na++] = tag;
        argv[na++] = exe;
        for (int k = 0; k < napp_args; k++)
            argv[na++] = app_args[k];
        pid_t pid;
        int rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
        free(argv);
        if (rc != 0) {
            fprintf(stderr, "libductile: cannot start a group on %s: %s\n", ad.nodes[i], strerror(rc));
            return -rc;
        }
        started[nstarted++] = pid;
    }
    /* every group up (its MPI_Init done), or give up before anyone waits in accept,
     * and before the watchdog's deadline: a group too slow to start declines the
     * offer (-EAGAIN), the application goes on */
    pthread_mutex_lock(&wd.mu);
    double end = wd.deadline - 1.0;
    pthread_mutex_unlock(&wd.mu);
    for (;;) {
        int up = 0;
        for (int i = 0; i < ad.n; i++) {
            char ready[PATH_MAX + 128];
            snprintf(ready, sizeof(ready), "%s/ready.%s", dir, ad.nodes[i]);
            up += access(ready, F_OK) == 0;
        }
        if (up == ad.n)
            break;
        for (int i = 0; i < nstarted; i++)
            if (waitpid(started[i], NULL, WNOHANG) == started[i]) {
                fprintf(stderr, "libductile: the group for %s ended before joining\n", ad.nodes[i]);
                started[i] = 0;
                return -ECHILD;
            }
        if (dt_mono() > end) {
            fprintf(stderr, "libductile: new groups did not start in time\n");
            return -ETIMEDOUT;
        }
        dt_nap();
    }
    pthread_mutex_lock(&wd.mu); /* the watchdog watches them from here */
    for (int i = 0; i < nstarted; i++)
        if (nkids < DT_MAX_NODES) {
            memcpy(kid_node[nkids], ad.nodes[i], DT_NAME_MAX);
            kid_left[nkids] = 0;
            kids[nkids++] = started[i];
        }
    pthread_mutex_unlock(&wd.mu);
    nstarted = 0;
    return 0;
}

static void end_adaptation(void);

/* The leader opens the window: from here the controller gives it ResizeTimeout to
 * commit, and ends the job when it does not. */
static void accept_offer(void)
{
    if (dt_offer_accept(&ad.offer) < 0)
        fprintf(stderr, "libductile: accept: %s\n", dt_strerror());
}

/* The expansion failed: stop what started and refuse the offer. */
static void abandon_groups(void)
{
    for (int i = 0; i < nstarted; i++)
        if (started[i] > 0) {
            kill(started[i], SIGTERM);
            waitpid(started[i], NULL, 0);
        }
    nstarted = 0;
    dt_offer_decline(&ad.offer);
}

/* Expand: everyone ends in one communicator, those who were there first. */
static int begin_expand(void)
{
    MPI_Comm merged;
    int key, rc;
    if (ad.role == DT_ROLE_JOINING) {
        int grank;
        MPI_Comm_rank(MPI_COMM_WORLD, &grank);
        rc = connect_group(getenv("DT_MPI_TAG") ? getenv("DT_MPI_TAG") : "", group, &merged);
        key = NEW_KEY + group * 65536 + grank;
    } else {
        int ok = 1;
        set_phase(leader ? "starting the new groups" : "waiting for the leader to start the new groups");
        if (leader && start_groups() < 0) {
            abandon_groups();
            ok = 0;
        }
        if (ok && leader)
            accept_offer();
        MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
        if (!ok) {
            end_adaptation();
            return -EAGAIN;
        }
        MPI_Comm_rank(comm, &key);
        MPI_Comm_size(comm, &ad.old_size);
        char tag[32];
        snprintf(tag, sizeof(tag), "%ld", ad.offer.id);
        MPI_Bcast(tag, sizeof(tag), MPI_CHAR, 0, comm);
        rc = take_in(comm, tag, 0, ad.n, &merged);
    }
    if (rc < 0)
        return rc;
    set_phase("MPI_Comm_split of the new communicator");
    MPI_TRY("split", MPI_Comm_split(merged, 0, key, &ad.next));
    if (merged != comm)
        MPI_Comm_free(&merged);
    set_phase("building the intercommunicator");
    MPI_Bcast(&ad.old_size, 1, MPI_INT, 0, ad.next);
    ad.op = DT_EXPAND;
    int is_new = ad.role == DT_ROLE_JOINING, r;
    MPI_Comm_rank(ad.next, &r);
    MPI_Comm local;
    MPI_Comm_split(ad.next, is_new, r, &local);
    MPI_TRY("intercomm", MPI_Intercomm_create(local, 0, ad.next, is_new ? 0 : ad.old_size, TAG,
                                              &ad.inter));
    MPI_Comm_free(&local);
    MPI_Comm_rank(ad.next, &ad.next_rank);
    MPI_Comm_size(ad.next, &ad.next_size);
    return 0;
}

/* Shrink: the stayers' communicator, and where each old rank goes. */
static int begin_shrink(void)
{
    int leaving = ad.role == DT_ROLE_LEAVING, r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    ad.old_size = n;
    int *flags = calloc((size_t)n, sizeof(int));
    ad.new_of_old = calloc((size_t)n, sizeof(int));
    if (!flags || !ad.new_of_old) {
        free(flags);
        return -ENOMEM;
    }
    if (leader)
        accept_offer();
    set_phase("MPI_Allgather of the roles");
    MPI_Allgather(&leaving, 1, MPI_INT, flags, 1, MPI_INT, comm);
    int next = 0, other = -1;
    for (int i = 0; i < n; i++) {
        ad.new_of_old[i] = flags[i] ? -1 : next++;
        if (other < 0 && flags[i] != leaving)
            other = i;
    }
    free(flags);
    set_phase("MPI_Comm_split of the staying processes");
    MPI_TRY("split", MPI_Comm_split(comm, leaving ? MPI_UNDEFINED : 0, r, &ad.next));
    set_phase("building the intercommunicator");
    ad.next_rank = ad.new_of_old[r];
    ad.next_size = next;
    MPI_Comm local;
    MPI_Comm_split(comm, leaving, r, &local);
    MPI_TRY("intercomm", MPI_Intercomm_create(local, 0, comm, other, TAG, &ad.inter));
    MPI_Comm_free(&local);
    return 0;
}

int dt_adapt_begin(MPI_Comm *intercomm, MPI_Comm *new_comm)
{
    if (!ad.op && ad.role != DT_ROLE_JOINING) {
        fprintf(stderr, "libductile: dt_adapt_begin without a pending adaptation\n");
        return -EINVAL;
    }
    int rc = 0;
    if (!ad.built) /* (a joining process's was built in dt_init_adapt) */
        rc = ad.role == DT_ROLE_JOINING || ad.op == DT_EXPAND ? begin_expand() : begin_shrink();
    if (rc == -EAGAIN)
        return rc;
    if (rc < 0) {
        /* the window is broken: the watchdog stays armed (a process that carries on
         * and waits for the others is stopped at the deadline) */
        if (leader && ad.offer.id > 0) {
            char why[200];
            pthread_mutex_lock(&wd.mu);
            snprintf(why, sizeof(why), "an MPI call failed (phase: %.150s)", wd.phase);
            pthread_mutex_unlock(&wd.mu);
            dt_resize_failed(&ad.offer, why);
        }
        return rc;
    }
    set_phase("the application's code inside the window (moving data)");
    ad.window = 1;
    *intercomm = ad.inter;
    *new_comm = ad.next;
    return 0;
}

void dt_block_range(long total, int rank, int size, long *lo, long *hi)
{
    long base = total / size, extra = total % size;
    *lo = rank * base + (rank < extra ? rank : extra);
    *hi = *lo + base + (rank < extra ? 1 : 0);
}

int dt_next_rank(void)
{
    if (ad.window)
        return ad.next_rank;
    int r = -1;
    if (comm != MPI_COMM_NULL)
        MPI_Comm_rank(comm, &r);
    return r;
}

int dt_next_size(void)
{
    if (ad.window)
        return ad.next_size;
    int n = 0;
    if (comm != MPI_COMM_NULL)
        MPI_Comm_size(comm, &n);
    return n;
}

void dt_mpi_set_poll(int on) { poll_offers = on; }

void dt_mpi_phase(const char *what) { set_phase("%s", what); }

int dt_mpi_leader_attached(void) { return leader && malleable; }

int dt_mpi_started(void) { return status_ != 0; }

void dt_mpi_decline_pending(void)
{
    if (leader && ad.offer.id > 0 && dt_offer_decline(&ad.offer) < 0)
        fprintf(stderr, "libductile: decline: %s\n", dt_strerror());
    end_adaptation();
}

int dt_mpi_window(dt_window_t *w)
{
    memset(w, 0, sizeof(*w));
    if (!ad.window)
        return -EINVAL;
    w->cover = ad.op == DT_EXPAND ? ad.next : comm;
    w->next = ad.next;
    w->role = ad.role;
    w->old_size = ad.old_size;
    w->new_size = ad.next_size;
    MPI_Comm_rank(w->cover, &w->cover_rank);
    MPI_Comm_size(w->cover, &w->cover_size);
    w->old_of = calloc((size_t)w->cover_size, sizeof(int));
    w->new_of = calloc((size_t)w->cover_size, sizeof(int));
    if (!w->old_of || !w->new_of) {
        dt_mpi_window_free(w);
        return -ENOMEM;
    }
    for (int p = 0; p < w->cover_size; p++) {
        /* an expand appends the new processes; a shrink takes some out */
        w->old_of[p] = ad.op == DT_EXPAND ? (p < ad.old_size ? p : -1) : p;
        w->new_of[p] = ad.op == DT_EXPAND ? p : ad.new_of_old[p];
    }
    return 0;
}

void dt_mpi_window_free(dt_window_t *w)
{
    free(w->old_of);
    free(w->new_of);
    w->old_of = w->new_of = NULL;
}

int dt_redistribute_block(const void *old_buf, void *new_buf, long total, int elem_size)
{
    set_phase("dt_redistribute_block (MPI_Alltoallv)");
    return dt_mpi_redistribute(old_buf, new_buf, total, elem_size);
}

int dt_mpi_redistribute(const void *old_buf, void *new_buf, long total, int elem_size)
{
    dt_window_t w;
    int ret = dt_mpi_window(&w);
    if (ret < 0)
        return ret;
    int n = w.cover_size, me = w.cover_rank;
    int *sc = calloc((size_t)n, sizeof(int)), *sd = calloc((size_t)n, sizeof(int));
    int *rc = calloc((size_t)n, sizeof(int)), *rd = calloc((size_t)n, sizeof(int));
    if (!sc || !sd || !rc || !rd) {
        ret = -ENOMEM;
        goto done;
    }
    /* my block before and after; then what overlaps each other process's */
    long olo = 0, ohi = 0, nlo = 0, nhi = 0;
    if (w.old_of[me] >= 0)
        dt_block_range(total, w.old_of[me], w.old_size, &olo, &ohi);
    if (w.new_of[me] >= 0)
        dt_block_range(total, w.new_of[me], w.new_size, &nlo, &nhi);
    int bad = 0;
    for (int p = 0; p < n; p++) {
        long lo, hi, a, b;
        if (w.old_of[me] >= 0 && w.new_of[p] >= 0) { /* what I send to p */
            dt_block_range(total, w.new_of[p], w.new_size, &lo, &hi);
            a = lo > olo ? lo : olo;
            b = hi < ohi ? hi : ohi;
            if (b > a) {
                bad |= (b - a) * elem_size > INT32_MAX || (a - olo) * elem_size > INT32_MAX;
                sc[p] = (int)((b - a) * elem_size);
                sd[p] = (int)((a - olo) * elem_size);
            }
        }
        if (w.new_of[me] >= 0 && w.old_of[p] >= 0) { /* what p sends me */
            dt_block_range(total, w.old_of[p], w.old_size, &lo, &hi);
            a = lo > nlo ? lo : nlo;
            b = hi < nhi ? hi : nhi;
            if (b > a) {
                bad |= (b - a) * elem_size > INT32_MAX || (a - nlo) * elem_size > INT32_MAX;
                rc[p] = (int)((b - a) * elem_size);
                rd[p] = (int)((a - nlo) * elem_size);
            }
        }
    }
    int any_bad;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_LOR, w.cover);
    if (any_bad) {
        fprintf(stderr, "libductile: dt_redistribute_block: a block exceeds 2 GiB\n");
        ret = -EOVERFLOW;
    } else {
        int e = MPI_Alltoallv(old_buf, sc, sd, MPI_BYTE, new_buf, rc, rd, MPI_BYTE, w.cover);
        if (e != MPI_SUCCESS)
            ret = mpi_fail("redistribute", e);
    }
done:
    free(sc), free(sd), free(rc), free(rd);
    dt_mpi_window_free(&w);
    return ret;
}

/* The leader: wait until the processes of the leaving nodes have finalized (they
 * leave a marker each), so that the node daemons find nothing left to kill. */
static void wait_leavers(void)
{
    for (double end = dt_mono() + 30; dt_mono() < end;) {
        int done = 0;
        for (int i = 0; i < ad.n; i++)
            for (int r = 0; r < ppn; r++) {
                char path[PATH_MAX + 128];
                snprintf(path, sizeof(path), "%s/left.%s.%d", dir, ad.nodes[i], r);
                done += access(path, F_OK) == 0;
            }
        if (done >= ad.n * ppn)
            return;
        dt_nap();
    }
    fprintf(stderr, "libductile: leaving processes did not finish within 30 s\n");
}

static void end_adaptation(void)
{
    wd_disarm();
    if (leader && ad.offer.id > 0) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof(path), "%s/window.%ld", dir, ad.offer.id);
        unlink(path);
    }
    free(ad.new_of_old);
    memset(&ad, 0, sizeof(ad));
    ad.inter = ad.next = MPI_COMM_NULL;
}

int dt_adapt_commit(void)
{
    if (!ad.window)
        return -EINVAL;
    MPI_Comm before = ad.op == DT_EXPAND ? ad.next : comm;
    set_phase("dt_adapt_commit (MPI_Barrier of the processes before and after)");
    MPI_Barrier(before);
    pthread_mutex_lock(&wd.mu); /* the leaving groups end from here */
    for (int i = 0; ad.op == DT_SHRINK && i < nkids; i++)
        for (int k = 0; k < ad.n; k++)
            kid_left[i] |= !strcmp(ad.nodes[k], kid_node[i]);
    pthread_mutex_unlock(&wd.mu);
    MPI_Comm_free(&ad.inter);
    if (ad.role == DT_ROLE_LEAVING) {
        int grank;
        MPI_Comm_rank(MPI_COMM_WORLD, &grank);
        set_phase("MPI_Finalize of a leaving process");
        dt_debug_free();
        MPI_Comm_free(&comm);
        MPI_Finalize();
        char path[PATH_MAX + 128];
        snprintf(path, sizeof(path), "%s/left.%s.%d", dir, node, grank);
        int fd = open(path, O_CREAT | O_WRONLY, 0600);
        if (fd >= 0)
            close(fd);
        exit(0);
    }
    if (comm != MPI_COMM_NULL && comm != ad.next)
        MPI_Comm_free(&comm);
    comm = ad.next;
    ad.next = MPI_COMM_NULL;
    joined = 1;
    MPI_Comm_rank(comm, &my_rank);
    dt_debug_reset(comm);
    int rc = 0;
    if (leader) {
        set_phase("waiting for the leaving processes to finish");
        if (ad.op == DT_SHRINK)
            wait_leavers();
        wd_disarm();
        rc = dt_offer_commit(&ad.offer);
        if (rc < 0)
            fprintf(stderr, "libductile: commit: %s\n", dt_strerror());
    }
    end_adaptation();
    return rc;
}

int dt_finalize(void)
{
    wd_stop(true);
    dt_debug_free();
    if (comm != MPI_COMM_NULL)
        MPI_Comm_free(&comm);
    MPI_Finalize();
    if (leader) {
        reap(1);
        dt_detach();
    }
    for (int i = 0; i < napp_args; i++)
        free(app_args[i]);
    free(app_args);
    return 0;
}
