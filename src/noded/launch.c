/* launch: a job's processes on a node. See launch.h for the tracking model. */
#define _GNU_SOURCE /* pipe2, close_range, getgrouplist, setmntent/getmntent_r */
#include "launch.h"
#include "fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <mntent.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/sched.h>
#include <time.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* A child stuck before exec (e.g. chdir on a dead NFS server) must not hang the
 * daemon forever. */
#define START_TIMEOUT_MS 30000

struct launch_proc {
    pid_t pid;
    pid_t pgid;
    char *cgroup;       /* absolute directory, NULL when untracked by cgroup */
    bool has_kill;      /* cgroup.kill exists */
    bool reaped;        /* the main pid has been waited for */
    bool status_known;  /* ...by us, so status is valid */
    bool gone;          /* launch_all_gone said so: nothing can come back */
    bool shepherded;    /* pid is the shepherd's: the job is its one child */
    bool adopted;       /* started by an earlier daemon (launch_adopt) */
    bool ru_known;      /* ru: the main process's and its waited-for descendants' use */
    double ru_cpu;      /* user + system, s */
    long long ru_maxrss; /* bytes, of the largest of them */
    int status;
    char warning[LAUNCH_ERRLEN];
};

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

int launch_expand_path(const char *tmpl, const launch_spec_t *spec, char *out, size_t outlen)
{
    size_t n = 0;
    char num[24], arr[24], task[16];
    snprintf(num, sizeof(num), "%lld", (long long)spec->job_id);
    snprintf(arr, sizeof(arr), "%lld",
             (long long)(spec->array_id > 0 ? spec->array_id : spec->job_id));
    snprintf(task, sizeof(task), "%d", spec->array_task);
    const char *node = spec->node_name ? spec->node_name : "";
    for (const char *s = tmpl; *s; s++) {
        const char *ins = NULL;
        char one[2] = {*s, '\0'};
        char c = s[0] == '%' ? s[1] : 0;
        if (c == 'j')
            ins = num, s++;
        else if (c == 'A')
            ins = arr, s++;
        else if (c == 'a' && spec->array_id > 0)
            ins = task, s++;
        else if (c == 'n' || c == 'N')
            ins = node, s++;
        else if (c == 'x')
            ins = spec->job_name ? spec->job_name : "", s++;
        else if (c == 'u')
            ins = spec->user_name ? spec->user_name : "", s++;
        else if (c == '%')
            ins = "%", s++;
        else
            ins = one;
        size_t l = strlen(ins);
        if (n + l >= outlen)
            return -ENAMETOOLONG;
        memcpy(out + n, ins, l);
        n += l;
    }
    if (n >= outlen)
        return -ENAMETOOLONG;
    out[n] = '\0';
    return 0;
}

/* ---- cgroup v2 ---------------------------------------------------------------- */

int launch_cgroup_root(char *buf, size_t len)
{
    FILE *f = setmntent("/proc/self/mounts", "re");
    if (!f)
        return -errno;
    struct mntent m;
    char line[4096];
    int rc = -ENOENT;
    while (getmntent_r(f, &m, line, sizeof(line))) {
        if (strcmp(m.mnt_type, "cgroup2") == 0) {
            rc = strlen(m.mnt_dir) < len ? 0 : -ENAMETOOLONG;
            if (rc == 0)
                strcpy(buf, m.mnt_dir);
            break;
        }
    }
    endmntent(f);
    return rc;
}

/* The parent comes from the daemon's configuration: a path inside the hierarchy,
 * never one that climbs out of it. */
static bool cg_parent_ok(const char *s)
{
    if (!*s || *s == '/')
        return false;
    for (const char *c = s; *c;) {
        size_t l = strcspn(c, "/");
        if (l == 0 || (l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.'))
            return false;
        c += l;
        if (*c == '/')
            c++;
        if (*c == '\0' && c[-1] == '/')
            return false;
    }
    return true;
}

static bool tag_ok(const char *t)
{
    size_t l = strlen(t);
    if (l == 0 || l > 64)
        return false;
    for (; *t; t++)
        if (!((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') || (*t >= '0' && *t <= '9') ||
              *t == '.' || *t == '_' || *t == '-'))
            return false;
    return true;
}

/* Calls fn on every pid listed in the cgroup; the number of pids, or a negative errno. */
static int cg_foreach_pid(const char *cg, int (*fn)(pid_t, void *), void *arg)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    int pid, n = 0;
    while (fscanf(f, "%d", &pid) == 1) {
        n++;
        if (fn && pid > 0)
            fn(pid, arg);
    }
    fclose(f);
    return n;
}

/* mkdir -p below the mount, then the job's own directory. A directory left by a
 * crashed daemon is reused when empty; one with live processes belongs to someone. */
static int cg_create(const char *root, const char *parent, const char *leaf, char *out,
                     size_t outlen, char *why, size_t whylen)
{
    int l = snprintf(out, outlen, "%s/%s/%s", root, parent, leaf);
    /* Room for the longest control file name, so no later path gets truncated. */
    if (l < 0 || (size_t)l + sizeof("/cgroup.procs") >= outlen) {
        seterr(why, whylen, "cgroup path too long");
        return -ENAMETOOLONG;
    }
    for (char *s = out + strlen(root) + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        int rc = mkdir(out, 0755) < 0 && errno != EEXIST ? -errno : 0;
        if (rc < 0)
            seterr(why, whylen, "cannot create %s: %s", out, strerror(-rc));
        *s = '/';
        if (rc < 0)
            return rc;
    }
    if (mkdir(out, 0755) == 0)
        return 0;
    int e = errno;
    if (e == EEXIST) {
        int n = cg_foreach_pid(out, NULL, NULL);
        if (n == 0)
            return 0;
        seterr(why, whylen, "cgroup %s is already in use", out);
        return -EBUSY;
    }
    seterr(why, whylen, "cannot create %s: %s", out, strerror(e));
    return -e;
}

/* Writes text into a control file of dir: 0 or a negative errno (-ENOENT: the
 * controller that has the file is not enabled there). */
static int cg_write(const char *dir, const char *file, const char *text)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t w = write(fd, text, strlen(text));
    int rc = w == (ssize_t)strlen(text) ? 0 : w < 0 ? -errno : -EIO;
    close(fd);
    return rc;
}

static const char *const limit_ctl[] = {"memory", "pids"}; /* LAUNCH_LIMIT_* order */

/* Each cgroup from the mount down to parent enables the controllers for the one below
 * (one at a time: a hierarchy without one still gets the other). A cgroup that holds
 * processes refuses (EBUSY), as does one whose parent lacks the controller: then its
 * children have no limit files, which launch_cgroup_limits and cg_limit notice. */
static void cg_enable(const char *root, const char *parent)
{
    char dir[PATH_MAX];
    int n = snprintf(dir, sizeof(dir), "%s/%s", root, parent);
    if (n < 0 || (size_t)n >= sizeof(dir))
        return;
    size_t cut = strlen(root);
    for (;;) {
        char save = dir[cut];
        dir[cut] = '\0';
        for (size_t k = 0; k < 2; k++) {
            char ctl[16];
            snprintf(ctl, sizeof(ctl), "+%s", limit_ctl[k]);
            cg_write(dir, "cgroup.subtree_control", ctl);
        }
        dir[cut] = save;
        if (!save)
            return;
        char *slash = strchr(dir + cut + 1, '/');
        cut = slash ? (size_t)(slash - dir) : strlen(dir);
    }
}

int launch_cgroup_limits(const char *cgroup_parent)
{
    char root[PATH_MAX], dir[PATH_MAX + 8], line[256];
    if (!cgroup_parent || !cg_parent_ok(cgroup_parent) ||
        launch_cgroup_root(root, sizeof(root)) < 0)
        return 0;
    snprintf(dir, sizeof(dir), "%s/%s", root, cgroup_parent);
    if (fsutil_mkdirs(dir, 0755) < 0)
        return 0;
    cg_enable(root, cgroup_parent);
    char path[PATH_MAX + 40];
    snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
    FILE *f = fopen(path, "re");
    int bits = 0;
    if (f && fgets(line, sizeof(line), f))
        for (char *save = NULL, *w = strtok_r(line, " \n", &save); w;
             w = strtok_r(NULL, " \n", &save))
            for (int k = 0; k < 2; k++)
                if (!strcmp(w, limit_ctl[k]))
                    bits |= 1 << k;
    if (f)
        fclose(f);
    return bits;
}

/* Sets one limit of the job's cgroup cg (file, e.g. memory.max, to value), enabling
 * the controllers above it first if the file is not there; a limit that cannot be set
 * is said in *warn (appended) and the job runs without it. */
static void cg_limit(const char *root, const char *parent, const char *cg, const char *file,
                     long long value, char *warn, size_t warnlen)
{
    char v[32];
    snprintf(v, sizeof(v), "%lld", value);
    int rc = cg_write(cg, file, v);
    if (rc == -ENOENT) {
        cg_enable(root, parent);
        rc = cg_write(cg, file, v);
    }
    if (rc == 0)
        return;
    size_t l = strlen(warn);
    snprintf(warn + l, warnlen - l, "%s%s not set (%s): not enforced", l ? "; " : "", file,
             rc == -ENOENT ? "no such controller in this cgroup v2 hierarchy" : strerror(-rc));
}

/* rmdir fails with EBUSY for a short while after the last process has exited. */
static void cg_remove(const char *cg)
{
    for (int i = 0; i < 50; i++) {
        if (rmdir(cg) == 0 || errno == ENOENT || errno != EBUSY)
            return;
        sleep_ms(2);
    }
}

/* ---- session/process-group tracking (no cgroup) ------------------------------ */

/* Live (non-zombie) processes in the session or process group `id`: the fallback
 * also catches a job's process that moved to a process group of its own (a shell
 * with job control) as long as it stayed in the session. Calls fn on each. */
static int sess_foreach_live(pid_t id, int (*fn)(pid_t, void *), void *arg)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -errno;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        char path[64], buf[512];
        snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t r = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (r <= 0)
            continue;
        buf[r] = '\0';
        /* The command name may hold spaces and parentheses: parse after the last ')'. */
        char *rp = strrchr(buf, ')');
        char state;
        int ppid, pgrp, sid;
        if (!rp || sscanf(rp + 1, " %c %d %d %d", &state, &ppid, &pgrp, &sid) != 4)
            continue;
        if ((pgrp == id || sid == id) && state != 'Z' && state != 'X') {
            n++;
            if (fn)
                fn((pid_t)pid, arg);
        }
    }
    closedir(d);
    return n;
}

/* ---- the child, between fork and exec ----------------------------------------- */

/* The child may only make async-signal-safe calls (the daemon can have threads, e.g.
 * libuv's pool), so the parent prepares everything: paths, the group list, messages. */
enum child_step {
    STEP_SESSION = 1,
    STEP_CGROUP, /* not fatal: the job runs tracked by session only */
    STEP_GROUPS,
    STEP_SETGID,
    STEP_SETUID,
    STEP_CHDIR,
    STEP_STDIN,
    STEP_STDOUT,
    STEP_STDERR,
    STEP_FDS,
    STEP_EXEC,
};

struct child_report {
    int step;
    int err;
};

struct child_plan {
    char *const *argv;
    const char *exec_path;           /* argv[0], for messages */
    int status_fd;                   /* >= 3: run under a shepherd that writes here */
    bool hold_out;                   /* the shepherd holds the output FIFOs (launch.h) */
    char *const *envp;
    const char *cwd;
    const char *out_path, *err_path; /* expanded, never NULL */
    const char *in_path;             /* the standard input; NULL: /dev/null */
    bool same_out_err;
    int umask;                       /* the job's; -1: the daemon's */
    const char *cg_procs;            /* NULL: no cgroup */
    bool cg_joined;                  /* created inside it already (clone3) */
    bool drop;
    uid_t uid;
    gid_t gid;
    gid_t *groups;
    int ngroups;
    int report_fd;
    bool gate; /* wait for the parent's go on report_fd (a socket pair) before exec */
};

static void child_report(int fd, int step, int err)
{
    struct child_report r = {step, err ? err : EIO};
    while (write(fd, &r, sizeof(r)) < 0 && errno == EINTR)
        ;
}

static _Noreturn void child_fail(const struct child_plan *pl, int step, int err)
{
    child_report(pl->report_fd, step, err);
    _exit(127);
}

/* Keeps fds off 0..2, where the daemon may have nothing open: a later dup2 onto 0..2
 * must not clobber another of our fds. */
static int child_lift(int fd)
{
    if (fd < 0 || fd > 2)
        return fd;
    int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    int e = errno;
    close(fd);
    errno = e;
    return nfd;
}

/* O_NONBLOCK so a FIFO without a reader fails (ENXIO) instead of hanging the start.
 * 0666: the umask decides, as for the files the job creates itself. */
static int child_open_out(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY | O_NONBLOCK | O_CLOEXEC, 0666);
    if (fd < 0)
        return -1;
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return child_lift(fd);
}

static bool child_same_file(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && stat(path, &b) == 0 && S_ISREG(a.st_mode) &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The open-files limit jobs start with: the daemon raises its own (it holds a
 * connection per node of a step's client and per relayed client), jobs keep the
 * site's. */
static struct rlimit job_nofile;
static bool job_nofile_set;

void launch_set_job_nofile(const struct rlimit *rl)
{
    job_nofile = *rl;
    job_nofile_set = true;
}

static void child_close_fds(int keep)
{
    if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
        return;
    /* Kernels before 5.11: close them one by one. */
    struct rlimit rl;
    long max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                   ? (long)rl.rlim_cur
                   : 65536;
    for (long fd = 3; fd < max; fd++)
        if (fd != keep)
            close((int)fd);
}

/* Closes every descriptor from `from` on but keep1 and keep2 (either may be -1). */
static void close_all_but(int from, int keep1, int keep2)
{
    int lo = keep1 < keep2 ? keep1 : keep2, hi = keep1 < keep2 ? keep2 : keep1;
    int cuts[3][2] = {{from, lo - 1}, {lo + 1, hi - 1}, {hi + 1, -1}};
    if (lo < from) /* one kept (or none) */
        cuts[0][1] = -2, cuts[1][0] = from;
    for (int i = 0; i < 3; i++) {
        int a = cuts[i][0] < from ? from : cuts[i][0], b = cuts[i][1];
        if (b != -1 && b < a)
            continue;
        if (close_range((unsigned)a, b == -1 ? ~0U : (unsigned)b, 0) < 0)
            for (int fd = a; fd <= (b == -1 ? 65535 : b); fd++)
                if (fd != keep1 && fd != keep2)
                    close(fd);
    }
}

/* The job's parent while it runs: waits for it with every signal blocked (a TERM for
 * the job must not end the one process that can tell how the job ended), records its
 * wait status, and ends as the job did, so the daemon's waitpid sees the same status. */
static _Noreturn void shepherd(const struct child_plan *pl, pid_t job)
{
    /* Nothing of the daemon's but the status file: its sockets, pipes and lock must go
     * with the daemon (the report pipe's end tells the daemon the job exec'd). */
    close_all_but(0, pl->status_fd, -1);
    int hold[2] = {-1, -1};
    if (pl->hold_out) { /* (non-blocking: a reader's open never waits for a writer) */
        hold[0] = open(pl->out_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (!pl->same_out_err)
            hold[1] = open(pl->err_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    }
    int st;
    while (waitpid(job, &st, 0) < 0)
        if (errno != EINTR)
            _exit(127);
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%d\n", st);
    /* over what the daemon wrote there: no new block is needed on a full disk */
    ssize_t w = pwrite(pl->status_fd, buf, (size_t)n, 0); /* lost: the status is unknown */
    (void)w;
    close(pl->status_fd);
    /* The job's last output may still be in its pipes, and no daemon reading them (it
     * restarts): they stay until one has read them. */
    for (;;) {
        int left = 0;
        for (int k = 0; k < 2; k++) {
            int avail = 0;
            if (hold[k] >= 0 && ioctl(hold[k], FIONREAD, &avail) == 0 && avail > 0)
                left += avail;
        }
        if (left == 0)
            break;
        struct timespec pause = {0, 50 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    if (WIFEXITED(st))
        _exit(WEXITSTATUS(st));
    int sig = WTERMSIG(st);
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none); /* the job dumped core if it was to, not us */
    uint64_t one = 1ull << (sig - 1);
    syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &one, NULL, (size_t)(_NSIG / 8));
    kill(getpid(), sig); /* default disposition since child_main: it ends us */
    _exit(128 + sig);
}

static _Noreturn void child_main(const struct child_plan *pl)
{
    /* The parent blocked every signal around fork: reset handlers (a daemon's handler
     * must never run in a job) before unblocking at the very end. */
    /* The raw system call, because libc refuses to touch its internal signals (32, 33),
     * and a daemon started by make (which ignores them) would pass that on to jobs. */
    struct {
        void *handler;
        unsigned long flags;
        void *restorer;
        uint64_t mask;
    } dfl = {.handler = SIG_DFL};
    for (int s = 1; s < NSIG; s++)
        syscall(SYS_rt_sigaction, s, &dfl, NULL, sizeof(dfl.mask)); /* KILL, STOP: EINVAL */

    /* Nothing of the daemon's stays open here while the start may hang (a chdir or an
     * open on a hung filesystem): not its connection, not its lock, which would keep a
     * restarted daemon from starting. */
    close_all_but(3, pl->report_fd, pl->status_fd >= 3 ? pl->status_fd : -1);

    if (pl->gate) {
        /* The parent records the start, then says go: a parent that died before (end
         * of file) restarts without knowing us, so nothing of the job may run. Read
         * before any step can fail: a socket closed with the go unread would reset the
         * parent's end, and the report of the failure with it. */
        char go;
        ssize_t r;
        while ((r = read(pl->report_fd, &go, 1)) < 0 && errno == EINTR)
            ;
        if (r != 1)
            _exit(127);
    }

    if (setsid() < 0)
        child_fail(pl, STEP_SESSION, errno);

    /* Join before exec, so no descendant can ever start outside the cgroup; as root
     * still, since a user cannot move itself into a cgroup it does not own. */
    if (pl->cg_procs && !pl->cg_joined) {
        int fd = open(pl->cg_procs, O_WRONLY | O_CLOEXEC);
        ssize_t w = fd >= 0 ? write(fd, "0", 1) : -1;
        if (w != 1)
            child_report(pl->report_fd, STEP_CGROUP, errno);
        if (fd >= 0)
            close(fd);
    }

    /* Drop privileges before touching the user's files, so the kernel checks the
     * user's permissions and files are created as the user. */
    if (pl->drop) {
        if (setgroups((size_t)pl->ngroups, pl->groups) < 0)
            child_fail(pl, STEP_GROUPS, errno);
        if (setgid(pl->gid) < 0)
            child_fail(pl, STEP_SETGID, errno);
        if (setuid(pl->uid) < 0)
            child_fail(pl, STEP_SETUID, errno);
    }

    /* Before the output files: a user with umask 077 does not get them 0644. */
    if (pl->umask >= 0)
        umask((mode_t)pl->umask);
    if (chdir(pl->cwd) < 0)
        child_fail(pl, STEP_CHDIR, errno);

    int in = child_lift(open(pl->in_path ? pl->in_path : "/dev/null", O_RDONLY | O_CLOEXEC));
    if (in < 0)
        child_fail(pl, STEP_STDIN, errno);
    int out = child_open_out(pl->out_path);
    if (out < 0)
        child_fail(pl, STEP_STDOUT, errno);
    /* One open file for both streams when they name the same file: two opens would
     * each keep an offset and overwrite each other's output. */
    int err = out;
    if (!pl->same_out_err && !child_same_file(out, pl->err_path)) {
        err = child_open_out(pl->err_path);
        if (err < 0)
            child_fail(pl, STEP_STDERR, errno);
    }
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
        child_fail(pl, STEP_FDS, errno);
    /* The daemon's sockets and pipes must not leak into the job. */
    child_close_fds(pl->report_fd);
    if (pl->status_fd >= 3) {
        pid_t job = fork();
        if (job < 0)
            child_fail(pl, STEP_EXEC, errno);
        if (job > 0)
            shepherd(pl, job);
        close(pl->status_fd);
    }

    /* Tests only: a start that takes this long between fork and exec (as one whose
     * working directory or output file sits on a hung network filesystem would). */
    const char *delay = getenv("DUCTILE_TEST_EXEC_DELAY_MS");
    if (delay)
        usleep((useconds_t)atoi(delay) * 1000);
    if (job_nofile_set)
        setrlimit(RLIMIT_NOFILE, &job_nofile);
    sigset_t none;
    sigemptyset(&none);
    /* The raw system call: a libc or sanitizer wrapper may keep its own internal
     * signals blocked, and the job must start with nothing blocked at all. */
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, (size_t)(_NSIG / 8));
    execve(pl->argv[0], pl->argv, pl->envp);
    child_fail(pl, STEP_EXEC, errno);
}

/* ---- launch_start -------------------------------------------------------------- */

/* The user's groups, looked up in the parent (NSS is not fork-safe): the equivalent of
 * initgroups(). An unknown uid gets no supplementary group at all. */
static int user_groups(uid_t uid, gid_t gid, gid_t **out, int *nout)
{
    *out = NULL;
    *nout = 0;
    long sz = sysconf(_SC_GETPW_R_SIZE_MAX);
    size_t bufsz = sz > 0 ? (size_t)sz : 16384;
    char *buf = NULL;
    struct passwd pw, *res = NULL;
    int rc = ERANGE;
    while (rc == ERANGE && bufsz <= (1u << 20)) {
        char *nb = realloc(buf, bufsz);
        if (!nb) {
            free(buf);
            return -ENOMEM;
        }
        buf = nb;
        rc = getpwuid_r(uid, &pw, buf, bufsz, &res);
        bufsz *= 2;
    }
    rc = 0;
    if (res) {
        int ng = 32;
        gid_t *g = NULL;
        for (int tries = 0; tries < 8; tries++) {
            gid_t *ng2 = realloc(g, (size_t)ng * sizeof(*g));
            if (!ng2) {
                rc = -ENOMEM;
                break;
            }
            g = ng2;
            int want = ng;
            if (getgrouplist(pw.pw_name, gid, g, &want) >= 0) {
                *out = g;
                *nout = want;
                g = NULL;
                break;
            }
            ng = want > ng ? want : ng * 2;
        }
        free(g);
    }
    free(buf);
    return rc;
}

static void child_message(const struct child_plan *pl, struct child_report r, char *err,
                          size_t errlen)
{
    const char *e = strerror(r.err);
    switch (r.step) {
    case STEP_GROUPS:
        seterr(err, errlen, "cannot set the groups of uid %u: %s", (unsigned)pl->uid, e);
        break;
    case STEP_SETGID:
        seterr(err, errlen, "cannot switch to gid %u: %s", (unsigned)pl->gid, e);
        break;
    case STEP_SETUID:
        seterr(err, errlen, "cannot switch to uid %u: %s", (unsigned)pl->uid, e);
        break;
    case STEP_CHDIR: seterr(err, errlen, "cannot change directory to %s: %s", pl->cwd, e); break;
    case STEP_STDIN: seterr(err, errlen, "cannot open the standard input: %s", e); break;
    case STEP_STDOUT: seterr(err, errlen, "cannot open %s: %s", pl->out_path, e); break;
    case STEP_STDERR: seterr(err, errlen, "cannot open %s: %s", pl->err_path, e); break;
    case STEP_EXEC: seterr(err, errlen, "cannot execute %s: %s", pl->exec_path, e); break;
    case STEP_SESSION: seterr(err, errlen, "cannot create a session: %s", e); break;
    case STEP_FDS: seterr(err, errlen, "cannot set up the standard file descriptors: %s", e); break;
    default: seterr(err, errlen, "cannot start the job: %s", e); break;
    }
}

/* A start between fork and exec: the child reports on a pipe (closed by exec) each
 * step that failed; the parent reads it without blocking (launch_finish). */
struct launch_pending {
    launch_proc_t *p;
    pid_t pid;
    int fd;
    struct child_report rs[4];
    size_t have;
    /* what child_message names, copied: the spec is the caller's */
    struct child_plan pl;
    char *argv0, *cwd, *out_path, *err_path;
};

static void pending_free(launch_pending_t *pd)
{
    if (pd->fd >= 0)
        close(pd->fd);
    free(pd->argv0);
    free(pd->cwd);
    free(pd->out_path);
    free(pd->err_path);
    free(pd);
}

/* Reads what the child reported so far: 1 once the pipe closed (exec or failure),
 * 0 while it is open, a negative errno on a read error. */
static int pending_read(launch_pending_t *pd)
{
    for (;;) {
        if (pd->have == sizeof(pd->rs)) /* cannot happen: the child writes at most two */
            return 1;
        ssize_t n = read(pd->fd, (char *)pd->rs + pd->have, sizeof(pd->rs) - pd->have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n < 0)
            return -errno;
        if (n == 0)
            return 1;
        pd->have += (size_t)n;
    }
}

/* The pipe closed: 0 when the child exec'd (*cg_err set if it could not join its
 * cgroup), else a negative errno with the failing step in err. */
static int pending_result(launch_pending_t *pd, int *cg_err, char *err, size_t errlen)
{
    if (pd->have % sizeof(pd->rs[0]) != 0) {
        seterr(err, errlen, "garbled report from the job's process");
        return -EIO;
    }
    for (size_t i = 0; i < pd->have / sizeof(pd->rs[0]); i++) {
        if (pd->rs[i].step == STEP_CGROUP) {
            *cg_err = pd->rs[i].err;
            continue;
        }
        child_message(&pd->pl, pd->rs[i], err, errlen);
        return -pd->rs[i].err;
    }
    return 0;
}

static int check_spec(const launch_spec_t *s, char *err, size_t errlen)
{
    if (!s->argv || !s->argv[0] || !*s->argv[0]) {
        seterr(err, errlen, "no command to run");
        return -EINVAL;
    }
    if (s->job_id < 0) {
        seterr(err, errlen, "invalid job id %lld", (long long)s->job_id);
        return -EINVAL;
    }
    if (s->tag && !tag_ok(s->tag)) {
        seterr(err, errlen, "invalid tag '%s': use 1 to 64 of [A-Za-z0-9._-]", s->tag);
        return -EINVAL;
    }
    if (s->cgroup_parent && !cg_parent_ok(s->cgroup_parent)) {
        seterr(err, errlen, "invalid cgroup parent '%s': a relative path without . or ..",
               s->cgroup_parent);
        return -EINVAL;
    }
    if (geteuid() != 0 && s->uid != 0 && s->uid != geteuid()) {
        seterr(err, errlen, "cannot run a job as uid %u: the node daemon is not root",
               (unsigned)s->uid);
        return -EPERM;
    }
    return 0;
}

/* Creates the job's cgroup if the hierarchy is usable. Failing that the job runs
 * tracked by session only and p->warning says why; only a cgroup already in use by
 * live processes is an error (two jobs in one cgroup would be killed together). */
static int prepare_cgroup(const launch_spec_t *s, launch_proc_t *p, char *err, size_t errlen)
{
    if (!s->cgroup_parent)
        return 0;
    char root[PATH_MAX], leaf[128], path[PATH_MAX], why[LAUNCH_ERRLEN];
    if (launch_cgroup_root(root, sizeof(root)) < 0) {
        seterr(p->warning, sizeof(p->warning),
               "no cgroup2 hierarchy mounted: tracking by session and process group only");
        return 0;
    }
    if (s->tag)
        snprintf(leaf, sizeof(leaf), "job_%lld_%s", (long long)s->job_id, s->tag);
    else
        snprintf(leaf, sizeof(leaf), "job_%lld", (long long)s->job_id);
    int rc = cg_create(root, s->cgroup_parent, leaf, path, sizeof(path), why, sizeof(why));
    if (rc == -EBUSY || rc == -ENAMETOOLONG) {
        seterr(err, errlen, "%s", why);
        return rc;
    }
    if (rc < 0) {
        seterr(p->warning, sizeof(p->warning),
               "cgroup unusable (%s): tracking by session and process group only", why);
        return 0;
    }
    p->cgroup = strdup(path);
    if (!p->cgroup) {
        rmdir(path);
        seterr(err, errlen, "out of memory");
        return -ENOMEM;
    }
    char kill_path[PATH_MAX + 16];
    snprintf(kill_path, sizeof(kill_path), "%s/cgroup.kill", path);
    p->has_kill = access(kill_path, F_OK) == 0;
    /* before any process of the job is in it */
    if (s->mem_max > 0) {
        cg_limit(root, s->cgroup_parent, path, "memory.max", s->mem_max, p->warning,
                 sizeof(p->warning));
        cg_write(path, "memory.swap.max", "0"); /* (no such file without swap accounting) */
    }
    if (s->pids_max > 0)
        cg_limit(root, s->cgroup_parent, path, "pids.max", s->pids_max, p->warning,
                 sizeof(p->warning));
    return 0;
}

/* The pipe must stay off 0..2 in the child, where stdio goes. A gated start needs it
 * both ways (the child's reports, the parent's go): a socket pair. */
static int report_pipe(int fds[2], bool gate)
{
    if (gate ? socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0
             : pipe2(fds, O_CLOEXEC) < 0)
        return -errno;
    for (int i = 0; i < 2; i++) {
        if (fds[i] > 2)
            continue;
        int nfd = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
        int e = errno;
        close(fds[i]);
        fds[i] = nfd;
        if (nfd < 0) {
            close(fds[1 - i]);
            return -e;
        }
    }
    return 0;
}

/* Creates the child directly inside its cgroup when the kernel can (clone3 with
 * CLONE_INTO_CGROUP, Linux 5.7): moving a running process into a cgroup afterwards
 * waits for an RCU grace period, about 10 ms, on every job start. Otherwise fork, and
 * the child moves itself. The daemon is single-threaded, so a raw clone3 is as safe as
 * fork here. */
static pid_t spawn_child(struct child_plan *pl)
{
    pl->cg_joined = false;
#if defined(SYS_clone3) && defined(CLONE_INTO_CGROUP)
    if (pl->cg_procs) {
        char dir[4096];
        snprintf(dir, sizeof(dir), "%s", pl->cg_procs);
        char *slash = strrchr(dir, '/');
        int cgfd = -1;
        if (slash) {
            *slash = '\0';
            cgfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        }
        if (cgfd >= 0) {
            struct clone_args args = {
                .flags = CLONE_INTO_CGROUP,
                .exit_signal = SIGCHLD,
                .cgroup = (uint64_t)cgfd,
            };
            pl->cg_joined = true; /* seen by the child, which is a copy */
            long pid = syscall(SYS_clone3, &args, sizeof(args));
            int e = errno;
            close(cgfd);
            if (pid >= 0)
                return (pid_t)pid;
            pl->cg_joined = false;
            errno = e;
        }
    }
#endif
    return fork();
}

/* Forks the child, which sets itself up and execs; returns the read end of its report
 * pipe (non-blocking) and its pid. */
static int spawn(struct child_plan *pl, pid_t *pid_out, char *err, size_t errlen)
{
    int fds[2], rc = report_pipe(fds, pl->gate);
    if (rc < 0) {
        seterr(err, errlen, "cannot create a pipe: %s", strerror(-rc));
        return rc;
    }
    pl->report_fd = fds[1];
    /* No signal may reach the child while it still runs the daemon's handlers. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t pid = spawn_child(pl);
    if (pid == 0)
        child_main(pl);
    int fork_errno = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        seterr(err, errlen, "cannot fork: %s", strerror(fork_errno));
        return -fork_errno;
    }
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    *pid_out = pid;
    return fds[0];
}

/* The child never exec'd, so it has no descendant: waiting for it is enough. */
static void reap_unstarted(pid_t pid, bool kill_it)
{
    if (kill_it)
        kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

int launch_finish(launch_pending_t *pd, launch_proc_t **out, char *err, size_t errlen)
{
    int rc = pending_read(pd);
    if (rc == 0)
        return 0;
    launch_proc_t *p = pd->p;
    int cg_err = 0;
    if (rc > 0)
        rc = pending_result(pd, &cg_err, err, errlen);
    else
        seterr(err, errlen, "waiting for the job's process: %s", strerror(-rc));
    if (rc < 0) {
        reap_unstarted(pd->pid, false);
        if (p->cgroup)
            cg_remove(p->cgroup);
        free(p->cgroup);
        free(p);
        pending_free(pd);
        return rc;
    }
    p->pid = p->pgid = pd->pid;
    p->shepherded = pd->pl.status_fd >= 3;
    if (cg_err && p->cgroup) {
        seterr(p->warning, sizeof(p->warning),
               "cannot join cgroup %s (%s): tracking by session and process group only",
               p->cgroup, strerror(cg_err));
        cg_remove(p->cgroup);
        free(p->cgroup);
        p->cgroup = NULL;
    }
    pending_free(pd);
    *out = p;
    return 1;
}

void launch_abandon(launch_pending_t *pd)
{
    if (!pd)
        return;
    reap_unstarted(pd->pid, true);
    if (pd->p->cgroup)
        cg_remove(pd->p->cgroup);
    free(pd->p->cgroup);
    free(pd->p);
    pending_free(pd);
}

int launch_go(launch_pending_t *pd)
{
    if (!pd || !pd->pl.gate)
        return 0;
    ssize_t w;
    while ((w = send(pd->fd, "g", 1, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    return w == 1 ? 0 : -(errno ? errno : EIO);
}

int launch_pending_fd(const launch_pending_t *pd) { return pd->fd; }
pid_t launch_pending_pid(const launch_pending_t *pd) { return pd->pid; }
const char *launch_pending_cgroup(const launch_pending_t *pd) { return pd->p->cgroup; }

int launch_start(const launch_spec_t *spec, launch_proc_t **out, char *err, size_t errlen)
{
    launch_pending_t *pd;
    if (!out) {
        seterr(err, errlen, "no job to start");
        return -EINVAL;
    }
    *out = NULL;
    if (spec && spec->gate) {
        seterr(err, errlen, "a gated start needs launch_begin");
        return -EINVAL;
    }
    int rc = launch_begin(spec, &pd, err, errlen);
    if (rc < 0)
        return rc;
    double deadline = now_s() + START_TIMEOUT_MS / 1000.0;
    for (;;) {
        rc = launch_finish(pd, out, err, errlen);
        if (rc != 0)
            return rc < 0 ? rc : 0;
        int left = (int)((deadline - now_s()) * 1000);
        if (left <= 0) {
            launch_abandon(pd);
            seterr(err, errlen, "the job's process did not start within %d s",
                   START_TIMEOUT_MS / 1000);
            return -ETIMEDOUT;
        }
        struct pollfd pfd = {launch_pending_fd(pd), POLLIN, 0};
        poll(&pfd, 1, left);
    }
}

int launch_begin(const launch_spec_t *spec, launch_pending_t **out, char *err, size_t errlen)
{
    if (!spec || !out) {
        seterr(err, errlen, "no job to start");
        return -EINVAL;
    }
    *out = NULL;
    int rc = check_spec(spec, err, errlen);
    if (rc < 0)
        return rc;

    char out_path[PATH_MAX], err_path[PATH_MAX];
    const char *paths[2] = {spec->stdout_path, spec->stderr_path};
    char *bufs[2] = {out_path, err_path};
    for (int i = 0; i < 2; i++) {
        if (!paths[i])
            strcpy(bufs[i], "/dev/null");
        else if (launch_expand_path(paths[i], spec, bufs[i], PATH_MAX) < 0) {
            seterr(err, errlen, "output path too long: %s", paths[i]);
            return -ENAMETOOLONG;
        }
    }

    static char *const empty_env[] = {NULL};
    struct child_plan pl = {
        .argv = spec->argv,
        .exec_path = spec->argv[0],
        .status_fd = spec->status_fd,
        .hold_out = spec->hold_output && spec->status_fd >= 3,
        .envp = spec->envp ? spec->envp : empty_env,
        .cwd = spec->cwd ? spec->cwd : "/",
        .out_path = out_path,
        .err_path = err_path,
        .in_path = spec->stdin_path,
        .same_out_err = strcmp(out_path, err_path) == 0,
        .umask = spec->set_umask ? (int)(spec->umask & 0777) : -1,
        .drop = geteuid() == 0 && spec->uid != 0,
        .gate = spec->gate,
        .uid = spec->uid,
        .gid = spec->gid,
    };
    if (pl.drop && user_groups(spec->uid, spec->gid, &pl.groups, &pl.ngroups) < 0) {
        seterr(err, errlen, "out of memory");
        return -ENOMEM;
    }

    launch_proc_t *p = calloc(1, sizeof(*p));
    if (!p) {
        free(pl.groups);
        seterr(err, errlen, "out of memory");
        return -ENOMEM;
    }
    char procs[PATH_MAX + 16];
    rc = prepare_cgroup(spec, p, err, errlen);
    if (rc == 0 && p->cgroup) {
        snprintf(procs, sizeof(procs), "%s/cgroup.procs", p->cgroup);
        pl.cg_procs = procs;
    }
    launch_pending_t *pd = rc == 0 ? calloc(1, sizeof(*pd)) : NULL;
    if (rc == 0 && pd) {
        pd->fd = -1;
        pd->p = p;
        pd->argv0 = strdup(spec->argv[0]);
        pd->cwd = strdup(pl.cwd);
        pd->out_path = strdup(out_path);
        pd->err_path = strdup(err_path);
        if (!pd->argv0 || !pd->cwd || !pd->out_path || !pd->err_path) {
            seterr(err, errlen, "out of memory");
            rc = -ENOMEM;
        }
    } else if (rc == 0) {
        seterr(err, errlen, "out of memory");
        rc = -ENOMEM;
    }
    pid_t pid = 0;
    int fd = rc == 0 ? spawn(&pl, &pid, err, errlen) : rc;
    free(pl.groups);
    if (fd < 0) {
        if (pd)
            pending_free(pd);
        if (p->cgroup)
            cg_remove(p->cgroup);
        free(p->cgroup);
        free(p);
        return fd;
    }
    pd->fd = fd;
    pd->pid = pid;
    /* child_message reads these from the plan: point them at our copies */
    pd->pl = pl;
    pd->pl.groups = NULL;
    pd->pl.cwd = pd->cwd;
    pd->pl.out_path = pd->out_path;
    pd->pl.err_path = pd->err_path;
    pd->pl.in_path = NULL; /* (the caller's: not kept) */
    pd->pl.argv = NULL;
    pd->pl.exec_path = pd->argv0;
    *out = pd;
    return 0;
}

/* ---- after the start ------------------------------------------------------------- */

pid_t launch_pid(const launch_proc_t *p) { return p->pid; }
pid_t launch_pgid(const launch_proc_t *p) { return p->pgid; }
const char *launch_cgroup(const launch_proc_t *p) { return p->cgroup; }

/* The first number after `key` in the file (a flat keyed file such as cpu.stat, or
 * a single value with key ""), or -1. */
static long long cg_read(const char *dir, const char *file, const char *key)
{
    char path[PATH_MAX + 32], line[256];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    FILE *f = fopen(path, "re");
    long long v = -1;
    size_t n = strlen(key);
    while (f && v < 0 && fgets(line, sizeof(line), f))
        if (!strncmp(line, key, n) && (!n || line[n] == ' '))
            v = strtoll(line + n, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

long long launch_oom_kills(const launch_proc_t *p)
{
    long long n = p && p->cgroup ? cg_read(p->cgroup, "memory.events", "oom_kill") : -1;
    return n > 0 ? n : 0;
}

void launch_usage(const launch_proc_t *p, double *cpu, long long *mem)
{
    *cpu = -1;
    *mem = -1;
    if (!p)
        return;
    if (p->cgroup) { /* every process of the job, waited for or not */
        long long us = cg_read(p->cgroup, "cpu.stat", "usage_usec");
        if (us >= 0)
            *cpu = (double)us / 1e6;
        *mem = cg_read(p->cgroup, "memory.peak", "");
    }
    if (*cpu < 0 && p->ru_known)
        *cpu = p->ru_cpu;
    if (*mem < 0 && p->ru_known)
        *mem = p->ru_maxrss;
}
const char *launch_warning(const launch_proc_t *p) { return p->warning[0] ? p->warning : NULL; }

struct sig_arg {
    int sig;
    pid_t skip_pgid; /* members of this group were signalled already; 0: none */
    int err;         /* first delivery error other than ESRCH */
};

static int sig_one(pid_t pid, void *arg)
{
    struct sig_arg *a = arg;
    if (a->skip_pgid && getpgid(pid) == a->skip_pgid)
        return 0;
    if (kill(pid, a->sig) < 0 && errno != ESRCH && !a->err)
        a->err = errno;
    return 0;
}

int launch_signal_main(launch_proc_t *p, int sig)
{
    if (!p || sig <= 0 || sig >= NSIG)
        return -EINVAL;
    /* once reaped, its pid number may be someone else's; an adopted job's is its own
     * while it leads its process group still */
    if (p->gone || (p->reaped && !p->adopted))
        return 0;
    if (p->adopted && (p->pid <= 0 || getpgid(p->pid) != p->pgid))
        return 0;
    pid_t target = p->pid;
    if (p->shepherded) { /* the job is the shepherd's one child (it holds that pid) */
        char path[64], buf[64] = "";
        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)p->pid, (int)p->pid);
        FILE *f = fopen(path, "re");
        if (!f || !fgets(buf, sizeof(buf), f)) {
            if (f)
                fclose(f);
            return 0; /* no child: the job has ended */
        }
        fclose(f);
        target = (pid_t)atoi(buf);
        if (target <= 0 || getpgid(target) != p->pgid)
            return 0;
    }
    return kill(target, sig) < 0 && errno != ESRCH ? -errno : 0;
}

int launch_signal(launch_proc_t *p, int sig)
{
    if (!p || sig <= 0 || sig >= NSIG)
        return -EINVAL;
    /* Its pid and pgid numbers may belong to someone else by now. */
    if (p->gone)
        return 0;
    struct sig_arg a = {sig, 0, 0};
    /* Once the main pid is reaped the pgid number may be free for reuse, so the group is
     * then reached only through processes seen to be in it. Before, the unreaped main
     * process holds the number. */
    if (!p->reaped) {
        if (kill(-p->pgid, sig) == 0)
            a.skip_pgid = p->pgid;
        else if (errno != ESRCH)
            a.err = errno;
    }
    if (p->cgroup) {
        if (sig == SIGKILL && p->has_kill) {
            char path[PATH_MAX + 16];
            snprintf(path, sizeof(path), "%s/cgroup.kill", p->cgroup);
            int fd = open(path, O_WRONLY | O_CLOEXEC);
            if (fd >= 0 && write(fd, "1", 1) == 1) {
                close(fd);
                return -a.err;
            }
            if (fd >= 0)
                close(fd);
        }
        if (cg_foreach_pid(p->cgroup, sig_one, &a) >= 0)
            return -a.err;
        /* The cgroup vanished under us: fall back to the session. */
    }
    sess_foreach_live(p->pgid, sig_one, &a);
    return -a.err;
}

int launch_reap(launch_proc_t *p, int *status)
{
    if (p->reaped) {
        if (!p->status_known)
            return -ECHILD;
        if (status)
            *status = p->status;
        return 1;
    }
    int st;
    pid_t r;
    struct rusage ru;
    while ((r = wait4(p->pid, &st, WNOHANG, &ru)) < 0 && errno == EINTR)
        ;
    if (r == 0)
        return 0;
    p->reaped = true;
    if (r < 0)
        return -ECHILD;
    /* a shepherd's own use is next to nothing: its figures are the job's, which it
     * waited for */
    p->ru_known = true;
    p->ru_cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
                (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    p->ru_maxrss = (long long)ru.ru_maxrss * 1024;
    p->status_known = true;
    p->status = st;
    if (status)
        *status = st;
    return 1;
}

/* Whether the main pid has been waited for, by us or (ECHILD) by the daemon itself. */
static bool main_reaped(launch_proc_t *p)
{
    if (p->reaped)
        return true;
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    if (waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 && errno == ECHILD)
        p->reaped = true;
    return p->reaped;
}

/* Once empty, a cgroup or a session stays empty: only a member can add a process to
 * it (short of root migrating one in), so "gone" is final. */
bool launch_all_gone(launch_proc_t *p)
{
    if (p->gone)
        return true;
    if (!main_reaped(p))
        return false;
    int n = -1;
    if (p->cgroup) /* cgroup.procs lists no zombie: exactly the live processes */
        n = cg_foreach_pid(p->cgroup, NULL, NULL);
    if (n < 0)
        n = sess_foreach_live(p->pgid, NULL, NULL);
    p->gone = n == 0;
    return p->gone;
}

int launch_wait_gone(launch_proc_t *p, double timeout_s)
{
    double deadline = now_s() + timeout_s;
    for (;;) {
        launch_reap(p, NULL);
        if (launch_all_gone(p))
            return 0;
        if (now_s() >= deadline)
            return -ETIMEDOUT;
        sleep_ms(5);
    }
}

void launch_cleanup(launch_proc_t *p)
{
    if (!p)
        return;
    if (!launch_all_gone(p)) {
        launch_signal(p, SIGKILL);
        launch_wait_gone(p, 1.0);
    }
    if (p->cgroup)
        cg_remove(p->cgroup);
    free(p->cgroup);
    free(p);
}

bool launch_shepherded(const launch_proc_t *p) { return p && p->shepherded; }

void launch_set_shepherded(launch_proc_t *p, bool on)
{
    if (p)
        p->shepherded = on;
}

launch_proc_t *launch_adopt(const char *cgroup, pid_t pid, pid_t pgid)
{
    launch_proc_t *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->pid = pid;
    p->pgid = pgid;
    p->adopted = true;
    /* Not our child: nobody will tell us its status, and "reaped" lets
     * launch_all_gone look at what is left of the job instead. */
    p->reaped = true;
    if (cgroup) {
        p->cgroup = strdup(cgroup);
        if (!p->cgroup) {
            free(p);
            return NULL;
        }
        char kill_path[PATH_MAX + 16];
        snprintf(kill_path, sizeof(kill_path), "%s/cgroup.kill", cgroup);
        p->has_kill = access(kill_path, F_OK) == 0;
    }
    return p;
}

int launch_cgroup_prune(const char *cgroup_parent, bool self)
{
    char root[PATH_MAX], dir[PATH_MAX * 2];
    if (!cgroup_parent || launch_cgroup_root(root, sizeof(root)) < 0)
        return 0;
    snprintf(dir, sizeof(dir), "%s/%s", root, cgroup_parent);
    DIR *dp = opendir(dir);
    int left = 0;
    if (dp) {
        struct dirent *e;
        while ((e = readdir(dp))) {
            if (e->d_type != DT_DIR || e->d_name[0] == '.')
                continue;
            char sub[PATH_MAX * 3];
            snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
            if (cg_foreach_pid(sub, NULL, NULL) == 0)
                cg_remove(sub);
            else
                left++;
        }
        closedir(dp);
    }
    if (!self || left)
        return left;
    /* The node's directory, then the cluster's above it if that is empty too (never
     * the top one, shared by every cluster on the host). */
    if (rmdir(dir) == 0 && strchr(cgroup_parent, '/')) {
        char *slash = strrchr(dir, '/');
        *slash = '\0';
        rmdir(dir);
    }
    return 0;
}

/* ---- environment ------------------------------------------------------------------ */

static size_t env_keylen(const char *kv)
{
    const char *eq = strchr(kv, '=');
    return eq ? (size_t)(eq - kv) : strlen(kv);
}

static bool env_same_key(const char *a, const char *b)
{
    size_t la = env_keylen(a);
    return la == env_keylen(b) && memcmp(a, b, la) == 0;
}

char **launch_env_build(char *const *base_env, const char *const *extra_kv, size_t n)
{
    size_t nb = 0;
    while (base_env && base_env[nb])
        nb++;
    char **env = calloc(nb + n + 1, sizeof(*env));
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < nb; i++) {
        bool replaced = false;
        for (size_t j = 0; j < n && !replaced; j++)
            replaced = extra_kv[j] && env_same_key(base_env[i], extra_kv[j]);
        if (!replaced && !(env[k++] = strdup(base_env[i])))
            goto oom;
    }
    for (size_t j = 0; j < n; j++) {
        if (!extra_kv[j] || !strchr(extra_kv[j], '='))
            continue;
        bool later = false;
        for (size_t l = j + 1; l < n && !later; l++)
            later = extra_kv[l] && env_same_key(extra_kv[j], extra_kv[l]);
        if (!later && !(env[k++] = strdup(extra_kv[j])))
            goto oom;
    }
    return env;
oom:
    launch_env_free(env);
    return NULL;
}

void launch_env_free(char **env)
{
    if (!env)
        return;
    for (char **e = env; *e; e++)
        free(*e);
    free(env);
}
