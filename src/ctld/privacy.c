/* PrivateData: one rule for every view (privacy.h). Operators see everything, as
 * Slurm's SlurmUser and root do; anyone sees their own. */
#include <string.h>

#include "privacy.h"

void privacy_viewer(const ctld_t *c, conn_t *conn, viewer_t *v)
{
    ctld_user_name(conn_uid(conn), v->user, sizeof(v->user));
    /* by uid first: root is root whatever its name in this host's users database */
    v->oper = conn_uid(conn) == 0 || config_is_operator(&c->cfg, v->user);
    v->hidden = v->oper ? 0 : c->cfg.private_data;
}

bool privacy_sees(const viewer_t *v, int what, const char *owner)
{
    return !(v->hidden & what) || (owner && !strcmp(owner, v->user));
}

bool privacy_jobs_of(const viewer_t *v, const char *asked, const char **user)
{
    *user = asked;
    if (privacy_sees(v, CONFIG_PRIVATE_JOBS, asked))
        return true;
    *user = v->user; /* sacct's and squeue's way: asked for nobody, you get yours */
    return asked == NULL;
}

void privacy_trim(const viewer_t *v, const char *owner, json_t *o)
{
    if (privacy_sees(v, CONFIG_PRIVATE_USAGE, owner))
        return;
    json_object_del(o, "priority");
    json_object_del(o, "fairshare");
}

const char *privacy_owner(const viewer_t *v, const job_t *j)
{
    return privacy_sees(v, CONFIG_PRIVATE_JOBS, j->user) ? j->user : "another user";
}
