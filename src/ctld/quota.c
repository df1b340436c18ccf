/* Fair defaults for every user (issue 34): how many jobs one user may have queued and
 * running (MaxJobsPerUser) and how fast one may submit (MaxSubmitRate). Without them,
 * twenty `--array 0-9999` submissions of one user filled the queue to MaxJobs in 70 s
 * and every other user's submission was refused. Root and Operators are exempt, as is
 * a user an operator gave a --max-submit of their own (accounts.c): that limit is theirs
 * instead of the default.
 *
 * The live jobs are counted per uid as they enter and leave c->jobs, so a submission
 * costs a lookup, not a walk of every job. The rate is a token bucket per uid: a
 * submission (an array is one) takes a token; tokens come back at MaxSubmitRate a
 * second up to ten times as many, so a script that submits a few hundred jobs at once
 * is slowed, not refused for good, and the client waits and tries again (util.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "ctld.h"

#define BURST 10.0 /* a bucket holds this many seconds' worth of submissions */

typedef struct bucket {
    double tokens;
    double at; /* monotonic seconds of the last refill */
} bucket_t;

void quota_count(ctld_t *c, const job_t *j, int d)
{
    if (!c->user_jobs)
        c->user_jobs = idmap_create();
    if (c->user_jobs)
        idmap_tally_add(c->user_jobs, (int64_t)j->uid, d);
}

int quota_user_jobs(const ctld_t *c, uid_t uid)
{
    return c->user_jobs ? idmap_tally_get(c->user_jobs, (int64_t)uid) : 0;
}

static void free_bucket(int64_t key, void *val, void *arg)
{
    (void)key;
    (void)arg;
    free(val);
}

void quota_free(ctld_t *c)
{
    idmap_destroy(c->user_jobs);
    c->user_jobs = NULL;
    if (c->submit_buckets)
        idmap_foreach(c->submit_buckets, free_bucket, NULL);
    idmap_destroy(c->submit_buckets);
    c->submit_buckets = NULL;
}

/* Takes a token from uid's bucket; false (and *wait, the seconds until one comes back)
 * when it is empty. */
static bool take_token(ctld_t *c, uid_t uid, double rate, double *wait)
{
    if (!c->submit_buckets && !(c->submit_buckets = idmap_create()))
        return true; /* out of memory: no limit rather than no submissions */
    double now = ctld_mono();
    bucket_t *b = idmap_get(c->submit_buckets, (int64_t)uid);
    if (!b) {
        if (!(b = malloc(sizeof(*b))) || idmap_put(c->submit_buckets, (int64_t)uid, b) < 0) {
            free(b);
            return true;
        }
        b->tokens = rate * BURST;
        b->at = now;
    }
    b->tokens += (now - b->at) * rate;
    if (b->tokens > rate * BURST)
        b->tokens = rate * BURST;
    b->at = now;
    if (b->tokens < 1) {
        *wait = (1 - b->tokens) / rate;
        return false;
    }
    b->tokens -= 1;
    return true;
}

int quota_submit(ctld_t *c, const job_t *j, bool oper, int njobs, double *retry, char *err,
                 size_t errlen)
{
    *retry = 0;
    if (oper)
        return 0;
    const config_t *cfg = &c->cfg;
    int max = cfg->max_jobs_per_user;
    if (max > 0 && accounts_user_max_submit(c, j->user) <= 0) {
        int have = quota_user_jobs(c, j->uid);
        if (have + njobs > max)
            return snprintf(err, errlen, "user %.64s has %d jobs queued or running and may have"
                            " at most %d (MaxJobsPerUser): wait for some to end%s", j->user, have,
                            max, njobs > 1 && have < max ? " or submit fewer" : ""), -EDQUOT;
    }
    double wait;
    if (cfg->max_submit_rate > 0 && !take_token(c, j->uid, cfg->max_submit_rate, &wait)) {
        *retry = wait;
        return snprintf(err, errlen, "user %.64s submits faster than this cluster takes (%d a "
                        "second, MaxSubmitRate; an array counts once): try again in %.1f s",
                        j->user, cfg->max_submit_rate, wait < 0.1 ? 0.1 : wait), -EAGAIN;
    }
    return 0;
}
