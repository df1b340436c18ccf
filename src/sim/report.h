/* Reports of simulation runs: the side-by-side table, JSON, and the jobs CSV. */
#ifndef DUCTILE_SIM_REPORT_H
#define DUCTILE_SIM_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "metrics.h"
#include "sim.h"

typedef struct report_info {
    const char *workload;   /* file name or "esp" */
    size_t njobs;           /* jobs in the workload after loading */
    int nodes;
    size_t skipped;         /* dropped by the replay rules */
    size_t malformed;       /* malformed lines skipped (--lenient) */
    double malleable;       /* --malleable share, < 0 when not given */
    uint64_t seed;
    bool power;             /* runs had a power model: show its rows */
    bool ckpt;              /* runs had a checkpoint service: show its rows */
    bool failures;          /* runs had node failures: show their rows */
    bool requests;          /* the workload has evolving jobs' requests: show their rows */
    bool io;                /* the workload has jobs with I/O phases: show their rows */
    const char *priority;   /* the runs' priority settings; NULL: none (submission order) */
    const char *resv;       /* the runs' reservations, as given; NULL: none */
    bool per_user;          /* show the runs' users (report_run_t.users) */
} report_info_t;

typedef struct report_run {
    const char *name;       /* the policy as the user wrote it */
    const char *spec;       /* canonical spec, every parameter spelled out */
    sim_metrics_t m;
    size_t rejected, unfinished;
    const sim_user_stat_t *users; /* info->per_user: the wait per user */
    size_t nusers;
} report_run_t;

/* One column per run; every run after the first also shows its ratio to the first. */
void report_table(FILE *f, const report_info_t *info, const report_run_t *runs, int n);
int report_json(FILE *f, const report_info_t *info, const report_run_t *runs, int n);
/* Header id,submit,start,end,nodes,min,max,final_nodes,expansions,shrinks. */
int report_jobs_csv(const char *path, const sim_result_t *res, char *err, size_t errlen);

#endif
