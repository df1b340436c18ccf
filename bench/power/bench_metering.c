/* The cost of power accounting per heartbeat (docs/BENCHMARKS.md):
 *   node side: one model reading, the job's cgroups' cpu.stat (a job cgroup and S step
 *     cgroups on a scratch directory, as the daemon's tree has them) and the model;
 *   controller side: one sample of N nodes with J running jobs of N/J nodes each (the
 *     cluster's draw, each job's draw and energy, the violations), with its writes to a
 *     real database and their commit.
 * Usage: bench_metering [NODES [JOBS [ROUNDS]]] (defaults 10000, 1000, 20) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"
#include "ctld.h"
#include "launch.h"
#include "nodepower.h"

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp);
    return v[n / 2];
}

static void node_side(int rounds)
{
    char dir[] = "/tmp/bench-metering-XXXXXX";
    if (!mkdtemp(dir))
        exit(1);
    char p[512];
    for (int s = 0; s <= 10; s++) {
        snprintf(p, sizeof(p), s ? "%s/job_12_step%d" : "%s/job_12", dir, s);
        mkdir(p, 0755);
        strcat(p, "/cpu.stat");
        put(p, "usage_usec 123456789\nuser_usec 100000000\nsystem_usec 23456789\n");
    }
    double *t = calloc((size_t)rounds * 100, sizeof(double));
    for (int r = 0; r < rounds * 100; r++) {
        double t0 = now();
        uint64_t u;
        nodepower_cgroup_usage(dir, "job_12", &u);
        volatile double w = nodepower_model(71, true, 170, 250, 0.5);
        (void)w;
        t[r] = now() - t0;
    }
    printf("node: one reading (job + 10 step cgroups' cpu.stat, the model): %.1f us median\n",
           median(t, rounds * 100) * 1e6);
    char root[256];
    for (int r = 0; r < rounds * 100; r++) {
        double t0 = now();
        launch_cgroup_root(root, sizeof(root));
        t[r] = now() - t0;
    }
    printf("node: finding the cgroup2 mount (/proc/self/mounts): %.1f us median\n",
           median(t, rounds * 100) * 1e6);
    snprintf(p, sizeof(p), "rm -rf '%s'", dir);
    if (system(p) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    free(t);
}

static void ctld_side(int nnodes, int njobs, int rounds)
{
    static ctld_t c;
    char err[1024], dir[] = "/tmp/bench-metering-db-XXXXXX", text[512];
    if (!mkdtemp(dir))
        exit(1);
    snprintf(text, sizeof(text), "Nodes = n[1-%d]\nStateDir = %s\nPowerLower = 1000\n", nnodes, dir);
    if (config_parse_string(text, "bench.conf", &c.cfg, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    c.loop = uv_default_loop();
    c.jobs = idmap_create();
    nodes_init(&c);
    char db[600];
    snprintf(db, sizeof(db), "%s/ductile.db", dir);
    if (sched_create(c.nnodes, "easy", &c.sched, err, sizeof(err)) < 0 ||
        db_open(&c, db, 0, err, sizeof(err)) < 0 || energy_init(&c, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    int per = nnodes / njobs;
    for (int k = 0; k < njobs; k++) {
        job_t *j = job_new();
        j->name = strdup("bench");
        j->user = strdup("alice");
        j->script = strdup("#!/bin/sh\n");
        j->cwd = strdup("/");
        j->env = json_array();
        j->nodes = per;
        db_job_insert(&c, j);
        j->state = JS_RUNNING;
        j->start = ctld_now() - 100;
        j->alloc = malloc((size_t)per * sizeof(int));
        for (int i = 0; i < per; i++)
            j->alloc[j->nalloc++] = k * per + i;
        db_job_save(&c, j);
        idmap_put(c.jobs, j->id, j);
    }
    db_commit(&c);
    for (int i = 0; i < nnodes; i++) {
        c.nodes[i].power_w = 200 + i % 50;
        c.nodes[i].power_at = ctld_mono();
    }
    double *ts = calloc((size_t)rounds, sizeof(double)), *tc = calloc((size_t)rounds, sizeof(double));
    for (int r = 0; r < rounds; r++) {
        usleep(10000);
        double t0 = now();
        energy_sample(&c);
        double t1 = now();
        db_commit(&c);
        ts[r] = t1 - t0;
        tc[r] = now() - t1;
    }
    printf("controller: one sample of %d nodes, %d running jobs: %.2f ms median, its commit "
           "%.2f ms median (%d rounds)\n", nnodes, njobs, median(ts, rounds) * 1e3,
           median(tc, rounds) * 1e3, rounds);
    snprintf(text, sizeof(text), "rm -rf '%s'", dir);
    if (system(text) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    free(ts);
    free(tc);
}

int main(int argc, char **argv)
{
    int nnodes = argc > 1 ? atoi(argv[1]) : 10000;
    int njobs = argc > 2 ? atoi(argv[2]) : 1000;
    int rounds = argc > 3 ? atoi(argv[3]) : 20;
    if (nnodes < 1 || njobs < 1 || njobs > nnodes || rounds < 1) {
        fprintf(stderr, "usage: bench_metering [NODES [JOBS [ROUNDS]]] (JOBS <= NODES)\n");
        return 2;
    }
    node_side(rounds);
    ctld_side(nnodes, njobs, rounds);
    return 0;
}
