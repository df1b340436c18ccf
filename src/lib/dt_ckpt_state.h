/* libductile's checkpoints, shared between their two files: dt_ckpt.c (a session,
 * registrations, commits, resizes) and dt_ckrestore.c (restart and restore). The state
 * of the one checkpoint session a process has, and the helpers both use. */
#ifndef DT_CKPT_STATE_H
#define DT_CKPT_STATE_H

#include <jansson.h>
#include <limits.h>
#include <pthread.h>

#include "dt_ckagent.h"
#include "dt_internal.h"

#pragma GCC visibility push(hidden)

/* Two distributions of the checkpoints' own beside dt_dist_t's (the manifest keeps the
 * number): every process saves its own part. */
#define CK_DIST_LOCAL 4  /* the same count everywhere, each its own values (JOINING) */
#define CK_DIST_MANUAL 5 /* any counts; restored whole on one process (dt_ckpt_add_manual) */

typedef struct ck_var {
    char label[DT_CKPT_LABEL_MAX];
    void *data;
    long count; /* local elements */
    int esize;
    int dist;
    long block; /* block-cyclic: its block; manual: the root */
    int value;  /* dt_value_t, 0 for plain data */
    char *dflt; /* DEFAULT, JOINING: count elements */
    dt_ckpt_fn *fn;
    void *arg;
} ck_var_t;

/* A restored version's description (from its manifest). */
typedef struct ck_saved {
    char label[DT_CKPT_LABEL_MAX];
    int esize, dist, value;
    long block, total;
    char *dflt; /* total elements, for DEFAULT and JOINING */
} ck_saved_t;

typedef struct ck_state {
    int on;
    char dir[PATH_MAX];
    MPI_Comm comm, node;
    int rank, size, node_rank;
    ck_var_t *v;
    int nv;
    long version; /* the last complete version on disk (0: none) */
    /* after dt_ckpt_restart: the version read, its variables and old ranks' parts */
    json_t *man;
    ck_saved_t *saved;
    int nsaved, old_size;
    int async; /* dt_ckpt_set_async */
    /* a session started by dt_ckpt_redistribute: this process's rank before the resize
     * (-1: it joined), which its JOINING values come from */
    int resized, prev_rank;
    int agents_down; /* the agents failed; said once */
    char *stage;     /* the asynchronous commits' copy (stage_for) */
    long stage_cap;
    /* the commit under way (an asynchronous one until the next call publishes it) */
    struct {
        int on, rc, threaded;
        long version, off, len;
        char part[PATH_MAX + 32], path[PATH_MAX + 64];
        int agent;           /* to the agents (else to the files) */
        long file, nfiles;   /* this node's file; the number of node files */
        long node_bytes;     /* this node's file's size */
        ckag_region_t reg;   /* the agent's region for this node's file */
        char why[512];       /* what made an agent fail */
        long *total; /* rank 0: each variable's whole, for the manifest */
        long *row;   /* this process's manifest row: file, offset, counts */
        char *stage; /* asynchronous: the copy its thread writes */
        double t0;   /* MPI_Wtime at its start */
        pthread_t thread;
    } pend;
} ck_state_t;

extern ck_state_t ck;

/* The message of a failure, printed where it happened (dt_ckpt_strerror gives it). */
int ck_fail(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Collective: the lowest rc of every process, with the lowest failing rank's message. */
int ck_agree(int rc);
/* Rank r's elements of a variable of total elements among n processes. */
long ck_share(int dist, long block, long total, int r, int n);
/* Collective: the agents reached (rank 0's control connections, every endpoint). */
int ck_agents_reach(char *err, size_t errlen);
/* The agents failed: said once, the file level from here on. */
void ck_agents_failed(const char *what, const char *why);
/* Collective: the commit under way published (or its error). */
int ck_finish_commit(void);
/* This session's registration of a label, NULL if none yet. */
ck_var_t *ck_registered(const char *label);
/* dt_ckrestore.c: forgets the restarted version's description. */
void ck_forget_saved(void);

#pragma GCC visibility pop

#endif
