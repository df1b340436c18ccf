#define _GNU_SOURCE /* waitid */
/* Jobs on one node: start, walltime, clean-up, and reporting how they ended. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "noded.h"
#include "strparse.h"

static void job_free_cb(uv_handle_t *h)
{
    njob_t *j = h->data;
    if (--j->timers_open == 0) {
        launch_cleanup(j->proc);
        if (j->script_path)
            unlink(j->script_path);
        free(j->script_path);
        json_decref(j->limits);
        json_decref(j->start_msg);
        free(j->ck_agents);
        free(j->ck_seen);
        free(j);
    }
}

static void unqueue_start(njob_t *j);

static void job_drop(noded_t *d, njob_t *j)
{
    if (d->stopping)
        return; /* the next incarnation finds it again (its run record stays) */
    unqueue_start(j);
    idmap_del(d->jobs, j->id);
    runs_forget(d, j->id);
    if (j->batch)
        hosts_remove(d, j->id);
    agents_job_gone(d, j->id, j->run);
    if (j->leader)
        conn_close(j->leader);
    noded_close((uv_handle_t *)&j->wall, job_free_cb);
    noded_close((uv_handle_t *)&j->warn, job_free_cb);
    noded_close((uv_handle_t *)&j->kill, job_free_cb);
}

/* The job may go when the controller knows how it ended and nothing of it is left. */
static void maybe_drop(noded_t *d, njob_t *j)
{
    if (j->cleaned && (j->acked || !j->batch))
        job_drop(d, j);
}

static njob_t *job_new(noded_t *d, int64_t id)
{
    njob_t *j = calloc(1, sizeof(*j));
    if (!j)
        return NULL;
    j->d = d;
    j->id = id;
    /* an adopted run's declaration is not kept: the configured default stands for it */
    j->power_min = j->power_max = d->cfg.default_job_power;
    uv_timer_init(d->loop, &j->wall);
    uv_timer_init(d->loop, &j->warn);
    uv_timer_init(d->loop, &j->kill);
    j->wall.data = j->warn.data = j->kill.data = j;
    j->timers_open = 3;
    idmap_put(d->jobs, id, j);
    return j;
}

static double wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The script ended (kind: 0 exit code, 1 signal, 2 could not start, 3 ended while an
 * earlier incarnation of this daemon was gone: status unknown). */
static void set_ended(njob_t *j, int kind, int code)
{
    j->ended = true;
    j->kind = kind;
    j->code = code;
    j->end_time = wall_now();
}

static void report_end(noded_t *d, njob_t *j)
{
    json_t *m = json_pack("{s:s,s:I,s:i,s:i,s:i,s:b,s:b,s:f}",
                          "type", "job_ended",
                          "job", (json_int_t)j->id,
                          "run", j->run,
                          "kind", j->kind,
                          "code", j->code,
                          "timed_out", j->timed_out,
                          "clean", j->cleaned,
                          "end", j->end_time);
    if (m && j->error[0])
        json_object_set_new(m, "error", json_string(j->error));
    if (m && j->oom)
        json_object_set_new(m, "oom", json_true());
    if (j->proc && !j->used_known) { /* the script's use, as it ended (history) */
        launch_usage(j->proc, &j->used_cpu, &j->used_mem);
        j->used_known = true;
    }
    if (m && j->used_known && j->used_cpu >= 0)
        json_object_set_new(m, "cpu", json_real(j->used_cpu));
    if (m && j->used_known && j->used_mem >= 0)
        json_object_set_new(m, "mem", json_integer(j->used_mem));
    if (noded_send(d, m) == -ENOTCONN)
        fprintf(stderr, "ductile-noded %s: job %lld ended; the controller hears of it once "
                "this daemon is registered\n", d->name, (long long)j->id);
}

static void on_kill(uv_timer_t *t);
static void set_adopted_end(noded_t *d, njob_t *j);

static void send_term(noded_t *d, njob_t *j)
{
    j->termed = true;
    if (j->proc)
        launch_signal(j->proc, SIGTERM);
    steps_signal(d, j->id, 0, SIGTERM);
}

/* After `grace` seconds (processes leaving on their own, e.g. the groups of a
 * shrinking MPI job, finish undisturbed), SIGTERM; SIGKILL KillWait seconds later if
 * anything is left; meanwhile check every 50 ms whether the job is gone. */
static void terminate(noded_t *d, njob_t *j, double grace)
{
    if (j->killing)
        return;
    j->killing = true;
    unqueue_start(j); /* a start still waiting its turn never happens */
    j->term_at = uv_now(d->loop) + (uint64_t)(grace * 1000);
    j->kill_at = j->term_at + (uint64_t)(d->cfg.kill_wait * 1000);
    if (grace <= 0)
        send_term(d, j);
    uv_timer_start(&j->kill, on_kill, 50, 50);
}

/* No process of the job is left on this node: batch script and tasks. */
static bool job_gone(noded_t *d, njob_t *j)
{
    if (j->starting)
        return false; /* not exec'd yet: it ends once it has (started) */
    return (!j->proc || launch_all_gone(j->proc)) && steps_job_gone(d, j->id);
}

static void send_cleanup_done(noded_t *d, int64_t id, int run)
{
    noded_send(d, json_pack("{s:s,s:I,s:i}",
                            "type", "cleanup_done",
                            "job", (json_int_t)id,
                            "run", run));
}

static void finish_cleanup(noded_t *d, njob_t *j)
{
    j->cleaned = true;
    uv_timer_stop(&j->kill);
    steps_forget_job(d, j->id);
    send_cleanup_done(d, j->id, j->cleanup_run ? j->cleanup_run : j->run);
    maybe_drop(d, j);
}

/* Every 50 ms after SIGTERM: is everything gone? SIGKILL once KillWait has passed. */
static void on_kill(uv_timer_t *t)
{
    njob_t *j = t->data;
    noded_t *d = j->d;
    int status;
    if (j->proc && !j->ended && !j->adopted && launch_reap(j->proc, &status) == 1) {
        set_ended(j, WIFSIGNALED(status) ? 1 : 0,
                  WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        if (j->batch)
            report_end(d, j);
    } else if (j->proc && !j->ended && j->adopted && launch_all_gone(j->proc)) {
        set_adopted_end(d, j); /* e.g. its time limit, enforced by this incarnation */
        if (j->batch)
            report_end(d, j);
    }
    steps_reap(d);
    if (!job_gone(d, j)) {
        if (!j->termed && uv_now(d->loop) >= j->term_at)
            send_term(d, j);
        if (uv_now(d->loop) >= j->kill_at) {
            if (j->proc)
                launch_signal(j->proc, SIGKILL);
            steps_signal(d, j->id, 0, SIGKILL);
        }
        return;
    }
    if (j->cleaning && !j->cleaned)
        finish_cleanup(d, j);
}

/* A signal to the job's processes here, as scancel's: its steps' tasks (scope 0), its
 * batch script alone (1), or both with the script's children (2). */
static void signal_job(noded_t *d, njob_t *j, int sig, int scope)
{
    if (j->proc && scope == 1)
        launch_signal_main(j->proc, sig);
    if (j->proc && scope == 2)
        launch_signal(j->proc, sig); /* the script's process group */
    if (scope != 1)
        steps_signal(d, j->id, 0, sig);
}

/* submit --signal=SIG@SECS: SECS before its time limit */
static void on_warn(uv_timer_t *t)
{
    njob_t *j = t->data;
    fprintf(stderr, "ductile-noded %s: job %lld: signal %d, %g s before its time limit\n",
            j->d->name, (long long)j->id, j->warn_sig, j->warn_secs);
    signal_job(j->d, j, j->warn_sig, j->warn_scope);
    j->warned = true;
    runs_record(j->d, j);
}

static void on_walltime(uv_timer_t *t)
{
    njob_t *j = t->data;
    j->timed_out = true;
    fprintf(stderr, "ductile-noded %s: job %lld reached its time limit\n", j->d->name,
            (long long)j->id);
    terminate(j->d, j, 0);
}

static char *write_script(noded_t *d, int64_t id, const char *script, uid_t uid, gid_t gid,
                          char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/job%lld.sh", d->spool, (long long)id);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t n = strlen(script);
    bool ok = write(fd, script, n) == (ssize_t)n;
    if (geteuid() == 0 && fchown(fd, uid, gid) < 0)
        ok = false;
    close(fd);
    if (!ok) {
        snprintf(err, errlen, "cannot write %s", path);
        unlink(path);
        return NULL;
    }
    return strdup(path);
}

/* The job's environment: what the user had at submission, then ours on top. */
static char **job_env(noded_t *d, const json_t *msg, int64_t id)
{
    const json_t *env = json_object_get(msg, "env");
    size_t n = json_is_array(env) ? json_array_size(env) : 0;
    char **base = calloc(n + 1, sizeof(char *));
    size_t k = 0;
    bool other_agents = agents_inherited(d, env);
    for (size_t i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(env, i));
        if (s && strchr(s, '=') &&
            !(other_agents && (!strncmp(s, "DUCTILE_CKPT_AGENTS=", 20) ||
                               !strncmp(s, "DUCTILE_CKPT_KEY_FILE=", 22))))
            base[k++] = (char *)s;
    }
    char extra[16 + HOSTS_ENV_MAX + SLURMENV_JOB_MAX][HOSTS_KV_LEN];
    const char *nl = json_string_value(json_object_get(msg, "nodelist"));
    const char *cwd = json_string_value(json_object_get(msg, "cwd"));
    const char *name = json_string_value(json_object_get(msg, "name"));
    int i = 0;
    snprintf(extra[i++], sizeof(extra[0]), "DUCTILE_JOB_ID=%lld", (long long)id);
    snprintf(extra[i++], sizeof(extra[0]), "DUCTILE_JOB_NODELIST=%s", nl ? nl : "");
    snprintf(extra[i++], sizeof(extra[0]), "DUCTILE_JOB_NUM_NODES=%lld",
             (long long)json_integer_value(json_object_get(msg, "num_nodes")));
    snprintf(extra[i++], sizeof(extra[0]), "DUCTILE_SUBMIT_DIR=%s", cwd ? cwd : "/");
    snprintf(extra[i++], sizeof(extra[0]), "DUCTILE_JOB_NAME=%s", name ? name : "");
    snprintf(extra[i++], sizeof(extra[0]), "DUCTILE_NODENAME=%s", d->name);
    snprintf(extra[i++], sizeof(extra[0]), "DUCTILE_CLUSTER=%s", d->cfg.cluster_name);
    snprintf(extra[i++], sizeof(extra[0]), "DUCTILE_NODED_SOCKET=%s", d->app_socket);
    snprintf(extra[i++], sizeof(extra[0]), "DUCTILE_CONF=%s", d->conf_path);
    const json_t *arr = json_object_get(msg, "array"); /* [array id, index] */
    if (json_array_size(arr) == 2) {
        snprintf(extra[i++], sizeof(extra[0]), "DUCTILE_ARRAY_JOB_ID=%lld",
                 (long long)json_integer_value(json_array_get(arr, 0)));
        snprintf(extra[i++], sizeof(extra[0]), "DUCTILE_ARRAY_TASK_ID=%lld",
                 (long long)json_integer_value(json_array_get(arr, 1)));
    }
    i += hosts_env(d, id, base, extra + i);
    i += agents_job_env(d, msg, id, (int)json_integer_value(json_object_get(msg, "run")), extra + i);
    i += slurmenv_job(d, msg, id, base, extra + i);
    const char *ptr[16 + HOSTS_ENV_MAX + SLURMENV_JOB_MAX];
    for (int q = 0; q < i; q++)
        ptr[q] = extra[q];
    char **out = launch_env_build(base, ptr, (size_t)i);
    free(base);
    return out;
}

static void start_failed(noded_t *d, njob_t *j, int rc, const char *err)
{
    fprintf(stderr, "ductile-noded %s: job %lld could not start: %s\n", d->name,
            (long long)j->id, err);
    set_ended(j, 2, -rc);
    snprintf(j->error, sizeof(j->error), "%s", err);
    report_end(d, j);
}

static void reap_one(noded_t *d, njob_t *j);

void jobs_arm_limit(noded_t *d, njob_t *j)
{
    (void)d;
    uv_timer_stop(&j->wall);
    uv_timer_stop(&j->warn);
    if (!(j->deadline > 0))
        return;
    double left = j->deadline - wall_now();
    uv_timer_start(&j->wall, on_walltime, left > 0 ? (uint64_t)(left * 1000) : 0, 0);
    if (j->warn_sig && !j->warned) { /* once: not again as an adopting daemon starts */
        double in = left - j->warn_secs;
        uv_timer_start(&j->warn, on_warn, in > 0 ? (uint64_t)(in * 1000) : 0, 0);
    }
}

/* The script exec'd: it runs under its time limit, on record. */
static void started(noded_t *d, njob_t *j)
{
    j->began = wall_now();
    j->deadline = j->limit > 0 ? j->began + j->limit : 0;
    runs_record(d, j);
    jobs_arm_limit(d, j);
    noded_send(d, json_pack("{s:s,s:I,s:i}", "type", "job_started", "job", (json_int_t)j->id,
                            "run", j->run));
    if (j->cleaning)
        terminate(d, j, 0); /* cancelled while it started */
    reap_one(d, j);         /* it may have ended already: its SIGCHLD came before */
}

/* The poll watches its own copy of the report pipe: launch_finish closes the original,
 * and a descriptor must not be closed while libuv still polls it. */
typedef struct start_watch {
    uv_poll_t poll;
    njob_t *j;
    int fd;
} start_watch_t;

static void watch_free_cb(uv_handle_t *h)
{
    start_watch_t *w = h->data;
    close(w->fd);
    free(w);
}

static void stop_watching(njob_t *j)
{
    uv_timer_stop(&j->wall);
    uv_timer_stop(&j->warn);
    if (j->start_watch) {
        noded_close((uv_handle_t *)&j->start_watch->poll, watch_free_cb);
        j->start_watch = NULL;
    }
}

static void on_start_io(uv_poll_t *h, int status, int events)
{
    (void)status;
    (void)events;
    start_watch_t *w = h->data;
    njob_t *j = w->j;
    char err[LAUNCH_ERRLEN];
    int rc = launch_finish(j->starting, &j->proc, err, sizeof(err));
    if (rc == 0)
        return;
    j->starting = NULL; /* freed by launch_finish */
    stop_watching(j);
    if (rc < 0)
        start_failed(j->d, j, rc, err);
    else
        started(j->d, j);
}

/* How long a script may take from fork to exec before the start is given up. */
#define START_TIMEOUT_MS 30000

static void on_start_timeout(uv_timer_t *t)
{
    njob_t *j = t->data;
    stop_watching(j);
    launch_abandon(j->starting);
    j->starting = NULL;
    char err[128];
    snprintf(err, sizeof(err), "the job's process did not start within %d s",
             START_TIMEOUT_MS / 1000);
    start_failed(j->d, j, -ETIMEDOUT, err);
}

static int watch_start(noded_t *d, njob_t *j, char *err, size_t errlen)
{
    start_watch_t *w = calloc(1, sizeof(*w));
    int fd = w ? fcntl(launch_pending_fd(j->starting), F_DUPFD_CLOEXEC, 3) : -1;
    if (fd < 0 || uv_poll_init(d->loop, &w->poll, fd) < 0) {
        if (fd >= 0)
            close(fd);
        free(w);
        launch_abandon(j->starting);
        j->starting = NULL;
        snprintf(err, errlen, "cannot watch the job's start");
        return -ENOMEM;
    }
    w->j = j;
    w->fd = fd;
    w->poll.data = w;
    j->start_watch = w;
    uv_poll_start(&w->poll, UV_READABLE | UV_DISCONNECT, on_start_io);
    uv_timer_start(&j->wall, on_start_timeout, START_TIMEOUT_MS, 0);
    return 0;
}

/* Tests only (test_launch_crash): the daemon dies between the fork of a batch script
 * and its record, once the script has exec'd or after a second in which it did not. */
static void test_die_before_record(noded_t *d, njob_t *j)
{
    const char *hook = getenv("DUCTILE_TEST_DIE_BEFORE_RECORD");
    if (!hook || strcmp(hook, "1"))
        return;
    struct pollfd p = {launch_pending_fd(j->starting), POLLIN, 0};
    poll(&p, 1, 1000);
    fprintf(stderr, "ductile-noded %s: test: dying before the record of job %lld\n", d->name,
            (long long)j->id);
    _exit(99);
}

/* Tests only (test_start_burst): each batch start costs the daemon this long, as
 * forking a large daemon does. */
static void test_start_cost(void)
{
    const char *ms = getenv("DUCTILE_TEST_START_COST_MS");
    if (ms && atol(ms) > 0)
        nanosleep(&(struct timespec){atol(ms) / 1000, atol(ms) % 1000 * 1000000}, NULL);
}

/* The batch script's start: its files, the fork, the record. */
static void start_batch(noded_t *d, njob_t *j, const json_t *msg)
{
    char err[LAUNCH_ERRLEN];
    int64_t id = j->id;
    test_start_cost();
    const char *cwd, *out, *errp;
    char *script = NULL; /* the exact bytes, UTF-8 or not */
    if (proto_bytes(msg, "script", (size_t)d->cfg.max_script_size, &script, err, sizeof(err)) < 0 ||
        proto_str(msg, "cwd", 4096, &cwd, err, sizeof(err)) < 0 ||
        proto_str_opt(msg, "stdout", 4096, "ductile-%j.out", &out, err, sizeof(err)) < 0 ||
        proto_str_opt(msg, "stderr", 4096, NULL, &errp, err, sizeof(err)) < 0) {
        free(script);
        set_ended(j, 2, 0);
        snprintf(j->error, sizeof(j->error), "%s", err);
        report_end(d, j);
        return;
    }
    uid_t ruid = j->uid; /* jobs_on_start: the daemon's own unless it is root */
    gid_t rgid = j->gid;
    char *path = write_script(d, id, script, ruid, rgid, err, sizeof(err));
    const char *nl = json_string_value(json_object_get(msg, "nodelist"));
    if (path && hosts_write(d, id, nl, err, sizeof(err)) < 0) {
        unlink(path);
        free(path);
        path = NULL;
    }
    char **env = path ? job_env(d, msg, id) : NULL;
    /* submit --signal=[B:]SIG[@SECS] travels in the job's environment */
    const char *warn = env ? hosts_env_get(env, "DUCTILE_SIGNAL_AT") : NULL;
    int wsig = 0, wscope = 0;
    double wsecs = 0;
    if (warn && sscanf(warn, "%d:%lf:%d", &wsig, &wsecs, &wscope) == 3 && wsig > 0 &&
        wsig < 65 && wsecs >= 0 && wscope >= 0 && wscope <= 2) {
        j->warn_sig = wsig;
        j->warn_secs = wsecs;
        j->warn_scope = wscope;
    }
    /* the script's arguments (ductile submit job.sh a b): after its path */
    const json_t *args = NULL;
    proto_strarray_opt(msg, "args", 4096, 131072, &args, err, sizeof(err));
    size_t nargs = json_array_size(args);
    char **argv = path ? calloc(nargs + 3, sizeof(char *)) : NULL;
    int rc = -EIO;
    if (argv) {
        size_t k = 0;
        if (strncmp(script, "#!", 2))
            argv[k++] = "/bin/sh";
        argv[k++] = path;
        for (size_t a = 0; a < nargs; a++)
            argv[k++] = (char *)json_string_value(json_array_get(args, a));
    }
    int um = noded_umask(msg);
    if (path && env && argv) {
        launch_spec_t spec = {
            .argv = argv,
            .envp = env,
            .cwd = cwd,
            .stdout_path = out,
            .stderr_path = errp ? errp : out,
            .job_id = id,
            .node_name = d->name,
            .job_name = json_string_value(json_object_get(msg, "name")),
            .user_name = json_string_value(json_object_get(msg, "user")),
            .array_id = (int64_t)json_integer_value(json_array_get(json_object_get(msg, "array"), 0)),
            .array_task = (int)json_integer_value(json_array_get(json_object_get(msg, "array"), 1)),
            .tag = "batch",
            .uid = ruid,
            .gid = rgid,
            .set_umask = um >= 0,
            .umask = (mode_t)(um >= 0 ? um : 0),
            .cgroup_parent = d->cgroup_parent[0] ? d->cgroup_parent : NULL,
            .mem_max = d->limits & LAUNCH_LIMIT_MEMORY ? j->mem_mb << 20 : 0,
            .pids_max = d->limits & LAUNCH_LIMIT_PIDS ? d->cfg.max_procs_per_job : 0,
            .status_fd = runs_status_open(d, id),
            .gate = true, /* no exec before the run is on record (launch_go below) */
        };
        rc = launch_begin(&spec, &j->starting, err, sizeof(err));
        if (spec.status_fd >= 0)
            close(spec.status_fd); /* the shepherd has its own */
    }
    launch_env_free(env);
    free(argv);
    free(script);
    j->script_path = path;
    if (rc == 0)
        rc = watch_start(d, j, err, sizeof(err));
    if (rc == 0)
        test_die_before_record(d, j);
    if (rc == 0) {
        /* Recorded before it may exec: a daemon killed before this line leaves a child
         * that ends at its gate, and the controller starts the job again (LaunchLost);
         * one killed after finds the record and adopts the run. Rewritten once it has
         * exec'd (started). */
        runs_record(d, j);
        /* fails only for a child that failed before its gate: its report says why, and
         * the watch reads it */
        launch_go(j->starting);
    }
    if (rc < 0)
        start_failed(d, j, rc, err);
}


/* Batch starts take turns with the rest of the loop. A start forks the daemon, and a
 * daemon that emulates thousands of nodes (and holds a descriptor for each) was handed
 * thousands of starts in one turn of its loop: 2,500 took 31 s, during which no node of
 * it sent a heartbeat, and the controller declared them down. The starts wait in one
 * queue for the whole process and run between the loop's turns, a few milliseconds'
 * worth at a time, in the order they came. */
#define START_TURN_NS (20 * 1000 * 1000)

static njob_t *start_head, *start_tail;
static uv_idle_t start_turn;
static bool start_turn_ready;

static void unqueue_start(njob_t *j)
{
    if (!j->start_msg)
        return;
    njob_t *prev = NULL;
    for (njob_t *x = start_head; x; prev = x, x = x->start_next)
        if (x == j) {
            if (prev)
                prev->start_next = j->start_next;
            else
                start_head = j->start_next;
            if (start_tail == j)
                start_tail = prev;
            break;
        }
    j->start_next = NULL;
    json_decref(j->start_msg);
    j->start_msg = NULL;
}

static void on_start_turn(uv_idle_t *h)
{
    uint64_t t0 = uv_hrtime();
    while (start_head && uv_hrtime() - t0 < START_TURN_NS) {
        njob_t *j = start_head;
        start_head = j->start_next;
        if (!start_head)
            start_tail = NULL;
        j->start_next = NULL;
        json_t *msg = j->start_msg;
        j->start_msg = NULL;
        start_batch(j->d, j, msg);
        json_decref(msg);
    }
    if (!start_head)
        uv_idle_stop(h);
}

static void queue_start(noded_t *d, njob_t *j, const json_t *msg)
{
    if (!start_turn_ready) {
        uv_idle_init(d->loop, &start_turn);
        start_turn_ready = true;
    }
    j->start_msg = json_incref((json_t *)msg);
    if (start_tail)
        start_tail->start_next = j;
    else
        start_head = j;
    start_tail = j;
    uv_idle_start(&start_turn, on_start_turn);
}

void jobs_on_start(noded_t *d, const json_t *msg)
{
    char err[LAUNCH_ERRLEN];
    int64_t id, uid, gid, run;
    bool batch;
    double limit;
    if (proto_int(msg, "job", 1, INT64_MAX, &id, err, sizeof(err)) < 0 ||
        proto_bool_opt(msg, "batch", false, &batch, err, sizeof(err)) < 0 ||
        proto_int_opt(msg, "uid", 0, UINT32_MAX - 1, 0, &uid, err, sizeof(err)) < 0 ||
        proto_int_opt(msg, "gid", 0, UINT32_MAX - 1, 0, &gid, err, sizeof(err)) < 0 ||
        proto_num_opt(msg, "time_limit", 0, STRPARSE_DURATION_MAX, 0, &limit, err, sizeof(err)) < 0 ||
        proto_int_opt(msg, "run", 0, INT32_MAX, 0, &run, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductile-noded %s: bad job_start: %s\n", d->name, err);
        return;
    }
    njob_t *old = idmap_get(d->jobs, id);
    if (old && old->run == run)
        return; /* a repeat after a reconnection */
    if (old) {
        /* The controller ends an old run on a node before it gives the node new work,
         * so this is not expected; never let two runs of a job share a node. */
        fprintf(stderr, "ductile-noded %s: job %lld run %lld refused: run %d is still here\n",
                d->name, (long long)id, (long long)run, old->run);
        noded_send(d, json_pack("{s:s,s:I,s:I,s:i,s:i,s:b,s:b,s:f,s:s}",
                                "type", "job_ended",
                                "job", (json_int_t)id,
                                "run", (json_int_t)run,
                                "kind", 2,
                                "code", EBUSY,
                                "timed_out", 0,
                                "clean", 1,
                                "end", wall_now(),
                                "error", "an earlier run of the job is still on the node"));
        return;
    }
    njob_t *j = job_new(d, id);
    if (!j)
        return;
    j->run = (int)run;
    j->batch = batch;
    j->requeue = json_is_true(json_object_get(msg, "requeue"));
    /* --mem, its cgroups' memory limit here (the script's and its steps' tasks') */
    if (proto_int_opt(msg, "mem_mb", 0, INT32_MAX, 0, &j->mem_mb, err, sizeof(err)) < 0)
        j->mem_mb = 0;
    /* the power it may draw per node, for the power model (metering.c) */
    json_t *pw = json_object_get(msg, "power");
    if (json_is_array(pw) && json_array_size(pw) == 2 && json_is_number(json_array_get(pw, 0)) &&
        json_is_number(json_array_get(pw, 1))) {
        double a = json_number_value(json_array_get(pw, 0)), b = json_number_value(json_array_get(pw, 1));
        if (a >= 0 && b >= a && b <= CONFIG_WATTS_MAX) {
            j->power_min = a;
            j->power_max = b;
        }
    }
    /* Only root may run jobs as another user; a non-root daemon runs them as itself. */
    j->uid = geteuid() == 0 ? (uid_t)uid : geteuid();
    j->gid = geteuid() == 0 ? (gid_t)gid : getegid();
    agents_job_start(d, msg, id, j->run, j->uid, j->gid);
    if (!batch) {
        runs_record(d, j);
        noded_send(d, json_pack("{s:s,s:I,s:i}", "type", "job_ready", "job", (json_int_t)id,
                                "run", j->run));
        return;
    }
    j->limit = limit;
    queue_start(d, j, msg);
}

void jobs_on_signal(noded_t *d, const json_t *msg)
{
    char err[128];
    int64_t id, sig;
    if (proto_int(msg, "job", 1, INT64_MAX, &id, err, sizeof(err)) < 0 ||
        proto_int(msg, "signal", 1, 64, &sig, err, sizeof(err)) < 0)
        return;
    int64_t scope = json_integer_value(json_object_get(msg, "scope"));
    njob_t *j = jobs_find(d, id);
    if (j)
        signal_job(d, j, (int)sig, (int)scope);
    else if (scope != 1)
        steps_signal(d, id, 0, (int)sig); /* a node of the job's that runs only steps */
}

void jobs_on_limit(noded_t *d, const json_t *msg)
{
    char err[128];
    int64_t id, run;
    double limit = -1;
    if (proto_int(msg, "job", 1, INT64_MAX, &id, err, sizeof(err)) < 0 ||
        proto_int(msg, "run", 0, INT32_MAX, &run, err, sizeof(err)) < 0 ||
        proto_num_opt(msg, "time_limit", 0, STRPARSE_DURATION_MAX, -1, &limit, err,
                      sizeof(err)) < 0 ||
        limit < 0) {
        fprintf(stderr, "ductile-noded %s: bad job_limit: %s\n", d->name,
                limit < 0 ? "no time_limit" : err);
        return;
    }
    njob_t *j = jobs_find(d, id);
    if (!j || j->run != run || j->ended || j->killing || limit == j->limit)
        return; /* (the same limit: sent again as the daemon registers) */
    j->limit = limit;
    if (!(j->began > 0))
        return; /* not started (it arms the limit when it does), or not here */
    j->deadline = limit > 0 ? j->began + limit : 0;
    /* warned already: again only if the new limit leaves its warning time to come */
    if (j->warned && j->deadline > 0 && j->deadline - j->warn_secs > wall_now())
        j->warned = false;
    fprintf(stderr, "ductile-noded %s: job %lld: time limit now %g s\n", d->name, (long long)id,
            limit);
    runs_record(d, j);
    jobs_arm_limit(d, j);
}

void jobs_on_cleanup(noded_t *d, const json_t *msg)
{
    char err[128];
    int64_t id, run;
    double grace;
    if (proto_int(msg, "job", 1, INT64_MAX, &id, err, sizeof(err)) < 0 ||
        proto_int_opt(msg, "run", 0, INT32_MAX, 0, &run, err, sizeof(err)) < 0 ||
        proto_num_opt(msg, "grace", 0, 600, 0, &grace, err, sizeof(err)) < 0)
        return;
    njob_t *j = idmap_get(d->jobs, id);
    if (!j || j->run > run) {
        /* Nothing of that run here (any more): say so, so the controller can go on. */
        send_cleanup_done(d, id, (int)run);
        return;
    }
    j->cleanup_run = (int)run; /* this run or an earlier one: it goes */
    j->cleaning = true;
    j->acked = true; /* the controller is past the end: it has the result */
    if (j->starting)
        return; /* ended as soon as it has exec'd (started) */
    unqueue_start(j); /* never started: nothing of it runs */
    uv_timer_stop(&j->wall);
    uv_timer_stop(&j->warn);
    if (job_gone(d, j)) {
        finish_cleanup(d, j);
        return;
    }
    terminate(d, j, grace);
}

void jobs_on_ended_ack(noded_t *d, const json_t *msg)
{
    char err[128];
    int64_t id, run;
    if (proto_int(msg, "job", 1, INT64_MAX, &id, err, sizeof(err)) < 0 ||
        proto_int_opt(msg, "run", 0, INT32_MAX, 0, &run, err, sizeof(err)) < 0)
        return;
    njob_t *j = idmap_get(d->jobs, id);
    if (j && j->run == run) {
        j->acked = true;
        maybe_drop(d, j);
    }
}

typedef struct reap_ctx {
    noded_t *d;
    njob_t **v;
    size_t n;
} reap_ctx_t;

static void collect(int64_t id, void *val, void *arg)
{
    (void)id;
    reap_ctx_t *x = arg;
    x->v[x->n++] = val;
}

static void each_job(noded_t *d, void (*fn)(noded_t *, njob_t *))
{
    reap_ctx_t x = {.d = d, .v = malloc((idmap_count(d->jobs) + 1) * sizeof(njob_t *))};
    if (!x.v)
        return;
    idmap_foreach(d->jobs, collect, &x); /* fn may drop jobs: iterate over a copy */
    for (size_t i = 0; i < x.n; i++)
        fn(d, x.v[i]);
    free(x.v);
}

static void reap_one(noded_t *d, njob_t *j)
{
    int status;
    if (!j->proc || j->ended || j->adopted || launch_reap(j->proc, &status) != 1)
        return;
    set_ended(j, WIFSIGNALED(status) ? 1 : 0,
              WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    j->oom = launch_oom_kills(j->proc) > 0; /* read before its cgroup goes */
    uv_timer_stop(&j->wall);
    uv_timer_stop(&j->warn);
    /* Nothing left of the job here: say so with the end and save a round trip (unless
     * a clean-up is under way: it answers for itself). */
    if (!j->cleaning && job_gone(d, j))
        j->cleaned = true;
    report_end(d, j);
}

typedef struct find_pid {
    pid_t pid;
    bool found;
} find_pid_t;

static void match_pid(int64_t id, void *val, void *arg)
{
    (void)id;
    njob_t *j = val;
    find_pid_t *f = arg;
    if ((j->proc && launch_pid(j->proc) == f->pid) ||
        (j->starting && launch_pending_pid(j->starting) == f->pid))
        f->found = true; /* ours to reap (launch_reap, launch_finish), not the reaper's */
    if (!f->found && steps_owns_pid(j->d, f->pid))
        f->found = true;
}

/* A clean-up under way ends as soon as the last process has: no need to wait for the
 * next tick of its timer. */
static void cleanup_if_gone(noded_t *d, njob_t *j)
{
    if (j->cleaning && !j->cleaned && job_gone(d, j))
        finish_cleanup(d, j);
}

/* Every node's jobs and steps: a process that is several nodes (--nodes) has one
 * SIGCHLD for all of them. */
static void reap_all(noded_t *first, int n)
{
    for (noded_t *d = first; d < first + n; d++) {
        each_job(d, reap_one);
        steps_reap(d);
    }
}

void jobs_reap(noded_t *d)
{
    noded_t *first = noded_nall > 0 ? noded_all : d;
    int n = noded_nall > 0 ? noded_nall : 1;
    reap_all(first, n);
    /* As a child subreaper we inherit the orphans of jobs: reap those, but leave a
     * job's main process to launch_reap (peek first with WNOWAIT), and an agent to
     * its node's agents_reap. */
    pid_t last = 0;
    for (;;) {
        siginfo_t si = {0};
        if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0 ||
            si.si_pid == last)
            break;
        last = si.si_pid;
        find_pid_t f = {.pid = si.si_pid};
        for (noded_t *x = first; x < first + n && !f.found; x++)
            idmap_foreach(x->jobs, match_pid, &f);
        bool agent = false;
        for (noded_t *x = first; x < first + n && !f.found && !agent; x++)
            agent = agents_reap(x, si.si_pid);
        if (f.found)
            reap_all(first, n);
        else if (!agent)
            waitpid(si.si_pid, NULL, WNOHANG);
    }
    for (noded_t *x = first; x < first + n; x++)
        each_job(x, cleanup_if_gone);
}

static void report_one(int64_t id, void *val, void *arg)
{
    (void)id;
    njob_t *j = val;
    json_t *arr = arg;
    if (j->ended && j->batch && !j->acked)
        json_array_append_new(arr, json_pack("{s:I,s:i,s:s,s:i,s:i,s:b,s:b,s:f}",
                                             "job", (json_int_t)j->id,
                                             "run", j->run,
                                             "state", "ended",
                                             "kind", j->kind,
                                             "code", j->code,
                                             "timed_out", j->timed_out,
                                             "oom", j->oom,
                                             "end", j->end_time));
    else if (!j->cleaned) {
        json_t *e = json_pack("{s:I,s:i,s:s,s:b}", "job", (json_int_t)j->id, "run", j->run,
                              "state", "running", "attached", j->leader != NULL);
        if (e && j->leader && j->limits)
            json_object_set(e, "limits", j->limits);
        json_array_append_new(arr, e);
    }
}

/* Registered: the register message said what we held when we connected; a script that
 * ended after that was reported while nobody listened (noded_send drops it). Every end
 * not acknowledged goes again: the controller takes a repeat as a repeat. */
static void resend_end(noded_t *d, njob_t *j)
{
    if (j->ended && j->batch && !j->acked)
        report_end(d, j);
}

void jobs_on_registered(noded_t *d) { each_job(d, resend_end); }

json_t *jobs_report(noded_t *d)
{
    json_t *arr = json_array();
    idmap_foreach(d->jobs, report_one, arr);
    return arr;
}


njob_t *jobs_find(noded_t *d, int64_t id) { return idmap_get(d->jobs, id); }

/* How an adopted batch script ended: its shepherd wrote it down; without that (a
 * shepherd killed with the job), not known. */
static void set_adopted_end(noded_t *d, njob_t *j)
{
    int st;
    if (runs_status_read(d, j->id, &st) < 0)
        set_ended(j, 3, 0);
    else
        set_ended(j, WIFSIGNALED(st) ? 1 : 0, WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}

/* An adopted batch script is not our child: no SIGCHLD tells us it ended, so its
 * timer looks (cgroup.procs or its session) until nothing of it is left. */
static void on_adopted_poll(uv_timer_t *t)
{
    njob_t *j = t->data;
    noded_t *d = j->d;
    if (j->killing || j->ended || !launch_all_gone(j->proc))
        return;
    uv_timer_stop(&j->kill);
    set_adopted_end(d, j);
    if (!j->cleaning && steps_job_gone(d, j->id))
        j->cleaned = true;
    report_end(d, j);
    maybe_drop(d, j);
}

void jobs_adopt(noded_t *d, int64_t id, int run, bool batch, uid_t uid, double deadline,
                launch_proc_t *proc)
{
    njob_t *j = job_new(d, id);
    if (!j) {
        launch_cleanup(proc);
        return;
    }
    j->run = run;
    j->batch = batch;
    j->uid = uid;
    j->adopted = true;
    j->proc = proc;
    if (batch && !proc) {
        set_adopted_end(d, j); /* it ended while no daemon watched */
        j->cleaned = true;
    } else if (proc) {
        uv_timer_start(&j->kill, on_adopted_poll, 250, 250);
        j->deadline = deadline;
        jobs_arm_limit(d, j);
    }
}

static void fence_one(noded_t *d, njob_t *j)
{
    if (!j->cleaned && !j->killing)
        terminate(d, j, 0);
}

static void fence_requeueable(noded_t *d, njob_t *j)
{
    if (j->requeue)
        fence_one(d, j);
}

void jobs_fence_cut_off(noded_t *d, double silence)
{
    fprintf(stderr, "ductile-noded %s: nothing heard from the controller for %.1f s (NodeTimeout "
            "%.0f s): it runs this node's requeueable jobs elsewhere; ending them here\n",
            d->name, silence, d->cfg.node_timeout);
    each_job(d, fence_requeueable);
}

void jobs_fence(noded_t *d, double gap)
{
    if (idmap_count(d->jobs) == 0)
        return;
    fprintf(stderr, "ductile-noded %s: this daemon was frozen for %.1f s (NodeTimeout %.0f s): "
            "the controller has given up its jobs; ending them\n", d->name, gap,
            d->cfg.node_timeout);
    each_job(d, fence_one);
}
