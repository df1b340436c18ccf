/* nodepower: what a node draws, read for every heartbeat (docs/power.md, "Measuring").
 *
 * Two sources, chosen by PowerSource:
 *   rapl:  the energy counters of the host's RAPL packages under PowercapDir
 *          (intel-rapl:N/energy_uj, wrapping at max_energy_range_uj): the energy used
 *          since the last reading over the time between them.
 *   model: the node's IdlePower when it runs no job; with a job, the job's declared
 *          minimum per-node power plus its CPU use (cgroup cpu.stat, usage_usec over the
 *          interval, as a share of the node's cores) times the span to its maximum.
 * auto takes rapl where the counters are readable, else the model. */
#ifndef DUCTILE_NODEPOWER_H
#define DUCTILE_NODEPOWER_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

#define NODEPOWER_ZONES 16

typedef struct nodepower {
    config_power_source_t source; /* what is read: rapl or model (auto resolved), or none */
    int nzones;
    char zone[NODEPOWER_ZONES][300];   /* the packages' energy_uj files */
    uint64_t range[NODEPOWER_ZONES];   /* max_energy_range_uj: where a counter wraps */
    uint64_t last[NODEPOWER_ZONES];    /* the previous reading, uJ */
    double last_t;                     /* when it was taken (monotonic s); 0: none yet */
    char why[400];                     /* auto fell back to the model, or rapl failed: why */
} nodepower_t;

/* Sets up the source: for rapl and auto, finds the packages under dir. rapl without
 * readable counters is an error (-ENOENT, message in why); auto then uses the model. */
int nodepower_init(nodepower_t *p, config_power_source_t source, const char *dir);

/* rapl: the node's draw in W since the previous call at time now (monotonic seconds);
 * -EAGAIN on the first call (nothing to compare with yet), -EIO if a counter could not
 * be read. */
int nodepower_rapl(nodepower_t *p, double now, double *watts);

/* model: a node running a job that declared [pmin, pmax] W per node and used
 * cpu_share (0..1 of the node's cores; < 0: unknown, taken as 1) draws
 * pmin + share * (pmax - pmin); a node without a job draws idle. */
double nodepower_model(double idle, bool has_job, double pmin, double pmax, double cpu_share);

/* The CPU time (microseconds) used by every cgroup directly under parent whose name
 * starts with prefix (the job's cgroups: job_<id>_...), from their cpu.stat; -ENOENT
 * when there is none. */
int nodepower_cgroup_usage(const char *parent, const char *prefix, uint64_t *usec);

#endif
