/* ductile mpirun: start a malleable MPI application inside a job.
 *
 *   ductile mpirun [--ppn P] PROGRAM [ARGS...]
 *
 * Every node of the job runs its own group of P processes (its own `mpirun`, started
 * with `ductile run`); libductile's dt_init_adapt joins the groups into one
 * communicator through MPI_Comm_connect/accept, rendezvousing at an `ompi-server` this
 * command runs for the job. A group is the unit that joins and leaves: when the job
 * grows, the leader starts one group per new node with
 *
 *   ductile mpirun --join I --tag T --node NODE PROGRAM [ARGS...]     (internal)
 *
 * and when it shrinks, the groups of the leaving nodes finish. Why groups and not
 * MPI_Comm_spawn: see docs/malleable-apps.md ("How the MPI layer is built"). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "strparse.h"
#include "util.h"

extern char **environ;

/* Open MPI 4.1 (ORTE) names each mpirun and ompi-server after a 16-bit "job family":
 * the two halves of hash(host name) XOR pid folded together (orte_plm_base_set_hnp_name,
 * OPAL_HASH_STR). Two groups of one application on different hosts can get the same
 * family: both then have the same process names and publish their job's data under one
 * key at the ompi-server, which answers one of them with the other's data, and the next
 * MPI_Comm_accept/connect hangs in PMIx_Connect. On a real cluster that is about one
 * chance in 65536 per pair of groups; on emulated hosts (one PID space, host names
 * whose hashes differ in a few bits, groups started at once with near pids) it was one
 * expansion in eight. So every process that gets a family (the ompi-server, each
 * group's mpirun) is started through exec_unique, which claims the family it will get
 * in the launcher's directory first (DIR/jobfam.F, O_EXCL) and, when another process
 * of the application has it, forks: the child has another pid, so another family. A
 * claim is never released: a family once used is never used again by the application
 * (the other mpiruns and the ompi-server keep what they learnt about it). */
static uint32_t ompi_str_hash(const char *s)
{
    uint32_t h = 0;
    for (; *s; s++) {
        h += (uint32_t)(unsigned char)*s;
        h += h << 10;
        h ^= h >> 6;
    }
    h += h << 3;
    h ^= h >> 11;
    return h + (h << 15);
}

/* The host name as ORTE takes it: the domain cut off (unless kept), not of an address. */
static void ompi_nodename(char *buf, size_t len)
{
    if (gethostname(buf, len) < 0)
        snprintf(buf, len, "localhost");
    buf[len - 1] = '\0';
    const char *keep = getenv("OMPI_MCA_orte_keep_fqdn_hostnames");
    int keep_fqdn = keep && (!strcmp(keep, "1") || !strcasecmp(keep, "true") || !strcasecmp(keep, "yes"));
    int address = strspn(buf, "0123456789.") == strlen(buf) || strchr(buf, ':');
    char *dot = strchr(buf, '.');
    if (dot && !keep_fqdn && !address)
        *dot = '\0';
}

static unsigned ompi_jobfam(const char *nodename, long pid)
{
    uint32_t h = ompi_str_hash(nodename) ^ (uint32_t)pid;
    return (unsigned)(((h >> 16) ^ h) & 0xffff);
}

/* Claims DIR/jobfam.F for F the family of process pid on host; 1 if done, 0 if taken,
 * -1 on error. */
static int claim_jobfam(const char *dir, const char *host, pid_t pid, unsigned *fam)
{
    *fam = ompi_jobfam(host, (long)pid);
    char path[PATH_MAX + 32], note[320];
    snprintf(path, sizeof(path), "%s/jobfam.%u", dir, *fam);
    int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
    if (fd < 0 && errno == EEXIST)
        return 0;
    if (fd < 0) {
        fprintf(stderr, "ductile: mpirun: cannot claim %s: %s\n", path, strerror(errno));
        return -1;
    }
    int n = snprintf(note, sizeof(note), "%s %ld\n", host, (long)pid);
    if (write(fd, note, (size_t)n) != n)
        fprintf(stderr, "ductile: mpirun: %s: %s\n", path, strerror(errno));
    close(fd);
    return 1;
}

static void exec_with(unsigned fam, char **argv)
{
    char fs[16];
    snprintf(fs, sizeof(fs), "%u", fam);
    setenv("DT_MPI_JOBFAM", fs, 1);
    execvp(argv[0], argv);
    fprintf(stderr, "ductile: mpirun: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* Executes argv with a job family no other process of the application has (DIR: the
 * launcher's directory): as this process when its family is free; otherwise in a
 * child whose pid gives a free one (each child waits for a word from here before it
 * runs argv or ends), and then returns the child's exit status. */
static int exec_unique(const char *dir, char **argv)
{
    char host[256];
    ompi_nodename(host, sizeof(host));
    unsigned fam;
    int rc = claim_jobfam(dir, host, getpid(), &fam);
    if (rc < 0)
        return 1;
    if (rc > 0)
        exec_with(fam, argv);
    for (int attempt = 0; attempt < 100000; attempt++) {
        int p[2];
        if (pipe(p) < 0) {
            fprintf(stderr, "ductile: mpirun: pipe: %s\n", strerror(errno));
            return 1;
        }
        pid_t child = fork();
        if (child < 0) {
            fprintf(stderr, "ductile: mpirun: fork: %s\n", strerror(errno));
            return 1;
        }
        if (child == 0) {
            char go = 0;
            close(p[1]);
            if (read(p[0], &go, 1) == 1 && go == 'g')
                exec_with(ompi_jobfam(host, (long)getpid()), argv);
            _exit(0);
        }
        close(p[0]);
        rc = claim_jobfam(dir, host, child, &fam);
        if (write(p[1], rc > 0 ? "g" : "n", 1) != 1)
            rc = -1;
        close(p[1]);
        int status;
        while (waitpid(child, &status, 0) < 0)
            if (errno != EINTR)
                return 1;
        if (rc < 0)
            return 1;
        if (rc == 0)
            continue;
        if (WIFSIGNALED(status)) {
            signal(WTERMSIG(status), SIG_DFL);
            raise(WTERMSIG(status));
            return 128 + WTERMSIG(status);
        }
        return WEXITSTATUS(status);
    }
    fprintf(stderr, "ductile: mpirun: no free Open MPI job family on %s\n", host);
    return 1;
}

/* The words of one group: its mpirun (started through `ductile mpirun --exec-in DIR`,
 * exec_unique), then the program: words[0..] (caller frees the array only). */
static char **group_words(const char *dir, const char *ppn, char **prog, int nprog, int *n)
{
    static char server[PATH_MAX + 16], self[PATH_MAX], dirw[PATH_MAX];
    snprintf(server, sizeof(server), "file:%s/uri", dir);
    snprintf(dirw, sizeof(dirw), "%s", dir);
    ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[sl > 0 ? sl : 0] = '\0';
    const char *head[] = {self, "mpirun", "--exec-in", dirw, "--", "mpirun", "--ompi-server",
                          server, "--oversubscribe", "--bind-to", "none", "-np", ppn};
    int nh = (int)(sizeof(head) / sizeof(head[0]));
    char **w = calloc((size_t)(nh + nprog + 1), sizeof(char *));
    if (!w)
        return NULL;
    for (int i = 0; i < nh; i++)
        w[i] = (char *)head[i];
    for (int i = 0; i < nprog; i++)
        w[nh + i] = prog[i];
    *n = nh + nprog;
    return w;
}


/* Starts ompi-server for the job; returns its pid once its URI file is written. */
static pid_t start_server(const char *dir)
{
    char uri[PATH_MAX + 8];
    snprintf(uri, sizeof(uri), "%s/uri", dir);
    char *argv[] = {"ompi-server", "--no-daemonize", "--report-uri", uri, NULL};
    /* (no posix_spawn here: src/sched/sched.h hides <sched.h> from the CLI) */
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0)
        _exit(exec_unique(dir, argv));
    for (double end = cu_mono() + 30; cu_mono() < end;) {
        struct stat st;
        if (stat(uri, &st) == 0 && st.st_size > 0)
            return pid;
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid)
            return -1;
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

/* The launcher's environment, for the groups started later (NUL-separated). */
static int save_env(const char *dir)
{
    char path[PATH_MAX + 8];
    snprintf(path, sizeof(path), "%s/env", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    for (char **e = environ; *e; e++)
        fwrite(*e, 1, strlen(*e) + 1, f);
    return fclose(f) == 0 ? 0 : -1;
}

static int load_env(const char *dir)
{
    char path[PATH_MAX + 8];
    snprintf(path, sizeof(path), "%s/env", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    clearenv();
    while ((len = getdelim(&line, &cap, '\0', f)) > 0) {
        char *eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = '\0';
        setenv(line, eq + 1, 1);
    }
    free(line);
    fclose(f);
    return 0;
}

/* The job's size now (it may have changed since the script started). */
static int job_size(long long job)
{
    config_t cfg = {0};
    if (cu_load_conf(NULL, &cfg))
        return -1;
    json_t *rep = cu_call(&cfg, json_pack("{s:s,s:I}", "type", "show", "job", (json_int_t)job));
    config_free(&cfg);
    int n = rep ? (int)json_integer_value(json_object_get(json_object_get(rep, "job"), "nodes")) : -1;
    json_decref(rep);
    return n > 0 ? n : -1;
}

static void remove_dir(const char *dir)
{
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "ductile: mpirun: could not remove %s\n", dir);
}

int cmd_mpirun(int argc, char **argv)
{
    static const struct option lopts[] = {{"ppn", required_argument, 0, 'p'},
                                          {"join", required_argument, 0, 'J'},
                                          {"node", required_argument, 0, 'w'},
                                          {"tag", required_argument, 0, 't'},
                                          {"exec-in", required_argument, 0, 'x'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    long ppn = 1;
    const char *join = NULL, *node = NULL, *tag = "", *exec_in = NULL;
    int o;
    opterr = 0;
    optind = 1;
    while ((o = getopt_long(argc, argv, "+p:", lopts, NULL)) != -1) {
        switch (o) {
        case 'p':
            if (strparse_long(optarg, 1, 4096, &ppn) < 0)
                return cmd_fail("mpirun: --ppn: '%s' is not a process count (1..4096)", optarg);
            break;
        case 'J': join = optarg; break;
        case 'w': node = optarg; break;
        case 't': tag = optarg; break;
        case 'x': exec_in = optarg; break;
        case 'h':
            printf("usage: ductile mpirun [--ppn P] PROGRAM [ARGS...]\n"
                   "Runs P processes of PROGRAM on every node of the job, as one malleable MPI\n"
                   "application (libductile's dt_init_adapt joins them); the job can then\n"
                   "grow and shrink by whole nodes.\n");
            return 0;
        default:
            return cmd_fail("mpirun: bad option '%s' (try --help)", argv[optind - 1]);
        }
    }
    if (exec_in) { /* internal: a group's mpirun, with a job family of its own */
        if (optind >= argc)
            return cmd_fail("mpirun: --exec-in: no command given");
        struct stat st;
        if (stat(exec_in, &st) < 0 || !S_ISDIR(st.st_mode))
            return cmd_fail("mpirun: --exec-in: '%s' is not a directory", exec_in);
        return exec_unique(exec_in, argv + optind);
    }
    long long job = cmd_job_from_env();
    if (job <= 0)
        return cmd_fail("mpirun: DUCTILE_JOB_ID is not set: run it inside a job");
    if (optind >= argc)
        return cmd_fail("mpirun: no program given");
    if (ppn < 1 || ppn > 4096)
        return cmd_fail("mpirun: --ppn must be between 1 and 4096");
    char **prog = argv + optind;
    int nprog = argc - optind, nw;

    if (join) {
        /* a group joining a running application: its leader set up the environment */
        const char *d = getenv("DT_MPI_DIR"), *pp = getenv("DT_MPI_PPN");
        if (!d || !pp || !node)
            return cmd_fail("mpirun: --join is for libductile (DT_MPI_DIR, DT_MPI_PPN, --node)");
        char dir[PATH_MAX], p[32];
        snprintf(dir, sizeof(dir), "%s", d);
        snprintf(p, sizeof(p), "%s", pp);
        /* the caller is an MPI process: its environment is full of its own mpirun's
         * settings; a new group starts from the launcher's */
        if (load_env(dir) < 0)
            return cmd_fail("mpirun: cannot read %s/env", dir);
        setenv("DT_MPI_JOIN", "1", 1);
        setenv("DT_MPI_GROUP", join, 1);
        setenv("DT_MPI_TAG", tag, 1);
        char **w = group_words(dir, p, prog, nprog, &nw);
        int rc = w ? cmd_run_words(job, 0, node, w, nw) : cmd_fail("mpirun: out of memory");
        free(w);
        return rc;
    }
    if (getenv("DT_MPI_DIR"))
        return cmd_fail("mpirun: already inside a malleable MPI application");

    char cwd[PATH_MAX], dir[PATH_MAX + 64], self[PATH_MAX], ppns[32];
    if (!getcwd(cwd, sizeof(cwd)))
        return cmd_fail("mpirun: getcwd: %s", strerror(errno));
    /* shared by every node: on a real cluster the submission directory is */
    snprintf(dir, sizeof(dir), "%s/.ductile-mpi.%lld.%d", cwd, job, (int)getpid());
    if (mkdir(dir, 0700) < 0)
        return cmd_fail("mpirun: %s: %s", dir, strerror(errno));
    ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[sl > 0 ? sl : 0] = '\0';
    snprintf(ppns, sizeof(ppns), "%ld", ppn);
    pid_t server = start_server(dir);
    if (server < 0) {
        remove_dir(dir);
        return cmd_fail("mpirun: ompi-server did not start (is Open MPI installed?)");
    }
    setenv("DT_MPI_DIR", dir, 1);
    setenv("DT_MPI_PPN", ppns, 1);
    int groups = job_size(job);
    if (groups < 0) {
        kill(server, SIGTERM);
        waitpid(server, NULL, 0);
        remove_dir(dir);
        return 1;
    }
    char gs[16];
    snprintf(gs, sizeof(gs), "%d", groups);
    setenv("DT_MPI_NGROUPS", gs, 1);
    setenv("DT_MPI_DUCTILE", self, 1);
    /* orted's topology sharing crashes in processes started by a node daemon: off */
    setenv("OMPI_MCA_rtc_hwloc_vmhole", "none", 0);
    /* processes waiting in MPI give the CPU away: nodes may be oversubscribed */
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    /* each group's mpirun is local to its node: not the job's host file, which the
     * node daemon sets as Open MPI's default for a plain mpirun (user-guide.md) */
    const char *hf = getenv("DUCTILE_HOSTFILE"), *dhf = getenv("OMPI_MCA_orte_default_hostfile");
    char ompi_hf[PATH_MAX + 8];
    snprintf(ompi_hf, sizeof(ompi_hf), "%s.ompi", hf ? hf : "");
    if (hf && dhf && !strcmp(dhf, ompi_hf))
        unsetenv("OMPI_MCA_orte_default_hostfile");
    if (save_env(dir) < 0) {
        kill(server, SIGTERM);
        waitpid(server, NULL, 0);
        remove_dir(dir);
        return cmd_fail("mpirun: cannot write %s/env", dir);
    }
    char **w = group_words(dir, ppns, prog, nprog, &nw);
    int rc = w ? cmd_run_words(job, groups, NULL, w, nw) : cmd_fail("mpirun: out of memory");
    free(w);
    kill(server, SIGTERM);
    waitpid(server, NULL, 0);
    remove_dir(dir);
    return rc;
}
