/* Simulator outputs that follow allocations over time: the events CSV (one row per
 * allocation change) and the Gantt chart (SVG). Both are fed by the same calls as the
 * simulation runs; the jobs CSV is written from the final per-job records. */
#ifndef DUCTILE_SIM_OUTPUT_H
#define DUCTILE_SIM_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum sim_op { SIM_OP_START, SIM_OP_EXPAND, SIM_OP_SHRINK, SIM_OP_END } sim_op_t;

const char *sim_op_name(sim_op_t op);

/* One allocation change: at time t, job went from before to after nodes and now holds
 * nodes[0..n) (rank order; n == after; empty at end). */
typedef struct sim_alloc_event {
    double t;
    int64_t job;
    sim_op_t op;
    int before, after;
    const int *nodes;
    int n;
} sim_alloc_event_t;

/* Events CSV: header time,job,op,nodes_before,nodes_after,node_list */
typedef struct events_csv events_csv_t;
events_csv_t *events_csv_open(const char *path, char *err, size_t errlen);
void events_csv_add(events_csv_t *w, const sim_alloc_event_t *ev);
int events_csv_close(events_csv_t *w, char *err, size_t errlen);

/* Gantt chart: nodes (vertical) by time (horizontal), one colour per job, resizes
 * visible as a change of the job's band. */
typedef struct gantt gantt_t;
gantt_t *gantt_create(int nnodes);
void gantt_add(gantt_t *g, const sim_alloc_event_t *ev);
int gantt_write_svg(const gantt_t *g, const char *path, const char *title, char *err,
                    size_t errlen);
void gantt_destroy(gantt_t *g);

/* Formats a time in seconds the way every output does (up to 3 decimals, no
 * trailing zeros: "12", "12.5", "0.125"). Returns buf. */
char *fmt_time(double t, char *buf, size_t len);

#endif
