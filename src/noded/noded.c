/* ductile-noded's shared plumbing, kept out of main.c so the daemon builds as a library
 * that unit tests link. */
#include <errno.h>

#include "noded.h"

int noded_send(noded_t *d, json_t *msg)
{
    if (!msg)
        return -ENOMEM;
    /* Every message about a job names the run it is about (the controller ignores,
     * and ends, what belongs to another run). */
    json_t *job = json_object_get(msg, "job");
    if (json_is_integer(job) && !json_object_get(msg, "run")) {
        njob_t *j = idmap_get(d->jobs, json_integer_value(job));
        if (j)
            json_object_set_new(msg, "run", json_integer(j->run));
    }
    int rc = d->ctl && d->registered ? conn_send(d->ctl, msg) : -ENOTCONN;
    json_decref(msg);
    return rc;
}

