/* ductile-noded: the daemon on every node. It registers with the controller, sends
 * heartbeats, runs the batch scripts the controller sends it, tracks every process of
 * every job (launch.c), enforces walltimes and cancellations, and reports how jobs
 * ended. It accepts commands only on its authenticated connection to the controller. */
#ifndef DUCTILE_NODED_H
#define DUCTILE_NODED_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "conn.h"
#include "idmap.h"
#include "launch.h"
#include "nodepower.h"

typedef struct noded noded_t;

typedef struct njob {
    noded_t *d;
    int64_t id;
    int run;                 /* the controller's run of the job: on every message */
    int cleanup_run;         /* the run a clean-up was asked for (answered with it) */
    bool batch;              /* the batch script runs here (first node) */
    bool requeue;            /* the controller runs it again elsewhere if this node fails */
    bool adopted;            /* started by an earlier incarnation of this daemon */
    double end_time;         /* wall clock when the script ended */
    double deadline;         /* wall clock of its time limit, 0 = none (kept on adoption) */
    double began;            /* wall clock when the script exec'd, 0 = not yet or unknown */
    bool used_known;         /* used_*: what the script's cgroup used, read as it ended */
    double used_cpu;         /* s, -1 unknown */
    long long used_mem;      /* peak bytes, -1 unknown */
    launch_proc_t *proc;     /* the batch script, NULL elsewhere or once cleaned */
    launch_pending_t *starting; /* the batch script between fork and exec */
    struct start_watch *start_watch; /* its report pipe: the loop never waits for exec */
    json_t *start_msg;       /* a batch start waiting its turn (jobs.c: starts take turns
                              * with the rest of the loop) */
    struct njob *start_next;
    double limit;            /* its time limit, armed once it runs */
    bool ended;              /* the script ended (result below) */
    int kind, code;          /* 0 exit code, 1 signal, 2 could not start */
    bool timed_out;
    bool oom;                /* the kernel killed a process of the script's cgroup for
                              * passing its memory limit */
    int64_t mem_mb;          /* --mem: its cgroups' memory.max here (MiB); 0: none */
    bool acked;              /* the controller has the result on disk */
    bool cleaning;           /* the controller asked us to clean up */
    bool cleaned;
    bool killing;            /* ending: SIGTERM at term_at, SIGKILL at kill_at */
    bool termed;             /* SIGTERM sent */
    uint64_t term_at;        /* uv_now() when SIGTERM is due (after a grace period) */
    uint64_t kill_at;        /* uv_now() when SIGKILL is due */
    uv_timer_t wall;         /* walltime */
    uv_timer_t warn;         /* submit --signal=SIG@SECS: that long before its time limit */
    int warn_sig, warn_scope;
    double warn_secs;
    bool warned;             /* its warning was sent (kept in its run record) */
    uv_timer_t kill;         /* KillWait after SIGTERM, then polling until all gone;
                              * for an adopted job, polling for its end */
    int timers_open;
    char *script_path;       /* kept until the job goes: the shell opens it after exec */
    uid_t uid;               /* the job's owner: only its processes may attach */
    gid_t gid;               /* and its group (the batch script runs as both) */
    conn_t *leader;          /* the application's leader (libductile), batch node only */
    json_t *limits;          /* what it accepts (app_limits), sent again on registration */
    char *ck_agents;         /* its checkpoint agents as the controller last said (start,
                              * ckpt_agents); NULL: not known here */
    char *ck_seen;           /* the list the application was last given */
    double power_min, power_max; /* W per node it may draw (the power model) */
    uint64_t cpu_usec;       /* its cgroups' CPU time at cpu_at (metering.c) */
    double cpu_at;
    uint64_t io_usec;        /* its cgroups' I/O stall time (io.pressure "some") at io_at */
    double io_at;            /* (metering.c); 0: no reading yet */
    char error[LAUNCH_ERRLEN]; /* why it could not start */
} njob_t;

struct task;

#define NODED_PEERS 8 /* as many as the controller names (ctld nodes.c, NODE_PEERS) */

struct noded {
    config_t cfg;
    const char *name;
    int index;
    uv_loop_t *loop;
    conn_t *ctl;                /* to the controller; NULL while disconnected */
    bool registered;
    bool registered_once;       /* retry quickly until the controller first answers */
    bool reregistering;         /* the controller asked for our report again (main.c) */
    uint8_t key[32];
    uv_timer_t reconnect;
    uv_timer_t heartbeat;
    uint64_t last_beat;         /* uv_now() of the last heartbeat tick */
    uint64_t last_heard;        /* uv_now() of the last message from the controller */
    bool ctl_refused;           /* the last attempt to connect was refused: its host is up */
    char last_refusal[256];     /* the controller's last error, not said again */
    bool cut_off_fenced;        /* this silence's requeueable jobs were ended */
    bool ctl_slow_said;         /* this silence was said to be the controller's slowness */
    bool ctl_cut_said;          /* this silence was said to be the controller's cut-off */
    uint64_t ctl_back;          /* uv_now() when the controller was heard again after a
                                 * silence past NodeTimeout; 0: never */
    /* Whom to ask, when the controller falls silent, whether they still hear it: some
     * other nodes' daemons, as the controller last named them (peers.c) */
    struct ctl_peer { char node[64]; char addr[64]; int port; } ctl_peers[NODED_PEERS];
    int nctl_peers;
    struct ask *ask;            /* that question, while it is asked */
    uv_pipe_t apps;             /* local socket for the processes of jobs (apps.c) */
    char app_socket[4200];
    idmap_t *chans;             /* relayed clients by channel (apps.c) */
    int64_t next_chan;
    uv_tcp_t peers_listen;      /* other nodes' step output for our clients (peers.c) */
    int step_port;              /* its port, told to the controller at registration */
    struct peer *peers;         /* our connections to other nodes' daemons */
    int64_t next_peer;
    char conf_path[4096]; /* absolute: exported to jobs as DUCTILE_CONF */
    idmap_t *jobs;
    struct task *tasks;         /* tasks of `ductile run` (steps.c) */
    uv_timer_t tasks_poll;      /* while tasks taken up after a restart run: their end */
    char spool[4096];
    char cgroup_parent[256];
    char cgroup_root[256];      /* the cgroup2 mount, when cgroup_parent is set */
    int limits;                 /* LAUNCH_LIMIT_* its jobs' cgroups get (told at registration):
                                 * the others are not tried at each start */
    nodepower_t power;          /* where the node's power readings come from */
    struct agent_seen *agents_seen; /* its agents' last reports (agents.c), by name */
    int agents_nseen;
    uint64_t agents_seen_at;    /* uv_now() of the heartbeat that read them; 0: none yet */
    bool stopping;
};

/* The nodes this process is (main.c: one, or several for tests and benchmarks with
 * --nodes), contiguous; noded_nall 0 in unit tests, where each noded_t is alone. */
extern noded_t *noded_all;
extern int noded_nall;

/* noded.c: the registration (what we hold), on each new connection to the controller */
void noded_send_register(noded_t *d);
/* The controller reloaded its state (a failed commit) and asks what we hold, on the
 * same connection: the registration is sent again. */
void noded_register_again(noded_t *d);

/* jobs.c */
void jobs_on_start(noded_t *d, const json_t *msg);
void jobs_on_cleanup(noded_t *d, const json_t *msg);
/* job_signal: ductile cancel --signal, to the job's processes on this node */
void jobs_on_signal(noded_t *d, const json_t *msg);
void jobs_on_ended_ack(noded_t *d, const json_t *msg);
void jobs_reap(noded_t *d); /* every node of this process: there is one SIGCHLD */
json_t *jobs_report(noded_t *d);
void jobs_on_registered(noded_t *d); /* sends again the ends not acknowledged */
int noded_send(noded_t *d, json_t *msg); /* takes msg */

/* runs.c: a durable record of each run on this node, so that a restarted daemon
 * finds what its earlier incarnation left (spool/run.<job>) */
int runs_record(noded_t *d, const njob_t *j);
void runs_forget(noded_t *d, int64_t id);
/* The file where a batch script's shepherd writes its wait status (launch.h), so that
 * a restarted daemon learns how an adopted job ended: open it for the shepherd (a
 * descriptor, or < 0), read it (0 and *status, or -ENOENT while there is none). */
int runs_status_open(noded_t *d, int64_t id);
int runs_status_read(noded_t *d, int64_t id, int *status);
/* The same for any such file (a step's task's) */
int runs_status_file_open(const char *path);
int runs_status_file_read(const char *path, int *status);
/* This boot of the host (a record from another boot names processes that are gone) */
void runs_boot_id(char *buf, size_t len);
/* What is still alive of a run a record names: its cgroup's processes, or its session's
 * (a run without a cgroup); NULL when nothing is. */
launch_proc_t *runs_still_alive(const char *cgroup, pid_t pid, pid_t pgid);
/* At start-up, before registering: take charge of what the records name and is still
 * alive (jobs_adopt), end every other process left in our cgroups. */
void runs_recover(noded_t *d);
/* jobs.c: a run found alive (proc) or ended (proc NULL) by runs_recover */
/* The time limit's timers (and --signal's warning) from j->deadline, as they stand. */
void jobs_arm_limit(noded_t *d, njob_t *j);
/* job_limit: a running job's new time limit (ductile update). */
void jobs_on_limit(noded_t *d, const json_t *msg);
void jobs_adopt(noded_t *d, int64_t id, int run, bool batch, uid_t uid, double deadline,
                launch_proc_t *proc);
njob_t *jobs_find(noded_t *d, int64_t id);
/* The daemon found it did not run for `gap` seconds, more than NodeTimeout: the
 * controller declared the node down and failed or requeued its jobs. End them here too,
 * so that a requeued run elsewhere does not overlap with them for longer. */
void jobs_fence(noded_t *d, double gap);
/* Nothing heard from the controller for `silence` seconds, more than NodeTimeout, and no
 * sign that only the controller process is down: it has declared this node down and
 * will run its requeueable jobs elsewhere once KillWait has passed. End those here
 * first, so that a job never runs twice at once (a node cut off the network). */
void jobs_fence_cut_off(noded_t *d, double silence);

/* agents.c: the checkpoint service's manager on a checkpoint node, and the jobs' side */
void agents_on_start(noded_t *d, const json_t *msg);
void agents_on_stop(noded_t *d, const json_t *msg);
json_t *agents_report(noded_t *d);        /* the jobs whose agents run here (registration) */
bool agents_reap(noded_t *d, pid_t pid);  /* true: pid was an agent, now reaped */
/* Adds the node's checkpoint measurements to a heartbeat ("ckpt": what its agents hold,
 * the bytes/s and commits/s they moved since the last one); a node for jobs without
 * agents adds nothing. */
void agents_ping(noded_t *d, json_t *ping);
/* A job's start: its agents' key where its processes read it (every node of the job) */
void agents_job_start(noded_t *d, const json_t *msg, int64_t job, int run, uid_t uid, gid_t gid);
void agents_job_gone(noded_t *d, int64_t job, int run);
/* ckpt_agents: the controller changed a running job's agents (a resize) */
void agents_on_list(noded_t *d, const json_t *msg);
/* The submission's environment names another job's agents (submitted from inside that
 * job): its DUCTILE_CKPT_AGENTS and DUCTILE_CKPT_KEY_FILE are not passed on. */
bool agents_inherited(const noded_t *d, const json_t *env);

/* hosts.c: the job's host files on the batch node (DUCTILE_HOSTFILE, and Open MPI's
 * default host file) and the variables that point a plain `mpirun` at them */
#define HOSTS_ENV_MAX 4
#define HOSTS_KV_LEN 4400
void hosts_path(const noded_t *d, int64_t job, bool ompi, char *out, size_t len);
int hosts_write(noded_t *d, int64_t job, const char *nodelist, char *err, size_t errlen);
void hosts_remove(noded_t *d, int64_t job);
/* Fills kv (HOSTS_ENV_MAX entries) with the variables for the job's environment, given
 * the one captured at submission (base: a user's own Open MPI settings stay); returns
 * how many. */
int hosts_env(const noded_t *d, int64_t job, char *const *base, char kv[][HOSTS_KV_LEN]);
/* The value of KEY in a "K=V" array (NULL-ended), or NULL. */
const char *hosts_env_get(char *const *env, const char *key);
/* slurmenv.c: Slurm's names for a job's variables (SlurmEnvironment = yes; 0 entries
 * with no): at most SLURMENV_JOB_MAX; for a step's task, at most SLURMENV_STEP_MAX */
#define SLURMENV_JOB_MAX 18
#define SLURMENV_STEP_MAX 7
#define SLURMENV_STEP_LEN 4300
int slurmenv_job(const noded_t *d, const json_t *msg, int64_t id, char *const *base,
                 char kv[][HOSTS_KV_LEN]);
/* umask: the task's (SLURM_UMASK), -1: none */
int slurmenv_step(const noded_t *d, int64_t job, int step, int rank, int umask,
                  char kv[][SLURMENV_STEP_LEN]);
/* agents.c: DUCTILE_CKPT_AGENTS and DUCTILE_CKPT_KEY_FILE for a job with agents, and
 * the site's CheckpointTransfer and CheckpointRegions unless the job sets them; how
 * many (4 at most) */
int agents_job_env(const noded_t *d, const json_t *msg, int64_t job, int run,
                   char kv[][HOSTS_KV_LEN]);
/* job_resized: the controller committed a resize; the batch node rewrites the files. */
void hosts_on_resized(noded_t *d, const json_t *msg);

/* apps.c: the local socket for jobs (libductile) */
int apps_init(noded_t *d, char *err, size_t errlen);
void apps_relay(noded_t *d, const json_t *msg);
/* relay / relay_close from the controller: a message for a relayed client, or its end */
void apps_on_relay(noded_t *d, const json_t *msg, bool closed);
/* The connection to the controller closed: so did every relayed client's channel. */
void apps_ctl_lost(noded_t *d);
/* step_output / step_eof from another node for one of our relayed clients */
void apps_on_step_io(noded_t *d, const json_t *msg);
/* Every heartbeat: a step's end held for output that never came is given up on. */
void apps_check_pending(noded_t *d);

/* peers.c: step output between node daemons */
int peers_init(noded_t *d, char *err, size_t errlen);
/* The admission control of our listeners, the step port's and the local socket's (one
 * per daemon, made at the first call); NULL if out of memory. */
conn_guard_t *peers_guard(noded_t *d);
/* A connection to the daemon at addr:port (kept and shared); its number, 0 on failure. */
int64_t peers_get(noded_t *d, const char *addr, int port);
conn_t *peers_find(noded_t *d, int64_t id); /* NULL once it closed */
/* The peers the controller names in `registered` and `pong` ("peers"), kept to ask. */
void peers_set_known(noded_t *d, const json_t *peers);
/* Nothing heard from the controller for NodeTimeout: is this node cut off (its
 * requeueable jobs are ended: the controller runs them elsewhere), or is the controller
 * (its peers do not hear it either: the jobs go on)? Asks the known peers and acts on
 * their answers; at once, when it knows none. */
void peers_ask_controller(noded_t *d, double silence);

/* steps.c: the tasks of `ductile run` */
/* step_input: data for a task's standard input (rank 0), or its end (eof); answered
 * with step_input_ack once written into its pipe (with `error` when it cannot be). */
void steps_on_input(noded_t *d, const json_t *msg);
void steps_on_start(noded_t *d, const json_t *msg);
void steps_on_kill(noded_t *d, const json_t *msg);
/* Signal the tasks of a job (step 0: all its steps). */
void steps_signal(noded_t *d, int64_t job, int step, int sig);
bool steps_job_gone(noded_t *d, int64_t job);
bool steps_owns_pid(noded_t *d, pid_t pid);
void steps_reap(noded_t *d);
/* At start-up (runs_recover), once the jobs are: the tasks an earlier incarnation
 * started that still run, or ended meanwhile, taken up again from their records in the
 * spool (their output pipes, what was read of them and not yet acknowledged, their
 * status), to be reported at registration. */
void steps_recover(noded_t *d);
/* Is this cgroup (its last component) one of a task of ours? */
bool steps_owns_cgroup(noded_t *d, const char *leaf);
/* step_credit: the client wrote out a task's output up to an offset (flow control). */
void steps_on_credit(noded_t *d, const json_t *msg);
/* step_resend: a task's output again from an offset, to a new home (re-attaching). */
void steps_on_resend(noded_t *d, const json_t *msg);
/* The job is cleaned up here: its ended tasks, kept for a client's return, go. */
void steps_forget_job(noded_t *d, int64_t job);
/* The tasks this daemon still holds (running, or ended and not yet reported), for the
 * register message: the controller ends every other task it placed here. */
json_t *steps_report(noded_t *d);
/* Registered again: send what was kept while the controller was away, read again. */
void steps_on_registered(noded_t *d);

/* metering.c: the node's draw now, W (-ENOENT: PowerSource = none; -EAGAIN: the first
 * RAPL reading), and the ping message with it */
int metering_sample(noded_t *d, double *watts);
void metering_ping(noded_t *d, json_t *ping);

/* noded.c: one message from the controller, dispatched by type. Never trusts it: bad
 * or unknown messages are logged and dropped. */
void noded_dispatch(noded_t *d, const json_t *msg);
/* The umask a job_start or step_start carries (its submitter's, or the `ductile run`
 * command's): 0 to 0777, or -1 when it carries none (an older controller or command:
 * the job gets the daemon's). */
int noded_umask(const json_t *msg);

/* uv_close, unless the handle is closing already: a daemon that stops closes every
 * handle of its loop (main.c), and libuv aborts on a second close. */
static inline void noded_close(uv_handle_t *h, uv_close_cb cb)
{
    if (!uv_is_closing(h))
        uv_close(h, cb);
}

#endif
