/* ductile alloc [OPTIONS] [COMMAND [ARGS...]]: an interactive allocation, as salloc.
 * The nodes are a job whose script holds them; COMMAND (the user's shell by default)
 * runs here with the job's variables, so `ductile run` (srun) in it starts steps on the
 * nodes; when it exits the allocation is released and the job ends COMPLETED. If the
 * job ends first (its time limit, a cancel), COMMAND gets SIGHUP.
 * `ductile run` outside a job makes such an allocation for its one step (cmd_run.c). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "cmd.h"
#include "util.h"

/* The job's script: it waits, holding the nodes, until alloc_release's SIGUSR1. */
static const char hold_script[] =
    "#!/bin/sh\n"
    "# ductile alloc: holds the nodes until the allocation is released\n"
    "trap 'exit 0' USR1\n"
    "while :; do sleep 3600 & wait $!; done\n";

/* The job as show gives it; NULL (nothing printed) when the controller does not answer
 * now: a waiting command tries again. */
static json_t *job_now(const alloc_t *a)
{
    config_t cfg = {0};
    if (cu_load_conf(a->conf, &cfg))
        return NULL;
    char err[512];
    client_t *c = NULL;
    json_t *rep = NULL;
    json_t *req = json_pack("{s:s,s:I}", "type", "show", "job", (json_int_t)a->id);
    if (cu_open(&cfg, &c, err, sizeof(err)) == 0)
        client_call(c, req, &rep, 30, err, sizeof(err)); /* (req stays ours) */
    json_decref(req);
    client_close(c);
    config_free(&cfg);
    json_t *job = rep ? json_incref(json_object_get(rep, "job")) : NULL;
    json_decref(rep);
    return job;
}

static bool running(const char *st) { return !strcmp(st, "R") || !strcmp(st, "RS"); }

/* The signals alloc takes with sigtimedwait (blocked by alloc_open). */
static void watched(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGCHLD);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
    sigaddset(set, SIGTERM);
}

/* Waits for one of them for up to ms. */
static int wait_signal(long ms)
{
    sigset_t set;
    watched(&set);
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    int sig = sigtimedwait(&set, NULL, &t);
    return sig < 0 ? 0 : sig;
}

int alloc_open(alloc_t *a, int argc, char **argv, int *first)
{
    for (int k = 1; k < argc; k++) { /* --conf, for the requests that follow */
        if (!strcmp(argv[k], "--conf") && k + 1 < argc)
            a->conf = argv[k + 1];
        else if (!strncmp(argv[k], "--conf=", 7))
            a->conf = argv[k] + 7;
    }
    sigset_t set;
    watched(&set);
    sigprocmask(SIG_BLOCK, &set, NULL);
    /* taken with sigtimedwait: an ignored signal (a shell's background job ignores
     * SIGINT) would never be pending */
    signal(SIGINT, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGCHLD, SIG_DFL); /* (ignored, children would be reaped behind waitpid's back) */
    if (cmd_submit_alloc(argc, argv, hold_script, &a->id, first) || a->id <= 0)
        return 1;
    bool waited = false;
    double t0 = cu_mono();
    for (;;) {
        json_t *job = job_now(a);
        const char *st = job ? cu_str(job, "state") : "";
        if (job && running(st)) {
            a->nodelist = strdup(cu_str(job, "nodelist"));
            a->name = strdup(cu_str(job, "name"));
            a->nodes = (long)json_integer_value(json_object_get(job, "nodes"));
            json_decref(job);
            if (!a->quiet || waited)
                fprintf(stderr, "ductile: job %lld granted: %ld node%s, %s\n",
                        (long long)a->id, a->nodes, a->nodes == 1 ? "" : "s",
                        a->nodelist ? a->nodelist : "");
            return 0;
        }
        if (job && strcmp(st, "PD")) {
            fprintf(stderr, "ductile: job %lld ended before it started (%s)\n",
                    (long long)a->id, cu_str(job, "state_name"));
            json_decref(job);
            return 1;
        }
        json_decref(job);
        if (!waited && cu_mono() - t0 >= 1) /* not granted at once */
            fprintf(stderr, "ductile: job %lld queued, waiting for its nodes (Ctrl-C gives "
                            "up)\n", (long long)a->id);
        waited = waited || cu_mono() - t0 >= 1;
        int sig = wait_signal(250);
        if (sig == SIGINT || sig == SIGHUP || sig == SIGTERM) {
            fprintf(stderr, "ductile: giving up: cancelling job %lld\n", (long long)a->id);
            json_decref(cu_request(a->conf, json_pack("{s:s,s:[I]}", "type", "cancel", "jobs",
                                                      (json_int_t)a->id)));
            return 128 + sig; /* as a shell reports a command ended by it (130: Ctrl-C) */
        }
    }
}

void alloc_release(alloc_t *a)
{
    if (a->id <= 0)
        return;
    if (!a->quiet)
        fprintf(stderr, "ductile: releasing job %lld\n", (long long)a->id);
    /* The script's trap ends it: COMPLETED, not cancelled. A script not started yet on
     * its node (the job is running to the controller a moment before) misses the
     * signal: sent again every second, and after ten the job is cancelled. */
    double t0 = cu_mono(), sent = -1;
    for (;;) {
        json_t *job = job_now(a);
        const char *st = job ? cu_str(job, "state") : "R";
        bool over = job && !running(st);
        json_decref(job);
        if (over)
            break;
        if (cu_mono() - t0 >= 10) { /* retried while the controller is away */
            config_t cfg = {0};
            if (cu_load_conf(a->conf, &cfg) == 0)
                json_decref(cu_call_retry(&cfg, json_pack("{s:s,s:[I]}", "type", "cancel",
                                                          "jobs", (json_int_t)a->id)));
            config_free(&cfg);
            break;
        }
        if (sent < 0 || cu_mono() - sent >= 1) {
            json_decref(cu_request(a->conf, json_pack("{s:s,s:[I],s:i,s:i}", "type", "cancel",
                                                      "jobs", (json_int_t)a->id, "signal",
                                                      SIGUSR1, "scope", 1)));
            sent = cu_mono();
        }
        wait_signal(100);
    }
    free(a->nodelist);
    free(a->name);
    a->nodelist = a->name = NULL;
    a->id = 0;
}

static void set_env(const char *k, const char *v) { setenv(k, v ? v : "", 1); }

static void set_envl(const char *k, long long v)
{
    char b[32];
    snprintf(b, sizeof(b), "%lld", v);
    setenv(k, b, 1);
}

void alloc_environment(const alloc_t *a)
{
    char cwd[4096];
    if (!getcwd(cwd, sizeof(cwd)))
        snprintf(cwd, sizeof(cwd), "/");
    set_envl("DUCTILE_JOB_ID", a->id);
    set_env("DUCTILE_JOB_NODELIST", a->nodelist);
    set_envl("DUCTILE_JOB_NUM_NODES", a->nodes);
    set_env("DUCTILE_JOB_NAME", a->name);
    set_env("DUCTILE_SUBMIT_DIR", cwd);
    config_t cfg = {0};
    if (cu_load_conf(a->conf, &cfg) == 0 && cfg.slurm_env) {
        set_envl("SLURM_JOB_ID", a->id);
        set_envl("SLURM_JOBID", a->id);
        set_env("SLURM_JOB_NODELIST", a->nodelist);
        set_env("SLURM_NODELIST", a->nodelist);
        set_envl("SLURM_JOB_NUM_NODES", a->nodes);
        set_envl("SLURM_NNODES", a->nodes);
        set_env("SLURM_JOB_NAME", a->name);
        set_env("SLURM_SUBMIT_DIR", cwd);
        set_env("SLURM_CLUSTER_NAME", cfg.cluster_name);
    }
    config_free(&cfg);
}

int alloc_run(alloc_t *a, int (*fn)(void *arg), void *arg)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return cmd_fail("cannot start the command: %s", strerror(errno));
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        alloc_environment(a);
        int st = fn(arg);
        fflush(NULL);
        _exit(st);
    }
    int status = 0;
    double next_check = cu_mono() + 2;
    bool revoked = false;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            break;
        int sig = wait_signal(500);
        if (sig == SIGHUP || sig == SIGTERM)
            kill(pid, sig); /* the terminal or a kill: passed on, then released */
        if (!revoked && cu_mono() >= next_check) {
            next_check = cu_mono() + 2;
            json_t *job = job_now(a);
            if (job && !running(cu_str(job, "state"))) {
                fprintf(stderr, "ductile: job %lld has ended (%s): the allocation is revoked\n",
                        (long long)a->id, cu_str(job, "state_name"));
                kill(pid, SIGHUP);
                revoked = true;
            }
            json_decref(job);
        }
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int exec_command(void *arg)
{
    char **cmd = arg;
    execvp(cmd[0], cmd);
    fprintf(stderr, "ductile: alloc: %s: %s\n", cmd[0], strerror(errno));
    return 127;
}

int cmd_alloc(int argc, char **argv)
{
    for (int k = 1; k < argc && argv[k][0] == '-'; k++)
        if (!strcmp(argv[k], "-h") || !strcmp(argv[k], "--help")) {
            printf("usage: ductile alloc [submit options] [COMMAND [ARGS...]]\n"
                   "Waits for nodes (-N, -t, -J... as ductile submit takes them), then runs\n"
                   "COMMAND (default: your $SHELL) here with the job's variables\n"
                   "(DUCTILE_JOB_ID, SLURM_JOB_NODELIST...): `ductile run` in it starts steps\n"
                   "on the nodes. When COMMAND exits the nodes are released and the job ends\n"
                   "COMPLETED; if the job ends first, COMMAND gets SIGHUP.\n");
            return 0;
        }
    alloc_t a = {0};
    int first = argc;
    int rc = alloc_open(&a, argc, argv, &first);
    if (rc) {
        free(a.nodelist);
        free(a.name);
        return rc;
    }
    char *shell[] = {getenv("SHELL") && *getenv("SHELL") ? getenv("SHELL") : "/bin/sh", NULL};
    int st = alloc_run(&a, exec_command, first < argc ? argv + first : shell);
    alloc_release(&a);
    return st;
}
