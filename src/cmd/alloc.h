/* An interactive allocation (cmd_alloc.c): ductile alloc, and ductile run outside a
 * job. */
#ifndef DUCTILE_CMD_ALLOC_H
#define DUCTILE_CMD_ALLOC_H

#include <stdbool.h>

typedef struct alloc {
    const char *conf; /* --conf, or NULL */
    long long id;     /* the job; 0 once released */
    char *nodelist, *name;
    long nodes;
    bool quiet; /* no "granted" line unless it had to wait (ductile run) */
} alloc_t;

/* Submits the allocation (argv as ductile submit's options, argv[0] the command's
 * name; *first: where the words after the options begin) and waits until it runs:
 * 0, or 1 once the error is printed, or 128 + the signal that gave up the wait (130:
 * Ctrl-C), which cancels the job.
 * Leaves SIGCHLD, SIGINT, SIGHUP and SIGTERM blocked. */
int alloc_open(alloc_t *a, int argc, char **argv, int *first);
/* Ends the job, COMPLETED. */
void alloc_release(alloc_t *a);
/* fn(arg) in a child process with the job's variables, in this process group (the
 * terminal's signals reach it; the caller has them blocked), until it exits (its exit
 * status, 128 + a signal) or the job ends (it gets SIGHUP). SIGHUP and SIGTERM to the
 * caller are passed on. */
int alloc_run(alloc_t *a, int (*fn)(void *arg), void *arg);
/* The job's variables (DUCTILE_JOB_ID, SLURM_JOB_NODELIST...) in this process. */
void alloc_environment(const alloc_t *a);

#endif
