/* agents: the node daemon of a checkpoint node is the checkpoint service's manager
 * (seed 002's iCheck manager; docs/checkpointing.md). It starts `ductile-agent` for a
 * job when the controller asks (agent_start), as the job's user, with the job's key,
 * and says where it listens (agent_ready) or why it did not start (agent_failed); it
 * stops a job's agents when the job has ended (agent_stop: they flush, then exit), and
 * says when one ends on its own (agent_exited).
 *
 * Each agent has a directory in the spool, agent.<job>.<slot>: its key (mode 600, the
 * user's), the port it listens on (written by the agent once it listens), its pid and
 * its log. A restarted daemon finds its agents there: they outlive it, since the
 * checkpoints they hold in memory must outlive a daemon's upgrade.
 *
 * On the jobs' side, the start of a job with agents writes their key where its
 * processes read it (ckpt.<job>.<run>.key in the spool's parent, a path that does not
 * depend on the node) and names both in the job's environment (agents_job_env). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsutil.h"
#include "noded.h"

#define START_TIMEOUT_MS 10000
#define POLL_MS 50

typedef struct agent {
    struct agent *next;
    noded_t *d;
    int64_t job;
    int slot;
    pid_t pid;
    bool stopping, exited;
    int status;
    char addr[64];
    char dir[PATH_MAX];
    uv_timer_t poll; /* until it listens */
    int waited_ms;
} agent_t;

static agent_t *agents;

static void agent_dir(const noded_t *d, int64_t job, int slot, char *out, size_t len)
{
    snprintf(out, len, "%s/agent.%lld.%d", d->spool, (long long)job, slot);
}

static int write_secret(const char *path, const char *text, uid_t uid, gid_t gid)
{
    char tmp[PATH_MAX + 24]; /* one per writer: the nodes of a job may share the path */
    snprintf(tmp, sizeof(tmp), "%s.%d.new", path, (int)getpid());
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    size_t n = strlen(text);
    bool ok = write(fd, text, n) == (ssize_t)n && write(fd, "\n", 1) == 1;
    if (geteuid() == 0 && fchown(fd, uid, gid) < 0)
        ok = false;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) < 0) {
        unlink(tmp);
        return -EIO;
    }
    return 0;
}

static bool is_key(const char *k)
{
    return k && strlen(k) == 64 && strspn(k, "0123456789abcdef") == 64;
}

static void agent_binary(char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        self[n] = '\0';
        snprintf(out, len, "%s/ductile-agent", dirname(self));
        if (access(out, X_OK) == 0)
            return;
    }
    snprintf(out, len, "ductile-agent");
}

/* The end of the agent's log (its last 4 KiB) into buf; "" without. */
static void log_end(const agent_t *a, char *buf, size_t len)
{
    char path[PATH_MAX + 8];
    snprintf(path, sizeof(path), "%s/log", a->dir);
    buf[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    off_t end = lseek(fd, 0, SEEK_END);
    off_t from = end > (off_t)len - 1 ? end - (off_t)len + 1 : 0;
    ssize_t n = pread(fd, buf, len - 1, from);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
}

/* The last line of the agent's log: why it ended. */
static void last_line(const agent_t *a, char *out, size_t len)
{
    char buf[4096];
    log_end(a, buf, sizeof(buf));
    size_t n = strlen(buf);
    while (n > 0 && buf[n - 1] == '\n')
        buf[--n] = '\0';
    char *l = strrchr(buf, '\n');
    snprintf(out, len, "%s", l ? l + 1 : buf);
}

static void say(noded_t *d, const agent_t *a, const char *type, const char *why)
{
    json_t *m = json_pack("{s:s,s:I,s:i}", "type", type, "job", (json_int_t)a->job, "slot", a->slot);
    if (m && why)
        json_object_set_new(m, "why", json_string(why));
    if (m && !strcmp(type, "agent_ready"))
        json_object_set_new(m, "addr", json_string(a->addr));
    noded_send(d, m);
}

/* What an agent that ended said, into the daemon's log before its directory goes: what
 * it held and flushed stays on record. */
static void log_tail(const agent_t *a)
{
    char buf[4096], *save = NULL;
    log_end(a, buf, sizeof(buf));
    for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        fprintf(stderr, "ductile-noded %s: checkpoint agent of job %lld: %s\n", a->d->name,
                (long long)a->job, l);
}

static void remove_dir(const char *dir)
{
    const char *files[] = {"key", "port", "pid", "log"};
    char p[PATH_MAX + 8];
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
}

static void free_cb(uv_handle_t *h) { free(h->data); }

static void agent_drop(agent_t *a)
{
    for (agent_t **p = &agents; *p; p = &(*p)->next)
        if (*p == a) {
            *p = a->next;
            break;
        }
    uv_timer_stop(&a->poll);
    uv_close((uv_handle_t *)&a->poll, free_cb);
}

static void describe_exit(int status, char *out, size_t len)
{
    if (WIFEXITED(status))
        snprintf(out, len, "exit code %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(out, len, "killed by signal %d", WTERMSIG(status));
    else
        snprintf(out, len, "ended");
}

static void on_poll(uv_timer_t *t)
{
    agent_t *a = t->data;
    noded_t *d = a->d;
    char path[PATH_MAX + 8], why[600], line[400];
    if (a->exited) {
        describe_exit(a->status, why, sizeof(why));
        last_line(a, line, sizeof(line));
        snprintf(why + strlen(why), sizeof(why) - strlen(why), "%s%s", *line ? ": " : "", line);
        fprintf(stderr, "ductile-noded %s: the checkpoint agent of job %lld did not start: %s\n",
                d->name, (long long)a->job, why);
        say(d, a, "agent_failed", why);
        remove_dir(a->dir);
        agent_drop(a);
        return;
    }
    snprintf(path, sizeof(path), "%s/port", a->dir);
    FILE *f = fopen(path, "re");
    int port = 0;
    if (f) {
        if (fscanf(f, "%d", &port) != 1)
            port = 0;
        fclose(f);
    }
    if (port > 0 && port < 65536) {
        char host[64];
        snprintf(host, sizeof(host), "%s", a->addr);
        snprintf(a->addr, sizeof(a->addr), strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
        fprintf(stderr, "ductile-noded %s: checkpoint agent of job %lld listening on %s\n",
                d->name, (long long)a->job, a->addr);
        say(d, a, "agent_ready", NULL);
        return;
    }
    if ((a->waited_ms += POLL_MS) >= START_TIMEOUT_MS) {
        kill(a->pid, SIGKILL);
        a->stopping = true;
        say(d, a, "agent_failed", "it did not listen within 10 s");
        return;
    }
    uv_timer_start(&a->poll, on_poll, POLL_MS, 0);
}

static pid_t spawn(noded_t *d, const char *dir, const char *addr, uid_t uid, gid_t gid)
{
    char bin[PATH_MAX], key[PATH_MAX + 8], port[PATH_MAX + 8], log[PATH_MAX + 8], listen[96];
    agent_binary(bin, sizeof(bin));
    snprintf(key, sizeof(key), "%s/key", dir);
    snprintf(port, sizeof(port), "%s/port", dir);
    snprintf(log, sizeof(log), "%s/log", dir);
    snprintf(listen, sizeof(listen), strchr(addr, ':') ? "[%s]:0" : "%s:0", addr);
    int logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (logfd < 0)
        return -1;
    if (geteuid() == 0 && fchown(logfd, uid, gid) < 0) {
        close(logfd);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0)
            dup2(nul, 0);
        dup2(logfd, 1);
        dup2(logfd, 2);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0))
            _exit(126);
        char *argv[] = {bin, "--key-file", key, "--listen", listen, "--port-file", port, NULL};
        execvp(bin, argv);
        dprintf(2, "cannot run %s: %s\n", bin, strerror(errno));
        _exit(127);
    }
    close(logfd);
    (void)d;
    return pid;
}

static agent_t *find(int64_t job, int slot)
{
    for (agent_t *a = agents; a; a = a->next)
        if (a->job == job && a->slot == slot && !a->stopping)
            return a;
    return NULL;
}

void agents_on_start(noded_t *d, const json_t *msg)
{
    char err[128];
    int64_t job, slot, uid, gid;
    const char *key, *addr;
    if (proto_int(msg, "job", 1, INT64_MAX, &job, err, sizeof(err)) < 0 ||
        proto_int(msg, "slot", 0, 1023, &slot, err, sizeof(err)) < 0 ||
        proto_int(msg, "uid", 0, INT32_MAX, &uid, err, sizeof(err)) < 0 ||
        proto_int(msg, "gid", 0, INT32_MAX, &gid, err, sizeof(err)) < 0 ||
        proto_str(msg, "key", 64, &key, err, sizeof(err)) < 0 ||
        proto_str(msg, "addr", 63, &addr, err, sizeof(err)) < 0 || !is_key(key) ||
        strspn(addr, "0123456789abcdefABCDEF.:") != strlen(addr)) {
        fprintf(stderr, "ductile-noded %s: a malformed agent_start: ignored\n", d->name);
        return;
    }
    agent_t *a = find(job, (int)slot);
    if (a) { /* asked again (the controller restarted): the same agent */
        if (a->addr[0] && strchr(a->addr, ':') && uv_is_active((uv_handle_t *)&a->poll) == 0)
            say(d, a, "agent_ready", NULL);
        return;
    }
    if (!(a = calloc(1, sizeof(*a))))
        return;
    a->d = d;
    a->job = job;
    a->slot = (int)slot;
    snprintf(a->addr, sizeof(a->addr), "%s", addr);
    agent_dir(d, job, (int)slot, a->dir, sizeof(a->dir));
    uid_t u = geteuid() == 0 ? (uid_t)uid : geteuid();
    gid_t g = geteuid() == 0 ? (gid_t)gid : getegid();
    remove_dir(a->dir); /* a leftover of an agent of the same slot that ended */
    char kp[PATH_MAX + 8];
    snprintf(kp, sizeof(kp), "%s/key", a->dir);
    const char *why = NULL;
    if (mkdir(a->dir, 0700) < 0 || (geteuid() == 0 && chown(a->dir, u, g) < 0))
        why = "cannot make its directory";
    else if (write_secret(kp, key, u, g) < 0)
        why = "cannot write its key";
    else if ((a->pid = spawn(d, a->dir, addr, u, g)) <= 0)
        why = "cannot start it";
    uv_timer_init(d->loop, &a->poll);
    a->poll.data = a;
    if (why) {
        fprintf(stderr, "ductile-noded %s: the checkpoint agent of job %lld: %s: %s\n", d->name,
                (long long)job, why, strerror(errno));
        say(d, a, "agent_failed", why);
        remove_dir(a->dir);
        uv_close((uv_handle_t *)&a->poll, free_cb);
        return;
    }
    char pp[PATH_MAX + 8], pid[32];
    snprintf(pp, sizeof(pp), "%s/pid", a->dir);
    snprintf(pid, sizeof(pid), "%d", (int)a->pid);
    write_secret(pp, pid, 0, 0);
    a->next = agents;
    agents = a;
    uv_timer_start(&a->poll, on_poll, POLL_MS, 0);
}

/* A pid from a pid file that is still one of our agents (not a reused pid). */
static bool agent_alive(pid_t pid)
{
    char p[64], cmd[256];
    snprintf(p, sizeof(p), "/proc/%d/cmdline", (int)pid);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, cmd, sizeof(cmd) - 1);
    close(fd);
    if (n <= 0)
        return false;
    cmd[n] = '\0';
    const char *base = strrchr(cmd, '/');
    return strcmp(base ? base + 1 : cmd, "ductile-agent") == 0;
}

static pid_t read_pid(const char *dir)
{
    char p[PATH_MAX + 8];
    snprintf(p, sizeof(p), "%s/pid", dir);
    FILE *f = fopen(p, "re");
    int pid = 0;
    if (f) {
        if (fscanf(f, "%d", &pid) != 1)
            pid = 0;
        fclose(f);
    }
    return pid > 0 ? (pid_t)pid : 0;
}

/* Calls fn for every agent directory of the spool (job 0: all jobs). */
static void each_dir(noded_t *d, int64_t job, void (*fn)(noded_t *, int64_t, const char *, void *),
                     void *arg)
{
    DIR *dp = opendir(d->spool);
    if (!dp)
        return;
    struct dirent *e;
    while ((e = readdir(dp))) {
        long long j;
        int slot, used = 0;
        if (sscanf(e->d_name, "agent.%lld.%d%n", &j, &slot, &used) != 2 ||
            e->d_name[used] != '\0' || (job && j != job))
            continue;
        char dir[PATH_MAX];
        agent_dir(d, j, slot, dir, sizeof(dir));
        fn(d, j, dir, arg);
    }
    closedir(dp);
}

static void stop_dir(noded_t *d, int64_t job, const char *dir, void *arg)
{
    (void)arg;
    pid_t pid = read_pid(dir);
    for (agent_t *a = agents; a; a = a->next)
        if (a->pid == pid && a->job == job)
            a->stopping = true;
    if (pid > 0 && agent_alive(pid)) {
        fprintf(stderr, "ductile-noded %s: stopping the checkpoint agent of job %lld (it "
                "flushes what it holds first)\n", d->name, (long long)job);
        kill(pid, SIGTERM);
    } else {
        remove_dir(dir);
    }
}

void agents_on_stop(noded_t *d, const json_t *msg)
{
    char err[128];
    int64_t job;
    if (proto_int(msg, "job", 1, INT64_MAX, &job, err, sizeof(err)) < 0)
        return;
    each_dir(d, job, stop_dir, NULL);
}

static void report_dir(noded_t *d, int64_t job, const char *dir, void *arg)
{
    (void)d;
    pid_t pid = read_pid(dir);
    if (pid > 0 && agent_alive(pid))
        json_array_append_new(arg, json_integer(job));
    else if (pid > 0)
        remove_dir(dir);
}

json_t *agents_report(noded_t *d)
{
    json_t *arr = json_array();
    if (arr)
        each_dir(d, 0, report_dir, arr);
    return arr;
}

bool agents_reap(noded_t *d, pid_t pid)
{
    agent_t *a = agents;
    while (a && a->pid != pid)
        a = a->next;
    if (!a)
        return false;
    int st = 0;
    if (waitpid(pid, &st, WNOHANG) <= 0)
        return true;
    a->exited = true;
    a->status = st;
    if (uv_is_active((uv_handle_t *)&a->poll))
        return true; /* on_poll reports that it did not start */
    if (!a->stopping) {
        char why[600], line[400];
        describe_exit(st, why, sizeof(why));
        last_line(a, line, sizeof(line));
        snprintf(why + strlen(why), sizeof(why) - strlen(why), "%s%s", *line ? ": " : "", line);
        fprintf(stderr, "ductile-noded %s: the checkpoint agent of job %lld ended: %s\n",
                d->name, (long long)a->job, why);
        say(d, a, "agent_exited", why);
    }
    log_tail(a);
    remove_dir(a->dir);
    agent_drop(a);
    return true;
}

/* ---- the jobs' side --------------------------------------------------------------- */

/* The same path on every node, whatever its name: rank 0 may run on any of them. */
static void key_path(const noded_t *d, int64_t job, int run, char *out, size_t len)
{
    snprintf(out, len, "%s/spool/ckpt.%lld.%d.key", d->cfg.state_dir, (long long)job, run);
}

static bool job_has_agents(const json_t *msg, const char **list, const char **key)
{
    const json_t *ck = json_object_get(msg, "ckpt");
    *list = json_string_value(json_object_get(ck, "agents"));
    *key = json_string_value(json_object_get(ck, "key"));
    return *list && **list && is_key(*key) && strlen(*list) < HOSTS_KV_LEN - 32;
}

void agents_job_start(noded_t *d, const json_t *msg, int64_t job, int run, uid_t uid, gid_t gid)
{
    const char *list, *key;
    if (!job_has_agents(msg, &list, &key))
        return;
    char path[PATH_MAX];
    key_path(d, job, run, path, sizeof(path));
    if (write_secret(path, key, uid, gid) < 0)
        fprintf(stderr, "ductile-noded %s: job %lld: cannot write its agents' key to %s: it "
                "checkpoints to its files\n", d->name, (long long)job, path);
}

int agents_job_env(const noded_t *d, const json_t *msg, int64_t job, int run,
                   char kv[][HOSTS_KV_LEN])
{
    const char *list, *key;
    char path[PATH_MAX];
    key_path(d, job, run, path, sizeof(path));
    if (!job_has_agents(msg, &list, &key) || access(path, R_OK) < 0)
        return 0;
    snprintf(kv[0], HOSTS_KV_LEN, "DUCTILE_CKPT_AGENTS=%s", list);
    snprintf(kv[1], HOSTS_KV_LEN, "DUCTILE_CKPT_KEY_FILE=%s", path);
    return 2;
}

void agents_job_gone(noded_t *d, int64_t job, int run)
{
    char path[PATH_MAX];
    key_path(d, job, run, path, sizeof(path));
    unlink(path);
}
