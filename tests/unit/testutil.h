/* Helpers shared by the unit tests (cmocka). */
#ifndef DUCTILE_TESTUTIL_H
#define DUCTILE_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched/sched.h"

typedef struct tu_job {
    int64_t id;
    double submit;
    sched_jobtype_t type;
    int nodes, min, max, pref;
    sched_constraint_t cons;
    double walltime;
    bool no_interrupt;
    const int *allowed; /* node selection, as in sched_jobspec_t */
    int nallowed;
    const int *required;
    int nrequired;
} tu_job_t;

/* An engine with the given policy; fails the test on error. */
sched_t *tu_engine(int nnodes, const char *policy);
void tu_submit(sched_t *s, tu_job_t j);
/* A running malleable job on nodes [first, first + n), started at `start`. */
void tu_running(sched_t *s, int64_t id, double start, int first, int n, int min, int max,
                sched_constraint_t cons, double walltime);
/* One pass; returns the number of actions, stored in *acts. */
size_t tu_pass(sched_t *s, double now, const sched_action_t **acts);
/* Completes every resize among the actions (ok), and every stop (the job requeued as
 * INTERRUPTED), as the simulator does. */
void tu_complete(sched_t *s, const sched_action_t *acts, size_t n);
/* The action of a job with a given op, or NULL. */
const sched_action_t *tu_find(const sched_action_t *acts, size_t n, int64_t job, sched_op_t op);
/* Committed size of a job (0 when pending or gone). */
int tu_size(sched_t *s, int64_t id);
sched_state_t tu_state(sched_t *s, int64_t id);

/* A temporary directory for the test, removed by tu_rmtree. */
char *tu_tmpdir(void);
void tu_rmtree(const char *path);
/* Writes text to dir/rel, making rel's directories. */
void tu_put(const char *dir, const char *rel, const char *text);
/* Runs SQL statements on the SQLite database at path (fails the test on error). */
void tu_sql(const char *path, const char *sql);
/* Reads a whole file (caller frees); NULL if it cannot. */
char *tu_slurp(const char *path, size_t *len);
/* The path of tests/data/name: under DUCTILE_SOURCE_DIR (ctest sets it), else found
 * from this file's location (a test run by hand). */
void tu_data_path(char *path, size_t len, const char *name);

#endif
