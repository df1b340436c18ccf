/* DUCTILE_DEBUG=1 (docs/malleable-apps.md): libductile's collective calls check that
 * every rank of dt_comm() reaches them. Each such call first tells every other rank
 * "I am at call #k" on a twin of dt_comm() and waits for the same word from all of
 * them; every DUCTILE_DEBUG_TIMEOUT seconds (default 10) meanwhile it names the ranks
 * that have not reached it. Point-to-point messages through PMPI, so that the MTCT
 * counters do not see them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_internal.h"

#define DBG_TAG 4712

static int debug;                    /* DUCTILE_DEBUG set (and not 0) */
static double debug_timeout = 10;    /* DUCTILE_DEBUG_TIMEOUT, seconds */
static MPI_Comm dbg = MPI_COMM_NULL; /* a twin of dt_comm() */
static long dbg_calls, *dbg_seen;    /* calls reached here / by each rank */

void dt_debug_init(void)
{
    const char *on = getenv("DUCTILE_DEBUG"), *t = getenv("DUCTILE_DEBUG_TIMEOUT");
    debug = on && *on && strcmp(on, "0");
    if (t && atof(t) > 0)
        debug_timeout = atof(t);
}

void dt_debug_free(void)
{
    if (dbg != MPI_COMM_NULL)
        MPI_Comm_free(&dbg);
    free(dbg_seen);
    dbg_seen = NULL;
}

/* Debug mode: a fresh twin of comm (collective over comm), calls counted from 0. */
void dt_debug_reset(MPI_Comm comm)
{
    if (!debug)
        return;
    if (dbg != MPI_COMM_NULL)
        MPI_Comm_free(&dbg);
    MPI_Comm_dup(comm, &dbg);
    int n;
    MPI_Comm_size(comm, &n);
    free(dbg_seen);
    dbg_seen = calloc((size_t)n, sizeof(long));
    dbg_calls = 0;
}

/* Debug mode, at the top of a collective call of libductile (api): tell every rank
 * "I am at call #k", and wait until every rank has said the same; every
 * DUCTILE_DEBUG_TIMEOUT seconds meanwhile, say which ranks have not reached it. */
void dt_debug_sync(const char *api, const char *node)
{
    if (dbg == MPI_COMM_NULL || !dbg_seen)
        return;
    int me, n;
    MPI_Comm_rank(dbg, &me);
    MPI_Comm_size(dbg, &n);
    static long sent;
    sent = ++dbg_calls;
    MPI_Request *rq = calloc((size_t)n, sizeof(*rq));
    int nr = 0;
    for (int p = 0; rq && p < n; p++)
        if (p != me)
            PMPI_Isend(&sent, 1, MPI_LONG, p, DBG_TAG, dbg, &rq[nr++]);
    double start = dt_mono(), next = start + debug_timeout;
    for (;;) {
        int flag = 0;
        MPI_Status st;
        while (PMPI_Iprobe(MPI_ANY_SOURCE, DBG_TAG, dbg, &flag, &st) == MPI_SUCCESS && flag) {
            long v;
            PMPI_Recv(&v, 1, MPI_LONG, st.MPI_SOURCE, DBG_TAG, dbg, MPI_STATUS_IGNORE);
            dbg_seen[st.MPI_SOURCE] = v;
        }
        int missing = 0;
        for (int p = 0; p < n; p++)
            missing += p != me && dbg_seen[p] < sent;
        if (!missing)
            break;
        if (dt_mono() >= next) {
            char list[1024] = "";
            size_t used = 0;
            for (int p = 0; p < n && used + 64 < sizeof(list); p++)
                if (p != me && dbg_seen[p] < sent)
                    used += (size_t)snprintf(list + used, sizeof(list) - used,
                                             "%srank %d (last at call %ld)", used ? ", " : "", p,
                                             dbg_seen[p]);
            fprintf(stderr,
                    "libductile: DUCTILE_DEBUG: rank %d of %d (node %s) has waited %.0f s in %s "
                    "(call %ld on this communicator; it is collective over dt_comm()); not "
                    "reached it: %s\n",
                    me, n, *node ? node : "?", dt_mono() - start, api, sent, list);
            next += debug_timeout;
        }
        dt_nap();
    }
    PMPI_Waitall(nr, rq, MPI_STATUSES_IGNORE);
    free(rq);
}
