/* Job lifecycle in the controller: submission, the engine's decisions carried out
 * through the node daemons, ends, cancellations, node failures, resizes.
 *
 * Every state change is written in the current batch transaction (db.c) and every
 * command to a node daemon waits for that batch to commit (ctld_defer_send): a node
 * never runs a job the database does not know about. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld.h"
#include "hostlist.h"

static const char *const codes[JS__COUNT] = {"PD", "R", "RS", "CG", "CD", "F", "CA", "TO", "NF",
                                             "OOM"};
static const char *const names[JS__COUNT] = {"PENDING",   "RUNNING", "RESIZING",
                                             "COMPLETING", "COMPLETED", "FAILED",
                                             "CANCELLED", "TIMEOUT", "NODE_FAIL",
                                             "OUT_OF_MEMORY"};

const char *jstate_code(jstate_t s) { return s >= 0 && s < JS__COUNT ? codes[s] : "?"; }
const char *jstate_name(jstate_t s) { return s >= 0 && s < JS__COUNT ? names[s] : "?"; }
bool jstate_final(jstate_t s) { return s >= JS_COMPLETED; }

int jstate_parse(const char *code, jstate_t *out)
{
    for (int i = 0; i < JS__COUNT; i++)
        if (!strcasecmp(code, codes[i]) || !strcasecmp(code, names[i])) {
            *out = (jstate_t)i;
            return 0;
        }
    return -EINVAL;
}

/* The job lifecycle. Every change of a job's state goes through job_to(), which
 * refuses what this table does not allow (and says so in the log): most faults that
 * run a job twice are transitions nobody wrote down.
 *
 *   PD -> R           started
 *   PD -> CA          cancelled while pending
 *   R  -> RS          a resize begins          RS -> R   committed or withdrawn
 *   R, RS -> CG       ended, cancelled, node failure: the nodes are being cleaned
 *   R  -> PD          its start never reached the node (LaunchLost)
 *   CG -> PD          requeued after a node failure
 *   CG -> CD|F|CA|TO|NF   every node is clean
 *   R, RS, CG -> F    cannot be restored after a restart (NotRestorable)
 *   NF -> CD|F|TO     its batch node reports an end from before it was called down
 *                     (jobs_late_end)
 * and, at a restart only (jobs_set_restored_state), R, RS, CG -> PD|NF|CD|F|CA|TO|OOM:
 * its nodes are no longer configured, nothing is left to clean (db.c).
 *
 * Nothing else writes a job's state: tests/cli/test_lifecycle_writes.sh checks the
 * sources for it. */
static bool allowed(jstate_t from, jstate_t to)
{
    switch (from) {
    case JS_PENDING:
        return to == JS_RUNNING || to == JS_CANCELLED || to == JS_FAILED;
    case JS_RUNNING:
        return to == JS_RESIZING || to == JS_COMPLETING || to == JS_PENDING || to == JS_FAILED;
    case JS_RESIZING:
        return to == JS_RUNNING || to == JS_COMPLETING || to == JS_FAILED;
    case JS_COMPLETING:
        return to == JS_PENDING || jstate_final(to);
    case JS_NODE_FAIL:
        return to == JS_COMPLETED || to == JS_FAILED || to == JS_TIMEOUT;
    default:
        return false; /* final states are final */
    }
}

/* The one place a job's state is written (with job_new's PD). */
static int set_state(job_t *j, jstate_t to, bool restoring, const char *why)
{
    bool ok = restoring ? !jstate_final(j->state) && j->state != JS_PENDING &&
                              (to == JS_PENDING || jstate_final(to))
                        : allowed(j->state, to);
    if (!ok) {
        fprintf(stderr, "ductiled: job %lld: refused transition %s -> %s (%s)\n",
                (long long)j->id, jstate_code(j->state), jstate_code(to), why);
        return -EINVAL;
    }
    j->state = to;
    return 0;
}

int jobs_set_restored_state(job_t *j, jstate_t to, const char *why)
{
    return set_state(j, to, true, why);
}

/* c->placed holds the live jobs that are not pending, those a node may hold: a node's
 * registration checks them (nodes_reconcile), not the whole queue. */
static void track_placed(ctld_t *c, job_t *j)
{
    if (j->state == JS_PENDING)
        idmap_del(c->placed, j->id);
    else
        idmap_put(c->placed, j->id, j);
}

static int job_to(ctld_t *c, job_t *j, jstate_t to, const char *why)
{
    if (set_state(j, to, false, why) < 0)
        return -EINVAL;
    jobs_oper_left(j, to, why);
    if (to != JS_RESIZING)
        j->phase = RZ_NONE;
    track_placed(c, j);
    return 0;
}

job_t *job_new(void)
{
    job_t *j = calloc(1, sizeof(*j));
    if (j) {
        j->exit_code = -1;
        j->final = JS_PENDING;
        j->array_task = -1;
        j->umask = -1;
    }
    return j;
}

void job_free(job_t *j)
{
    if (!j)
        return;
    free(j->name);
    free(j->user);
    free(j->script);
    free(j->cwd);
    json_decref(j->env);
    json_decref(j->args);
    free(j->out_path);
    free(j->err_path);
    free(j->depend);
    free(j->dep_done);
    free(j->account);
    free(j->partition);
    free(j->reservation);
    nsel_free(&j->sel);
    free(j->alloc);
    free(j->resize_nodes);
    free(j->clean_wait);
    free(j->resize_wait);
    free(j->pw_hist);
    free(j->ck_agents);
    free(j->ck_where);
    free(j->ck_slots);
    for (int i = 0; j->ck_addr && i < j->ck_n; i++)
        free(j->ck_addr[i]);
    free(j->ck_addr);
    free(j->ck_node);
    free(j->ck_done);
    free(j);
}

/* A host list, or the names joined by commas if one is not a host name ("#5"). */
static char *compress(const char **list, int n)
{
    int rc = hostlist_compress((char *const *)list, n, NULL, 0);
    size_t need = 1;
    for (int i = 0; rc < 0 && i < n; i++)
        need += strlen(list[i]) + 1;
    char *buf = malloc(rc < 0 ? need : (size_t)rc + 1);
    if (buf && rc >= 0)
        hostlist_compress((char *const *)list, n, buf, (size_t)rc + 1);
    for (int i = 0, pos = 0; buf && rc < 0 && i < n; i++)
        pos += snprintf(buf + pos, need - (size_t)pos, i ? ",%s" : "%s", list[i]);
    if (buf && rc < 0 && n == 0)
        buf[0] = '\0';
    return buf;
}

/* The job's nodes by name; nodes that stored state names but Nodes no longer has are
 * named too, with a note: "n[1-4] (n[3-4] not in the configuration)". */
char *nodes_format(const ctld_t *c, const int *idx, int n)
{
    if (n <= 0 || !idx)
        return strdup("");
    const char **all = malloc((size_t)n * sizeof(char *));
    const char **gone = malloc((size_t)n * sizeof(char *));
    char *buf = NULL, *g = NULL;
    int ngone = 0;
    if (!all || !gone)
        goto out;
    for (int i = 0; i < n; i++) {
        bool configured;
        all[i] = ctld_node_name(c, idx[i], &configured);
        if (!configured)
            gone[ngone++] = all[i];
    }
    buf = compress(all, n);
    if (buf && ngone && (g = compress(gone, ngone))) {
        size_t len = strlen(buf) + strlen(g) + 40;
        char *b = malloc(len);
        if (b)
            snprintf(b, len, "%s (%s not in the configuration)", buf, g);
        free(buf);
        buf = b;
    }
out:
    free(g);
    free(all);
    free(gone);
    return buf;
}

bool job_has_node(const job_t *j, int idx)
{
    /* An expand in flight keeps its joining nodes after the committed ones; a shrink's
     * leaving nodes are among the committed ones. */
    int n = j->nalloc;
    if (j->state == JS_RESIZING && j->resize_target > j->nalloc)
        n += j->nresize;
    for (int k = 0; k < n && j->alloc; k++)
        if (j->alloc[k] == idx)
            return true;
    return false;
}

static json_t *cleanup_msg(const job_t *j, double grace);

bool jobs_cleaning_on(const job_t *j, int idx)
{
    if (j->state == JS_COMPLETING && j->clean_wait) {
        for (int k = 0; k < j->nalloc; k++)
            if (j->alloc[k] == idx && j->clean_wait[k])
                return true;
    } else if (j->state == JS_RESIZING && j->phase == RZ_RELEASING && j->resize_wait) {
        for (int k = 0; k < j->nresize; k++)
            if (j->resize_nodes[k] == idx && j->resize_wait[k])
                return true;
    }
    return false;
}

bool jobs_clean_again(ctld_t *c, job_t *j, node_t *n)
{
    if (j->state == JS_COMPLETING && j->clean_wait) {
        for (int k = 0; k < j->nalloc; k++)
            if (j->alloc[k] == n->index && !j->clean_wait[k]) {
                j->clean_wait[k] = 1; /* it was not asked (down then): it is now */
                j->cleanup_left++;
            }
    }
    if (!jobs_cleaning_on(j, n->index))
        return false;
    nodes_send(c, n->index, cleanup_msg(j, 0));
    return true;
}

job_t *jobs_msg_current(ctld_t *c, int64_t id, int64_t run, const node_t *n)
{
    job_t *j = idmap_get(c->jobs, id);
    if (!j || j->state == JS_PENDING || run != j->run || !job_has_node(j, n->index))
        return NULL;
    return j;
}

/* Node stealing may stop the job: it may run again (--requeue) and has not run again
 * MaxRequeue times yet. */
static bool may_interrupt(const ctld_t *c, const job_t *j)
{
    return j->requeue && j->restarts < c->cfg.max_requeue;
}

void jobs_update_interruptible(ctld_t *c, job_t *j)
{
    sched_set_interruptible(c->sched, j->id, may_interrupt(c, j));
}

/* The job as the engine takes it; its node sets live until the next spec_of. */
static sched_jobspec_t spec_of(ctld_t *c, const job_t *j)
{
    sched_jobspec_t spec = {
        .id = j->id,
        .submit = j->submit,
        .eligible = j->eligible_at,
        .user = j->uid,
        .type = j->type,
        .nodes = j->nodes,
        .min_nodes = j->min_nodes,
        .max_nodes = j->max_nodes,
        .constraint = j->constraint,
        .walltime = j->time_limit,
        /* what it declared, widened by what it was measured drawing (energy.c) */
        .power_min = j->seen_max > 0 ? j->seen_min : j->power_min,
        .power_max = j->seen_max > 0 ? j->seen_max : j->power_max,
        /* declared at submission, or measured over its last run (iomeas.c) */
        .io_intensity = j->io_intensity,
        .wait_adaptive = true, /* resizes go to the application: not before it attaches */
        .no_interrupt = !may_interrupt(c, j), /* node stealing stops only jobs that may run again */
        .account = j->account_id,
        .nice = j->nice,
        .tier = j->tier,
        .reservation = j->resv_id,
        .preempt = parts_preempt(c, j),
    };
    nsel_spec(c, &j->sel, &spec);
    return spec;
}

/* The idle handle only keeps the loop from blocking in poll while a pass is wanted:
 * the pass itself runs in the check phase, after every event of the iteration and
 * before the commit, so an end and the start it allows share one fsync. */
static void on_idle(uv_idle_t *h) { (void)h; }

/* One scheduling pass once the loop has handled this iteration's events: many
 * submissions arriving together are decided together. */
void jobs_want_schedule(ctld_t *c)
{
    if (!c->sched_wanted && !c->stopping) {
        c->sched_wanted = true;
        uv_idle_start(&c->sched_idle, on_idle);
    }
}

/* The job's node-seconds and energy up to now, before its nodes change. */
static void account(job_t *j, double now)
{
    if (j->alloc_since > 0 && now > j->alloc_since)
        j->node_seconds += (double)j->nalloc * (now - j->alloc_since);
    j->alloc_since = now;
    energy_account(j, now);
}

/* The engine names a job it refuses by its provisional id: drop that. */
static void unname(char *err)
{
    const char *colon = strstr(err, ": ");
    if (!strncmp(err, "job ", 4) && colon)
        memmove(err, colon + 2, strlen(colon + 2) + 1);
}

int jobs_check_shape(ctld_t *c, const job_t *j, sched_jobspec_t *spec, char *err, size_t errlen)
{
    *spec = spec_of(c, j);
    spec->id = 1; /* any id: only the job's shape is checked */
    int rc = sched_check(c->sched, spec, err, errlen);
    if (rc < 0) {
        unname(err);
        return rc;
    }
    /* checkpoint nodes run no jobs */
    int for_jobs = c->nnodes - ckptsvc_nodes(c);
    /* the engine starts all but moldable jobs at their requested size */
    int need = j->type == SCHED_MOLDABLE && j->min_nodes > 0 ? j->min_nodes : j->nodes;
    if (need > for_jobs) {
        int ck = c->nnodes - for_jobs;
        snprintf(err, errlen, "needs at least %d nodes but the cluster has %d for jobs (and %d "
                 "checkpoint node%s)", need, for_jobs, ck, ck > 1 ? "s" : "");
        return -EINVAL;
    }
    return 0;
}

/* Whether the job, as submitted, could ever run here; its spec for the engine. */
static int check_new(ctld_t *c, job_t *j, sched_jobspec_t *spec, char *err, size_t errlen)
{
    j->submit = ctld_now();
    int rc = nsel_resolve(c, j, err, errlen);
    return rc < 0 ? rc : jobs_check_shape(c, j, spec, err, errlen);
}

int jobs_will_run(ctld_t *c, job_t *j, double *start, int *size, char *err, size_t errlen)
{
    sched_jobspec_t spec;
    int rc = check_new(c, j, &spec, err, errlen);
    if (rc < 0)
        return rc;
    rc = sched_will_run(c->sched, &spec, WILL_RUN_AHEAD, start, size, err, errlen);
    if (rc < 0) {
        unname(err);
        return rc;
    }
    /* not before its --begin, nor before now (the engine's clock is its last pass's) */
    if (*start >= 0 && *start < j->submit)
        *start = j->submit;
    if (*start >= 0 && *start < j->begin)
        *start = j->begin;
    return rc;
}

int jobs_submit(ctld_t *c, job_t *j, char *err, size_t errlen)
{
    if (c->njobs_live + c->array_reserved >= c->cfg.max_jobs) {
        snprintf(err, errlen, "the queue is full (MaxJobs=%d)", c->cfg.max_jobs);
        return -EAGAIN;
    }
    sched_jobspec_t spec;
    int rc = check_new(c, j, &spec, err, errlen);
    if (rc < 0)
        return rc;
    j->state = JS_PENDING; /* a new job: where every lifecycle begins */
    /* a held one is written once, held (elig_enter would save it again to say so: a
     * held 10,000-element array wrote 20,000 rows) */
    snprintf(j->reason, sizeof(j->reason), "%s",
             j->hold == 2 ? "JobHeldAdmin" : j->hold == 1 ? "JobHeldUser" : "Priority");
    if (db_job_insert(c, j) < 0 ||
        db_job_event(c, j->id, j->submit, "submit", 0, 0, NULL, 0, NULL) < 0) {
        snprintf(err, errlen, "the controller could not record the job");
        return -EIO;
    }
    /* held, or waiting for a time or other jobs: out of the engine (eligible.c) */
    if (!elig_enter(c, j)) {
        idmap_put(c->jobs, j->id, j);
        c->njobs_live++;
        quota_count(c, j, 1);
        return 0;
    }
    spec = spec_of(c, j); /* with its id, and its node sets in the buffer of now */
    rc = sched_submit(c->sched, &spec, err, errlen);
    if (rc < 0) {
        elig_forget(c, j);
        return rc;
    }
    idmap_put(c->jobs, j->id, j);
    c->njobs_live++;
    quota_count(c, j, 1);
    jobs_want_schedule(c);
    return 0;
}

int jobs_to_engine(ctld_t *c, job_t *j)
{
    char err[SCHED_ERRLEN];
    sched_jobspec_t spec = spec_of(c, j);
    int rc = sched_submit(c->sched, &spec, err, sizeof(err));
    if (rc == 0 && j->wait_class > SCHED_CLASS_NORMAL) /* requeued by a failure: first */
        sched_set_class(c->sched, j->id, (sched_class_t)j->wait_class);
    if (rc < 0)
        fprintf(stderr, "ductiled: job %lld cannot enter the engine: %s\n", (long long)j->id, err);
    jobs_want_schedule(c);
    return rc;
}

/* The job is done everywhere: record its end and forget it. */
static void finish(ctld_t *c, job_t *j)
{
    double now = ctld_now();
    /* The batch node's clock says when the script ended: the controller may have heard
     * of it much later (it was down, or the node was away). */
    if (j->node_end > j->start && j->node_end < now)
        now = j->node_end;
    account(j, now);
    energy_settle(c, j, now);
    iomeas_settle(j, true); /* its measured I/O share, saved below */
    job_to(c, j, j->final, "every node is clean");
    j->end = now;
    if (j->state != JS_NODE_FAIL && strncmp(j->reason, "LaunchFailed", 12) &&
        strncmp(j->reason, "ResizeFailed", 12) && strcmp(j->reason, "EndedWhileNodeDaemonDown"))
        snprintf(j->reason, sizeof(j->reason), "%s", jstate_name(j->state));
    ckptsvc_job_ended(c, j); /* before the save: the agents' key is not kept */
    db_job_save(c, j);
    db_job_event(c, j->id, now, "end", j->nalloc, 0, j->alloc, j->nalloc, jstate_code(j->state));
    sched_clock(c->sched, ctld_now()); /* usage is charged to now */
    sched_remove(c->sched, j->id);
    elig_forget(c, j);
    idmap_del(c->jobs, j->id);
    idmap_del(c->placed, j->id);
    c->njobs_live--;
    quota_count(c, j, -1);
    job_free(j);
    c->elig_due = true; /* a job that waited for this one's end */
    jobs_want_schedule(c);
}

void jobs_requeue(ctld_t *c, job_t *j, const char *why)
{
    /* After a node failure it waits first of all (seed 003's BASELINE), after node
     * stealing just behind (wait_class, set when that was decided); the engine still
     * holds it (running or stopping) until here, so that its nodes stay taken while
     * cleaned. */
    sched_class_t cls = (sched_class_t)j->wait_class;
    j->requeue_at = 0;
    sched_clock(c->sched, ctld_now()); /* usage is charged to now */
    bool kept = sched_requeue(c->sched, j->id, cls) == 0;
    if (!kept)
        sched_remove(c->sched, j->id);
    account(j, ctld_now());
    energy_settle(c, j, ctld_now());
    iomeas_settle(j, false); /* the next run is measured afresh */
    free(j->alloc);
    j->alloc = NULL;
    j->nalloc = 0;
    job_to(c, j, JS_PENDING, why);
    j->launched = false;
    j->restarts++;
    j->start = 0; /* it waits: no start, no elapsed time until its next run */
    j->node_end = 0;
    snprintf(j->reason, sizeof(j->reason), "%s", why);
    sched_jobspec_t spec = spec_of(c, j);
    char err[SCHED_ERRLEN];
    if (kept) { /* what it was measured drawing; whether it may be stopped now */
        sched_set_job_power(c->sched, j->id, spec.power_min, spec.power_max);
        sched_set_interruptible(c->sched, j->id, !spec.no_interrupt);
    }
    else
        sched_submit(c->sched, &spec, err, sizeof(err));
    db_job_save(c, j);
    db_job_event(c, j->id, ctld_now(), "requeue", 0, 0, NULL, 0, why);
    jobs_want_schedule(c);
}

/* Every node of an ending job is clean: requeue it (node failure with --requeue) or
 * record its end. */
static void cleanup_complete(ctld_t *c, job_t *j)
{
    if (j->final != JS_PENDING) {
        finish(c, j);
        return;
    }
    if (ctld_mono() < j->requeue_at)
        return; /* the fence period after a node failure: jobs_check_timeouts */
    jobs_requeue(c, j, "Requeued");
}

void jobs_launched(ctld_t *c, job_t *j)
{
    if (j->launched)
        return;
    j->launched = true;
    db_job_save(c, j);
}

/* grace: seconds the node daemon lets the job's processes end on their own first. */
static json_t *cleanup_msg(const job_t *j, double grace)
{
    return json_pack("{s:s,s:I,s:i,s:f}",
                     "type", "job_cleanup",
                     "job", (json_int_t)j->id,
                     "run", j->run,
                     "grace", grace);
}

/* Ask every node of the job that is up to kill what is left and confirm. */
static void start_cleanup(ctld_t *c, job_t *j, jstate_t final)
{
    j->final = final;
    j->cleanup_left = 0;
    /* An expand in flight: its new nodes hold the job too, and are cleaned with the
     * others (from now on they count as the job's: their messages are about it). */
    int count = j->nalloc;
    if (j->state == JS_RESIZING && j->resize_target > j->nalloc) {
        account(j, ctld_now());
        count += j->nresize;
        j->nalloc = count;
    }
    job_to(c, j, JS_COMPLETING, jstate_name(final));
    free(j->clean_wait);
    j->clean_wait = calloc((size_t)count + 1, 1);
    for (int i = 0; i < count; i++) {
        node_t *n = &c->nodes[j->alloc[i]];
        if (i == 0 && j->batch_clean)
            continue; /* the batch node said so with the end: nothing is left there */
        /* A node whose daemon is away counts too: it confirms when it registers again
         * (reconcile), or goes down at NodeTimeout; meanwhile the job stays CG and
         * holds the node, where its processes may still run. */
        if (n->state == NS_UP && j->clean_wait) {
            nodes_send(c, n->index, cleanup_msg(j, 0));
            j->clean_wait[i] = 1;
            j->cleanup_left++;
        }
    }
    db_job_save(c, j);
    if (j->cleanup_left == 0)
        cleanup_complete(c, j);
}

int jobs_cancel(ctld_t *c, job_t *j, const char *why)
{
    if (j->state == JS_PENDING) {
        j->final = JS_CANCELLED;
        snprintf(j->reason, sizeof(j->reason), "%s", why);
        finish(c, j);
        return 0;
    }
    if (j->state == JS_COMPLETING) {
        if (j->final == JS_PENDING) { /* being ended to run again: it will not */
            j->final = JS_CANCELLED;
            j->requeue_at = 0;
            snprintf(j->reason, sizeof(j->reason), "%s", why);
            if (j->cleanup_left <= 0)
                finish(c, j);
            else
                db_job_save(c, j);
        }
        return 0;
    }
    start_cleanup(c, j, JS_CANCELLED);
    return 0;
}

/* A script's exit (kind 0) or signal (kind 1) into the job's exit code and signal, and
 * the final state it means. */
static jstate_t script_status(job_t *j, int kind, int code, bool timed_out)
{
    j->signal = kind == 1 ? code : 0;
    j->exit_code = kind == 1 ? 128 + code : code;
    if (timed_out)
        return JS_TIMEOUT;
    return kind == 0 && code == 0 ? JS_COMPLETED : JS_FAILED;
}

void jobs_script_ended(ctld_t *c, job_t *j, int kind, int code, bool timed_out, bool oom,
                       const char *error, bool clean, double node_end)
{
    if (j->state != JS_RUNNING && j->state != JS_RESIZING)
        return; /* already ending (cancel, node failure) */
    j->batch_clean = clean;
    j->node_end = node_end;
    jstate_t final;
    if (kind == 1) { /* killed by a signal */
        final = script_status(j, kind, code, timed_out);
    } else if (kind == 3) {
        /* Ended while its node daemon was away, and its shepherd, which records the
         * status, died with it: every process of the host died at once (a crash, a power
         * cycle). A node failure for the job: a --requeue job runs again (without the
         * fence of a node that went silent: its daemon is back and says nothing is left). */
        j->exit_code = -1;
        snprintf(j->reason, sizeof(j->reason), "EndedWhileNodeDaemonDown");
        if (j->requeue && j->restarts < c->cfg.max_requeue) {
            fprintf(stderr, "ductiled: job %lld ended while its node daemon was away, with no "
                    "status (the host's processes died): requeued\n", (long long)j->id);
            db_job_event(c, j->id, ctld_now(), "node_fail", j->nalloc, 0, NULL, 0, j->reason);
            j->requeue_at = 0;
            j->wait_class = SCHED_CLASS_FAILED;
            start_cleanup(c, j, JS_PENDING);
            return;
        }
        final = JS_FAILED;
    } else if (kind == 2) { /* could not start */
        j->exit_code = 127;
        final = JS_FAILED;
        fprintf(stderr, "ductiled: job %lld could not start: %s\n", (long long)j->id,
                error ? error : "?");
        snprintf(j->reason, sizeof(j->reason), "LaunchFailed:%s", error ? error : "");
    } else {
        final = script_status(j, kind, code, timed_out);
    }
    /* as Slurm says it: a script that failed (or was killed) after the kernel killed a
     * process of it for its memory; one that went on and succeeded did not */
    if (oom && final == JS_FAILED) {
        final = JS_OUT_OF_MEMORY;
        snprintf(j->reason, sizeof(j->reason), "OutOfMemory");
    }
    start_cleanup(c, j, final);
}

void jobs_late_end(ctld_t *c, const node_t *n, int64_t id, int64_t run, int kind, int code,
                   bool timed_out, double t_end)
{
    if ((kind != 0 && kind != 1) || t_end <= 0)
        return; /* no status, or one without a time: nothing to set the record right */
    job_t *j = idmap_get(c->jobs, id) ? NULL : db_job_find_finished(c, id);
    if (!j)
        return;
    if (j->state == JS_NODE_FAIL && j->restarts + 1 == run && j->nalloc > 0 &&
        j->alloc[0] == n->index && t_end <= j->end &&
        set_state(j, script_status(j, kind, code, timed_out), false, "an end reported late") == 0) {
        snprintf(j->reason, sizeof(j->reason), "EndReportedLate");
        j->end = t_end;
        fprintf(stderr, "ductiled: job %lld: node %s reports its end (%s %d) from before it "
                "was called down: %s, not NODE_FAIL\n", (long long)id, n->name,
                kind == 1 ? "signal" : "exit", code, jstate_name(j->state));
        db_job_save(c, j);
        db_job_event(c, id, ctld_now(), "end_corrected", 0, 0, NULL, 0, jstate_code(j->state));
    }
    job_free(j);
}

/* The new size holds: record it (with how long the resize took) and tell the engine. */
static void resize_commit(ctld_t *c, job_t *j)
{
    double now = ctld_now();
    account(j, now);
    int before = j->nalloc;
    const char *event = j->resize_target > before ? "expand" : "shrink";
    j->nalloc = j->resize_target;
    sched_clock(c->sched, ctld_now()); /* usage is charged to now */
    sched_resize_done(c->sched, j->id, true);
    jobs_oper_committed(c, j);
    job_to(c, j, JS_RUNNING, event);
    if (j->resize_why[0]) /* why it last changed */
        snprintf(j->reason, sizeof(j->reason), "%s", j->resize_why);
    char detail[64];
    snprintf(detail, sizeof(detail), "%.6f s", now - j->resize_started);
    db_job_save(c, j);
    db_job_event(c, j->id, now, event, before, j->nalloc, j->alloc, j->nalloc, detail);
    jobs_send_nodes(c, j);
    ckptsvc_resized(c, j, before);
    jobs_want_schedule(c);
}

void jobs_send_nodes(ctld_t *c, job_t *j)
{
    char *nl = nodes_format(c, j->alloc, j->nalloc);
    if (nl)
        nodes_send(c, j->alloc[0], json_pack("{s:s,s:I,s:i,s:s,s:i}", "type", "job_resized",
                                             "job", (json_int_t)j->id, "run", j->run,
                                             "nodelist", nl, "num_nodes", j->nalloc));
    free(nl);
}

static json_t *cleanup_msg(const job_t *j, double grace);

/* Tell the application, through its batch node: these nodes join, or leave. */
static void send_offer(ctld_t *c, job_t *j)
{
    bool expand = j->resize_target > j->nalloc;
    json_t *moving = json_array();
    for (int i = 0; i < j->nresize; i++)
        json_array_append_new(moving, json_string(c->nodes[j->resize_nodes[i]].name));
    int nafter = expand ? j->nalloc + j->nresize : j->resize_target;
    char *nl = nodes_format(c, j->alloc, nafter);
    j->offer++;
    j->phase = RZ_OFFERED;
    /* window: once accepted, how long the adaptation itself may take */
    nodes_send(c, j->alloc[0],
               json_pack("{s:s,s:I,s:i,s:I,s:s,s:i,s:i,s:o,s:s,s:f,s:f}", "type", "resize_offer",
                         "job", (json_int_t)j->id, "run", j->run, "offer", (json_int_t)j->offer, "op",
                         expand ? "expand" : "shrink", "before", j->nalloc, "after",
                         j->resize_target, "nodes", moving, "nodelist", nl ? nl : "",
                         "timeout", j->resize_deadline - ctld_mono(), "window",
                         c->cfg.resize_timeout));
    free(nl);
}

/* How long the processes of an application's leaving nodes may take to end on their
 * own after it committed a shrink, before they are signalled. */
#define SHRINK_GRACE 5.0

/* Release a shrink's leaving nodes: their processes go first, the nodes after. */
static void shrink_cleanup(ctld_t *c, job_t *j)
{
    j->phase = RZ_RELEASING;
    j->resize_left = 0;
    /* an application that committed a shrink is ending its processes there itself */
    double grace = j->attached ? SHRINK_GRACE : 0;
    for (int i = 0; i < j->nresize && j->resize_wait; i++) {
        j->resize_wait[i] = 0;
        if (c->nodes[j->resize_nodes[i]].state != NS_UP)
            continue; /* a node that is down has nothing left to clean */
        /* one whose daemon is away confirms when it registers again (reconcile) */
        nodes_send(c, j->resize_nodes[i], cleanup_msg(j, grace));
        j->resize_wait[i] = 1;
        j->resize_left++;
    }
    if (j->resize_left == 0)
        resize_commit(c, j);
}

/* One node of a resize confirmed (an expand's new node holds the job, or a shrink's
 * leaving node is clean). When the last one has: an expand goes to the application
 * (or commits at once without one), a shrink commits. */
static void resize_node_done(ctld_t *c, job_t *j, node_t *n, const char *event)
{
    (void)event;
    for (int i = 0; i < j->nresize; i++) {
        if (j->resize_nodes[i] != n->index || !j->resize_wait || !j->resize_wait[i])
            continue;
        j->resize_wait[i] = 0;
        if (--j->resize_left == 0) {
            if (j->resize_target > j->nalloc && j->attached)
                send_offer(c, j);
            else
                resize_commit(c, j);
        }
        return;
    }
}

/* Take back an offer (declined, timed out, the application went away): the job keeps
 * its committed nodes, an expand's reserved nodes are cleaned and returned. An
 * operator's resize under way ends declined (by the application) or withdrawn. */
static void withdraw(ctld_t *c, job_t *j, const char *why, bool declined)
{
    jobs_oper_not_done(j, declined, why);
    if (j->phase == RZ_OFFERED)
        nodes_send(c, j->alloc[0], json_pack("{s:s,s:I,s:i,s:I,s:s}",
                                             "type", "resize_withdraw",
                                             "job", (json_int_t)j->id,
                                             "run", j->run,
                                             "offer", (json_int_t)j->offer,
                                             "reason", why));
    if (j->resize_target > j->nalloc)
        for (int i = 0; i < j->nresize; i++)
            nodes_send(c, j->resize_nodes[i], cleanup_msg(j, 0));
    sched_resize_declined(c->sched, j->id, ctld_now()); /* not the same offer at once */
    sched_clock(c->sched, ctld_now()); /* usage is charged to now */
    sched_resize_done(c->sched, j->id, false);
    job_to(c, j, JS_RUNNING, why);
    db_job_save(c, j);
    db_job_event(c, j->id, ctld_now(), "resize_withdrawn", j->nalloc, j->resize_target, NULL, 0,
                 why);
    jobs_want_schedule(c);
}

#define RESIZE_FAILURES_MAX 3

/* The application accepted a resize and could not complete it (a new process died,
 * its window outlasted ResizeTimeout): its processes may be stuck in the middle of
 * it, so the job ends (a --requeue job runs again) with the reason. */
static void resize_failed(ctld_t *c, job_t *j, const char *why)
{
    fprintf(stderr, "ductiled: job %lld: resize %d -> %d failed: %s\n", (long long)j->id,
            j->nalloc, j->resize_target, why);
    db_job_event(c, j->id, ctld_now(), "resize_failed", j->nalloc, j->resize_target, NULL, 0,
                 why);
    /* A --requeue job runs again, but not for ever: an application that fails every
     * resize would be requeued in a loop. */
    bool again = j->requeue && ++j->resize_failures < RESIZE_FAILURES_MAX;
    snprintf(j->reason, sizeof(j->reason), "ResizeFailed:%s%s", why,
             j->requeue && !again ? " (the third time: not requeued)" : "");
    start_cleanup(c, j, again ? JS_PENDING : JS_FAILED);
}

static void set_adaptive(ctld_t *c, job_t *j)
{
    sched_set_adaptive(c->sched, j->id, j->attached && !j->inhibit);
}

/* What the application accepts (dt_set_size_limits, dt_set_offer_interval): the
 * engine's policies keep to it. Absent fields stay as they were. */
static void app_limits(ctld_t *c, job_t *j, const json_t *msg)
{
    char err[128];
    proto_limits_t l;
    if (proto_limits(msg, &l, err, sizeof(err)) < 0)
        return;
    if (l.survive >= 0)
        j->survive_loss = l.survive == 1;
    if (l.min < 0 && l.max < 0 && l.preferred < 0 && l.interval < 0)
        return; /* only survive: the sizes stay the job's own */
    sched_set_app_limits(c->sched, j->id, (int)l.min, (int)l.max, (int)l.preferred, l.interval);
    jobs_want_schedule(c);
}

void jobs_app_message(ctld_t *c, job_t *j, const char *type, const json_t *msg)
{
    char err[128];
    if (j->state != JS_RUNNING && j->state != JS_RESIZING)
        return;
    if (!strcmp(type, "app_attached") || !strcmp(type, "app_detached")) {
        j->attached = !strcmp(type, "app_attached");
        j->survive_loss = false; /* each leader says its own */
        const json_t *limits = json_object_get(msg, "limits");
        if (j->attached && json_is_object(limits))
            app_limits(c, j, limits); /* set before the attach: before any offer */
        set_adaptive(c, j);
        if (!j->attached && j->state == JS_RESIZING && j->phase == RZ_OFFERED)
            withdraw(c, j, "the application went away", false);
        else if (!j->attached && j->state == JS_RESIZING && j->phase == RZ_ADAPTING)
            resize_failed(c, j, "the application's leader went away during the resize");
        jobs_want_schedule(c);
    } else if (!strcmp(type, "app_inhibit")) {
        bool on;
        if (proto_bool_opt(msg, "on", true, &on, err, sizeof(err)) == 0) {
            j->inhibit = on;
            set_adaptive(c, j);
            jobs_want_schedule(c);
        }
    } else if (!strcmp(type, "app_mtct")) {
        double v;
        if (proto_num_opt(msg, "value", 0, 1e6, -1, &v, err, sizeof(err)) == 0 && v >= 0) {
            sched_set_mtct(c->sched, j->id, v);
            jobs_want_schedule(c);
        }
    } else if (!strcmp(type, "app_request")) {
        int64_t n;
        if (proto_int(msg, "nodes", 1, c->nnodes, &n, err, sizeof(err)) == 0 &&
            sched_request_resize(c->sched, j->id, (int)n, false, err, sizeof(err)) == 0)
            jobs_want_schedule(c);
    } else if (!strcmp(type, "app_limits")) {
        app_limits(c, j, msg);
    } else if (!strcmp(type, "app_ckpt_seen")) {
        const char *agents;
        if (proto_str(msg, "agents", 65536, &agents, err, sizeof(err)) == 0)
            ckptsvc_app_seen(c, j, agents);
    } else if (!strcmp(type, "app_ckpt_sync")) {
        double t;
        if (proto_num_opt(msg, "t_sync", 0, 1e9, -1, &t, err, sizeof(err)) == 0 && t >= 0)
            ckptsvc_app_sync(c, j, t);
    } else if (!strcmp(type, "app_resize_failed")) {
        int64_t offer;
        const char *why;
        if (proto_int(msg, "offer", 1, INT64_MAX, &offer, err, sizeof(err)) == 0 &&
            proto_str(msg, "reason", 200, &why, err, sizeof(err)) == 0 &&
            j->state == JS_RESIZING && offer == j->offer &&
            (j->phase == RZ_OFFERED || j->phase == RZ_ADAPTING))
            resize_failed(c, j, why);
    } else if (!strcmp(type, "app_answer") || !strcmp(type, "app_commit")) {
        int64_t offer;
        const char *answer = "commit";
        if (proto_int(msg, "offer", 1, INT64_MAX, &offer, err, sizeof(err)) < 0 ||
            (!strcmp(type, "app_answer") &&
             proto_str(msg, "answer", 16, &answer, err, sizeof(err)) < 0))
            return;
        if (j->state != JS_RESIZING || offer != j->offer ||
            (j->phase != RZ_OFFERED && j->phase != RZ_ADAPTING))
            return; /* an old offer: it was withdrawn */
        if (!strcmp(answer, "accept")) {
            if (j->phase == RZ_OFFERED) { /* the window opens: it has ResizeTimeout */
                j->phase = RZ_ADAPTING;
                j->resize_deadline = ctld_mono() + c->cfg.resize_timeout;
            }
        } else if (!strcmp(answer, "decline"))
            withdraw(c, j, "declined by the application", true);
        else if (!strcmp(answer, "commit")) {
            if (j->resize_target > j->nalloc)
                resize_commit(c, j);
            else
                shrink_cleanup(c, j);
        }
    }
}

void jobs_cleanup_done(ctld_t *c, job_t *j, node_t *n)
{
    if (j->state == JS_RESIZING && j->resize_target < j->nalloc) {
        if (j->phase == RZ_RELEASING)
            resize_node_done(c, j, n, "shrink"); /* one of the leaving nodes is clean */
        return;
    }
    if (j->state != JS_COMPLETING || !j->clean_wait)
        return;
    for (int k = 0; k < j->nalloc; k++)
        if (j->alloc[k] == n->index && j->clean_wait[k]) {
            j->clean_wait[k] = 0;
            if (--j->cleanup_left <= 0)
                cleanup_complete(c, j);
            return;
        }
}

static json_t *start_msg(ctld_t *c, const job_t *j, bool batch)
{
    char *nl = nodes_format(c, j->alloc, j->nalloc);
    json_t *m = json_pack("{s:s,s:I,s:i,s:b,s:s,s:s,s:I,s:I,s:f,s:i,s:s*}", "type", "job_start",
                          "job", (json_int_t)j->id, "run", j->run, "batch", batch, "user", j->user, "nodelist",
                          nl ? nl : "", "uid", (json_int_t)j->uid, "gid", (json_int_t)j->gid,
                          "time_limit", j->time_limit, "num_nodes", j->nalloc, "name", j->name);
    free(nl);
    if (m && j->requeue)
        json_object_set_new(m, "requeue", json_true()); /* ended by a node cut off from us */
    if (m && j->sel.mem > 0) /* its cgroups' memory.max on each node */
        json_object_set_new(m, "mem_mb", json_integer(j->sel.mem));
    if (m && j->umask >= 0) /* its processes' and output files' (launch.c) */
        json_object_set_new(m, "umask", json_integer(j->umask));
    if (m && j->array_id) /* an element of an array (arrays.c) */
        json_object_set_new(m, "array", json_pack("[I,i]", (json_int_t)j->array_id,
                                                  j->array_task));
    if (m) /* for the node's power model */
        json_object_set_new(m, "power", json_pack("[f,f]", j->power_min, j->power_max));
    if (m)
        ckptsvc_start_fields(j, m);
    if (m && batch) {
        proto_set_bytes(m, "script", j->script); /* any bytes: base64 unless UTF-8 */
        json_object_set_new(m, "cwd", json_string(j->cwd));
        json_object_set(m, "env", j->env);
        if (j->args)
            json_object_set(m, "args", j->args);
        if (j->out_path)
            json_object_set_new(m, "stdout", json_string(j->out_path));
        if (j->err_path)
            json_object_set_new(m, "stderr", json_string(j->err_path));
    }
    return m;
}

static void do_start(ctld_t *c, job_t *j, const sched_action_t *a, double now)
{
    free(j->alloc);
    j->alloc = malloc((size_t)a->nnodes * sizeof(int));
    memcpy(j->alloc, a->nodes, (size_t)a->nnodes * sizeof(int));
    j->nalloc = a->nnodes;
    job_to(c, j, JS_RUNNING, "started");
    j->start = now;
    j->alloc_since = now;
    if (c->waiting && idmap_count(c->waiting)) { /* an "after:" dependency on it */
        c->elig_due = true;
        jobs_want_schedule(c);
    }
    j->launched = false;
    j->run = j->restarts + 1;
    j->node_end = 0;
    j->attached = j->inhibit = false;
    j->oper_hold = 0; /* a new run (requeued) starts unheld */
    j->wait_class = SCHED_CLASS_NORMAL; /* until a failure or a steal requeues it */
    snprintf(j->reason, sizeof(j->reason), "%s", sched_reason_name(a->reason));
    db_job_save(c, j);
    db_job_event(c, j->id, now, "start", 0, j->nalloc, j->alloc, j->nalloc,
                 sched_reason_name(a->reason));
    if (!ckptsvc_before_launch(c, j)) /* else once its checkpoint agents answered */
        jobs_launch(c, j);
}

void jobs_launch(ctld_t *c, job_t *j)
{
    /* Other nodes first learn the job; the batch script starts on the first node. */
    for (int i = j->nalloc - 1; i >= 0; i--)
        nodes_send(c, j->alloc[i], start_msg(c, j, i == 0));
}

static void do_resize(ctld_t *c, job_t *j, const sched_action_t *a)
{
    free(j->resize_nodes);
    j->resize_nodes = malloc((size_t)a->nnodes * sizeof(int));
    memcpy(j->resize_nodes, a->nodes, (size_t)a->nnodes * sizeof(int));
    j->nresize = a->nnodes;
    j->resize_left = a->nnodes;
    free(j->resize_wait);
    j->resize_wait = malloc((size_t)a->nnodes + 1);
    if (j->resize_wait)
        memset(j->resize_wait, 1, (size_t)a->nnodes + 1);
    j->resize_target = a->nodes_after;
    j->resize_deadline = ctld_mono() + c->cfg.resize_timeout;
    j->resize_started = ctld_now();
    if (a->reason == SCHED_R_OPERATOR && j->oper == OP_PENDING)
        j->oper = OP_UNDERWAY;
    snprintf(j->resize_why, sizeof(j->resize_why), "%s", sched_reason_name(a->reason));
    job_to(c, j, JS_RESIZING, a->op == SCHED_OP_EXPAND ? "expand" : "shrink");
    j->phase = a->op == SCHED_OP_EXPAND ? RZ_JOINING : RZ_NONE;
    db_job_save(c, j);
    if (a->op == SCHED_OP_EXPAND) {
        /* The new nodes join at the end of the rank order. */
        int *na = realloc(j->alloc, (size_t)(j->nalloc + a->nnodes) * sizeof(int));
        if (!na)
            return;
        j->alloc = na;
        int before = j->nalloc;
        memcpy(j->alloc + before, a->nodes, (size_t)a->nnodes * sizeof(int));
        j->nalloc += a->nnodes;
        for (int i = before; i < j->nalloc; i++)
            nodes_send(c, j->alloc[i], start_msg(c, j, false));
        j->nalloc = before; /* committed size until every new node is ready */
    } else if (j->attached) {
        send_offer(c, j); /* the application lets the leaving processes go first */
    } else {
        shrink_cleanup(c, j);
    }
}

void jobs_node_ready(ctld_t *c, job_t *j, node_t *n)
{
    if (j->state == JS_RESIZING && j->resize_target > j->nalloc)
        resize_node_done(c, j, n, "expand");
}

static void check_one(int64_t id, void *val, void *arg)
{
    (void)id;
    ctld_t *c = arg;
    job_t *j = val;
    if (j->state == JS_COMPLETING && j->final == JS_PENDING && j->cleanup_left <= 0 &&
        j->requeue_at > 0 && ctld_mono() >= j->requeue_at) {
        jobs_requeue(c, j, "Requeued");
        return;
    }
    if (j->state != JS_RESIZING || j->phase == RZ_RELEASING || ctld_mono() < j->resize_deadline)
        return;
    if (j->phase == RZ_ADAPTING) {
        char why[160];
        snprintf(why, sizeof(why), "the application did not complete its %s %d -> %d within "
                 "ResizeTimeout (%g s)", j->resize_target > j->nalloc ? "expand" : "shrink",
                 j->nalloc, j->resize_target, c->cfg.resize_timeout);
        resize_failed(c, j, why);
        return;
    }
    withdraw(c, j, "no answer within ResizeTimeout", false);
}

void jobs_check_timeouts(ctld_t *c)
{
    idmap_foreach(c->jobs, check_one, c);
    if (sched_hold_due(c->sched, ctld_now()))
        jobs_want_schedule(c); /* an operator's hold ended: the policy may resize the job */
}

/* Node stealing (sfsj): the job is stopped so that a job that lost a node to a
 * failure restarts at once on its nodes. The engine picks only jobs that may run again
 * (--requeue); it holds their nodes until every one is clean, and then the job waits
 * again, behind the failed jobs and ahead of all others. A job already ending keeps
 * ending: the engine has its nodes when it is gone. */
static void do_interrupt(ctld_t *c, job_t *j, const sched_action_t *a)
{
    if (j->state != JS_RUNNING && j->state != JS_RESIZING)
        return;
    char why[64];
    bool preempted = a->reason == SCHED_R_PREEMPTED;
    snprintf(why, sizeof(why), "%s:job %lld", preempted ? "Preempted" : "NodeStolen",
             (long long)a->for_job);
    fprintf(stderr, "ductiled: job %lld: stopped to give its %d node%s to job %lld, %s; it will "
            "run again\n", (long long)j->id, j->nalloc, j->nalloc == 1 ? "" : "s",
            (long long)a->for_job,
            preempted ? "of a higher partition tier (preemption)" : "which lost a node (node "
                                                                      "stealing)");
    db_job_event(c, j->id, ctld_now(), "interrupt", j->nalloc, 0, j->alloc, j->nalloc, why);
    /* stolen for a failed job: it waits ahead of the rest; preempted: in its place */
    j->wait_class = preempted ? SCHED_CLASS_NORMAL : SCHED_CLASS_INTERRUPTED;
    snprintf(j->reason, sizeof(j->reason), "%s", why);
    start_cleanup(c, j, JS_PENDING);
}

int jobs_signal(ctld_t *c, job_t *j, int sig, int scope, char *err, size_t errlen)
{
    if (j->state != JS_RUNNING && j->state != JS_RESIZING) {
        snprintf(err, errlen, "it is %s: only running jobs are signalled",
                 j->state == JS_COMPLETING ? "ending" : jstate_name(j->state));
        return -EINVAL;
    }
    for (int i = 0; i < j->nalloc; i++) /* its script's and its steps' processes */
        nodes_send(c, j->alloc[i], json_pack("{s:s,s:I,s:i,s:i}", "type", "job_signal", "job",
                                             (json_int_t)j->id, "signal", sig, "scope", scope));
    return 0;
}

int jobs_requeue_by_hand(ctld_t *c, job_t *j, char *err, size_t errlen)
{
    if (j->state != JS_RUNNING && j->state != JS_RESIZING) {
        snprintf(err, errlen, "it is %s: only running jobs are requeued",
                 j->state == JS_COMPLETING ? "ending" : jstate_name(j->state));
        return -EINVAL;
    }
    db_job_event(c, j->id, ctld_now(), "interrupt", j->nalloc, 0, j->alloc, j->nalloc,
                 "requeued by hand");
    j->wait_class = SCHED_CLASS_NORMAL; /* back in its place by submission time */
    snprintf(j->reason, sizeof(j->reason), "Requeued");
    start_cleanup(c, j, JS_PENDING);
    return 0;
}

/* A pass that took longer than this spaces the next one by twice its time: after a
 * controller restart with 100,000 jobs queued, every node's registration asked for a
 * pass of its own, and the registrations waited behind them. Passes of a few
 * milliseconds (nearly all) are not spaced. */
#define PASS_PACE_MS 5.0

void jobs_schedule(ctld_t *c)
{
    c->sched_wanted = false;
    uv_idle_stop(&c->sched_idle);
    if (c->stopping)
        return;
    double t0 = stats_clock();
    if (c->elig_due)
        elig_review(c);
    double now = ctld_now();
    const sched_action_t *acts;
    size_t n;
    sched_schedule(c->sched, now, &acts, &n);
    for (size_t i = 0; i < n; i++) {
        job_t *j = idmap_get(c->jobs, acts[i].job);
        if (!j)
            continue;
        if (acts[i].op == SCHED_OP_START)
            do_start(c, j, &acts[i], now);
        else if (acts[i].op == SCHED_OP_INTERRUPT)
            do_interrupt(c, j, &acts[i]);
        else
            do_resize(c, j, &acts[i]);
    }
    double took = stats_clock() - t0;
    stats_add(&c->pass_stats, took);
    c->pass_not_before = took > PASS_PACE_MS ? ctld_mono() + 2 * took / 1000 : 0;
}

static void on_pace(uv_timer_t *h) { jobs_want_schedule(h->data); }

bool jobs_pass_paced(ctld_t *c)
{
    double wait = c->pass_not_before - ctld_mono();
    if (wait <= 0)
        return false;
    c->sched_wanted = false;
    uv_idle_stop(&c->sched_idle);
    if (!uv_is_active((uv_handle_t *)&c->sched_pace))
        uv_timer_start(&c->sched_pace, on_pace, (uint64_t)(wait * 1000) + 1, 0);
    return true;
}

typedef struct nf_ctx {
    ctld_t *c;
    node_t *n;
    job_t **hit;
    int nhit;
} nf_ctx_t;

static void find_on_node(int64_t id, void *val, void *arg)
{
    (void)id;
    nf_ctx_t *x = arg;
    job_t *j = val;
    if (j->state == JS_PENDING)
        return;
    for (int i = 0; i < j->nalloc; i++)
        if (j->alloc[i] == x->n->index) {
            x->hit[x->nhit++] = j;
            return;
        }
}

/* The job runs on without the failed node n (its application asked for it with
 * dt_set_survive_loss, and the engine agrees: a running malleable job above its
 * minimum, n not its first node). Like a committed shrink, but of a node in the middle
 * of the rank order, with nothing to wait for: the application is told after the fact
 * (nodes_lost) and redoes what the processes there held. */
static bool run_on_without(ctld_t *c, job_t *j, node_t *n)
{
    int64_t owner;
    if (j->state != JS_RUNNING || !j->attached || !j->survive_loss ||
        sched_failure_outcome(c->sched, n->index, &owner) != SCHED_FAIL_SHRUNK ||
        owner != j->id)
        return false;
    sched_failure_t what;
    sched_clock(c->sched, ctld_now()); /* usage is charged to now */
    sched_node_failed(c->sched, n->index, &owner, &what);
    double now = ctld_now();
    account(j, now);
    int before = j->nalloc;
    sched_jobinfo_t info; /* the engine's list without the node, in rank order */
    if (sched_job_info(c->sched, j->id, &info) == 0 && info.nalloc < j->nalloc) {
        memcpy(j->alloc, info.nodes, (size_t)info.nalloc * sizeof(int));
        j->nalloc = info.nalloc;
    }
    char why[96];
    snprintf(why, sizeof(why), "NodeFail:%s", n->name);
    db_job_save(c, j);
    db_job_event(c, j->id, now, "shrink", before, j->nalloc, j->alloc, j->nalloc, why);
    jobs_send_nodes(c, j);
    char *nl = nodes_format(c, j->alloc, j->nalloc);
    nodes_send(c, j->alloc[0],
               json_pack("{s:s,s:I,s:[s],s:i,s:i,s:s}", "type", "nodes_lost", "job",
                         (json_int_t)j->id, "nodes", n->name, "before", before, "after",
                         j->nalloc, "nodelist", nl ? nl : ""));
    free(nl);
    fprintf(stderr, "ductiled: job %lld: node %s failed; it runs on %d nodes without it\n",
            (long long)j->id, n->name, j->nalloc);
    ckptsvc_resized(c, j, before);
    jobs_want_schedule(c);
    return true;
}

/* A node we cannot hear may still run the job (a network cut, a frozen daemon): its
 * daemon ends what it runs once it finds itself cut off for NodeTimeout, TERM then KILL
 * after KillWait. A job requeued after a node failure runs again no sooner. */
static double requeue_fence(const ctld_t *c)
{
    return ctld_mono() + c->cfg.node_timeout + c->cfg.kill_wait + 1;
}

void jobs_node_failed(ctld_t *c, node_t *n)
{
    nf_ctx_t x = {.c = c, .n = n, .hit = malloc(idmap_count(c->jobs) * sizeof(job_t *) + 1)};
    if (!x.hit)
        return;
    idmap_foreach(c->jobs, find_on_node, &x); /* collect first: finishing changes the map */
    for (int k = 0; k < x.nhit; k++) {
        job_t *j = x.hit[k];
        if (j->state == JS_COMPLETING) {
            jobs_cleanup_done(c, j, n); /* a down node has nothing left to clean */
            continue;
        }
        /* A resize the application has not taken up (its new nodes still joining, or
         * its offer unanswered) is withdrawn first: the job then fares as a running job
         * does, and may run on without the node. */
        if (j->state == JS_RESIZING && (j->phase == RZ_JOINING || j->phase == RZ_OFFERED)) {
            char why[96];
            snprintf(why, sizeof(why), "node %s failed", n->name);
            withdraw(c, j, why, false);
        }
        if (run_on_without(c, j, n))
            continue;
        /* a job that keeps losing nodes (or taking them down) is not run for ever */
        bool again = j->requeue && j->restarts < c->cfg.max_requeue;
        if (j->requeue && !again)
            snprintf(j->reason, sizeof(j->reason), "NodeFail:%s (run %d time%s, MaxRequeue=%d)",
                     n->name, j->restarts + 1, j->restarts ? "s" : "", c->cfg.max_requeue);
        else
            snprintf(j->reason, sizeof(j->reason), "NodeFail:%s", n->name);
        db_job_event(c, j->id, ctld_now(), "node_fail", j->nalloc, 0, &n->index, 1, j->reason);
        if (again) {
            j->requeue_at = requeue_fence(c);
            j->wait_class = SCHED_CLASS_FAILED;
        }
        start_cleanup(c, j, again ? JS_PENDING : JS_NODE_FAIL);
    }
    free(x.hit);
}

void jobs_restore(ctld_t *c, job_t *j)
{
    char err[SCHED_ERRLEN];
    /* its nodes from the configuration as it is now; a running job keeps its own */
    if (nsel_resolve(c, j, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductiled: job %lld: %s\n", (long long)j->id, err);
        /* no node rather than any node: the engine refuses it (NotRestorable) */
        if (j->state == JS_PENDING)
            nsel_no_node(c, &j->sel);
    }
    sched_jobspec_t spec = spec_of(c, j);
    int rc;
    if (j->state == JS_PENDING) {
        rc = 0;
        if (elig_enter(c, j)) { /* else it waits, out of the engine (eligible.c) */
            rc = sched_submit(c->sched, &spec, err, sizeof(err));
            if (rc == 0 && j->wait_class > SCHED_CLASS_NORMAL) /* requeued by a failure: first */
                sched_set_class(c->sched, j->id, (sched_class_t)j->wait_class);
        }
        c->elig_due = true;
    } else {
        j->run = j->restarts + 1;
        j->unconfirmed = true; /* until its batch node reports (nodes.c) */
        if (j->state == JS_RESIZING) {
            /* An interrupted resize is withdrawn: the job keeps its committed nodes; the
             * node daemons of an expand's reserved nodes, when they register, are told
             * to clean up the job (nodes.c, reconcile). */
            job_to(c, j, JS_RUNNING, "restart withdrew its resize");
            j->resize_lost = true; /* recorded by jobs_after_restore */
        }
        rc = sched_restore_running(c->sched, &spec, j->start, j->alloc, j->nalloc, err, sizeof(err));
        if (rc < 0 && (spec.allowed || spec.required)) {
            /* its nodes no longer match what it asked (the configuration changed): it
             * runs on where it is, and grows anywhere */
            fprintf(stderr, "ductiled: job %lld: %s: its node selection is dropped\n",
                    (long long)j->id, err);
            spec.allowed = spec.required = NULL;
            rc = sched_restore_running(c->sched, &spec, j->start, j->alloc, j->nalloc, err,
                                       sizeof(err));
        }
        if (rc == 0) /* its usage since the last save, the time away included */
            sched_restore_charged(c->sched, j->id, accounts_usage_until(c));
    }
    if (rc < 0) {
        fprintf(stderr, "ductiled: job %lld cannot be restored (%s): marked failed\n",
                (long long)j->id, err);
        job_to(c, j, JS_FAILED, "not restorable");
        j->end = ctld_now();
        snprintf(j->reason, sizeof(j->reason), "NotRestorable");
        db_job_save(c, j);
        job_free(j);
        return;
    }
    if (j->state == JS_COMPLETING && j->final == JS_PENDING) {
        if (j->wait_class == SCHED_CLASS_FAILED) /* the fence starts again */
            j->requeue_at = requeue_fence(c);
        else if (j->wait_class == SCHED_CLASS_INTERRUPTED) /* its nodes go to a failed job */
            sched_set_stopping(c->sched, j->id);
    }
    if (j->state == JS_COMPLETING) {
        j->cleanup_left = j->nalloc; /* each node confirms again, or is found clean */
        j->clean_wait = malloc((size_t)j->nalloc + 1);
        if (j->clean_wait)
            memset(j->clean_wait, 1, (size_t)j->nalloc + 1);
    }
    idmap_put(c->jobs, j->id, j);
    track_placed(c, j);
    c->njobs_live++;
    quota_count(c, j, 1);
}

/* A restarted controller numbers a job's next step after those on record. */
static void restore_step_numbers(int64_t id, void *val, void *arg)
{
    job_t *j = val;
    int max = db_steps_max(arg, id);
    if (max > j->nsteps)
        j->nsteps = max;
}

static void record_lost_resize(int64_t id, void *val, void *arg)
{
    (void)id;
    job_t *j = val;
    ctld_t *c = arg;
    if (!j->resize_lost)
        return;
    j->resize_lost = false;
    db_job_save(c, j);
    db_job_event(c, j->id, ctld_now(), "resize_withdrawn", j->nalloc, j->nalloc, NULL, 0,
                 "controller restarted");
}

void jobs_after_restore(ctld_t *c)
{
    idmap_foreach(c->jobs, record_lost_resize, c);
    idmap_foreach(c->jobs, restore_step_numbers, c);
    ckptsvc_after_restore(c);
}

json_t *job_to_json(const ctld_t *c, const job_t *j, bool full)
{
    char *nl = nodes_format(c, j->alloc, j->nalloc);
    double now = ctld_now();
    double elapsed = j->start > 0 ? ((j->end > 0 ? j->end : now) - j->start) : 0;
    double ns = j->node_seconds;
    if (!jstate_final(j->state) && j->alloc_since > 0)
        ns += (double)j->nalloc * (now - j->alloc_since);
    const char *reason = j->reason;
    char buf[64];
    double expected = -1; /* the engine's planned start (its reservation), if it has one */
    double prio = NAN;    /* a waiting job's priority in the engine */
    if (j->state == JS_PENDING && c->sched) {
        sched_jobinfo_t info;
        if (sched_job_info(c->sched, j->id, &info) == 0) {
            snprintf(buf, sizeof(buf), "%s", sched_reason_name(info.reason));
            reason = buf;
            expected = info.reserved_start;
            sched_prio_info_t p;
            if (sched_job_priority(c->sched, j->id, &p) == 0)
                prio = p.priority;
        }
    }
    json_t *o = json_pack("{s:I,s:s,s:s,s:s,s:s,s:s,s:i,s:s,s:s,s:f,s:f,s:f,s:f,s:f,s:i,s:i,s:f}",
                          "id", (json_int_t)j->id, "name", j->name ? j->name : "", "user",
                          j->user ? j->user : "", "state", jstate_code(j->state), "state_name",
                          jstate_name(j->state), "type", sched_type_name(j->type), "nodes",
                          j->nalloc ? j->nalloc : j->nodes, "nodelist", nl ? nl : "", "reason",
                          reason, "submit", j->submit, "start", j->start, "end", j->end,
                          "time_limit", j->time_limit, "elapsed", elapsed, "exit_code",
                          j->exit_code, "signal", j->signal, "node_seconds", ns);
    if (o)
        json_object_set_new(o, "energy", json_real(j->energy));
    if (o && expected > 0) /* queue --start */
        json_object_set_new(o, "expected_start", json_real(expected));
    else if (o && j->state == JS_PENDING && j->begin > now) /* not before its --begin */
        json_object_set_new(o, "expected_start", json_real(j->begin));
    if (o) {
        json_object_set_new(o, "account", json_string(j->account ? j->account : ""));
        json_object_set_new(o, "nice", json_integer(j->nice));
        if (j->partition)
            json_object_set_new(o, "partition",
                                json_string(j->state == JS_PENDING || jstate_final(j->state)
                                                ? j->partition
                                                : parts_running_in(c, j)));
        if (!isnan(prio))
            json_object_set_new(o, "priority", json_real(prio));
        if (j->reservation)
            json_object_set_new(o, "reservation", json_string(j->reservation));
        char lt[256];
        if (j->state == JS_PENDING && accounts_limit_text(c, j, lt, sizeof(lt)))
            json_object_set_new(o, "limit", json_string(lt));
    }
    if (o && j->array_id) { /* "12_3" */
        json_object_set_new(o, "array_id", json_integer(j->array_id));
        json_object_set_new(o, "array_task", json_integer(j->array_task));
    }
    free(nl);
    if (full && o) {
        json_object_set_new(o, "min_nodes", json_integer(j->min_nodes));
        json_object_set_new(o, "max_nodes", json_integer(j->max_nodes));
        json_object_set_new(o, "requested_nodes", json_integer(j->nodes));
        sched_jobinfo_t info;
        if (j->type == SCHED_MALLEABLE && c->sched && sched_job_info(c->sched, j->id, &info) == 0) {
            if (info.mtct >= 0)
                json_object_set_new(o, "mtct", json_real(info.mtct));
            if (info.app_limits) /* what its application accepts (dt_set_size_limits) */
                json_object_set_new(o, "app_limits",
                                    json_pack("{s:i,s:i,s:i,s:f}", "min", info.app_min, "max",
                                              info.app_max, "preferred", info.app_pref,
                                              "interval", info.app_interval));
            if (j->attached && j->survive_loss) /* dt_set_survive_loss */
                json_object_set_new(o, "survives_node_loss", json_true());
        }
        json_object_set_new(o, "constraint", json_string(sched_constraint_name(j->constraint)));
        nsel_show(&j->sel, o);
        json_object_set_new(o, "power", json_pack("{s:f,s:f,s:s,s:f}", "min", j->power_min, "max",
                                                  j->power_max, "from", j->power_from, "draw",
                                                  j->power_w));
        if (j->io_intensity > 0 || j->io_from[0]) { /* declared, or measured (iomeas.c) */
            json_object_set_new(o, "io_intensity", json_real(j->io_intensity));
            json_object_set_new(o, "io_from", json_string(j->io_from[0] ? j->io_from
                                                                        : "declared"));
        }
        /* this run's own measured I/O share: at its end, or so far while it runs */
        if (j->state >= JS_COMPLETED ? j->io_measured > 0 : j->io_secs > 0)
            json_object_set_new(o, "io_measured", json_real(j->state >= JS_COMPLETED
                                                                ? j->io_measured
                                                                : iomeas_mean(j)));
        json_object_set_new(o, "requeue", json_boolean(j->requeue));
        if (j->hold) /* eligible.c */
            json_object_set_new(o, "held", json_string(j->hold == 2 ? "operator" : "user"));
        if (j->begin > 0)
            json_object_set_new(o, "begin", json_real(j->begin));
        if (j->depend)
            json_object_set_new(o, "dependency", json_string(j->depend));
        if (j->array_max)
            json_object_set_new(o, "array_max", json_integer(j->array_max));
        if (j->ck_want)
            json_object_set_new(o, "checkpoint_agents",
                                json_pack("{s:s,s:s,s:s,s:f}", "agents", j->ck_agents ? j->ck_agents : "",
                                          "nodes", j->ck_where ? j->ck_where : "", "state",
                                          j->state >= JS_COMPLETED ? "ended"
                                          : j->ck_addr && !j->ck_more ? "starting"
                                          : !j->ck_agents ? "not yet"
                                          : *j->ck_agents ? "running" : "none",
                                          "node_seconds", j->ck_node_s));
        json_object_set_new(o, "restarts", json_integer(j->restarts));
        json_object_set_new(o, "cwd", json_string(j->cwd ? j->cwd : ""));
        json_object_set_new(o, "stdout", json_string(j->out_path ? j->out_path : ""));
        json_object_set_new(o, "stderr", json_string(j->err_path ? j->err_path : ""));
    }
    /* the operator's resize: while it pends or is under way, everywhere; its outcome
     * in show */
    if (o && (full || j->oper == OP_PENDING || j->oper == OP_UNDERWAY)) {
        json_t *op = jobs_oper_json(c, j);
        if (op)
            json_object_set_new(o, "operator_resize", op);
    }
    if (o && j->oper_hold > now && (j->state == JS_RUNNING || j->state == JS_RESIZING))
        json_object_set_new(o, "hold", json_pack("{s:i,s:o}", "nodes", j->nalloc, "until",
                                                 isinf(j->oper_hold) ? json_null()
                                                                     : json_real(j->oper_hold)));
    return o;
}
