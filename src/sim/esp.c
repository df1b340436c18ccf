/* The ESP benchmark mix as seed 002 uses it (Table 9.1; research/
 * seed-002a-john-scheduling-power.md §6.5): 230 jobs of 14 types sized as fractions
 * of the machine, submitted at a constant interval in a seeded random order, with a
 * seeded share of them malleable. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "constraint.h"
#include "rng.h"
#include "workload.h"

typedef struct esp_type {
    char name;
    double fraction;  /* of the system size */
    int count;
    double runtime;   /* seconds, static (fixed-size) run */
    sched_constraint_t constraint;
} esp_type_t;

static const esp_type_t esp_types[] = {
    {'A', 0.03125, 75, 267, SCHED_CONS_NONE},  {'B', 0.0625, 9, 322, SCHED_CONS_POF2},
    {'C', 0.5, 3, 534, SCHED_CONS_NONE},       {'D', 0.25, 3, 616, SCHED_CONS_EVEN},
    {'E', 0.5, 3, 315, SCHED_CONS_NONE},       {'F', 0.0625, 9, 1846, SCHED_CONS_POF2},
    {'G', 0.125, 6, 1334, SCHED_CONS_EVEN},    {'H', 0.15625, 6, 1067, SCHED_CONS_ODD},
    {'I', 0.03125, 24, 1432, SCHED_CONS_NONE}, {'J', 0.0625, 24, 725, SCHED_CONS_POF2},
    {'K', 0.09375, 15, 487, SCHED_CONS_NONE},  {'L', 0.125, 36, 366, SCHED_CONS_EVEN},
    {'M', 0.25, 15, 187, SCHED_CONS_NONE},
};
#define ESP_NTYPES (int)(sizeof(esp_types) / sizeof(esp_types[0]))
/* The full-machine Z jobs stand apart: they are never shuffled nor malleable. */
static const esp_type_t esp_z = {'Z', 1.0, 2, 100, SCHED_CONS_NONE};

#define ESP_NREGULAR 228
#define ESP_NJOBS (ESP_NREGULAR + 2)
/* The first Z job goes in after 10 % of the 230 jobs. */
#define ESP_Z1_AFTER 23

/* Log-uniform range of the Amdahl serial fraction given to malleable jobs, so that
 * they differ in how well they scale (seed 002 gives no curve for its code). */
#define ESP_SERIAL_MIN 0.001
#define ESP_SERIAL_MAX 0.05

/* round(fraction * nodes), at least 1, moved down to a size the constraint allows
 * (up to the smallest allowed one if none is below), never above the machine. */
static int type_size(const esp_type_t *t, int nodes)
{
    int v = (int)lround(t->fraction * nodes);
    if (v < 1)
        v = 1;
    int c = cons_largest_leq(v, t->constraint, 1, v);
    if (!c)
        c = cons_smallest_geq(1, t->constraint, 1, nodes);
    if (!c || c > nodes)
        c = nodes;
    return c;
}

static wl_job_t esp_job(const esp_type_t *t, int nodes)
{
    wl_job_t j = {
        .runtime = t->runtime,
        .walltime = t->runtime, /* ESP states exact run times */
        .type = SCHED_RIGID,
        .nodes = type_size(t, nodes),
        .constraint = t->constraint,
    };
    j.tag[0] = t->name;
    return j;
}

static void make_malleable(wl_job_t *j, int nodes, double serial)
{
    /* Seed 002 §6.5: the bounds are the extreme sizes the constraint allows. */
    j->type = SCHED_MALLEABLE;
    j->min_nodes = cons_smallest_geq(1, j->constraint, 1, nodes);
    j->max_nodes = cons_largest_leq(nodes, j->constraint, 1, nodes);
    j->pref_nodes = j->nodes;
    j->has_speedup = true;
    j->speedup = (speedup_t){SPEEDUP_AMDAHL, serial, 0};
}

int wl_gen_esp(const wl_esp_opts_t *opts, workload_t *wl, char *err, size_t errlen)
{
    memset(wl, 0, sizeof(*wl));
    if (opts->nodes < 1) {
        snprintf(err, errlen, "ESP needs a system size of at least 1 node (got %d)", opts->nodes);
        return -EINVAL;
    }
    if (!(opts->malleable >= 0 && opts->malleable <= 1)) {
        snprintf(err, errlen, "ESP malleable share must be in [0, 1] (got %g)", opts->malleable);
        return -EINVAL;
    }
    if (!(opts->interarrival >= 0 && isfinite(opts->interarrival))) {
        snprintf(err, errlen, "ESP inter-arrival time must be >= 0 seconds (got %g)",
                 opts->interarrival);
        return -EINVAL;
    }
    for (int t = 0; t < ESP_NTYPES; t++)
        if (!cons_valid(type_size(&esp_types[t], opts->nodes), esp_types[t].constraint)) {
            snprintf(err, errlen, "ESP job type %c (%s) has no valid size on %d node%s",
                     esp_types[t].name, sched_constraint_name(esp_types[t].constraint),
                     opts->nodes, opts->nodes == 1 ? "" : "s");
            return -EINVAL;
        }

    /* The regular jobs in table order, then shuffled into submission order. */
    wl_job_t jobs[ESP_NJOBS];
    int n = 0;
    for (int t = 0; t < ESP_NTYPES; t++)
        for (int k = 0; k < esp_types[t].count; k++)
            jobs[n++] = esp_job(&esp_types[t], opts->nodes);
    rng_t r;
    rng_seed(&r, opts->seed);
    rng_shuffle(&r, jobs, ESP_NREGULAR, sizeof(jobs[0]));

    /* Which positions become malleable: the first k of a second permutation, so a
     * larger share keeps the jobs of a smaller one and mixes compare cleanly. A
     * serial fraction is drawn for every position whether or not it is used, so
     * that a job scales the same way in every mix of the same seed. */
    int pick[ESP_NREGULAR];
    for (int i = 0; i < ESP_NREGULAR; i++)
        pick[i] = i;
    rng_shuffle(&r, pick, ESP_NREGULAR, sizeof(pick[0]));
    double serial[ESP_NREGULAR];
    for (int i = 0; i < ESP_NREGULAR; i++)
        serial[i] = exp(log(ESP_SERIAL_MIN) + rng_uniform(&r) * log(ESP_SERIAL_MAX / ESP_SERIAL_MIN));
    int nmall = (int)lround(opts->malleable * ESP_NREGULAR);
    for (int i = 0; i < nmall; i++)
        make_malleable(&jobs[pick[i]], opts->nodes, serial[pick[i]]);

    /* Z jobs: one after the first 10 %, one last. */
    memmove(&jobs[ESP_Z1_AFTER + 1], &jobs[ESP_Z1_AFTER],
            (ESP_NREGULAR - ESP_Z1_AFTER) * sizeof(jobs[0]));
    jobs[ESP_Z1_AFTER] = esp_job(&esp_z, opts->nodes);
    jobs[ESP_NJOBS - 1] = esp_job(&esp_z, opts->nodes);

    wl->machine_nodes = opts->nodes;
    for (int k = 0; k < ESP_NJOBS; k++) {
        jobs[k].id = k + 1;
        jobs[k].submit = k * opts->interarrival;
        if (wl_append(wl, &jobs[k]) < 0) {
            wl_free(wl);
            snprintf(err, errlen, "out of memory");
            return -ENOMEM;
        }
    }
    return 0;
}
