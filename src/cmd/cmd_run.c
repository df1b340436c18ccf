/* ductile run: start a command on the nodes of a job (like srun) and forward its
 * output and exit status. Inside a job the job is $DUCTILE_JOB_ID.
 * ductile rsh HOST CMD...: the same on one node, with the command given as words for
 * a shell: the remote-shell interface an MPI library uses instead of ssh (Open MPI's
 * plm_rsh_agent). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "b64.h"
#include "cmd.h"
#include "strparse.h"
#include "util.h"

extern char **environ;

/* execve does no PATH search: resolve the command here, where the user typed it. */
static int resolve(const char *cmd, char *out, size_t len)
{
    if (strchr(cmd, '/')) {
        if (cmd[0] == '/') {
            snprintf(out, len, "%s", cmd);
        } else {
            char cwd[PATH_MAX];
            if (!getcwd(cwd, sizeof(cwd)))
                return -errno;
            snprintf(out, len, "%s/%s", cwd, cmd);
        }
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    char *copy = strdup(path), *save = NULL;
    for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        snprintf(out, len, "%s/%s", *dir ? dir : ".", cmd);
        if (access(out, X_OK) == 0) {
            free(copy);
            return 0;
        }
    }
    free(copy);
    return -ENOENT;
}

static int write_all(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Flow control (docs/reliability-steps.md): we tell the controller how far we have
 * written out each task's output, half a window at a time; a task whose output we do
 * not write out stops after a window. */
typedef struct flow {
    const char *conf;     /* for a new connection when ours breaks */
    long long job;
    int step, ntasks;
    long long window;     /* 0: the controller does no flow control */
    long long *written;   /* per rank: end offset of the output written out */
    long long *acked;     /* per rank: the offset we last acknowledged */
    char *midline;        /* --label: per rank and stream, its last chunk ended mid-line */
} flow_t;

/* --label: "RANK: " before every line, as srun's -l (a chunk may hold many lines, or end
 * in the middle of one: a task that printed while its output was not read). */
static int write_labeled(int fd, long long rank, const char *buf, size_t n, char *midline)
{
    char tag[32];
    int tl = snprintf(tag, sizeof(tag), "%lld: ", rank);
    while (n > 0) {
        const char *nl = memchr(buf, '\n', n);
        size_t len = nl ? (size_t)(nl - buf) + 1 : n;
        if (!(midline && *midline) && write_all(fd, tag, (size_t)tl) < 0)
            return -1;
        if (write_all(fd, buf, len) < 0)
            return -1;
        if (midline)
            *midline = !nl;
        buf += len;
        n -= len;
    }
    return 0;
}

/* Of a chunk of n bytes at its offset in its task's output, how many bytes at its start
 * were written out already (a chunk sent again after a re-attach); n: all of it, or a
 * chunk past a gap: after a break, a node may send new output before the output it is
 * asked to send again, which comes after it, in order, with this chunk again (it keeps
 * everything not acknowledged). Writing it would leave the gap for ever (CI's sanitizer
 * run of test_step_restart lost one line so). */
static size_t flow_seen(const flow_t *f, const json_t *m, size_t n)
{
    const json_t *jo = json_object_get(m, "offset");
    long long r = json_integer_value(json_object_get(m, "rank"));
    if (!f->written || !json_is_integer(jo) || r < 0 || r >= f->ntasks)
        return 0; /* (a line from a node daemon, not the task's output) */
    long long o = json_integer_value(jo);
    if (o > f->written[r])
        return n; /* past a gap: it comes again */
    return f->written[r] - o >= (long long)n ? n : (size_t)(f->written[r] - o);
}

static void flow_written(client_t *c, flow_t *f, const json_t *m, size_t n)
{
    const json_t *jr = json_object_get(m, "rank"), *jo = json_object_get(m, "offset");
    long long r = json_integer_value(jr);
    if (!f->written || !json_is_integer(jo) || r < 0 || r >= f->ntasks)
        return;
    if (json_integer_value(jo) + (long long)n <= f->written[r])
        return;
    f->written[r] = json_integer_value(jo) + (long long)n;
    if (f->window <= 0 || f->written[r] - f->acked[r] < f->window / 2)
        return;
    f->acked[r] = f->written[r];
    char err[256];
    json_t *ack = json_pack("{s:s,s:I,s:i,s:I,s:I}",
                            "type", "step_ack",
                            "job", (json_int_t)f->job,
                            "step", f->step,
                            "rank", (json_int_t)r,
                            "offset", (json_int_t)f->written[r]);
    if (ack)
        client_send(c, ack, err, sizeof(err)); /* a failure shows as the stream's end */
    json_decref(ack);
}

/* How long we try to take our step up again while the controller cannot be reached
 * (it may be restarting for an upgrade; its tasks run on meanwhile). */
#define REATTACH_WAIT 3600.0

/* Our connection broke (the controller restarted, a reset, the node daemon relaying us
 * restarted): a new one, and the step taken up again from what we have written out
 * (docs/reliability-steps.md). 0, or 255 once there is no hope. */
static int reattach(client_t **c, flow_t *f, const char *why)
{
    fprintf(stderr, "ductile run: step %d of job %lld: lost the connection to the controller "
            "(%s): reconnecting\n", f->step, f->job, why);
    client_close(*c);
    *c = NULL;
    config_t cfg = {0};
    if (cu_load_conf(f->conf, &cfg))
        return 255;
    double until = cu_mono() + REATTACH_WAIT, pause = 0.1;
    char err[512];
    int rc = -ETIMEDOUT;
    while (cu_mono() < until) {
        rc = cu_open(&cfg, c, err, sizeof(err));
        if (rc == 0) {
            json_t *offsets = json_array(), *rep = NULL;
            for (int r = 0; r < f->ntasks && f->written; r++)
                json_array_append_new(offsets, json_integer(f->written[r]));
            json_t *req = json_pack("{s:s,s:I,s:i,s:o}", "type", "step_attach", "job",
                                    (json_int_t)f->job, "step", f->step, "offsets", offsets);
            rc = client_call(*c, req, &rep, 60, err, sizeof(err));
            json_decref(req);
            json_decref(rep);
            if (rc == 0) {
                config_free(&cfg);
                fprintf(stderr, "ductile run: step %d of job %lld: reconnected\n", f->step,
                        f->job);
                /* what was acknowledged is as the controller now knows it */
                for (int r = 0; r < f->ntasks && f->written; r++)
                    f->acked[r] = f->written[r];
                return 0;
            }
            client_close(*c);
            *c = NULL;
            if (!client_retryable(rc))
                break; /* the controller answered: the step is gone */
        }
        cu_backoff(&pause, 5);
    }
    config_free(&cfg);
    cmd_fail("run: step %d of job %lld: could not take the step up again: %s", f->step, f->job,
             rc == -ETIMEDOUT ? "the controller stayed out of reach" : err);
    return 255;
}

/* Has every task's output that the step's end counts been written out? */
static bool all_written(const flow_t *f, const json_t *done)
{
    const json_t *out = json_object_get(done, "out");
    for (int r = 0; r < f->ntasks && f->written && json_is_array(out); r++) {
        json_int_t want = json_integer_value(json_array_get(out, (size_t)r));
        if (want > f->written[r])
            return false;
    }
    return true;
}

/* How long the step's end waits for output sent again after a re-attach. */
#define DONE_WAIT 30.0

static int stream(client_t **cp, bool label, flow_t *f)
{
    char err[512];
    json_t *done = NULL; /* the step's end, once it came */
    double done_at = 0;
    for (;;) {
        json_t *m;
        int rc = client_recv(*cp, &m, done ? 1 : -1, err, sizeof(err));
        if (rc == -ETIMEDOUT && done && cu_mono() - done_at < DONE_WAIT)
            continue;
        if (rc < 0 && rc != -ETIMEDOUT) {
            if (reattach(cp, f, err)) {
                json_decref(done);
                return 255;
            }
            continue;
        }
        if (rc < 0) {
            fprintf(stderr, "ductile run: step %d of job %lld: some of its output did not "
                    "arrive after the connection broke: it may be incomplete\n", f->step, f->job);
            int st = (int)json_integer_value(json_object_get(done, "status"));
            json_decref(done);
            return st > 0 && st <= 255 ? st : 255;
        }
        const char *type = cu_str(m, "type");
        if (!strcmp(type, "step_output")) {
            const char *data = cu_str(m, "data");
            char *buf = malloc(strlen(data) / 4 * 3 + 3);
            long n = buf ? b64_decode(data, buf) : -1;
            int fd = json_integer_value(json_object_get(m, "stream")) == 2 ? 2 : 1;
            size_t seen = n > 0 ? flow_seen(f, m, (size_t)n) : 0;
            long long rank = json_integer_value(json_object_get(m, "rank"));
            char *mid = f->midline && rank >= 0 && rank < f->ntasks ? &f->midline[2 * rank + (fd == 2)]
                                                                   : NULL;
            if (n > 0 && seen < (size_t)n) {
                int wr = label ? write_labeled(fd, rank, buf + seen, (size_t)n - seen, mid)
                               : write_all(fd, buf + seen, (size_t)n - seen);
                if (wr < 0 && fd == 1) {
                    free(buf);
                    json_decref(m);
                    json_decref(done);
                    return cmd_fail("run: cannot write the output: %s", strerror(errno));
                }
                flow_written(*cp, f, m, (size_t)n);
            }
            free(buf);
        } else if (!strcmp(type, "step_done")) {
            json_decref(done);
            done = json_incref(m);
            done_at = cu_mono();
        }
        json_decref(m);
        if (done && all_written(f, done)) {
            int st = (int)json_integer_value(json_object_get(done, "status"));
            const char *why = json_string_value(json_object_get(done, "error"));
            if (why)
                fprintf(stderr, "ductile run: step %d of job %lld: %s\n", f->step, f->job, why);
            /* we have it all: the controller and the nodes may forget the step */
            json_t *bye = json_pack("{s:s,s:I,s:i}", "type", "step_close", "job",
                                    (json_int_t)f->job, "step", f->step);
            if (bye)
                client_send(*cp, bye, err, sizeof(err));
            json_decref(bye);
            json_decref(done);
            return st > 255 ? 255 : st;
        }
    }
}

/* The step's first task's standard input: ours, read by a child of ours that sends it
 * on its own connection a chunk at a time, each answered once it is in the task's pipe
 * (a task that reads slowly slows the reader, never the cluster). It ends when our
 * input does, or when the task no longer reads. */
static pid_t pump_stdin(const char *conf, long long job, int step, client_t *step_conn)
{
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    /* the step's connection is the parent's alone: when the parent goes, the controller
     * must see it close (and end the step); we go with the parent */
    close(client_fd(step_conn));
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(0);
    config_t cfg = {0};
    client_t *c = NULL;
    char err[512];
    if (cu_load_conf(conf, &cfg) || cu_open(&cfg, &c, err, sizeof(err)) < 0)
        _exit(1);
    static char buf[32768];
    char *enc = malloc(b64_encoded_len(sizeof(buf)) + 1);
    for (;;) {
        ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        json_t *req = json_pack("{s:s,s:I,s:i}", "type", "step_input", "job", (json_int_t)job,
                                "step", step);
        if (n > 0 && enc) {
            b64_encode(buf, (size_t)n, enc);
            json_object_set_new(req, "data", json_string(enc));
        } else {
            json_object_set_new(req, "eof", json_true());
        }
        json_t *rep = NULL;
        int rc = client_call(c, req, &rep, -1, err, sizeof(err));
        json_decref(req);
        json_decref(rep);
        if (rc < 0 && n > 0) { /* end the task's input all the same, or it waits for more */
            req = json_pack("{s:s,s:I,s:i,s:b}", "type", "step_input", "job", (json_int_t)job,
                            "step", step, "eof", 1);
            rep = NULL;
            client_call(c, req, &rep, 60, err, sizeof(err));
            json_decref(req);
            json_decref(rep);
        }
        if (rc < 0 || n <= 0 || !enc)
            break; /* the end, or the task reads no more */
    }
    client_close(c);
    _exit(0);
}

static int run(const char *conf, long long job, long nodes, const char *node, bool label,
               char **words, int nwords, bool shell, bool fwd)
{
    config_t cfg = {0};
    if (cu_load_conf(conf, &cfg))
        return 1;
    char exe[PATH_MAX], err[1024], cwd[PATH_MAX];
    json_t *argv = json_array();
    if (shell) {
        /* rsh semantics: the words form one command line for a shell */
        size_t len = 1;
        for (int i = 0; i < nwords; i++)
            len += strlen(words[i]) + 1;
        char *line = calloc(len, 1);
        for (int i = 0; i < nwords; i++) {
            strcat(line, words[i]);
            if (i + 1 < nwords)
                strcat(line, " ");
        }
        json_array_append_new(argv, json_string("/bin/sh"));
        json_array_append_new(argv, json_string("-c"));
        json_array_append_new(argv, json_string(line));
        free(line);
    } else {
        if (resolve(words[0], exe, sizeof(exe)) < 0)
            return cmd_fail("run: %s: command not found", words[0]);
        json_array_append_new(argv, json_string(exe));
        for (int i = 1; i < nwords; i++)
            json_array_append_new(argv, json_string(words[i]));
    }
    json_t *env = json_array();
    for (char **e = environ; *e; e++)
        json_array_append_new(env, json_string(*e));
    if (!getcwd(cwd, sizeof(cwd)))
        snprintf(cwd, sizeof(cwd), "/");
    json_t *req = json_pack("{s:s,s:I,s:I,s:s,s:o,s:o}", "type", "run", "job", (json_int_t)job,
                            "nodes", (json_int_t)nodes, "cwd", cwd, "argv", argv, "env", env);
    if (node)
        json_object_set_new(req, "node", json_string(node));
    if (fwd)
        json_object_set_new(req, "stdin", json_true());
    json_object_set_new(req, "umask", json_integer(cu_umask())); /* the tasks' */
    client_t *c;
    int rc = cu_open(&cfg, &c, err, sizeof(err));
    config_free(&cfg);
    if (rc < 0) {
        json_decref(req);
        return cmd_fail("%s", err);
    }
    json_t *rep;
    /* "try later" (the node daemon relaying us is between two connections to the
     * controller, which is restarting): nothing was started; again for a while */
    double until = cu_mono() + 60, pause = 0.1;
    while ((rc = client_call(c, req, &rep, 60, err, sizeof(err))) == -EBUSY && cu_mono() < until)
        cu_backoff(&pause, 0.8);
    json_decref(req);
    if (rc < 0) {
        client_close(c);
        return cmd_fail("%s", err);
    }
    flow_t f = {
        .conf = conf,
        .job = job,
        .step = (int)json_integer_value(json_object_get(rep, "step")),
        .ntasks = (int)json_integer_value(json_object_get(rep, "tasks")),
        .window = (long long)json_integer_value(json_object_get(rep, "window")),
    };
    json_decref(rep);
    if (f.ntasks > 0) {
        f.written = calloc((size_t)f.ntasks, sizeof(long long));
        f.acked = calloc((size_t)f.ntasks, sizeof(long long));
        f.midline = calloc((size_t)f.ntasks * 2, 1);
        if (!f.written || !f.acked) {
            free(f.written);
            free(f.acked);
            f.written = f.acked = NULL; /* no acknowledgements: the tasks stop after a window */
        }
    }
    pid_t pump = fwd && f.ntasks > 0 ? pump_stdin(conf, job, f.step, c) : -1;
    int st = stream(&c, label, &f);
    if (pump > 0) { /* its step is over: no more input for it */
        kill(pump, SIGKILL);
        while (waitpid(pump, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    free(f.written);
    free(f.acked);
    free(f.midline);
    client_close(c);
    return st;
}

long long cmd_job_from_env(void)
{
    const char *s = getenv("DUCTILE_JOB_ID");
    return s ? atoll(s) : 0;
}

int cmd_run_words(long long job, long nodes, const char *node, char **words, int nwords)
{
    return run(NULL, job, nodes, node, false, words, nwords, false, false);
}

/* ductile run outside a job: the step in an allocation of its own (as srun) */
typedef struct own {
    const char *conf;
    bool label;
    char **words;
    int nwords;
    long long job;
} own_t;

static int own_step(void *arg)
{
    own_t *o = arg;
    return run(o->conf, o->job, 0, NULL, o->label, o->words, o->nwords, false, true);
}

static int run_in_own_allocation(own_t *o, long nodes, const char *time, const char *name)
{
    char n[32];
    snprintf(n, sizeof(n), "%ld", nodes > 0 ? nodes : 1);
    char *av[10];
    int ac = 0;
    av[ac++] = "run";
    av[ac++] = "-N";
    av[ac++] = n;
    if (time)
        av[ac++] = "-t", av[ac++] = (char *)time;
    av[ac++] = "-J", av[ac++] = (char *)(name ? name : o->words[0]);
    if (o->conf)
        av[ac++] = "--conf", av[ac++] = (char *)o->conf;
    av[ac] = NULL;
    alloc_t a = {.quiet = true};
    int first;
    int rc = alloc_open(&a, ac, av, &first);
    if (rc) {
        free(a.nodelist);
        free(a.name);
        return rc;
    }
    o->job = a.id;
    int st = alloc_run(&a, own_step, o);
    alloc_release(&a);
    return st;
}

int cmd_run(int argc, char **argv)
{
    static const struct option lopts[] = {{"job", required_argument, 0, 'j'},
                                          {"nodes", required_argument, 0, 'N'},
                                          {"node", required_argument, 0, 'w'},
                                          {"label", no_argument, 0, 'l'},
                                          {"time", required_argument, 0, 't'},
                                          {"job-name", required_argument, 0, 'J'},
                                          {"conf", required_argument, 0, 'c'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    long long job = cmd_job_from_env();
    long nodes = 0;
    const char *node = NULL, *conf = NULL, *time = NULL, *name = NULL;
    bool label = false;
    int o;
    opterr = 0;
    optind = 1;
    while ((o = getopt_long(argc, argv, "+j:N:w:lt:J:", lopts, NULL)) != -1) {
        switch (o) {
        case 'j': {
            long v;
            if (strparse_long(optarg, 1, LONG_MAX, &v) < 0)
                return cmd_fail("run: --job: '%s' is not a job id", optarg);
            job = v;
            break;
        }
        case 'N':
            if (strparse_long(optarg, 1, 1L << 24, &nodes) < 0)
                return cmd_fail("run: --nodes: '%s' is not a node count", optarg);
            break;
        case 'w': node = optarg; break;
        case 'l': label = true; break;
        case 't': time = optarg; break;
        case 'J': name = optarg; break;
        case 'c': conf = optarg; break;
        case 'h':
            printf("usage: ductile run [--job N] [-N NODES] [--node NAME] [--label] CMD [ARGS...]\n"
                   "       ductile run [-N NODES] [-t TIME] [-J NAME] [--label] CMD [ARGS...]\n"
                   "Runs CMD on the first NODES nodes of the job (all by default), one task per\n"
                   "node, and exits with the largest exit status of the tasks. Outside a job\n"
                   "(no DUCTILE_JOB_ID, no --job) it waits for NODES nodes (1 by default) of\n"
                   "its own, for TIME, runs CMD on all of them and releases them, as srun.\n");
            return 0;
        default:
            return cmd_fail("run: bad option '%s' (try --help)", argv[optind - 1]);
        }
    }
    if (nodes < 0)
        return cmd_fail("run: --nodes must be positive");
    if (optind >= argc)
        return cmd_fail("run: no command given");
    if (job <= 0) {
        if (node)
            return cmd_fail("run: --node names a node of a job: outside a job there is none");
        char exe[PATH_MAX];
        if (resolve(argv[optind], exe, sizeof(exe)) < 0)
            return cmd_fail("run: %s: command not found", argv[optind]);
        own_t own = {conf, label, argv + optind, argc - optind, 0};
        return run_in_own_allocation(&own, nodes, time, name);
    }
    if (time || name)
        return cmd_fail("run: %s is for a new allocation: inside job %lld the step runs in "
                        "the job's", time ? "--time" : "--job-name", job);
    return run(conf, job, nodes, node, label, argv + optind, argc - optind, false, true);
}

/* ductile rsh [OPTIONS] NODE COMMAND...: the remote-shell interface of MPI launchers
 * (Open MPI's plm_rsh_agent runs AGENT [plm_rsh_args] NODE COMMAND-WORDS...). The
 * options of ssh and rsh are accepted, with their values, and ignored: the job's owner
 * runs the command, on the job's node, with no terminal or forwarding to set up. */
int cmd_rsh(int argc, char **argv)
{
    static const char flags[] = "46AaCfGgKkMNnqsTtVvXxYy"; /* ssh's, rsh's -n */
    static const char valued[] = "BbcDEeFIiJLlmOoPpQRSWw"; /* -l USER, -p PORT, -o OPT... */
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *w = argv[i];
        if (!strcmp(w, "--")) {
            i++;
            break;
        }
        if (!strcmp(w, "-h") || !strcmp(w, "--help")) {
            printf("usage: ductile rsh [OPTIONS] NODE COMMAND...\n"
                   "Runs COMMAND (its words joined into one line for /bin/sh, as rsh and ssh\n"
                   "do) on NODE, a node of the job, and exits with its exit status. The\n"
                   "options of ssh and rsh (-l USER, -p PORT, -o OPTION, -x, -n...) are\n"
                   "accepted and ignored, so MPI launchers can use it instead of ssh.\n");
            return 0;
        }
        if (!w[1])
            return cmd_fail("rsh: bad option '-' (try --help)");
        for (const char *c = w + 1; *c; c++) {
            if (strchr(valued, *c)) {
                if (c[1] == '\0' && ++i >= argc)
                    return cmd_fail("rsh: option -%c needs a value", *c);
                break; /* the rest of the word, or the next one, is its value */
            }
            if (!strchr(flags, *c))
                return cmd_fail("rsh: bad option '%s' (try --help)", w);
        }
    }
    if (i >= argc)
        return cmd_fail("usage: ductile rsh [OPTIONS] NODE COMMAND...");
    const char *node = argv[i];
    const char *at = strrchr(node, '@');
    if (at)
        node = at + 1; /* USER@NODE: the job's owner runs it whatever USER says */
    if (!*node)
        return cmd_fail("rsh: '%s' names no node", argv[i]);
    if (i + 1 >= argc)
        return cmd_fail("rsh: no command given for %s (ductile rsh runs a command; it "
                        "opens no login shell)", node);
    long long job = cmd_job_from_env();
    if (job <= 0)
        return cmd_fail("rsh: DUCTILE_JOB_ID is not set: run it inside a job");
    return run(NULL, job, 0, node, false, argv + i + 1, argc - i - 1, true, false);
}
