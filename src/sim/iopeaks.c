/* The I/O-peak workload of seed 003's I/O-aware evaluation (§4.2.5.1, Table 4.3;
 * research/seed-003-admire-d33.md §6.7), with the choices the seed leaves open written
 * down in docs/simulator.md ("io-peaks"):
 *   - every job repeats 10 to 25 times (uniform) a compute phase and a checkpoint
 *     written to the file system; the loads are per iteration;
 *   - compute load Beta(1,1) x 200 TFLOP on nodes of 100 GFLOP/s, spread evenly
 *     (linear speedup); checkpoint Beta(2,8) x 256 GiB, and Beta(1,0.1) x 256 GiB for
 *     the 5 % of jobs in each of the four peaks (at jobs 447, 1283, 2414 and 3355 of
 *     4000, scaled to the number of jobs);
 *   - a job asks for 2 to 20 nodes in proportion to its two loads together (each
 *     scaled to its maximum, half each); 20 % of the jobs (or --malleable) are
 *     malleable between 2 and 20 nodes;
 *   - submissions are a Poisson process of the given mean interval. */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "rng.h"
#include "workload.h"

#define IOP_BASE_JOBS 4000
#define IOP_PEAK_LEN 200
#define IOP_COMPUTE_MAX 200e12 /* FLOP */
#define IOP_NODE_FLOPS 100e9
#define IOP_CKPT_MAX (256.0 * 1024 * 1024 * 1024 / 1e9) /* GB */
#define IOP_MIN_NODES 2
#define IOP_MAX_NODES 20

static const int peak_at[] = {447, 1283, 2414, 3355};

/* Beta(2, 8): gamma(2) / (gamma(2) + gamma(8)), integer shapes as sums of exponentials. */
static double beta_2_8(rng_t *r)
{
    double a = 0, b = 0;
    for (int k = 0; k < 2; k++)
        a += rng_exp(r, 1);
    for (int k = 0; k < 8; k++)
        b += rng_exp(r, 1);
    return a / (a + b);
}

/* Beta(1, b) by its inverse distribution function: 1 - U^(1/b). */
static double beta_1_b(rng_t *r, double b)
{
    return 1 - pow(rng_uniform(r), 1 / b);
}

static bool in_peak(size_t k, size_t njobs)
{
    for (size_t p = 0; p < sizeof(peak_at) / sizeof(peak_at[0]); p++) {
        size_t at = (size_t)peak_at[p] * njobs / IOP_BASE_JOBS;
        size_t len = (size_t)IOP_PEAK_LEN * njobs / IOP_BASE_JOBS;
        if (k >= at && k < at + (len ? len : 1))
            return true;
    }
    return false;
}

int wl_gen_iopeaks(const wl_iopeaks_opts_t *o, workload_t *wl, char *err, size_t errlen)
{
    *wl = (workload_t){0};
    if (o->njobs < 1 || o->njobs > 10000000)
        return snprintf(err, errlen, "io-peaks: the number of jobs must be 1 to 10000000"),
               -EINVAL;
    if (o->nodes < IOP_MAX_NODES)
        return snprintf(err, errlen, "io-peaks: its jobs ask for up to %d nodes, and the "
                        "cluster has %d (--nodes)", IOP_MAX_NODES, o->nodes), -EINVAL;
    if (!(o->interarrival >= 0) || !(o->malleable >= 0 && o->malleable <= 1))
        return snprintf(err, errlen, "io-peaks: bad interarrival or malleable share"), -EINVAL;
    rng_t r;
    rng_seed(&r, o->seed);
    double t = 0;
    for (size_t k = 0; k < o->njobs; k++) {
        double load = rng_uniform(&r) * IOP_COMPUTE_MAX;
        double ckpt = (in_peak(k, o->njobs) ? beta_1_b(&r, 0.1) : beta_2_8(&r)) * IOP_CKPT_MAX;
        int iters = 10 + (int)rng_below(&r, 16);
        double share = 0.5 * load / IOP_COMPUTE_MAX + 0.5 * ckpt / IOP_CKPT_MAX;
        int n = IOP_MIN_NODES + (int)lround(share * (IOP_MAX_NODES - IOP_MIN_NODES));
        bool mall = rng_uniform(&r) < o->malleable;
        double compute = iters * load / (n * IOP_NODE_FLOPS);
        wl_job_t j = {
            .id = (int64_t)k + 1,
            .submit = t,
            .runtime = compute,
            .walltime = compute, /* raised to the time alone by the simulator */
            .type = mall ? SCHED_MALLEABLE : SCHED_RIGID,
            .nodes = n,
            .min_nodes = mall ? IOP_MIN_NODES : 0,
            .max_nodes = mall ? IOP_MAX_NODES : 0,
            .has_speedup = true,
            .speedup = {.model = SPEEDUP_LINEAR},
            .iters = iters,
            .io_gb = ckpt > 1e-9 ? ckpt : 1e-9,
            .io_intensity = -1,
        };
        snprintf(j.tag, sizeof(j.tag), "%s", in_peak(k, o->njobs) ? "peak" : "normal");
        int rc = wl_append(wl, &j);
        if (rc < 0) {
            wl_free(wl);
            return snprintf(err, errlen, "out of memory"), rc;
        }
        t += o->interarrival > 0 ? rng_exp(&r, o->interarrival) : 0;
    }
    wl->machine_nodes = o->nodes;
    return 0;
}
