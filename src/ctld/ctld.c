/* ductiled's shared plumbing: clocks and the replies that wait for the group commit.
 * Kept out of main.c so the controller builds as a library that unit tests link. */
#include <stdlib.h>
#include <time.h>

#include "ctld.h"

struct reply {
    conn_t *conn;
    json_t *msg;
    reply_t *next;
};

double ctld_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

double ctld_mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void ctld_defer_send(ctld_t *c, conn_t *to, json_t *msg)
{
    if (!msg)
        return;
    /* Always held until the end of the loop iteration, even when nothing is written
     * yet: a command sent before the write it depends on (start_cleanup sends, then
     * saves) must not go out if that write's batch then fails to commit. */
    reply_t *r = malloc(sizeof(*r));
    if (!r) {
        json_decref(msg);
        return;
    }
    *r = (reply_t){.conn = to, .msg = msg};
    if (c->deferred_tail)
        c->deferred_tail->next = r;
    else
        c->deferred = r;
    c->deferred_tail = r;
}

void ctld_flush_deferred(ctld_t *c)
{
    reply_t *r = c->deferred;
    c->deferred = c->deferred_tail = NULL;
    while (r) {
        reply_t *next = r->next;
        if (r->conn)
            conn_send(r->conn, r->msg);
        json_decref(r->msg);
        free(r);
        r = next;
    }
}


void ctld_forget_conn(ctld_t *c, conn_t *conn)
{
    for (reply_t *r = c->deferred; r; r = r->next)
        if (r->conn == conn)
            r->conn = NULL;
}

void ctld_fail_deferred(ctld_t *c, const char *why, bool (*drop)(ctld_t *c, conn_t *conn))
{
    reply_t **pp = &c->deferred, *last = NULL;
    while (*pp) {
        reply_t *r = *pp;
        if (r->conn && drop(c, r->conn)) {
            *pp = r->next;
            json_decref(r->msg);
            free(r);
            continue;
        }
        if (json_is_true(json_object_get(r->msg, "ok"))) {
            json_decref(r->msg);
            r->msg = json_pack("{s:b,s:s}", "ok", 0, "error", why);
        }
        last = r;
        pp = &r->next;
    }
    c->deferred_tail = last;
}
