/* PrivateData (Slurm's; docs/security.md, "What users see of each other"): what users who are not operators see
 * of other users' jobs, usage and accounts. Every view that shows such data asks the one
 * question, privacy_sees, about a caller resolved once per request. */
#ifndef DUCTILE_CTLD_PRIVACY_H
#define DUCTILE_CTLD_PRIVACY_H

#include <stdbool.h>

#include "ctld.h"

typedef struct viewer {
    char user[256]; /* the caller's name, as jobs and accounts name users */
    bool oper;      /* root or one of Operators: sees everything */
    int hidden;     /* the CONFIG_PRIVATE_* bits that apply to the caller: 0 for operators */
} viewer_t;

/* Who sent the request on conn, under the configuration as it is now. */
void privacy_viewer(const ctld_t *c, conn_t *conn, viewer_t *v);

/* May v see data of the kind `what` (a CONFIG_PRIVATE_* bit) that is owner's (a user
 * name; NULL: no one user's, such as an account's total usage)? */
bool privacy_sees(const viewer_t *v, int what, const char *owner);

/* A listing of jobs by user (queue -u, history -u): *user is the user it keeps to, the
 * one asked for or, under PrivateData=jobs, the caller; NULL: every user. False when
 * the caller asked for another user's jobs, which are hidden: the listing is empty. */
bool privacy_jobs_of(const viewer_t *v, const char *asked, const char **user);

/* Takes out of o (a job, a row of `ductile priority`) the figures that are owner's
 * usage, when v may not see it (PrivateData=usage): the fair-share factor, and the
 * priority, which is the factors summed. */
void privacy_trim(const viewer_t *v, const char *owner, json_t *o);

/* j's owner as a refusal names them: "another user" when v may not see j. */
const char *privacy_owner(const viewer_t *v, const job_t *j);

#endif
