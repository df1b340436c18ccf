/* ductile-noded's shared plumbing, kept out of main.c so the daemon builds as a library
 * that unit tests link. */
#include <errno.h>

#include "noded.h"

int noded_send(noded_t *d, json_t *msg)
{
    if (!msg)
        return -ENOMEM;
    int rc = d->ctl && d->registered ? conn_send(d->ctl, msg) : -ENOTCONN;
    json_decref(msg);
    return rc;
}

