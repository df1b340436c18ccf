/* The operator's resizes (`ductile resize`): where the last one of each job stands,
 * as `show` and the waiting client see it, and the hold on the job's size that a
 * committed one puts on the scheduling policy (OperatorResizeHold, --release). The
 * resize itself goes through the engine and the resize handshake like any other
 * (jobs.c); these functions follow it. Kept in memory only: a controller restart
 * forgets them. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ctld.h"

/* The operator's size holds against the policy: for OperatorResizeHold seconds, or
 * until released when that is 0. */
static void oper_hold(ctld_t *c, job_t *j)
{
    double h = c->cfg.operator_resize_hold;
    j->oper_hold = h > 0 ? ctld_now() + h : INFINITY;
    sched_set_hold(c->sched, j->id, j->oper_hold);
}

void jobs_oper_committed(ctld_t *c, job_t *j)
{
    if (j->oper != OP_UNDERWAY)
        return;
    j->oper = OP_COMMITTED;
    j->oper_since = ctld_now();
    if (!j->oper_no_hold)
        oper_hold(c, j);
}

/* The job ends or goes back to the queue with the operator's resize pending or under
 * way. (Back to R without the new size is jobs_oper_not_done's, called by withdraw,
 * which knows why.) */
void jobs_oper_left(job_t *j, jstate_t to, const char *why)
{
    if (to == JS_RESIZING || to == JS_RUNNING ||
        (j->oper != OP_UNDERWAY && j->oper != OP_PENDING))
        return;
    j->oper = OP_FAILED;
    snprintf(j->oper_why, sizeof(j->oper_why), "the job %s (%.32s%s%.180s)",
             to == JS_PENDING ? "went back to the queue" : "ended", why, j->reason[0] ? ": " : "",
             j->reason);
    j->oper_since = ctld_now();
}

static const char *const oper_names[] = {"none",     "pending",   "under way", "committed",
                                         "declined", "withdrawn", "failed",    "released"};

/* Why the operator's resize of j waits, or where it stands. */
static void oper_status(const ctld_t *c, const job_t *j, char *buf, size_t len)
{
    buf[0] = '\0';
    sched_jobinfo_t info;
    if (j->oper == OP_PENDING && c->sched && sched_job_info(c->sched, j->id, &info) == 0) {
        switch (info.request_wait) {
        case SCHED_W_RESIZING:
            snprintf(buf, len, "another resize of the job is under way");
            break;
        case SCHED_W_NODES:
            snprintf(buf, len, "not enough free nodes (%d free, %d more needed)",
                     info.request_free, info.request - info.nnodes);
            break;
        case SCHED_W_NOT_ADAPTIVE:
            snprintf(buf, len, "%s", j->attached ? "the application declines offers for now "
                                                   "(dt_set_inhibit)"
                                                 : "the application has detached");
            break;
        default:
            snprintf(buf, len, "waiting for the next scheduling pass");
        }
    } else if (j->oper == OP_UNDERWAY) {
        snprintf(buf, len, "%s", j->phase == RZ_JOINING     ? "the new nodes are joining"
                                 : j->phase == RZ_OFFERED   ? "offered to the application"
                                 : j->phase == RZ_RELEASING ? "the leaving nodes are being cleaned"
                                                            : "starting");
    } else {
        snprintf(buf, len, "%s", j->oper_why);
    }
}

json_t *jobs_oper_json(const ctld_t *c, const job_t *j)
{
    if (j->oper == OP_NONE)
        return NULL;
    char why[sizeof(j->oper_why)];
    oper_status(c, j, why, sizeof(why));
    return json_pack("{s:I,s:i,s:i,s:f,s:s,s:s}", "seq", (json_int_t)j->oper_seq, "nodes",
                     j->oper_nodes, "from", j->oper_from, "since", j->oper_since, "state",
                     oper_names[j->oper], "why", why);
}

/* A resize ends without its new size (withdraw): the operator's, if it was hers, is
 * declined by the application or withdrawn. */
void jobs_oper_not_done(job_t *j, bool declined, const char *why)
{
    if (j->oper != OP_UNDERWAY)
        return;
    j->oper = declined ? OP_DECLINED : OP_WITHDRAWN;
    snprintf(j->oper_why, sizeof(j->oper_why), "%s", why);
    j->oper_since = ctld_now();
}

int jobs_resize(ctld_t *c, job_t *j, int nodes, char *err, size_t errlen)
{
    if (j->state != JS_RUNNING && j->state != JS_RESIZING) {
        snprintf(err, errlen, "job %lld is %s, not running", (long long)j->id,
                 jstate_name(j->state));
        return -EINVAL;
    }
    if (j->unconfirmed) {
        /* Its application may be attached: resized bare, a shrink would kill its
         * processes and an expand would go unseen (issue 35) */
        snprintf(err, errlen, "job %lld: its first node has not reported since the controller "
                 "started, so whether its application takes part is not known yet: try again "
                 "shortly", (long long)j->id);
        return -EBUSY;
    }
    int rc = sched_request_resize(c->sched, j->id, nodes, true, err, errlen);
    if (rc < 0)
        return rc;
    j->oper_seq++;
    j->oper_nodes = nodes;
    j->oper_from = j->nalloc;
    j->oper_since = ctld_now();
    j->oper_no_hold = false;
    j->oper_why[0] = '\0';
    j->oper = OP_PENDING;
    if (j->state == JS_RUNNING && nodes == j->nalloc) {
        /* the job has that size: it is held there */
        sched_cancel_request(c->sched, j->id);
        j->oper = OP_UNDERWAY;
        jobs_oper_committed(c, j);
    }
    jobs_want_schedule(c);
    return 0;
}

void jobs_resize_release(ctld_t *c, job_t *j, char *msg, size_t msglen)
{
    int n = 0;
    msg[0] = '\0';
    if (sched_cancel_request(c->sched, j->id) > 0 && j->oper == OP_PENDING) {
        j->oper = OP_RELEASED;
        j->oper_since = ctld_now();
        snprintf(j->oper_why, sizeof(j->oper_why), "released before it was granted");
        n = snprintf(msg, msglen, "the pending resize to %d node%s is dropped", j->oper_nodes,
                     j->oper_nodes == 1 ? "" : "s");
    } else if (j->oper == OP_UNDERWAY) {
        j->oper_no_hold = true;
        n = snprintf(msg, msglen, "the resize to %d node%s under way completes, unheld",
                     j->oper_nodes, j->oper_nodes == 1 ? "" : "s");
    }
    if (j->oper_hold > 0) {
        sched_set_hold(c->sched, j->id, 0);
        j->oper_hold = 0;
        snprintf(msg + n, msglen - (size_t)n, "%sthe policy may resize it again", n ? "; " : "");
    } else if (!n) {
        snprintf(msg, msglen, "nothing to release (no operator resize pending or held)");
        return;
    }
    jobs_want_schedule(c);
}
