/* Simulator outputs that follow the run over time: the events CSV (one row per
 * allocation change) and the Gantt chart (SVG), fed by the same calls as the
 * simulation runs, and the power chart (SVG), fed by the power samples; the jobs CSV
 * is written from the final per-job records. */
#ifndef DUCTILE_SIM_OUTPUT_H
#define DUCTILE_SIM_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* FAIL and INTERRUPT end a run of a job that is requeued (a node failure; node
 * stealing): it starts again later, with a START. */
typedef enum sim_op {
    SIM_OP_START,
    SIM_OP_EXPAND,
    SIM_OP_SHRINK,
    SIM_OP_END,
    SIM_OP_FAIL,
    SIM_OP_INTERRUPT
} sim_op_t;

/* Does op end the job's allocation (END, FAIL, INTERRUPT)? */
static inline int sim_op_ends(sim_op_t op)
{
    return op == SIM_OP_END || op == SIM_OP_FAIL || op == SIM_OP_INTERRUPT;
}

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

/* Power chart: the cluster's draw over time as a step line against the corridor (a
 * band between its bounds), the periods outside it in red. The file is created at
 * open, so a path that cannot be written fails before the run; power_chart_add takes
 * the samples of sim_power_t.on_sample in time order (busy: jobs are queued or
 * running, without which no draw is outside); close draws, writes and frees (NULL is
 * a no-op). */
typedef struct power_chart power_chart_t;
power_chart_t *power_chart_open(const char *path, char *err, size_t errlen);
void power_chart_add(power_chart_t *c, double t, double watts, double lower, double upper,
                     bool busy);
int power_chart_close(power_chart_t *c, const char *title, char *err, size_t errlen);

/* Formats a time in seconds the way every output does (up to 3 decimals, no
 * trailing zeros: "12", "12.5", "0.125"). Returns buf. */
char *fmt_time(double t, char *buf, size_t len);

#endif
