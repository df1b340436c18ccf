/* Node daemons talk to each other for one thing: the output of `ductile run`. A step's
 * tasks send their output straight to the daemon of the node where the step's client
 * runs (its "home", named in step_start), which hands it to the client; the controller
 * sees only the step's start, its credits and its tasks' ends (docs/architecture.md,
 * "Step output"). Both ends authenticate as the controller's connections do: with the
 * cluster key, or as root through MUNGE.
 *
 * Outbound connections are kept, one per home address, and reused by every task that
 * sends there; a task knows its connection by number, so that a closed one is simply
 * not found again. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "noded.h"

/* Admission and timeouts of the step port, which is open to the network like the
 * controller's (conn.h): without it a peer that never authenticated kept its descriptor
 * forever, and a flood took every descriptor the daemon needs for its jobs. */
static conn_guard_t *guard;

struct peer {
    int64_t id;
    char addr[64];
    int port;
    conn_t *c;
    struct peer *next;
};

static conn_cfg_t peer_cfg(noded_t *d)
{
    return (conn_cfg_t){
        .auth = d->cfg.auth_type == CONFIG_AUTH_MUNGE ? PROTO_AUTH_MUNGE : PROTO_AUTH_KEY,
        .key = d->key,
        .munge_socket = d->cfg.munge_socket,
        .max_payload = 1u << 20,
    };
}

/* --- inbound: output for our relayed clients, and the question of a node that hears
 * nothing from the controller --- */

/* How long ago we last heard the controller (-1: never), and how long ago it was heard
 * again after a silence past NodeTimeout (-1: never). */
static json_t *heard_answer(noded_t *d)
{
    uint64_t now = uv_now(d->loop);
    double age = d->registered_once && d->last_heard ? (double)(now - d->last_heard) / 1000.0
                                                       : -1;
    double back = d->ctl_back ? (double)(now - d->ctl_back) / 1000.0 : -1;
    return json_pack("{s:s,s:f,s:f}", "type", "ctl_heard", "age", age, "back", back);
}

static void in_message(conn_t *c, json_t *msg, void *arg)
{
    noded_t *d = arg;
    const char *type = json_string_value(json_object_get(msg, "type"));
    if (conn_is_local(c) || conn_uid(c) != 0 || !type) {
        conn_close(c); /* only node daemons send here */
        return;
    }
    if (!strcmp(type, "ctl_heard")) {
        conn_send_new(c, heard_answer(d)); /* the asker closes */
        return;
    }
    conn_set_persistent(c); /* a node daemon: its task may be silent for hours */
    if (!strcmp(type, "step_output") || !strcmp(type, "step_eof"))
        apps_on_step_io(d, msg);
}

static const conn_ops_t in_ops = {.on_message = in_message};

static void on_peer_connection(uv_stream_t *server, int status)
{
    noded_t *d = server->data;
    if (status < 0)
        return;
    conn_cfg_t cc = peer_cfg(d);
    cc.guard = guard;
    conn_accept(server, &cc, &in_ops, d);
}

static bool privileged(uid_t uid, void *arg)
{
    (void)arg;
    return uid == 0; /* node daemons (the cluster key, or root through MUNGE), root */
}

/* The controller's limits (MaxConnections and the rest), within half of our
 * descriptors: the other half is for the jobs' FIFOs and files. On the local socket,
 * MaxConnectionsPerUser counts each user's clients as on the controller's socket. */
conn_guard_t *peers_guard(noded_t *d)
{
    if (guard)
        return guard;
    int max = d->cfg.max_connections;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (rlim_t)max > rl.rlim_cur / 2)
        max = rl.rlim_cur / 2 > 16 ? (int)(rl.rlim_cur / 2) : 16;
    conn_limits_t lim = {
        .max_conns = max,
        .reserve = d->cfg.reserved_connections < max ? d->cfg.reserved_connections : max / 2,
        .per_user = d->cfg.max_connections_per_user,
        .per_host = d->cfg.max_connections_per_host,
        .max_unauth = d->cfg.max_unauth_connections <= max / 2 ? d->cfg.max_unauth_connections
                                                                : max / 4,
        .auth_timeout = d->cfg.auth_timeout,
        .frame_timeout = d->cfg.frame_timeout,
        /* no idle timeout: a step's connection is quiet while its tasks are, and a
         * job's leader waits on its connection for offers */
        .privileged = privileged,
        .server = "this node's daemon",
    };
    return guard = conn_guard_create(d->loop, &lim);
}

/* Listen on every address of one family: IPv6 takes IPv4 peers too (libuv clears
 * IPV6_V6ONLY). 0, or the libuv error. */
static int listen_on(noded_t *d, uv_tcp_t *h, bool v6)
{
    struct sockaddr_storage sa;
    if (v6)
        uv_ip6_addr("::", d->cfg.node_port, (struct sockaddr_in6 *)&sa);
    else
        uv_ip4_addr("0.0.0.0", d->cfg.node_port, (struct sockaddr_in *)&sa);
    int rc = uv_tcp_init_ex(d->loop, h, v6 ? AF_INET6 : AF_INET);
    if (rc < 0)
        return rc;
    h->data = d;
    rc = uv_tcp_bind(h, (struct sockaddr *)&sa, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)h, 128, on_peer_connection);
    if (rc < 0)
        uv_close((uv_handle_t *)h, NULL);
    return rc;
}

int peers_init(noded_t *d, char *err, size_t errlen)
{
    if (!peers_guard(d)) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    /* The controller names a step's home by the address our connection comes from,
     * IPv4 or IPv6: we take both. Without IPv6, IPv4 alone (on a handle of its own: a
     * closed one is not reused). */
    static uv_tcp_t *v4;
    uv_tcp_t *h = &d->peers_listen;
    int rc = listen_on(d, h, true);
    if (rc < 0 && (v4 = calloc(1, sizeof(*v4))) != NULL)
        rc = listen_on(d, h = v4, false);
    if (rc < 0) {
        snprintf(err, errlen, "cannot listen on port %d for other nodes: %s", d->cfg.node_port,
                 v4 ? uv_strerror(rc) : "out of memory");
        return rc;
    }
    struct sockaddr_storage got;
    int len = sizeof(got);
    if (uv_tcp_getsockname(h, (struct sockaddr *)&got, &len) == 0)
        d->step_port = ntohs(got.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&got)->sin6_port
                                                       : ((struct sockaddr_in *)&got)->sin_port);
    return 0;
}

/* --- outbound: our tasks' output for other nodes' clients --- */

static void out_message(conn_t *c, json_t *msg, void *arg)
{
    (void)c;
    (void)msg;
    (void)arg; /* the home answers nothing; credits come from the controller */
}

static void out_close(conn_t *c, void *arg)
{
    noded_t *d = arg;
    for (struct peer **pp = &d->peers; *pp; pp = &(*pp)->next)
        if ((*pp)->c == c) {
            struct peer *p = *pp;
            if (conn_error(c))
                fprintf(stderr, "ductile-noded %s: cannot send step output to the node daemon at "
                        "%s:%d (NodePort): %s; that step's output from here is lost\n", d->name,
                        p->addr, p->port, uv_strerror(conn_error(c)));
            *pp = p->next;
            free(p);
            return;
        }
}

static const conn_ops_t out_ops = {.on_message = out_message, .on_close = out_close};

int64_t peers_get(noded_t *d, const char *addr, int port)
{
    for (struct peer *p = d->peers; p; p = p->next)
        if (p->port == port && !strcmp(p->addr, addr))
            return p->id;
    struct peer *p = calloc(1, sizeof(*p));
    if (!p)
        return 0;
    conn_cfg_t cc = peer_cfg(d);
    p->c = conn_connect_tcp(d->loop, addr, port, &cc, &out_ops, d);
    if (!p->c) {
        free(p);
        return 0;
    }
    p->id = ++d->next_peer;
    snprintf(p->addr, sizeof(p->addr), "%s", addr);
    p->port = port;
    p->next = d->peers;
    d->peers = p;
    return p->id;
}

conn_t *peers_find(noded_t *d, int64_t id)
{
    for (struct peer *p = d->peers; p; p = p->next)
        if (p->id == id)
            return p->c;
    return NULL;
}

/* --- cut off, or the controller? (docs/reliability.md) ---
 *
 * A node that hears nothing from the controller for NodeTimeout asks the peers the
 * controller named. The controller judges the same silence from its side (ctld nodes.c,
 * check_self): more than half its nodes silent at once, it suspects its own network and
 * calls none down; otherwise it calls the silent ones down and runs their requeueable
 * jobs elsewhere after NodeTimeout + KillWait more. So:
 *  - a peer hears the controller, and has for NodeTimeout: this node alone is cut off;
 *    it ends its requeueable jobs (before the controller starts them elsewhere);
 *  - a peer hears it again only lately: the controller is back from a cut of its own
 *    and gives the nodes still silent a NodeTimeout from then; ask again next beat;
 *  - most peers answer and none hears it: the controller is the one cut off, and keeps
 *    the jobs as they are; they go on here too;
 *  - most peers do not answer: this node is cut off from everyone; it ends them. */

typedef struct ask_one {
    struct ask *a;
    conn_t *c;
} ask_one_t;

struct ask {
    noded_t *d;
    uv_timer_t deadline;
    bool timer_open, decided;
    int asked, open;
    int steady, fresh, not_heard; /* the answers, by kind */
    double silence;
    ask_one_t one[NODED_PEERS];
};

static void ask_free_if_done(struct ask *a)
{
    if (a->decided && a->open == 0 && !a->timer_open)
        free(a);
}

static void ask_timer_closed(uv_handle_t *h)
{
    struct ask *a = h->data;
    a->timer_open = false;
    ask_free_if_done(a);
}

static void fence(noded_t *d, double silence)
{
    d->cut_off_fenced = true;
    jobs_fence_cut_off(d, silence);
}

static void ask_decide(struct ask *a)
{
    if (a->decided)
        return;
    a->decided = true;
    noded_t *d = a->d;
    if (d->ask == a)
        d->ask = NULL;
    for (int i = 0; i < a->asked; i++)
        conn_close(a->one[i].c); /* those that did not answer in time */
    if (a->timer_open && !uv_is_closing((uv_handle_t *)&a->deadline))
        uv_close((uv_handle_t *)&a->deadline, ask_timer_closed);
    uint64_t now = uv_now(d->loop);
    bool silent = d->last_heard && now - d->last_heard > (uint64_t)(d->cfg.node_timeout * 1000);
    if (!d->stopping && silent && !d->cut_off_fenced) {
        if (a->steady > 0) {
            fprintf(stderr, "ductile-noded %s: %d of %d peers asked hear the controller: this "
                    "node is the one cut off\n", d->name, a->steady, a->asked);
            fence(d, a->silence);
        } else if (a->fresh > 0) {
            /* asked again at the next heartbeat */
        } else if (2 * a->not_heard > a->asked) {
            if (!d->ctl_cut_said)
                fprintf(stderr, "ductile-noded %s: nothing heard from the controller for %.0f s, "
                        "and %d of %d peers asked do not hear it either: the controller is the "
                        "one cut off, and keeps the jobs; the jobs here go on\n", d->name,
                        a->silence, a->not_heard, a->asked);
            d->ctl_cut_said = true;
        } else {
            fprintf(stderr, "ductile-noded %s: %d of %d peers asked answered: this node is "
                    "cut off\n", d->name, a->steady + a->fresh + a->not_heard, a->asked);
            fence(d, a->silence);
        }
    }
    ask_free_if_done(a);
}

static void ask_message(conn_t *c, json_t *msg, void *arg)
{
    ask_one_t *o = arg;
    struct ask *a = o->a;
    const char *type = json_string_value(json_object_get(msg, "type"));
    if (!a->decided && type && !strcmp(type, "ctl_heard")) {
        double age = json_number_value(json_object_get(msg, "age"));
        const json_t *jb = json_object_get(msg, "back");
        double back = json_is_number(jb) ? json_number_value(jb) : -1;
        double nto = a->d->cfg.node_timeout;
        /* heard with no heartbeat missed, as the controller counts its nodes */
        double after = config_lost_after(&a->d->cfg);
        if (!json_is_number(json_object_get(msg, "age")) || age < 0 || age > after)
            a->not_heard++;
        else if (back >= 0 && back <= nto)
            a->fresh++;
        else
            a->steady++;
    }
    conn_close(c);
}

static void ask_close(conn_t *c, void *arg)
{
    (void)c;
    ask_one_t *o = arg;
    struct ask *a = o->a;
    o->c = NULL;
    a->open--;
    if (!a->decided && a->open == 0)
        ask_decide(a); /* every peer answered, or could not be reached */
    else
        ask_free_if_done(a);
}

static const conn_ops_t ask_ops = {.on_message = ask_message, .on_close = ask_close};

static void ask_deadline(uv_timer_t *t)
{
    ask_decide(t->data);
}

void peers_set_known(noded_t *d, const json_t *peers)
{
    if (!json_is_array(peers))
        return;
    int n = 0;
    size_t i;
    const json_t *p;
    json_array_foreach(peers, i, p) {
        const char *node = json_string_value(json_object_get(p, "node"));
        const char *addr = json_string_value(json_object_get(p, "addr"));
        json_int_t port = json_integer_value(json_object_get(p, "port"));
        if (n == NODED_PEERS || !addr || !*addr || port <= 0 || port > 65535)
            continue;
        struct ctl_peer *cp = &d->ctl_peers[n++];
        snprintf(cp->node, sizeof(cp->node), "%s", node ? node : "?");
        snprintf(cp->addr, sizeof(cp->addr), "%s", addr);
        cp->port = (int)port;
    }
    d->nctl_peers = n;
}

void peers_ask_controller(noded_t *d, double silence)
{
    if (d->ask)
        return;
    struct ask *a = d->nctl_peers > 0 ? calloc(1, sizeof(*a)) : NULL;
    if (!a) {
        fence(d, silence); /* no one to ask: as if no one answered */
        return;
    }
    a->d = d;
    a->silence = silence;
    conn_cfg_t cc = peer_cfg(d);
    for (int i = 0; i < d->nctl_peers; i++) {
        ask_one_t *o = &a->one[a->asked++]; /* one that cannot be tried: asked, no answer */
        o->a = a;
        o->c = conn_connect_tcp(d->loop, d->ctl_peers[i].addr, d->ctl_peers[i].port, &cc,
                                &ask_ops, o);
        if (!o->c)
            continue;
        a->open++;
        conn_send_new(o->c, json_pack("{s:s}", "type", "ctl_heard"));
    }
    /* Half of NodeTimeout: the controller starts a requeued job no sooner than NodeTimeout
     * + KillWait after it calls this node down (ctld jobs.c, requeue_fence). */
    double wait = d->cfg.node_timeout / 2;
    wait = wait < 0.5 ? 0.5 : wait > 5 ? 5 : wait;
    d->ask = a;
    if (uv_timer_init(d->loop, &a->deadline) == 0) {
        a->timer_open = true;
        a->deadline.data = a;
        uv_timer_start(&a->deadline, ask_deadline, (uint64_t)(wait * 1000), 0);
    }
    if (a->open == 0 || !a->timer_open)
        ask_decide(a); /* nobody could be asked */
}
