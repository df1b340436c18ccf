/* agents: the node daemon of a checkpoint node is the checkpoint service's manager
 * (seed 002's iCheck manager; docs/checkpointing.md). It starts `ductile-agent` for a
 * job when the controller asks (agent_start), as the job's user, with the job's key,
 * and says where it listens (agent_ready) or why it did not start (agent_failed); it
 * stops a job's agents when the job has ended (agent_stop: they flush, then exit), and
 * says when one ends on its own (agent_exited). Every message carries the asking's tag
 * (the key's first digits), so that an answer or a stop of an earlier asking (a run
 * requeued, a controller restarted) never touches a later one.
 *
 * Each agent has a directory in the spool, agent.<job>.<slot>.<tag>, the daemon's (root's)
 * alone to write: its key (mode 600, the user's, for the agent to read), its pid and its
 * log (the daemon's; the agent writes it through the descriptor it inherits, and says
 * there the port it listens on). Nothing the user can write is ever opened by the
 * daemon. A restarted daemon finds its agents there: they outlive it, since the
 * checkpoints they hold in memory must outlive a daemon's upgrade.
 *
 * On the jobs' side, the start of a job with agents writes their key where its
 * processes read it (ckpt.<job>.<run>.key in the spool's parent, a path that does not
 * depend on the node) and names both in the job's environment (agents_job_env). */
#define _GNU_SOURCE /* memrchr */
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "noded.h"

#define START_TIMEOUT_MS 10000
#define POLL_MS 50
#define GEN_LEN 8
#define GROUPS_MAX 64
#define ENV_MAX 16 /* the daemon's DUCTILE_TEST_ variables passed on to agents */

typedef struct agent {
    struct agent *next;
    noded_t *d;
    int64_t job;
    int slot;
    char gen[GEN_LEN + 1];
    pid_t pid;
    bool stopping, exited, ready;
    int status;
    char addr[64];
    char dir[PATH_MAX];
    uv_timer_t poll; /* until it listens */
    int waited_ms;
    int64_t memory_mb; /* --memory; 0: none given */
} agent_t;

static agent_t *agents;

static void agent_dir(const noded_t *d, int64_t job, int slot, const char *gen, char *out,
                      size_t len)
{
    snprintf(out, len, "%s/agent.%lld.%d.%s", d->spool, (long long)job, slot, gen);
}

/* A file written whole (by root, in a directory only root writes), then owned by uid. */
static int write_secret(const char *path, const char *text, uid_t uid, gid_t gid)
{
    char tmp[PATH_MAX + 24]; /* one per writer: the nodes of a job may share the path */
    snprintf(tmp, sizeof(tmp), "%s.%d.new", path, (int)getpid());
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
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

static bool is_gen(const char *g)
{
    return g && strlen(g) == GEN_LEN && strspn(g, "0123456789abcdef") == GEN_LEN;
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

/* A regular file of the agent's directory, at most len - 1 bytes of its end. */
static void read_end(const char *dir, const char *name, char *buf, size_t len)
{
    char path[PATH_MAX + 8];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    buf[0] = '\0';
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        off_t from = st.st_size > (off_t)len - 1 ? st.st_size - (off_t)len + 1 : 0;
        ssize_t n = pread(fd, buf, len - 1, from);
        buf[n > 0 ? n : 0] = '\0';
    }
    close(fd);
}

/* The last line of the agent's log: why it ended. */
static void last_line(const agent_t *a, char *out, size_t len)
{
    char buf[4096];
    read_end(a->dir, "log", buf, sizeof(buf));
    size_t n = strlen(buf);
    while (n > 0 && buf[n - 1] == '\n')
        buf[--n] = '\0';
    char *l = strrchr(buf, '\n');
    snprintf(out, len, "%s", l ? l + 1 : buf);
}

/* What an agent that ended said, into the daemon's log before its directory goes: what
 * it held and flushed stays on record. */
static void log_tail(const agent_t *a)
{
    char buf[4096], *save = NULL;
    read_end(a->dir, "log", buf, sizeof(buf));
    for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        fprintf(stderr, "ductile-noded %s: checkpoint agent of job %lld: %s\n", a->d->name,
                (long long)a->job, l);
}

static void say(noded_t *d, const agent_t *a, const char *type, const char *why)
{
    json_t *m = json_pack("{s:s,s:I,s:i,s:s}", "type", type, "job", (json_int_t)a->job, "slot",
                          a->slot, "gen", a->gen);
    if (m && why)
        json_object_set_new(m, "why", json_string(why));
    if (m && !strcmp(type, "agent_ready"))
        json_object_set_new(m, "addr", json_string(a->addr));
    noded_send(d, m);
}

static void remove_dir(const char *dir)
{
    const char *files[] = {"key", "pid", "log", "report"};
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
    noded_close((uv_handle_t *)&a->poll, free_cb);
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

static void why_ended(const agent_t *a, char *why, size_t len)
{
    char line[400];
    describe_exit(a->status, why, len);
    last_line(a, line, sizeof(line));
    snprintf(why + strlen(why), len - strlen(why), "%s%s", *line ? ": " : "", line);
}

/* The port in the agent's "listening on HOST:PORT (fabric ...)" line, or 0. */
static int port_said(const agent_t *a)
{
    char buf[4096];
    read_end(a->dir, "log", buf, sizeof(buf));
    const char *l = strstr(buf, "ductile-agent: listening on ");
    const char *f = l ? strstr(l, " (fabric ") : NULL;
    const char *colon = f ? memrchr(l, ':', (size_t)(f - l)) : NULL;
    int port = colon ? atoi(colon + 1) : 0;
    return port > 0 && port < 65536 ? port : 0;
}

/* The agent ended (reaped): say so as `type` ("agent_failed" before it listened,
 * "agent_exited" after; NULL when it was stopped), keep its last words in our log, and
 * forget it. */
static void agent_ended(noded_t *d, agent_t *a, const char *type, const char *what)
{
    if (type) {
        char why[600];
        why_ended(a, why, sizeof(why));
        fprintf(stderr, "ductile-noded %s: the checkpoint agent of job %lld %s: %s\n", d->name,
                (long long)a->job, what, why);
        say(d, a, type, why);
    }
    log_tail(a);
    remove_dir(a->dir);
    agent_drop(a);
}

static void on_poll(uv_timer_t *t)
{
    agent_t *a = t->data;
    noded_t *d = a->d;
    int port = port_said(a);
    if (port) {
        char host[64];
        snprintf(host, sizeof(host), "%s", a->addr);
        snprintf(a->addr, sizeof(a->addr), strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
        fprintf(stderr, "ductile-noded %s: checkpoint agent of job %lld listening on %s\n",
                d->name, (long long)a->job, a->addr);
        a->ready = true;
        say(d, a, "agent_ready", NULL);
        if (a->exited) /* it ended since: say so too */
            agents_reap(d, a->pid);
        return;
    }
    if (a->exited) {
        agent_ended(d, a, "agent_failed", "did not start");
        return;
    }
    if ((a->waited_ms += POLL_MS) >= START_TIMEOUT_MS) {
        kill(a->pid, SIGKILL);
        a->stopping = true;
        say(d, a, "agent_failed", "it did not listen within 10 s");
        return; /* agents_reap removes it */
    }
    uv_timer_start(&a->poll, on_poll, POLL_MS, 0);
}

/* The agent, as the job's user (its groups too), in a session of its own; its log is
 * the descriptor it inherits, where it says its port (port_said). */
static pid_t spawn(agent_t *a, const char *user, uid_t uid, gid_t gid)
{
    char bin[PATH_MAX], key[PATH_MAX + 8], log[PATH_MAX + 8], listen[96], mem[24];
    snprintf(mem, sizeof(mem), "%lld", (long long)a->memory_mb);
    agent_binary(bin, sizeof(bin));
    snprintf(key, sizeof(key), "%s/key", a->dir);
    snprintf(log, sizeof(log), "%s/log", a->dir);
    snprintf(listen, sizeof(listen), strchr(a->addr, ':') ? "[%s]:0" : "%s:0", a->addr);
    gid_t groups[GROUPS_MAX];
    int ngroups = GROUPS_MAX;
    if (geteuid() == 0 && (!user || getgrouplist(user, gid, groups, &ngroups) < 0)) {
        groups[0] = gid; /* unknown here, or too many: its primary group */
        ngroups = 1;
    }
    /* an environment of its own, not the daemon's: a path, and the tests' hooks */
    extern char **environ;
    char *envp[ENV_MAX + 2] = {"PATH=/usr/local/bin:/usr/bin:/bin"};
    int ne = 1;
    for (char **e = environ; e && *e && ne < ENV_MAX; e++)
        if (!strncmp(*e, "DUCTILE_TEST_", 13))
            envp[ne++] = *e;
    envp[ne] = NULL;
    int logfd = open(log, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (logfd < 0)
        return -1;
    /* where it says what it holds and moved (agents_ping): root's file, its descriptor */
    char rep[PATH_MAX + 8];
    snprintf(rep, sizeof(rep), "%s/report", a->dir);
    int repfd = open(rep, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (repfd < 0) {
        close(logfd);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        int nul = open("/dev/null", O_RDONLY);
        if (nul < 0 || dup2(nul, 0) < 0 || dup2(logfd, 1) < 0 || dup2(logfd, 2) < 0 ||
            (repfd == 3 ? fcntl(3, F_SETFD, 0) : dup2(repfd, 3)) < 0)
            _exit(126);
        syscall(SYS_close_range, 4U, ~0U, 0U); /* nothing of the daemon's */
        char pp[PATH_MAX + 8], me[32]; /* written here: a daemon killed now leaves it too */
        snprintf(pp, sizeof(pp), "%s/pid", a->dir);
        snprintf(me, sizeof(me), "%d", (int)getpid());
        if (write_secret(pp, me, 0, 0) < 0)
            _exit(126);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        if (geteuid() == 0 && (setgroups((size_t)ngroups, groups) < 0 || setgid(gid) < 0 ||
                               setuid(uid) < 0))
            _exit(126);
        if (chdir("/") < 0)
            _exit(126);
        char *argv[] = {bin, "--key-file", key, "--listen", listen, "--report-fd", "3",
                        a->memory_mb ? "--memory" : NULL, mem, NULL};
        execvpe(bin, argv, envp);
        dprintf(2, "cannot run %s: %s\n", bin, strerror(errno));
        _exit(127);
    }
    close(logfd);
    close(repfd);
    return pid;
}

static agent_t *find(int64_t job, int slot, const char *gen)
{
    for (agent_t *a = agents; a; a = a->next)
        if (a->job == job && a->slot == slot && !strcmp(a->gen, gen) && !a->stopping)
            return a;
    return NULL;
}

void agents_on_start(noded_t *d, const json_t *msg)
{
    char err[128], gen[GEN_LEN + 1];
    int64_t job, slot, uid, gid;
    int64_t mem; /* MiB it may hold (0: the agent's own default) */
    const char *key, *addr, *user = NULL;
    if (proto_int(msg, "job", 1, INT64_MAX, &job, err, sizeof(err)) < 0 ||
        proto_int(msg, "slot", 0, 1023, &slot, err, sizeof(err)) < 0 ||
        proto_int(msg, "uid", 0, INT32_MAX, &uid, err, sizeof(err)) < 0 ||
        proto_int(msg, "gid", 0, INT32_MAX, &gid, err, sizeof(err)) < 0 ||
        proto_str(msg, "key", 64, &key, err, sizeof(err)) < 0 ||
        proto_str_opt(msg, "user", 255, NULL, &user, err, sizeof(err)) < 0 ||
        proto_str(msg, "addr", 63, &addr, err, sizeof(err)) < 0 ||
        proto_int_opt(msg, "memory_mb", 1, 1 << 30, 0, &mem, err, sizeof(err)) < 0 || !is_key(key) ||
        strspn(addr, "0123456789abcdefABCDEF.:") != strlen(addr)) {
        fprintf(stderr, "ductile-noded %s: a malformed agent_start: ignored\n", d->name);
        return;
    }
    snprintf(gen, sizeof(gen), "%.*s", GEN_LEN, key);
    agent_t *a = find(job, (int)slot, gen);
    if (a) { /* asked again (a repeat after a reconnection): the same agent */
        if (a->ready)
            say(d, a, "agent_ready", NULL);
        return;
    }
    if (!(a = calloc(1, sizeof(*a))))
        return;
    a->d = d;
    a->job = job;
    a->slot = (int)slot;
    snprintf(a->gen, sizeof(a->gen), "%s", gen);
    snprintf(a->addr, sizeof(a->addr), "%s", addr);
    a->memory_mb = mem;
    agent_dir(d, job, (int)slot, gen, a->dir, sizeof(a->dir));
    uid_t u = geteuid() == 0 ? (uid_t)uid : geteuid();
    gid_t g = geteuid() == 0 ? (gid_t)gid : getegid();
    char kp[PATH_MAX + 8];
    snprintf(kp, sizeof(kp), "%s/key", a->dir);
    const char *why = NULL;
    uv_timer_init(d->loop, &a->poll);
    a->poll.data = a;
    if (mkdir(a->dir, 0711) < 0) /* root's: the agent reads its key, writes nothing here */
        why = errno == EEXIST ? "its directory is there already" : "cannot make its directory";
    else if (write_secret(kp, key, u, g) < 0)
        why = "cannot write its key";
    else if ((a->pid = spawn(a, user, u, g)) <= 0)
        why = "cannot start it";
    if (why) {
        fprintf(stderr, "ductile-noded %s: the checkpoint agent of job %lld: %s\n", d->name,
                (long long)job, why);
        say(d, a, "agent_failed", why);
        if (strcmp(why, "its directory is there already"))
            remove_dir(a->dir);
        noded_close((uv_handle_t *)&a->poll, free_cb);
        return;
    }
    a->next = agents;
    agents = a;
    uv_timer_start(&a->poll, on_poll, POLL_MS, 0);
}

/* pid is the agent of dir (its command line names dir's key), not a reused pid. */
static bool agent_alive(pid_t pid, const char *dir)
{
    char p[64], cmd[8192], key[PATH_MAX + 8];
    snprintf(p, sizeof(p), "/proc/%d/cmdline", (int)pid);
    snprintf(key, sizeof(key), "%s/key", dir);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, cmd, sizeof(cmd) - 1);
    close(fd);
    if (n <= 0)
        return false;
    cmd[n] = '\0';
    for (const char *arg = cmd; arg < cmd + n; arg += strlen(arg) + 1)
        if (!strcmp(arg, "--key-file") && arg + strlen(arg) + 1 < cmd + n)
            return !strcmp(arg + strlen(arg) + 1, key);
    return false;
}

/* The running agent of dir: its pid file's, else (a daemon killed before it wrote it)
 * the process whose command line names dir; 0 if none runs. */
static pid_t agent_pid(const char *dir)
{
    char buf[32];
    read_end(dir, "pid", buf, sizeof(buf));
    int pid = atoi(buf);
    if (pid > 0 && agent_alive(pid, dir))
        return (pid_t)pid;
    DIR *dp = opendir("/proc");
    struct dirent *e;
    pid = 0;
    while (dp && !pid && (e = readdir(dp))) {
        int p = atoi(e->d_name);
        if (p > 0 && agent_alive(p, dir))
            pid = p;
    }
    if (dp)
        closedir(dp);
    return (pid_t)pid;
}

static agent_t *ours(pid_t pid)
{
    for (agent_t *a = agents; a; a = a->next)
        if (a->pid == pid)
            return a;
    return NULL;
}

typedef struct filter {
    int64_t job; /* 0: every job */
    const char *gen; /* NULL: every asking */
    int slot;    /* -1: every slot */
} filter_t;

/* Calls fn for every agent directory of the spool that the filter takes. */
static void each_dir(noded_t *d, const filter_t *f,
                     void (*fn)(noded_t *, int64_t, const char *, const char *, void *), void *arg)
{
    DIR *dp = opendir(d->spool);
    if (!dp)
        return;
    struct dirent *e;
    while ((e = readdir(dp))) {
        long long j;
        int slot, used = 0;
        char gen[GEN_LEN + 1];
        if (sscanf(e->d_name, "agent.%lld.%d.%8[0-9a-f]%n", &j, &slot, gen, &used) != 3 ||
            e->d_name[used] != '\0' || !is_gen(gen) || (f->job && j != f->job) ||
            (f->gen && strcmp(gen, f->gen)) || (f->slot >= 0 && slot != f->slot))
            continue;
        char dir[PATH_MAX];
        agent_dir(d, j, slot, gen, dir, sizeof(dir));
        fn(d, j, gen, dir, arg);
    }
    closedir(dp);
}

/* An agent told to stop flushes what it holds, then exits; one that has not after
 * CheckpointAgentStopWait (hung, or stopped with SIGSTOP) is killed. The watches are
 * listed so that they stay reachable until they fire. */
typedef struct stop_watch {
    struct stop_watch *next;
    uv_timer_t timer;
    noded_t *d;
    pid_t pid;
    int64_t job;
    char dir[PATH_MAX];
} stop_watch_t;

static stop_watch_t *watches;

static void on_stop_wait(uv_timer_t *t)
{
    stop_watch_t *w = t->data;
    if (agent_alive(w->pid, w->dir)) {
        fprintf(stderr, "ductile-noded %s: the checkpoint agent of job %lld (pid %d) did not "
                "stop within %g s of being told to: killed; what it had not flushed is "
                "lost from its memory (the job's files keep what the library wrote there)\n",
                w->d->name, (long long)w->job, (int)w->pid, w->d->cfg.agent_stop_wait);
        kill(w->pid, SIGKILL);
    }
    for (stop_watch_t **p = &watches; *p; p = &(*p)->next)
        if (*p == w) {
            *p = w->next;
            break;
        }
    noded_close((uv_handle_t *)t, free_cb);
}

static void watch_stop(noded_t *d, pid_t pid, int64_t job, const char *dir)
{
    for (stop_watch_t *w = watches; w; w = w->next)
        if (w->pid == pid && !strcmp(w->dir, dir))
            return; /* told again: the first deadline holds */
    stop_watch_t *w = calloc(1, sizeof(*w));
    if (!w || uv_timer_init(d->loop, &w->timer) < 0) {
        free(w);
        return;
    }
    w->d = d;
    w->pid = pid;
    w->job = job;
    snprintf(w->dir, sizeof(w->dir), "%s", dir);
    w->timer.data = w;
    w->next = watches;
    watches = w;
    uv_timer_start(&w->timer, on_stop_wait, (uint64_t)(d->cfg.agent_stop_wait * 1000), 0);
}

static void stop_dir(noded_t *d, int64_t job, const char *gen, const char *dir, void *arg)
{
    (void)arg;
    agent_t *a = NULL;
    for (agent_t *x = agents; x; x = x->next)
        if (x->job == job && !strcmp(x->gen, gen) && !strcmp(x->dir, dir))
            a = x;
    if (a && a->exited)
        return; /* ended, not reaped yet: agents_reap removes it */
    if (a)
        a->stopping = true;
    pid_t pid = a ? a->pid : agent_pid(dir);
    if (pid > 0 && (a || agent_alive(pid, dir))) {
        fprintf(stderr, "ductile-noded %s: stopping the checkpoint agent of job %lld (it "
                "flushes what it holds first)\n", d->name, (long long)job);
        kill(pid, SIGTERM);
        watch_stop(d, pid, job, dir);
    } else if (!a) {
        remove_dir(dir);
    }
}

void agents_on_stop(noded_t *d, const json_t *msg)
{
    char err[128];
    int64_t job, slot;
    const char *gen = NULL;
    if (proto_int(msg, "job", 1, INT64_MAX, &job, err, sizeof(err)) < 0 ||
        proto_str_opt(msg, "gen", GEN_LEN, NULL, &gen, err, sizeof(err)) < 0 ||
        proto_int_opt(msg, "slot", -1, 1023, -1, &slot, err, sizeof(err)) < 0 ||
        (gen && !is_gen(gen)))
        return;
    filter_t f = {job, gen, (int)slot};
    each_dir(d, &f, stop_dir, NULL);
}

static void report_dir(noded_t *d, int64_t job, const char *gen, const char *dir, void *arg)
{
    (void)d;
    bool mine = false;
    for (agent_t *x = agents; x; x = x->next)
        mine = mine || !strcmp(x->dir, dir);
    if (mine || agent_pid(dir) > 0) /* ours are reaped and removed by agents_reap */
        json_array_append_new(arg, json_pack("{s:I,s:s}", "job", (json_int_t)job, "gen", gen));
    else
        remove_dir(dir);
}

json_t *agents_report(noded_t *d)
{
    json_t *arr = json_array();
    filter_t all = {0, NULL, -1};
    if (arr)
        each_dir(d, &all, report_dir, arr);
    return arr;
}

bool agents_reap(noded_t *d, pid_t pid)
{
    agent_t *a = ours(pid);
    if (!a)
        return false;
    int st = 0;
    if (!a->exited) {
        if (waitpid(pid, &st, WNOHANG) <= 0)
            return true;
        a->exited = true;
        a->status = st;
    }
    if (!a->ready && !a->stopping)
        return true; /* on_poll says it did not start (or reads a port said just before) */
    agent_ended(d, a, a->stopping ? NULL : "agent_exited", "ended");
    return true;
}

/* ---- the manager's measurements ------------------------------------------------------ */

/* Each agent keeps one line in its directory's report file (store_report in
 * src/agent/store.h: what it holds now, what it has moved and published since it
 * started). At each heartbeat the manager sums them over the node's agents and turns
 * the counters into rates over the interval since the last heartbeat (seed 002 §6.3:
 * a node's memory, its aggregate bandwidth, its checkpoint operations). An agent's
 * last counters are kept by its directory's name, so that an agent that ends, or a
 * manager restarted under running agents (the first sight of each counts nothing),
 * never makes a rate negative. */
typedef struct agent_seen {
    char name[64]; /* agent.<job>.<slot>.<tag> */
    unsigned long long held, moved, commits;
} seen_t;

typedef struct measure {
    seen_t *old, *now;
    int nold, nnow, cap;
    unsigned long long held, moved, commits; /* held: now; the others: in the interval */
} measure_t;

/* One agent's line; false if there is none yet or it was read while being written. */
static bool read_report(const char *dir, seen_t *out)
{
    char buf[256];
    unsigned long s1, s2;
    unsigned long long limit;
    read_end(dir, "report", buf, sizeof(buf));
    return sscanf(buf, "ductile-agent-report %lu held=%llu limit=%llu moved=%llu commits=%llu %lu",
                  &s1, &out->held, &limit, &out->moved, &out->commits, &s2) == 6 && s1 == s2;
}

static void measure_dir(noded_t *d, int64_t job, const char *gen, const char *dir, void *arg)
{
    (void)d;
    (void)job;
    (void)gen;
    measure_t *m = arg;
    const char *name = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    const seen_t *prev = NULL;
    for (int i = 0; i < m->nold && !prev; i++)
        prev = strcmp(m->old[i].name, name) ? NULL : &m->old[i];
    seen_t cur = {0};
    if (!read_report(dir, &cur)) {
        if (!prev)
            return; /* not started yet, or torn: its last line stands */
        cur = *prev;
    }
    snprintf(cur.name, sizeof(cur.name), "%s", name);
    if (m->nnow == m->cap) {
        int cap = m->cap ? 2 * m->cap : 8;
        seen_t *grown = realloc(m->now, (size_t)cap * sizeof(*grown));
        if (!grown)
            return;
        m->now = grown;
        m->cap = cap;
    }
    m->now[m->nnow++] = cur;
    m->held += cur.held;
    if (prev && cur.moved >= prev->moved && cur.commits >= prev->commits) {
        m->moved += cur.moved - prev->moved;
        m->commits += cur.commits - prev->commits;
    }
}

void agents_ping(noded_t *d, json_t *ping)
{
    measure_t m = {.old = d->agents_seen, .nold = d->agents_nseen};
    filter_t all = {0, NULL, -1};
    each_dir(d, &all, measure_dir, &m);
    uint64_t now = uv_now(d->loop);
    uint64_t at = d->agents_seen_at;
    double dt = at && now > at ? (double)(now - at) / 1000.0 : 0;
    free(d->agents_seen);
    d->agents_seen = m.now;
    d->agents_nseen = m.nnow;
    d->agents_seen_at = now;
    bool ckpt_node = d->cfg.ckpt_node && d->index >= 0 && d->cfg.ckpt_node[d->index];
    if (!ckpt_node && m.nnow == 0)
        return; /* a node for jobs that holds no agent (a lent one does) */
    json_object_set_new(ping, "ckpt", json_pack("{s:I,s:f,s:f,s:i}",
                                                "held", (json_int_t)m.held,
                                                "traffic", dt > 0 ? (double)m.moved / dt : 0.0,
                                                "ops", dt > 0 ? (double)m.commits / dt : 0.0,
                                                "agents", m.nnow));
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
    /* the list may be empty (none had room at its start): agents may join it later */
    return *list && is_key(*key) && strlen(*list) < HOSTS_KV_LEN - 32;
}

/* What the node knows of the job's agents: its start's list, then the controller's. */
static void set_list(noded_t *d, int64_t job, const char *list)
{
    njob_t *j = idmap_get(d->jobs, job);
    char *copy = j ? strdup(list) : NULL;
    if (copy) {
        free(j->ck_agents);
        j->ck_agents = copy;
    }
}

void agents_on_list(noded_t *d, const json_t *msg)
{
    int64_t job;
    const char *list;
    char err[128];
    if (proto_int(msg, "job", 1, INT64_MAX, &job, err, sizeof(err)) < 0 ||
        proto_str(msg, "agents", HOSTS_KV_LEN - 32, &list, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductile-noded %s: bad ckpt_agents: %s\n", d->name, err);
        return;
    }
    set_list(d, job, list);
}

void agents_job_start(noded_t *d, const json_t *msg, int64_t job, int run, uid_t uid, gid_t gid)
{
    const char *list, *key;
    if (!job_has_agents(msg, &list, &key))
        return;
    set_list(d, job, list);
    char path[PATH_MAX];
    key_path(d, job, run, path, sizeof(path));
    if (write_secret(path, key, uid, gid) < 0)
        fprintf(stderr, "ductile-noded %s: job %lld: cannot write its agents' key to %s: it "
                "checkpoints to its files\n", d->name, (long long)job, path);
}

/* The job's own DUCTILE_CKPT_TRANSFER (or REGIONS) wins over the site's setting. */
static bool job_sets(const json_t *msg, const char *prefix)
{
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(msg, "env"), i, v) {
        const char *s = json_string_value(v);
        if (s && !strncmp(s, prefix, strlen(prefix)))
            return true;
    }
    return false;
}

int agents_job_env(const noded_t *d, const json_t *msg, int64_t job, int run,
                   char kv[][HOSTS_KV_LEN])
{
    const char *list, *key;
    char path[PATH_MAX];
    key_path(d, job, run, path, sizeof(path));
    if (!job_has_agents(msg, &list, &key) || access(path, R_OK) < 0)
        return 0;
    int n = 0;
    snprintf(kv[n++], HOSTS_KV_LEN, "DUCTILE_CKPT_AGENTS=%s", list);
    snprintf(kv[n++], HOSTS_KV_LEN, "DUCTILE_CKPT_KEY_FILE=%s", path);
    /* CheckpointTransfer, CheckpointRegions (docs/checkpointing.md, "Transfer modes") */
    if (d->cfg.ckpt_pull && !job_sets(msg, "DUCTILE_CKPT_TRANSFER="))
        snprintf(kv[n++], HOSTS_KV_LEN, "DUCTILE_CKPT_TRANSFER=pull");
    if (d->cfg.ckpt_shmr && !job_sets(msg, "DUCTILE_CKPT_REGIONS="))
        snprintf(kv[n++], HOSTS_KV_LEN, "DUCTILE_CKPT_REGIONS=shmr");
    return n;
}

void agents_job_gone(noded_t *d, int64_t job, int run)
{
    char path[PATH_MAX];
    key_path(d, job, run, path, sizeof(path));
    unlink(path);
}

bool agents_inherited(const noded_t *d, const json_t *env)
{
    char ours[PATH_MAX];
    snprintf(ours, sizeof(ours), "DUCTILE_CKPT_KEY_FILE=%s/spool/ckpt.", d->cfg.state_dir);
    size_t i;
    const json_t *v;
    json_array_foreach(env, i, v) {
        const char *s = json_string_value(v);
        if (s && !strncmp(s, ours, strlen(ours)))
            return true;
    }
    return false;
}
