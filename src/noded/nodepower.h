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

/* I/O (docs/policies.md, "io-aware"): the cgroup v2 pressure file io.pressure,
 *   some avg10=0.00 avg60=0.00 avg300=0.00 total=61118244
 *   full avg10=0.00 avg60=0.00 avg300=0.00 total=21653647
 * where total is the microseconds during which at least one of the cgroup's tasks was
 * stalled on I/O ("some"). Parses that text into the "some" total; -EINVAL when it has
 * no well-formed "some" line (never reads past the text's end). */
int nodepower_io_pressure_parse(const char *text, uint64_t *some_usec);

/* The "some" I/O stall time (microseconds) summed over the job's cgroups under parent
 * (as nodepower_cgroup_usage); -ENOENT when none has a readable io.pressure. */
int nodepower_cgroup_io_stall(const char *parent, const char *prefix, uint64_t *usec);

/* A job's I/O share over an interval: the stall time gained (usec, from prev to cur)
 * over the wall time dt (s), clamped to [0, 1]; -1 when it cannot be told (no interval,
 * or a counter that went back: a cgroup of the job went away). */
double nodepower_io_share(uint64_t prev, uint64_t cur, double dt);

#endif
