/* launch: starting, signalling and reaping the processes of a job on a node.
 *
 * Used by ductile-noded, whose libuv loop owns SIGCHLD: this library installs no
 * signal handler and only ever waits for the pids it started (never waitpid(-1)).
 *
 * Tracking. With a usable cgroup v2 hierarchy every job gets its own cgroup
 * "<cgroup_parent>/job_<id>[_<tag>]", joined by the child before exec, so every
 * descendant stays tracked, even one that daemonizes with setsid(). Without one (not
 * mounted, or the daemon may not create directories there) the job is tracked by its
 * session and process group only: the child calls setsid(), so pid == pgid == sid.
 * A process that leaves the session with setsid() then escapes: it is neither
 * signalled nor waited for. launch_warning() says when this weaker mode is in use.
 */
#ifndef DUCTILE_LAUNCH_H
#define DUCTILE_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LAUNCH_ERRLEN 512

typedef struct launch_spec {
    char *const *argv;       /* argv[0] is a path, used as is: no PATH search */
    char *const *envp;       /* the job's whole environment; NULL means empty */
    const char *cwd;         /* NULL means "/" */
    /* Created or truncated, mode 0666 less the umask (as a shell's redirection makes
     * them), as the job's user, after the chdir to cwd (so relative paths are relative
     * to it), with the patterns of launch_expand_path. NULL means /dev/null. Equal
     * paths share one file. */
    const char *stdout_path;
    const char *stderr_path;
    /* Opened for reading as the job's user, after the chdir; NULL: /dev/null. */
    const char *stdin_path;
    int64_t job_id;          /* >= 0 */
    const char *node_name;   /* for %n and %N; NULL expands to "" */
    const char *job_name;    /* for %x; NULL expands to "" */
    const char *user_name;   /* for %u; NULL expands to "" */
    int64_t array_id;        /* an element of a job array: for %A (0: %A is the job id) */
    int array_task;          /* and %a (used when array_id > 0) */
    const char *tag;         /* optional cgroup suffix ("batch", "step3"): [A-Za-z0-9._-] */
    /* When the daemon runs as root and uid != 0, the job runs as uid/gid with
     * the user's supplementary groups. As non-root, uid must be 0 or our own uid. */
    uid_t uid;
    gid_t gid;
    /* The job's file-creation mask (its submitter's), set before its output files are
     * opened, and its processes' from then on; without set_umask, the daemon's own. */
    bool set_umask;
    mode_t umask;
    /* Relative to the cgroup2 mount, e.g. "ductile/n01"; created as needed.
     * NULL: no cgroup (process group/session tracking only). */
    const char *cgroup_parent;
    /* Limits of the job's cgroup: memory.max in bytes (with memory.swap.max 0, so that
     * the job cannot swap past it) and pids.max (processes and threads); 0: none.
     * Where the hierarchy lacks a controller, the job runs without that limit and
     * launch_warning says so. */
    int64_t mem_max;
    int64_t pids_max;
    /* >= 0 (a batch script): the job runs under a small shepherd process that waits for
     * it, writes its wait status to this descriptor (as "%d\n" at offset 0, over what the
     * caller may have written there) and then ends the same
     * way. The shepherd outlives the daemon, so a restarted daemon learns how a job it
     * adopted ended. The descriptor need not survive exec: it is the shepherd's. Only
     * the shepherd (launch_pid) is the daemon's child. -1: no shepherd. Below 3 (as
     * when left out of an initializer): no shepherd. */
    int status_fd;
    /* With a shepherd, and output paths that are FIFOs the caller reads (a step's task):
     * the shepherd holds them open for reading too, and once the job has ended it waits
     * until they are empty before it ends. So the job's output waits in them, instead of
     * the job dying of SIGPIPE, while no daemon reads them, and a restarted daemon that
     * opens them again gets it all, the last lines of a job that ended meanwhile too. */
    bool hold_output;
    /* The child waits, set up but before exec (and before its shepherd), until
     * launch_go: the caller records the start first. A caller that dies before
     * launch_go leaves a child that ends without running anything (launch_begin only). */
    bool gate;
} launch_spec_t;

typedef struct launch_proc launch_proc_t;

/* Starts the job and returns once it has exec'd. On failure returns a negative errno
 * with a message naming the failing step (e.g. "cannot open /x/out: Permission
 * denied") and leaves no process and no cgroup behind. Blocks until the child has
 * exec'd or failed (normally well under a millisecond; at most 30 s, then -ETIMEDOUT). */
int launch_start(const launch_spec_t *spec, launch_proc_t **out, char *err, size_t errlen);

/* The same start without blocking, for an event loop: launch_begin forks and returns
 * at once; the caller watches launch_pending_fd() for input (or hang-up) and calls
 * launch_finish, which returns 0 while the child has not exec'd yet, 1 once it has
 * (*out set, pd freed), or a negative errno with the message (pd freed, nothing left
 * behind). launch_abandon gives up (a deadline passed): kills the child, frees pd.
 * Until then the child's pid is launch_pending_pid(): do not reap it elsewhere. */
typedef struct launch_pending launch_pending_t;
int launch_begin(const launch_spec_t *spec, launch_pending_t **out, char *err, size_t errlen);
int launch_finish(launch_pending_t *pd, launch_proc_t **out, char *err, size_t errlen);
void launch_abandon(launch_pending_t *pd);
/* Lets a gated child (spec.gate) exec; 0, or a negative errno: the child failed before
 * its gate (launch_finish gives its report). */
int launch_go(launch_pending_t *pd);
int launch_pending_fd(const launch_pending_t *pd);
pid_t launch_pending_pid(const launch_pending_t *pd);
/* The cgroup the child is joining, or NULL (tracked by its session, pid == pgid). */
const char *launch_pending_cgroup(const launch_pending_t *pd);

pid_t launch_pid(const launch_proc_t *p);
pid_t launch_pgid(const launch_proc_t *p);
/* Absolute path of the job's cgroup directory, or NULL when tracking without one. */
const char *launch_cgroup(const launch_proc_t *p);
/* Why tracking is weaker than asked for (cgroup unusable), or NULL. */
const char *launch_warning(const launch_proc_t *p);

/* Sends sig to every process of the job (SIGKILL through cgroup.kill when there is
 * one). 0 also when nothing is left; a negative errno when delivery failed. */
/* The signal to the main process alone (a batch script, not its children). */
int launch_signal_main(launch_proc_t *p, int sig);
int launch_signal(launch_proc_t *p, int sig);

/* Non-blocking waitpid on the main pid: 0 while it runs, 1 once it has ended (status as
 * from waitpid; asking again returns the same status), -ECHILD if someone else reaped
 * it. Reap through this function only, so the status is not lost. */
int launch_reap(launch_proc_t *p, int *status);

/* True when the main process has been reaped and no other process of the job is alive
 * (zombies waiting for their new parent do not count). */
bool launch_all_gone(launch_proc_t *p);

/* Polls (reaping the main pid) until launch_all_gone or timeout: 0 or -ETIMEDOUT.
 * Sleeps; for tests and shutdown paths, not for the event loop. */
int launch_wait_gone(launch_proc_t *p, double timeout_s);

/* Frees p and removes its cgroup. Never leaves an untracked process: if the job is not
 * gone yet, it is SIGKILLed and waited for (up to about a second). NULL is fine. */
void launch_cleanup(launch_proc_t *p);

/* Takes charge of a job started by an earlier incarnation of the daemon (its cgroup
 * directory, or NULL to track it by session `pgid`): signal, launch_all_gone and
 * launch_cleanup work as for a job we started; its status is not ours to learn
 * (launch_reap says -ECHILD). NULL when out of memory. */
launch_proc_t *launch_adopt(const char *cgroup, pid_t pid, pid_t pgid);
/* Whether the job's pid is its shepherd's (the script its one child): kept in the run's
 * record, so that an adopted job's script alone is signalled as before (--signal=B:). */
bool launch_shepherded(const launch_proc_t *p);
/* What the job used so far: *cpu (user + system, s) and *mem (peak memory, bytes), each
 * -1 when not measured. From its cgroup (cpu.stat's usage_usec, memory.peak: every
 * process of it) where the hierarchy has them, else, once reaped, from wait4 (the main
 * process and the descendants it waited for; the largest one's peak resident size). */
void launch_usage(const launch_proc_t *p, double *cpu, long long *mem);
void launch_set_shepherded(launch_proc_t *p, bool on);

/* The limits the jobs' cgroups under cgroup_parent can have (LAUNCH_LIMIT_* bits): the
 * controllers are enabled in every cgroup from the mount down to cgroup_parent (made
 * as needed), each for the one below. 0 without a cgroup2 hierarchy, or where it lacks
 * them (a host whose memory controller belongs to cgroup v1). */
#define LAUNCH_LIMIT_MEMORY 1
#define LAUNCH_LIMIT_PIDS 2
int launch_cgroup_limits(const char *cgroup_parent);
/* How many of the job's processes the kernel killed for passing its memory.max (its
 * cgroup's memory.events); 0 without a cgroup or a memory controller. */
long long launch_oom_kills(const launch_proc_t *p);

/* Removes the empty cgroups under cgroup_parent (relative to the cgroup2 mount) and,
 * with self and nothing left, cgroup_parent and its empty parents below "ductile".
 * Returns how many cgroups still hold processes. */
int launch_cgroup_prune(const char *cgroup_parent, bool self);

/* Expands an output path template as sbatch's -o does: %j the job id, %x its
 * name, %u its user, %n and %N the node's name, %% a %, and for an element of an
 * array %A the array's id and %a its index; other % sequences stay as they are. spec gives job_id, job_name, user_name and
 * node_name. 0, or -ENAMETOOLONG when out is too small. */
int launch_expand_path(const char *tmpl, const launch_spec_t *spec, char *out, size_t outlen);

/* The cgroup2 mount point (first one in /proc/self/mounts): 0, -ENOENT, -ENAMETOOLONG. */
int launch_cgroup_root(char *buf, size_t len);

/* A NULL-terminated copy of base_env with the n "KEY=VALUE" entries of extra_kv set
 * (replacing same-named base entries, the last one winning); an extra entry without
 * '=' removes KEY. NULL when out of memory. Free with launch_env_free. */
char **launch_env_build(char *const *base_env, const char *const *extra_kv, size_t n);
void launch_env_free(char **env);

/* The open-files limit for the jobs launched from now on (the daemon's own may be
 * higher); by default they inherit the daemon's. */
struct rlimit;
void launch_set_job_nofile(const struct rlimit *rl);

#endif
