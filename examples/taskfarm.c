/* taskfarm: a malleable task farm without MPI (libductile's process layer).
 *
 *   taskfarm [--items N] [--ms M]          the leader (the job's batch script runs it)
 *   taskfarm --worker HOST PORT            a worker (started by the leader)
 *
 * The leader hands out work items to one worker per node of the job and sums their
 * results. Outside a job (no $DUCTILE_JOB_ID) it runs alone on this host, with
 * --workers N local worker processes (default 1), and never resizes. When the
 * scheduler offers nodes, it starts workers there and commits; when it takes nodes
 * back, the workers there finish their item and stop, then it commits. When a node
 * fails, the job runs on without it (dt_set_survive_loss) and its item is redone.
 * The checksum does not depend on how often the job was resized: a test compares it
 * with a fixed-size run. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ductile.h"

#define MAXW 256

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The work: a fixed function of the item, taking about ms milliseconds. */
static uint64_t work(long item, int ms)
{
    uint64_t x = (uint64_t)item * 0x9e3779b97f4a7c15ULL + 1;
    double end = now() + ms / 1000.0;
    long rounds = 0;
    do {
        for (int k = 0; k < 1000; k++)
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        rounds++;
    } while (now() < end || rounds < 1);
    /* the result must not depend on timing: recompute a fixed number of rounds */
    uint64_t y = (uint64_t)item * 0x9e3779b97f4a7c15ULL + 1;
    for (int k = 0; k < 1000; k++)
        y ^= y << 13, y ^= y >> 7, y ^= y << 17;
    return y;
}

static int worker(const char *host, int port, int ms)
{
    /* the leader's host, by name: on a cluster the workers run on other hosts */
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    int rc = getaddrinfo(host, ps, &hints, &ai);
    if (rc != 0) {
        fprintf(stderr, "taskfarm worker: %s: %s\n", host, gai_strerror(rc));
        return 1;
    }
    int fd = -1;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0) {
        fprintf(stderr, "taskfarm worker: cannot reach the leader at %s:%d: %s\n", host, port,
                strerror(errno));
        return 1;
    }
    FILE *in = fdopen(fd, "r");
    const char *node = getenv("DUCTILE_NODENAME");
    dprintf(fd, "HELLO %s\n", node ? node : "?");
    char line[128];
    while (fgets(line, sizeof(line), in)) {
        long item;
        if (sscanf(line, "ITEM %ld", &item) == 1)
            dprintf(fd, "DONE %ld %llu\n", item, (unsigned long long)work(item, ms));
        else
            break; /* STOP, or the leader went away */
    }
    return 0;
}

typedef struct wk {
    int fd;
    char node[DT_NAME_MAX];
    long item;          /* in progress, -1 none */
    int stopping;       /* its node leaves: no new items */
    char buf[256];
    size_t len;
} wk_t;

static wk_t w[MAXW];
static int nw;
static long next_item, done_items, nitems;
/* items whose worker was lost before it answered: given out again first */
static long lost[MAXW];
static int nlost;
static int children; /* our `ductile run`s still running */
static uint64_t checksum;
static int ms_per_item;
static char *self;
static int port;
static char leader_host[256];
static int local_workers; /* outside a job: this many workers on this host, else 0 */

/* `ductile run [--node NODE] taskfarm --worker HOST PORT`, in the background; outside
 * a job, `taskfarm --worker 127.0.0.1 PORT` local_workers times. */
static void spawn(const char *node)
{
    char ps[16], mss[16];
    snprintf(ps, sizeof(ps), "%d", port);
    snprintf(mss, sizeof(mss), "%d", ms_per_item);
    for (int k = 0; k < local_workers; k++) {
        pid_t pid = fork();
        if (pid > 0)
            children++;
        if (pid == 0) {
            execl("/proc/self/exe", self, "--ms", mss, "--worker", "127.0.0.1", ps, (char *)NULL);
            perror("taskfarm: cannot start a worker");
            _exit(127);
        }
    }
    if (local_workers > 0)
        return;
    pid_t pid = fork();
    if (pid > 0)
        children++;
    if (pid == 0) {
        if (node)
            execlp("ductile", "ductile", "run", "--node", node, self, "--ms", mss, "--worker",
                   leader_host, ps, (char *)NULL);
        else
            execlp("ductile", "ductile", "run", self, "--ms", mss, "--worker", leader_host, ps,
                   (char *)NULL);
        perror("taskfarm: ductile run");
        _exit(127);
    }
}

static void assign(wk_t *x)
{
    if (x->item >= 0 || x->stopping)
        return;
    if (nlost > 0) {
        x->item = lost[--nlost];
        dprintf(x->fd, "ITEM %ld\n", x->item);
    } else if (next_item < nitems) {
        x->item = next_item++;
        dprintf(x->fd, "ITEM %ld\n", x->item);
    } else if (done_items >= nitems) {
        dprintf(x->fd, "STOP\n"); /* a worker that came after the end goes at once */
    }
}

static void drop(int i)
{
    if (w[i].item >= 0) { /* its item goes back to the pile (never happens on a clean stop) */
        fprintf(stderr, "taskfarm: worker on %s lost item %ld: given out again\n", w[i].node,
                w[i].item);
        lost[nlost++] = w[i].item; /* at most one per worker: fits */
    }
    close(w[i].fd);
    w[i] = w[--nw];
}

/* One round of I/O: new workers, results, departures. */
static void serve(int lfd, int wait_ms)
{
    struct pollfd p[MAXW + 1];
    p[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
    for (int i = 0; i < nw; i++)
        p[i + 1] = (struct pollfd){.fd = w[i].fd, .events = POLLIN};
    if (poll(p, (nfds_t)nw + 1, wait_ms) <= 0)
        return;
    int n = nw;
    for (int i = n - 1; i >= 0; i--) {
        if (!(p[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        wk_t *x = &w[i];
        ssize_t r = read(x->fd, x->buf + x->len, sizeof(x->buf) - 1 - x->len);
        if (r <= 0) {
            drop(i);
            continue;
        }
        x->len += (size_t)r;
        x->buf[x->len] = '\0';
        char *nl;
        while ((nl = strchr(x->buf, '\n'))) {
            *nl = '\0';
            long item;
            unsigned long long v;
            if (sscanf(x->buf, "DONE %ld %llu", &item, &v) == 2 && item == x->item) {
                checksum += v;
                done_items++;
                x->item = -1;
            } else if (!strncmp(x->buf, "HELLO ", 6)) {
                size_t len = strnlen(x->buf + 6, sizeof(x->node) - 1);
                memcpy(x->node, x->buf + 6, len);
                x->node[len] = '\0';
            }
            memmove(x->buf, nl + 1, strlen(nl + 1) + 1);
            x->len = strlen(x->buf);
        }
        if (x->stopping && x->item < 0)
            dprintf(x->fd, "STOP\n"); /* it leaves once its connection closes */
        else
            assign(x);
    }
    if (p[0].revents & POLLIN && nw < MAXW) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0) {
            w[nw] = (wk_t){.fd = fd, .item = -1};
            assign(&w[nw]);
            nw++;
        }
    }
}

static int count_on(const dt_offer_t *o, int (*pred)(const wk_t *))
{
    int c = 0;
    for (int i = 0; i < nw; i++)
        for (int k = 0; k < o->nnodes; k++)
            if (!strcmp(w[i].node, o->nodes[k]) && pred(&w[i]))
                c++;
    return c;
}

static int any(const wk_t *x) { (void)x; return 1; }

static void usage(FILE *f)
{
    fprintf(f,
            "usage: taskfarm [--items N] [--ms MS] [--workers W]\n"
            "Hands out N work items (default 400) of MS milliseconds each (default 20) to\n"
            "workers and prints the checksum of their results, the same however the work\n"
            "was shared. Inside a Ductile job: one worker per node of the job (started with\n"
            "`ductile run`), more as the job grows, fewer as it shrinks. Outside a job: W\n"
            "workers on this host (default 1), no resizes.\n"
            "  --items N     items of work (N >= 0)\n"
            "  --ms MS       milliseconds of work per item (MS >= 0)\n"
            "  --workers W   outside a job: W local workers (1 <= W <= %d)\n"
            "  -h, --help    this text\n",
            MAXW);
}

/* The value of option argv[*i], an integer in [min, max]; -1 after a message if not. */
static int int_arg(int argc, char **argv, int *i, long min, long max, long *out)
{
    const char *opt = argv[*i];
    if (*i + 1 >= argc) {
        fprintf(stderr, "taskfarm: %s needs a value\n", opt);
        return -1;
    }
    char *end;
    errno = 0;
    long v = strtol(argv[++*i], &end, 10);
    if (errno || end == argv[*i] || *end || v < min || v > max) {
        fprintf(stderr, "taskfarm: %s '%s': not a whole number from %ld to %ld\n", opt, argv[*i],
                min, max);
        return -1;
    }
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    self = argv[0];
    ms_per_item = 20;
    nitems = 400;
    int ignore_offers = 0;
    long v, workers = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ignore-offers")) { /* for tests: attach, never answer */
            ignore_offers = 1;
        } else if (!strcmp(argv[i], "--items")) {
            if (int_arg(argc, argv, &i, 0, 1000000000L, &nitems) < 0)
                return 2;
        } else if (!strcmp(argv[i], "--ms")) {
            if (int_arg(argc, argv, &i, 0, 3600000, &v) < 0)
                return 2;
            ms_per_item = (int)v;
        } else if (!strcmp(argv[i], "--workers")) {
            if (int_arg(argc, argv, &i, 1, MAXW, &workers) < 0)
                return 2;
        } else if (!strcmp(argv[i], "--worker") && i + 2 < argc) {
            return worker(argv[i + 1], atoi(argv[i + 2]), ms_per_item);
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "taskfarm: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    /* Workers on every node of the job connect back: listen on all addresses, and tell
     * them this host's name (a cluster's hosts resolve each other's names). */
    /* close-on-exec: a worker started from here must not hold the listener (or another
     * worker's connection) open, or closing it at the end would not refuse anyone */
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t sl = sizeof(sa);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 64) < 0 ||
        getsockname(lfd, (struct sockaddr *)&sa, &sl) < 0 ||
        gethostname(leader_host, sizeof(leader_host) - 1) < 0) {
        perror("taskfarm: cannot listen for workers");
        return 1;
    }
    port = ntohs(sa.sin_port);
    int malleable = 0;
    if (!getenv("DUCTILE_JOB_ID")) {
        local_workers = (int)workers;
        fprintf(stderr, "taskfarm: not inside a Ductile job: running on this host with %d "
                "worker%s\n", local_workers, local_workers == 1 ? "" : "s");
    } else if (workers != 1) {
        fprintf(stderr, "taskfarm: --workers %ld ignored inside a job: one worker per node\n",
                workers);
    }
    if (!local_workers && !(malleable = dt_attach(1) == 0))
        fprintf(stderr, "taskfarm: running at a fixed size (%s)\n", dt_strerror());
    /* a node that fails takes only its item with it: the job runs on without the node */
    if (malleable && dt_set_survive_loss(1) < 0)
        fprintf(stderr, "taskfarm: the job ends if a node fails (%s)\n", dt_strerror());
    spawn(NULL); /* one worker on every node of the job (or the local ones) */
    int expansions = 0, shrinks = 0, restarts = 0;
    long done_at_restart = 0;
    double restart_at = 0;
    while (done_items < nitems) {
        serve(lfd, 10);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            children--;
        if (nw == 0 && children == 0 && now() >= restart_at) {
            /* every worker is gone (their step ended with a node or a daemon): start
             * them again on the job's nodes, a few times without progress in between
             * (each node lost in a long job costs one), then fail loudly */
            if (done_items > done_at_restart)
                restarts = 0;
            done_at_restart = done_items;
            if (++restarts > 3) {
                fprintf(stderr, "taskfarm: all workers lost %d times; giving up at item %ld "
                        "of %ld\n", restarts - 1, done_items, nitems);
                return 1;
            }
            fprintf(stderr, "taskfarm: all workers lost; starting them again\n");
            restart_at = now() + 2.0 * restarts; /* a node daemon may be restarting */
            spawn(NULL);
        }
        dt_offer_t o;
        if (!malleable || ignore_offers || dt_poll_offer(&o) != 1 || o.op == DT_WITHDRAWN)
            continue;
        if (o.op == DT_LOST) {
            /* those nodes failed: their workers' items go to the others (a dead host's
             * connection may never close by itself) */
            for (int i = nw - 1; i >= 0; i--)
                for (int k = 0; k < o.nnodes; k++)
                    if (!strcmp(w[i].node, o.nodes[k])) {
                        drop(i);
                        break;
                    }
            printf("lost %s: running on %d nodes (%s) at item %ld\n", o.nnodes ? o.nodes[0] : "?",
                   o.after, o.nodelist, done_items);
            fflush(stdout);
            continue;
        }
        double deadline = now() + (o.timeout > 1 ? o.timeout - 1 : 1);
        int ok = 1;
        if (o.op == DT_EXPAND) {
            for (int k = 0; k < o.nnodes; k++)
                spawn(o.nodes[k]);
            /* commit once a worker said hello from every new node */
            while (count_on(&o, any) < o.nnodes && (ok = now() < deadline))
                serve(lfd, 10);
        } else {
            for (int i = 0; i < nw; i++)
                for (int k = 0; k < o.nnodes; k++)
                    if (!strcmp(w[i].node, o.nodes[k])) {
                        w[i].stopping = 1;
                        if (w[i].item < 0)
                            dprintf(w[i].fd, "STOP\n");
                    }
            /* commit once every worker of a leaving node has finished and gone */
            while (count_on(&o, any) > 0 && (ok = now() < deadline))
                serve(lfd, 10);
        }
        if (ok && dt_offer_commit(&o) == 0) {
            expansions += o.op == DT_EXPAND;
            shrinks += o.op == DT_SHRINK;
            printf("resize %s to %d nodes (%s) at item %ld\n", o.op == DT_EXPAND ? "expand" : "shrink",
                   o.after, o.nodelist, done_items);
            fflush(stdout);
        } else if (!ok) {
            dt_offer_decline(&o);
        }
    }
    for (int i = 0; i < nw; i++)
        dprintf(w[i].fd, "STOP\n");
    double end = now() + 10;
    while (nw > 0 && now() < end)
        serve(lfd, 10);
    /* A worker that started late (every item done before it connected) would wait for
     * an item for ever, and we for it: closing the listener refuses or resets it, and
     * closing the connections ends any worker still reading one. */
    close(lfd);
    for (int i = 0; i < nw; i++)
        close(w[i].fd);
    while (wait(NULL) > 0)
        ;
    printf("checksum %016llx items %ld expansions %d shrinks %d\n", (unsigned long long)checksum,
           done_items, expansions, shrinks);
    dt_detach();
    return 0;
}
