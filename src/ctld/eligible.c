/* Pending jobs the engine does not see yet: held (`ductile hold`, `submit --hold`),
 * waiting for their begin time (`--begin`) or for other jobs (`--dependency`). They stay
 * out of the engine, so that no policy plans for them (no reservation is made for a job
 * whose dependency is unmet), and enter it with their submission time, so their place
 * in the queue, once nothing holds them. They wait in c->waiting; their reason says
 * why, in Slurm's words: JobHeldUser, JobHeldAdmin, BeginTime, Dependency,
 * DependencyNeverSatisfied. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld.h"
#include "strparse.h"

typedef enum { DEP_MET, DEP_WAIT, DEP_NEVER } dep_t;

typedef struct single {
    uint32_t uid;
    const char *name;
    int64_t self;
    bool found;
} single_t;

static void earlier_twin(int64_t id, void *val, void *arg)
{
    single_t *s = arg;
    const job_t *o = val;
    if (id < s->self && o->uid == s->uid && o->name && !strcmp(o->name, s->name))
        s->found = true;
}

/* The state a job a dependency names is in, for one kind of condition (0 after, 1
 * afterany, 2 afterok, 3 afternotok); *settled: it will not change (that job, or every
 * element of that array, has ended). -1 and err: no such job (at submission) or the
 * database cannot say. A live job that is not an array is answered from memory; the
 * database (by its primary key, and the array_id index) only for the others. */
static int one_job(ctld_t *c, int kind, int64_t id, bool submitting, dep_t *out, bool *settled,
                   char *err, size_t errlen)
{
    const job_t *o = idmap_get(c->jobs, id);
    *settled = false;
    if (o && o->array_id != o->id) { /* after: once it has started; the others once it ended */
        *out = kind == 0 && o->state != JS_PENDING ? DEP_MET : DEP_WAIT;
        return 0;
    }
    int live, succeeded, failed, started;
    /* an array (named by its id, its first element's): every element, as in Slurm */
    if (db_array_states(c, id, &live, &succeeded, &failed, &started) == 0 &&
        live + succeeded + failed > 0) {
        if (kind == 0)
            *out = started || !live ? DEP_MET : DEP_WAIT;
        else if (kind == 2 && failed)
            *out = DEP_NEVER;
        else if (live)
            *out = DEP_WAIT;
        else
            *out = kind == 3 && !failed ? DEP_NEVER : DEP_MET;
        *settled = !live;
        return 0;
    }
    if (o) {
        *out = kind == 0 && o->state != JS_PENDING ? DEP_MET : DEP_WAIT;
        return 0;
    }
    jstate_t st;
    int rc = db_job_final(c, id, &st);
    if (rc < 0) {
        snprintf(err, errlen, "cannot read job %lld from the database", (long long)id);
        return -1;
    }
    if (rc == 1 && !jstate_final(st)) { /* live, not loaded yet (a restart's load) */
        *out = kind == 0 && st != JS_PENDING ? DEP_MET : DEP_WAIT;
        return 0;
    }
    if (rc == 0) {
        if (submitting) {
            snprintf(err, errlen, "job %lld does not exist", (long long)id);
            return -1;
        }
        *out = DEP_NEVER; /* gone from the database: it will never end again */
        *settled = true;
        return 0;
    }
    bool ok = st == JS_COMPLETED;
    *out = (kind == 2 && !ok) || (kind == 3 && ok) ? DEP_NEVER : DEP_MET;
    *settled = true;
    return 0;
}

/* What a waiting job's dependency has settled so far (j->dep_done), so that a review
 * asks only about the jobs still live: a 500-term dependency on jobs long ended, or a
 * chain of thousands, asks the database once per job named, not at every pass. NULL
 * at submission (nothing to keep). */
typedef struct depmemo {
    job_t *j;
    size_t pos; /* the index of the next job id in the dependency's order */
} depmemo_t;

static int memo_job(ctld_t *c, depmemo_t *m, int kind, int64_t id, bool submitting, dep_t *out,
                    char *err, size_t errlen)
{
    size_t k = m ? m->pos++ : 0;
    if (m && k < m->j->dep_ndone && m->j->dep_done[k]) {
        *out = m->j->dep_done[k] == 1 ? DEP_MET : DEP_NEVER;
        return 0;
    }
    bool settled;
    if (one_job(c, kind, id, submitting, out, &settled, err, errlen) < 0)
        return -1;
    if (m && settled) {
        if (k >= m->j->dep_ndone) {
            size_t n = k < 8 ? 8 : 2 * k;
            unsigned char *v = realloc(m->j->dep_done, n);
            if (!v)
                return 0; /* asked again next time */
            memset(v + m->j->dep_ndone, 0, n - m->j->dep_ndone);
            m->j->dep_done = v;
            m->j->dep_ndone = n;
        }
        m->j->dep_done[k] = *out == DEP_MET ? 1 : 2;
    }
    return 0;
}

/* One condition of job `self` (0 at submission), "afterok:12:13" or "singleton". */
static int one_term(ctld_t *c, depmemo_t *m, const char *term, uint32_t uid, const char *name,
                    int64_t self, dep_t *out, char *err, size_t errlen)
{
    if (!strcmp(term, "singleton")) {
        single_t s = {.uid = uid, .name = name, .self = self ? self : INT64_MAX};
        idmap_foreach(c->jobs, earlier_twin, &s);
        *out = s.found ? DEP_WAIT : DEP_MET;
        return 0;
    }
    static const char *const kinds[] = {"after", "afterany", "afterok", "afternotok"};
    const char *colon = strchr(term, ':');
    size_t n = colon ? (size_t)(colon - term) : strlen(term);
    int kind = -1;
    for (int k = 0; k < 4; k++)
        if (strlen(kinds[k]) == n && !strncmp(term, kinds[k], n))
            kind = k;
    if (kind < 0) {
        snprintf(err, errlen, "'%.*s' is not a kind of dependency (after, afterany, afterok, "
                 "afternotok, singleton)", (int)(n > 40 ? 40 : n), term);
        return -1;
    }
    if (!colon || !colon[1]) {
        snprintf(err, errlen, "%s needs job ids: %s:JOBID[:JOBID...]", kinds[kind], kinds[kind]);
        return -1;
    }
    bool wait = false, never = false;
    for (const char *p = colon + 1; *p;) {
        size_t len = strcspn(p, ":");
        char num[24];
        long id;
        snprintf(num, sizeof(num), "%.*s", (int)(len < sizeof(num) ? len : sizeof(num) - 1), p);
        if (len >= sizeof(num) || strparse_long(num, 1, 1L << 53, &id) < 0) {
            snprintf(err, errlen, "'%.60s': job ids are whole numbers, separated by ':'", term);
            return -1;
        }
        p += len + (p[len] == ':');
        if (id == self) {
            snprintf(err, errlen, "a job cannot depend on itself");
            return -1;
        }
        dep_t d;
        if (memo_job(c, m, kind, id, self == 0, &d, err, errlen) < 0)
            return -1;
        wait = wait || d == DEP_WAIT;
        never = never || d == DEP_NEVER;
    }
    *out = never ? DEP_NEVER : wait ? DEP_WAIT : DEP_MET;
    return 0;
}

/* The whole --dependency: conditions joined by ',' (all of them) or by '?' (any). */
static int evaluate(ctld_t *c, job_t *j, const char *spec, uint32_t uid, const char *name,
                    int64_t self, dep_t *out, char *err, size_t errlen)
{
    bool any = strchr(spec, '?') != NULL;
    if (any && strchr(spec, ',')) {
        snprintf(err, errlen, "join the conditions with ',' (all of them) or with '?' (any of "
                 "them), not both");
        return -1;
    }
    if (strlen(spec) > 1024) {
        snprintf(err, errlen, "longer than 1024 characters");
        return -1;
    }
    char copy[1032];
    snprintf(copy, sizeof(copy), "%s", spec);
    int met = 0, wait = 0, terms = 0;
    const char *sep = any ? "?" : ",";
    char *save = NULL;
    depmemo_t memo = {.j = j}, *m = j ? &memo : NULL;
    for (char *t = strtok_r(copy, sep, &save); t; t = strtok_r(NULL, sep, &save)) {
        dep_t d;
        if (one_term(c, m, t, uid, name, self, &d, err, errlen) < 0)
            return -1;
        terms++;
        met += d == DEP_MET;
        wait += d == DEP_WAIT;
    }
    if (!terms) {
        snprintf(err, errlen, "no condition given");
        return -1;
    }
    if (any)
        *out = met ? DEP_MET : wait ? DEP_WAIT : DEP_NEVER;
    else
        *out = met == terms ? DEP_MET : wait + met == terms ? DEP_WAIT : DEP_NEVER;
    return 0;
}

int elig_check_dependency(ctld_t *c, const char *spec, uint32_t uid, const char *name, char *err,
                          size_t errlen)
{
    dep_t d;
    return evaluate(c, NULL, spec, uid, name, 0, &d, err, errlen);
}

/* Why j may not enter the engine now; NULL: nothing holds it. */
static const char *holds_it(ctld_t *c, job_t *j, double now)
{
    if (j->hold == 2)
        return "JobHeldAdmin";
    if (j->hold == 1)
        return "JobHeldUser";
    if (j->begin > now)
        return "BeginTime";
    if (j->depend) {
        dep_t d;
        char err[256];
        if (evaluate(c, j, j->depend, j->uid, j->name ? j->name : "", j->id, &d, err,
                     sizeof(err)) < 0)
            return "Dependency"; /* the database could not say: ask again later */
        if (d != DEP_MET)
            return d == DEP_WAIT ? "Dependency" : "DependencyNeverSatisfied";
    }
    if (parts_down(c, j))
        return "PartitionDown";
    return arrays_throttled(c, j) ? "JobArrayTaskLimit" : NULL;
}

static void set_reason(ctld_t *c, job_t *j, const char *why)
{
    if (strcmp(j->reason, why)) {
        snprintf(j->reason, sizeof(j->reason), "%s", why);
        db_job_save(c, j);
    }
}

bool elig_enter(ctld_t *c, job_t *j)
{
    const char *why = holds_it(c, j, ctld_now());
    if (why) {
        if (!c->waiting)
            c->waiting = idmap_create();
        if (!j->waiting && c->waiting) {
            j->waiting = true;
            idmap_put(c->waiting, j->id, j);
        }
        set_reason(c, j, why);
        return false;
    }
    if (j->waiting) {
        j->waiting = false;
        idmap_del(c->waiting, j->id);
        /* after a hold, a --begin or a dependency its age (the priority's factor) counts
         * from now, as Slurm's from its eligible time: a job held a week does not start
         * a week old (a down partition or an array's throttle do not stop it ageing) */
        if (!strncmp(j->reason, "JobHeld", 7) || !strcmp(j->reason, "BeginTime") ||
            !strncmp(j->reason, "Dependency", 10))
            j->eligible_at = ctld_now();
        set_reason(c, j, "Priority");
        db_job_save(c, j);
    }
    return true;
}

void elig_forget(ctld_t *c, job_t *j)
{
    if (j->waiting && c->waiting)
        idmap_del(c->waiting, j->id);
    j->waiting = false;
}

typedef struct ids {
    int64_t *v;
    size_t n;
} ids_t;

static void collect(int64_t id, void *val, void *arg)
{
    (void)val;
    ids_t *x = arg;
    x->v[x->n++] = id;
}

void elig_review(ctld_t *c)
{
    c->elig_due = false;
    if (!c->waiting || !idmap_count(c->waiting))
        return;
    /* in submission order (the walk may not change the map it walks): the elements of a
     * throttled array start lowest index first */
    ids_t x = {.v = malloc(idmap_count(c->waiting) * sizeof(int64_t))};
    if (!x.v) {
        c->elig_due = true; /* the next pass tries again */
        return;
    }
    idmap_foreach(c->waiting, collect, &x);
    qsort(x.v, x.n, sizeof(int64_t), idmap_cmp_key);
    for (size_t k = 0; k < x.n; k++) {
        job_t *j = idmap_get(c->jobs, x.v[k]);
        if (j && j->waiting && j->state == JS_PENDING && elig_enter(c, j))
            jobs_to_engine(c, j);
    }
    free(x.v);
}

int elig_hold(ctld_t *c, job_t *j, bool op, char *err, size_t errlen)
{
    if (j->state != JS_PENDING) {
        snprintf(err, errlen, "it is %s: only pending jobs are held", jstate_name(j->state));
        return -EINVAL;
    }
    int level = op ? 2 : 1;
    if (j->hold >= level)
        return 0;
    j->hold = level;
    if (!j->waiting) {
        sched_remove(c->sched, j->id); /* out of the engine's plans */
        c->elig_due = true;            /* an element of its array may take its turn */
    }
    elig_enter(c, j);
    db_job_save(c, j);
    jobs_want_schedule(c); /* what was planned around it */
    return 0;
}

int elig_release(ctld_t *c, job_t *j, bool op, char *err, size_t errlen)
{
    if (j->state != JS_PENDING || !j->hold) {
        snprintf(err, errlen, "it is not held");
        return -EINVAL;
    }
    if (j->hold == 2 && !op) {
        snprintf(err, errlen, "permission denied: an operator held it");
        return -EPERM;
    }
    j->hold = 0;
    if (elig_enter(c, j))
        jobs_to_engine(c, j);
    db_job_save(c, j);
    return 0;
}
