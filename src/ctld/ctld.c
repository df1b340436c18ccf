/* ductiled's shared plumbing: clocks, the replies that wait for the group commit, and
 * reading the configuration again. Kept out of main.c so the controller builds as a
 * library that unit tests and fuzzers link. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
            r->msg = proto_err_reply(PROTO_E_NONE, why);
        }
        last = r;
        pp = &r->next;
    }
    c->deferred_tail = last;
}

static void update_interruptible(int64_t id, void *val, void *arg)
{
    (void)id;
    jobs_update_interruptible(arg, val);
}

int ctld_reconfigure(ctld_t *c, config_changes_t *ch, char *err, size_t errlen)
{
    config_t fresh;
    if (config_load(c->conf_path, &fresh, err, errlen) < 0) {
        fprintf(stderr, "ductiled: reconfigure: %s: nothing changed\n", err);
        return -1;
    }
    /* a key that waits for a restart must not keep the controller from starting then */
    sched_t *s = NULL;
    char serr[512];
    if (strcmp(fresh.policy, c->cfg.policy) &&
        sched_create(fresh.nnodes, fresh.policy, &s, serr, sizeof(serr)) < 0) {
        snprintf(err, errlen, "%s: Policy: %s (the controller would not start with it)",
                 c->conf_path, serr);
        fprintf(stderr, "ductiled: reconfigure: %s: nothing changed\n", err);
        config_free(&fresh);
        return -1;
    }
    sched_destroy(s);
    bool new_policy = strcmp(fresh.policy, c->cfg.policy) != 0;
    int max_requeue = c->cfg.max_requeue;
    config_apply_changes(&c->cfg, &fresh, ch);
    config_free(&fresh);
    fprintf(stderr, "ductiled: reconfigured from %s: now in effect: %s%s%s\n", c->conf_path,
            ch->napplied ? ch->applied : "no change",
            ch->nrestart ? "; changed, but kept until the daemons restart: " : "",
            ch->nrestart ? ch->restart : "");
    if (ch->napplied)
        ckptsvc_check(c); /* a node to lend or give back under the new rules */
    if (new_policy) {
        /* a new engine, built from the database once what this turn changed is saved
         * (main.c), as a restart would build it */
        c->engine_switch = true;
        jobs_want_schedule(c);
    }
    if (c->cfg.max_requeue != max_requeue) /* who node stealing may stop */
        idmap_foreach(c->jobs, update_interruptible, c);
    if (ch->napplied) { /* the priority weights and periods (accounts.c) */
        accounts_engine_settings(c);
        jobs_want_schedule(c);
    }
    return 0;
}
