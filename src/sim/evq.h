/* evq: the simulator's event queue, a binary heap ordered by (time, class, sequence)
 * so that equal-time events come out in a fixed order: runs are reproducible. */
#ifndef DUCTILE_SIM_EVQ_H
#define DUCTILE_SIM_EVQ_H

#include <stddef.h>
#include <stdint.h>

typedef struct evq_item {
    double t;
    int cls;        /* lower first at equal times */
    uint64_t seq;   /* insertion order, the last tie-break */
    uint32_t job;   /* index into the workload */
    uint32_t ver;   /* lets a job's stale events be recognised and dropped */
    int kind;
} evq_item_t;

typedef struct evq {
    evq_item_t *v;
    size_t n, cap;
    uint64_t seq;
} evq_t;

int evq_push(evq_t *q, double t, int cls, int kind, uint32_t job, uint32_t ver);
/* Smallest item; q must not be empty. */
const evq_item_t *evq_top(const evq_t *q);
void evq_pop(evq_t *q);
void evq_free(evq_t *q);

#endif
