/* bench_cluster: the controller under load, on a local emulated cluster.
 *
 *   bench_cluster BUILD_DIR [JOBS_SUBMIT] [JOBS_QUEUE] [JOBS_TRIVIAL]
 *
 * (a) durable submissions per second from 8 concurrent clients (nodes drained, so
 *     every job stays queued; each submission is acknowledged only once on disk);
 * (d) `ductile queue` wall time with JOBS_QUEUE jobs queued (output to /dev/null);
 * (b) end-to-end throughput of trivial jobs (/bin/true) on 16 nodes;
 * (c) start latency: from a job's last instruction to the next job's first, on a
 *     one-node cluster, as the jobs themselves observe it (median of 20). */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"

static const char *build;
static char dir[4096], sock[4200];

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    return system(cmd);
}

static json_t *call(client_t *c, json_t *req)
{
    json_t *rep = NULL;
    char err[512];
    if (client_call(c, req, &rep, 120, err, sizeof(err)) < 0)
        fprintf(stderr, "bench: %s\n", err);
    json_decref(req);
    return rep;
}

typedef struct worker {
    int n;
    int ok;
} worker_t;

static void *submitter(void *arg)
{
    worker_t *w = arg;
    client_t *c;
    char err[512];
    if (client_open_unix(sock, &c, err, sizeof(err)) < 0)
        return NULL;
    json_t *env = json_pack("[s]", "PATH=/usr/bin:/bin");
    for (int i = 0; i < w->n; i++) {
        json_t *rep = call(c, json_pack("{s:s,s:s,s:s,s:s,s:i,s:O,s:s}", "type", "submit",
                                        "script", "#!/bin/sh\ntrue\n", "cwd", "/tmp", "name",
                                        "bench", "nodes", 1, "env", env, "stdout", "/dev/null"));
        w->ok += rep != NULL;
        json_decref(rep);
    }
    json_decref(env);
    client_close(c);
    return NULL;
}

static double submit_parallel(int total, int nclients)
{
    pthread_t th[64];
    worker_t w[64] = {{0}};
    double t0 = now();
    for (int i = 0; i < nclients; i++) {
        w[i].n = total / nclients + (i < total % nclients);
        pthread_create(&th[i], NULL, submitter, &w[i]);
    }
    int ok = 0;
    for (int i = 0; i < nclients; i++) {
        pthread_join(th[i], NULL);
        ok += w[i].ok;
    }
    double dt = now() - t0;
    if (ok != total)
        fprintf(stderr, "bench: only %d of %d submissions acknowledged\n", ok, total);
    return dt;
}

static int pending(void)
{
    client_t *c;
    char err[512];
    if (client_open_unix(sock, &c, err, sizeof(err)) < 0)
        return -1;
    json_t *rep = call(c, json_pack("{s:s}", "type", "status"));
    client_close(c);
    int n = rep ? (int)json_integer_value(json_object_get(rep, "jobs")) : -1;
    json_decref(rep);
    return n;
}

static int up(int nodes, const char *extra)
{
    snprintf(dir, sizeof(dir), "/tmp/ductile-bench-%d", (int)getpid());
    snprintf(sock, sizeof(sock), "%s/ctld.sock", dir);
    sh("rm -rf %s", dir);
    return sh("%s/ductile cluster up --nodes %d --dir %s --tick 1 %s > /dev/null", build, nodes,
              dir, extra);
}

static void down(void)
{
    sh("%s/ductile cluster down --dir %s > /dev/null 2>&1; rm -rf %s", build, dir, dir);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_cluster BUILD_DIR [SUBMIT] [QUEUE] [TRIVIAL]\n");
        return 2;
    }
    build = argv[1];
    int nsub = argc > 2 ? atoi(argv[2]) : 10000;
    int nqueue = argc > 3 ? atoi(argv[3]) : 100000;
    int ntriv = argc > 4 ? atoi(argv[4]) : 2000;

    /* (a) and (d): a drained cluster keeps every job queued. */
    if (up(16, "") != 0)
        return 1;
    sh("DUCTILE_CONF=%s/ductile.conf %s/ductile drain 'n[01-16]'", dir, build);
    double dt = submit_parallel(nsub, 8);
    printf("(a) durable submissions, 8 clients: %d jobs in %.2f s = %.0f jobs/s\n", nsub, dt,
           nsub / dt);
    fflush(stdout);
    if (nqueue > nsub)
        submit_parallel(nqueue - nsub, 8);
    int q = pending();
    double best = 1e9;
    for (int r = 0; r < 3; r++) {
        double t0 = now();
        sh("DUCTILE_CONF=%s/ductile.conf %s/ductile queue > /dev/null", dir, build);
        double t = now() - t0;
        if (t < best)
            best = t;
    }
    printf("(d) ductile queue with %d queued jobs: %.3f s (best of 3, whole command)\n", q, best);
    fflush(stdout);
    down();

    /* (b) trivial jobs on 16 nodes */
    if (up(16, "") != 0)
        return 1;
    double t0 = now();
    submit_parallel(ntriv, 8);
    while (pending() > 0)
        usleep(10000);
    dt = now() - t0;
    printf("(b) trivial jobs end to end on 16 nodes: %d jobs in %.2f s = %.0f jobs/s\n", ntriv, dt,
           ntriv / dt);
    fflush(stdout);
    down();

    /* (c) start latency on one node, as the jobs see it */
    if (up(1, "") != 0)
        return 1;
    char tdir[4300];
    snprintf(tdir, sizeof(tdir), "%s/lat", dir);
    sh("mkdir -p %s", tdir);
    double lat[20];
    int nl = 0;
    for (int i = 0; i < 20; i++) {
        char pa[4400], pb[4400];
        snprintf(pa, sizeof(pa), "%s/a.sh", tdir);
        snprintf(pb, sizeof(pb), "%s/b.sh", tdir);
        FILE *f = fopen(pa, "w");
        fprintf(f, "#!/bin/sh\nsleep 0.2\ndate +%%s.%%N > a.%d\n", i);
        fclose(f);
        f = fopen(pb, "w");
        fprintf(f, "#!/bin/sh\ndate +%%s.%%N > b.%d\n", i);
        fclose(f);
        sh("cd %s && chmod +x a.sh b.sh && "
           "DUCTILE_CONF=%s/ductile.conf %s/ductile submit a.sh > /dev/null && "
           "DUCTILE_CONF=%s/ductile.conf %s/ductile submit b.sh > /dev/null",
           tdir, dir, build, dir, build);
        while (pending() > 0)
            usleep(5000);
        snprintf(pa, sizeof(pa), "%s/a.%d", tdir, i);
        snprintf(pb, sizeof(pb), "%s/b.%d", tdir, i);
        FILE *fa = fopen(pa, "r"), *fb = fopen(pb, "r");
        double ta, tb;
        if (fa && fb && fscanf(fa, "%lf", &ta) == 1 && fscanf(fb, "%lf", &tb) == 1)
            lat[nl++] = tb - ta;
        if (fa)
            fclose(fa);
        if (fb)
            fclose(fb);
    }
    qsort(lat, (size_t)nl, sizeof(double), cmp_d);
    if (nl)
        printf("(c) start latency, last instruction of a job to the first of the next: "
               "median %.1f ms, min %.1f ms, max %.1f ms (%d samples)\n",
               lat[nl / 2] * 1e3, lat[0] * 1e3, lat[nl - 1] * 1e3, nl);
    down();
    return 0;
}
