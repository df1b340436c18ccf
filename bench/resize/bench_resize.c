/* bench_resize: the cost of resizes on an emulated cluster, and of probing for them.
 *
 *   bench_resize BUILD_DIR        runs everything, prints the table
 *   bench_resize app OUT          (internal) the job's leader
 *
 * The driver starts an 8-node cluster (policy fcfs: only the operator resizes), runs a
 * malleable job whose leader is this program, and asks for 1->2, ..., 7->8, then
 * 8->7, ..., 2->1 with `ductile resize`. For each resize the controller records how
 * long it took from its decision to the commit (ductile show); the leader records how
 * long it spent between receiving the offer and committing: starting one process
 * (`ductile run --node N /bin/true`) on each new node, or nothing for a shrink. The
 * difference is the handshake's overhead: messages, node preparation, clean-up of
 * leaving nodes. */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "ductile.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int app(const char *out)
{
    if (dt_attach(1) < 0) {
        fprintf(stderr, "bench app: %s\n", dt_strerror());
        return 1;
    }
    FILE *f = fopen(out, "w");
    /* the probe when nothing is pending */
    dt_offer_t o;
    int n = 200000;
    double t0 = now();
    for (int i = 0; i < n; i++)
        dt_poll_offer(&o);
    fprintf(f, "probe %.3f\n", (now() - t0) / n * 1e6);
    fflush(f);
    char stop[4200];
    snprintf(stop, sizeof(stop), "%s.stop", out);
    while (access(stop, F_OK) != 0) {
        if (dt_wait_offer(&o, 0.2) != 1 || o.op == DT_WITHDRAWN)
            continue;
        double a = now();
        if (o.op == DT_EXPAND)
            for (int k = 0; k < o.nnodes; k++) {
                pid_t pid = fork();
                if (pid == 0) {
                    execlp("ductile", "ductile", "run", "--node", o.nodes[k], "/bin/true", (char *)NULL);
                    _exit(127);
                }
                int st = 0;
                waitpid(pid, &st, 0);
                if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                    fprintf(f, "error: ductile run on %s failed (status %d)\n", o.nodes[k], st);
            }
        double b = now();
        dt_offer_commit(&o);
        fprintf(f, "%s %d %d %.6f\n", o.op == DT_EXPAND ? "expand" : "shrink", o.before,
                o.after, b - a);
        fflush(f);
    }
    fclose(f);
    return 0;
}

static const char *build;
static char dir[4096], sock[4200];

static json_t *call(json_t *req)
{
    client_t *c;
    char err[512];
    json_t *rep = NULL;
    if (client_open_unix(sock, &c, err, sizeof(err)) == 0) {
        if (client_call(c, req, &rep, 30, err, sizeof(err)) < 0)
            fprintf(stderr, "bench: %s\n", err);
        client_close(c);
    }
    json_decref(req);
    return rep;
}

static int job_nodes(long long id, char *state, json_t **events)
{
    json_t *rep = call(json_pack("{s:s,s:I}", "type", "show", "job", (json_int_t)id));
    if (!rep)
        return -1;
    json_t *j = json_object_get(rep, "job");
    int n = (int)json_integer_value(json_object_get(j, "nodes"));
    snprintf(state, 8, "%s", json_string_value(json_object_get(j, "state")));
    if (events)
        *events = json_incref(json_object_get(j, "events"));
    json_decref(rep);
    return n;
}

/* One series on a fresh cluster: the job runs `body` (a shell command line whose
 * application writes its figures to OUT); prints the table. */
static int series(const char *title, const char *body)
{
    snprintf(dir, sizeof(dir), "/tmp/ductile-bench-resize-%d", (int)getpid());
    snprintf(sock, sizeof(sock), "%s/ctld.sock", dir);
    char cmd[16384];
    snprintf(cmd, sizeof(cmd), "rm -rf %s && %s/ductile cluster up --nodes 8 --dir %s --policy fcfs "
                               "--resize-timeout 60 > /dev/null", dir, build, dir);
    if (system(cmd) != 0)
        return 1;
    char out[4400], errf[4400], script[16384];
    snprintf(out, sizeof(out), "%s/app.out", dir);
    snprintf(errf, sizeof(errf), "%s/app.err", dir);
    snprintf(script, sizeof(script),
             "#!/bin/sh\nexport PATH=%s:$PATH\n"
             "[ \"$(id -u)\" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n"
             "OUT=%s\n%s\n", build, out, body);
    json_t *rep = call(json_pack("{s:s,s:s,s:s,s:s,s:i,s:i,s:i,s:s,s:s,s:s}", "type", "submit", "script",
                                 script, "cwd", dir, "job_type", "malleable", "nodes", 1,
                                 "min_nodes", 1, "max_nodes", 8, "name", "bench", "stderr", errf, "stdout",
                                 "/dev/null"));
    long long id = rep ? (long long)json_integer_value(json_object_get(rep, "job")) : 0;
    json_decref(rep);
    /* wait for the probe figure (the app is attached then) */
    double deadline = now() + 60;
    FILE *f = NULL;
    double probe = -1, pmpi = -1;
    char line[256];
    while (now() < deadline && probe < 0) {
        if ((f = fopen(out, "r"))) {
            while (fgets(line, sizeof(line), f)) {
                sscanf(line, "probe %lf", &probe);
                sscanf(line, "pmpi %lf", &pmpi);
            }
            fclose(f);
        }
        usleep(20000);
    }
    printf("\n%s\nprobe when nothing is pending: %.3f us\n", title, probe);
    if (pmpi >= 0)
        printf("profiling wrapper, cost per MPI call: %.3f us\n", pmpi);
    int targets[14], nt = 0;
    for (int k = 2; k <= 8; k++)
        targets[nt++] = k;
    for (int k = 7; k >= 1; k--)
        targets[nt++] = k;
    printf("%-8s %-8s %12s %18s %14s\n", "resize", "nodes", "total [ms]", "processes [ms]",
           "overhead [ms]");
    for (int t = 0; t < nt; t++) {
        json_decref(call(json_pack("{s:s,s:I,s:i}", "type", "resize", "job", (json_int_t)id,
                                   "nodes", targets[t])));
        char st[8] = "";
        deadline = now() + 60;
        while (now() < deadline && !(job_nodes(id, st, NULL) == targets[t] && !strcmp(st, "R")))
            usleep(2000);
        json_t *ev;
        job_nodes(id, st, &ev);
        const json_t *last = json_array_get(ev, json_array_size(ev) - 1);
        const char *detail = json_string_value(json_object_get(last, "detail"));
        double total = detail ? atof(detail) : -1;
        json_decref(ev);
        /* the app's line for this resize: the time it spent on processes */
        double app_s = 0;
        f = fopen(out, "r");
        char op[16];
        int b, a;
        double x;
        while (f && fgets(line, sizeof(line), f))
            if (sscanf(line, "%15s %d %d %lf", op, &b, &a, &x) == 4 && a == targets[t])
                app_s = x;
        if (f)
            fclose(f);
        int from = t ? targets[t - 1] : 1;
        printf("%-8s %d->%-5d %12.1f %18.1f %14.1f\n", targets[t] > from ? "expand" : "shrink",
               from, targets[t], total * 1e3, app_s * 1e3, (total - app_s) * 1e3);
    }
    int failed = 0;
    if ((f = fopen(out, "r"))) {
        while (fgets(line, sizeof(line), f))
            failed += !strncmp(line, "error", 5);
        fclose(f);
    }
    if (failed)
        fprintf(stderr, "bench_resize: %d step launches on new nodes failed (see %s/app.err)\n",
                failed, dir);
    /* the stop file ends the application; wait for the job before stopping the cluster */
    snprintf(cmd, sizeof(cmd), "touch %s.stop", out);
    if (system(cmd) != 0)
        failed++;
    char st[8] = "";
    deadline = now() + 30;
    while (now() < deadline && job_nodes(id, st, NULL) > 0 && strcmp(st, "CD") && strcmp(st, "F"))
        usleep(20000);
    snprintf(cmd, sizeof(cmd), "%s/ductile cluster down --dir %s > /dev/null%s%s", build, dir,
             failed ? "" : "; rm -rf ", failed ? "" : dir);
    return system(cmd) == 0 && !failed ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "app"))
        return app(argv[2]);
    if (argc < 2) {
        fprintf(stderr, "usage: bench_resize BUILD_DIR\n");
        return 2;
    }
    static char build_abs[4096];
    if (!realpath(argv[1], build_abs)) {
        fprintf(stderr, "bench_resize: %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    build = build_abs;
    char self[4096], body[16384];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[sl > 0 ? sl : 0] = '\0';
    snprintf(body, sizeof(body), "exec %s app $OUT", self);
    int rc = series("Process layer (dt_attach; the leader starts one process per new node "
                    "with `ductile run`)", body);
    snprintf(body, sizeof(body), "exec ductile mpirun %s/bench/bench_resize_mpi $OUT", build);
    rc |= series("MPI layer (ductile mpirun: one Open MPI group per node, joined by "
                 "connect/accept)", body);
    return rc;
}
