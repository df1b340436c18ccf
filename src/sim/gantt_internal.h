/* What the Gantt chart keeps between gantt_add and gantt_write_svg: shared by
 * gantt.c (collecting) and gantt_svg.c (drawing). Not part of the simulator API. */
#ifndef DUCTILE_SIM_GANTT_INTERNAL_H
#define DUCTILE_SIM_GANTT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "output.h"

/* Nodes [first, first + count) held by one job during [t0, t1). next threads the
 * job's segments in the order they closed (-1 ends the list). */
typedef struct gseg {
    double t0, t1;
    int32_t first, count;
    int32_t next;
} gseg_t;

typedef struct gjob {
    int64_t id;
    int32_t head, tail;     /* segment list, -1 when empty */
    bool open;              /* holds nodes since t_open */
    double t_open;
    int *runs;              /* current runs: pairs first, count */
    int nruns;
    size_t runcap;          /* in ints */
} gjob_t;

/* An expand or shrink at t, drawn over the rows tickruns[off .. off + nruns) (pairs). */
typedef struct gtick {
    double t;
    size_t off;
    int nruns;
} gtick_t;

struct gantt {
    int nnodes;
    idmap_t *byid;
    gjob_t **jobs;          /* in order of first appearance */
    size_t njobs, jobcap;
    gseg_t *segs;
    size_t nsegs, segcap;
    gtick_t *ticks;
    size_t nticks, tickcap;
    int *tickruns;
    size_t ntickruns, tickruncap; /* ntickruns in pairs, tickruncap in ints */
    double tmin, tmax;      /* over every event seen */
    size_t nevents;
    bool oom;               /* an add ran out of memory: the chart is incomplete */
    int *ids, *runbuf;      /* scratch for turning an event's nodes into runs */
    size_t idcap, runbufcap;
};

#endif
