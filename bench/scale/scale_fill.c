/* scale_fill: fills a controller's queue for bench/scale/queue.sh, as many clients at
 * once would (kept-open connections: this is the set-up, not the measurement).
 *
 *   scale_fill SOCKET COUNT THREADS MIN_NODES MAX_NODES rigid|malleable SCRIPT [SEED]
 *              [LIMIT_MIN:LIMIT_MAX]
 *
 * Each job asks for MIN..MAX nodes (uniform; a malleable job takes the range as its
 * bounds and starts at MIN) and a time limit of LIMIT_MIN to LIMIT_MAX seconds
 * (uniform; default 1 minute to 1 day), so that backfilling has estimates to work with.
 * Prints the jobs acknowledged and the time. */
#define _GNU_SOURCE
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "rng.h"

static const char *sock, *type, *script;
static int nmin, nmax;
static double lmin = 60, lmax = 86400;

typedef struct worker {
    int n, ok;
    uint64_t seed;
} worker_t;

static void *submitter(void *arg)
{
    worker_t *w = arg;
    client_t *c;
    char err[512];
    if (client_open_unix(sock, &c, err, sizeof(err)) < 0) {
        fprintf(stderr, "scale_fill: %s\n", err);
        return NULL;
    }
    rng_t r;
    rng_seed(&r, w->seed);
    json_t *env = json_pack("[s]", "PATH=/usr/bin:/bin");
    bool malleable = !strcmp(type, "malleable");
    for (int i = 0; i < w->n; i++) {
        int nodes = nmin + (int)rng_below(&r, (uint64_t)(nmax - nmin + 1));
        double limit = lmin + rng_uniform(&r) * (lmax - lmin);
        json_t *req = json_pack("{s:s,s:s,s:s,s:s,s:i,s:O,s:s,s:f,s:s}", "type", "submit",
                                "script", script, "cwd", "/tmp", "name", "fill", "nodes",
                                malleable ? nmin : nodes, "env", env, "stdout", "/dev/null",
                                "time", limit, "job_type", type);
        if (malleable) {
            json_object_set_new(req, "min_nodes", json_integer(nmin));
            json_object_set_new(req, "max_nodes", json_integer(nmax));
        }
        json_t *rep = NULL;
        if (client_call(c, req, &rep, 600, err, sizeof(err)) < 0)
            fprintf(stderr, "scale_fill: %s\n", err);
        else if (!json_is_true(json_object_get(rep, "ok")))
            fprintf(stderr, "scale_fill: refused: %s\n",
                    json_string_value(json_object_get(rep, "error")));
        else
            w->ok++;
        json_decref(req);
        json_decref(rep);
    }
    json_decref(env);
    client_close(c);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 8) {
        fprintf(stderr, "usage: scale_fill SOCKET COUNT THREADS MIN_NODES MAX_NODES "
                        "rigid|malleable SCRIPT [SEED] [LIMIT_MIN:LIMIT_MAX]\n");
        return 2;
    }
    sock = argv[1];
    int count = atoi(argv[2]), nth = atoi(argv[3]);
    nmin = atoi(argv[4]);
    nmax = atoi(argv[5]);
    type = argv[6];
    script = argv[7];
    uint64_t seed = argc > 8 ? strtoull(argv[8], NULL, 10) : 1;
    if (argc > 9 && sscanf(argv[9], "%lf:%lf", &lmin, &lmax) != 2)
        lmin = -1;
    if (nth < 1 || nth > 64 || nmin < 1 || nmax < nmin || !(lmin > 0 && lmax >= lmin))
        return fprintf(stderr, "scale_fill: bad arguments\n"), 2;
    pthread_t th[64];
    worker_t w[64] = {{0}};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < nth; i++) {
        w[i].n = count / nth + (i < count % nth);
        w[i].seed = seed * 1000 + (uint64_t)i;
        pthread_create(&th[i], NULL, submitter, &w[i]);
    }
    int ok = 0;
    for (int i = 0; i < nth; i++) {
        pthread_join(th[i], NULL);
        ok += w[i].ok;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    printf("%d %.3f\n", ok, dt);
    return ok == count ? 0 : 1;
}
