/* Slurm's commands on a Ductile cluster: `ductile` started under the name sbatch, squeue,
 * scancel, scontrol, sinfo, sacct, srun or salloc (links that `make install
 * SLURM_WRAPPERS=1` makes) translates the options Slurm users type into its own
 * commands, and refuses the rest by name (docs/slurm-users.md, "Slurm's commands"). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd.h"

#define MAX_ARGS 512

typedef struct argv_b {
    char *v[MAX_ARGS + 1];
    int n;
} argv_b;

static int add(argv_b *a, const char *s)
{
    if (a->n >= MAX_ARGS)
        return cmd_fail("too many arguments");
    a->v[a->n++] = (char *)s;
    a->v[a->n] = NULL;
    return 0;
}

/* "--opt=value" or "--opt value" / "-o value" / "-ovalue": the value of option k in argv
 * (NULL if it has none), *k moved past it. */
static const char *value_of(int argc, char **argv, int *k, const char *lng, char shrt)
{
    const char *w = argv[*k];
    size_t l = lng ? strlen(lng) : 0;
    if (lng && !strncmp(w, lng, l) && w[l] == '=')
        return w + l + 1;
    if ((lng && !strcmp(w, lng)) || (shrt && w[0] == '-' && w[1] == shrt && !w[2])) {
        if (*k + 1 >= argc)
            return NULL;
        return argv[++*k];
    }
    if (shrt && w[0] == '-' && w[1] == shrt && w[2])
        return w + 2;
    return NULL;
}

static bool is_opt(const char *w, const char *lng, char shrt)
{
    size_t l = lng ? strlen(lng) : 0;
    return (lng && (!strcmp(w, lng) || (!strncmp(w, lng, l) && w[l] == '='))) ||
           (shrt && w[0] == '-' && w[1] == shrt);
}

/* squeue [-u U] [--me] [-j IDS] [-p PARTS] [-t STATES] [-h] [--start] [-o "%.18i %j"] [-O F,F:W]
 * [-S KEYS]: -o's letters and -O's names both become queue --format (which tells them
 * apart by the '%'), -S queue --sort */
static int squeue(int argc, char **argv)
{
    argv_b a = {0};
    add(&a, "queue");
    for (int k = 1; k < argc; k++) {
        const char *w = argv[k], *v;
        if (!strcmp(w, "-h") || !strcmp(w, "--noheader"))
            add(&a, "--noheader");
        else if (!strcmp(w, "--me"))
            add(&a, "--me");
        else if (!strcmp(w, "--start"))
            add(&a, "--start");
        else if (!strcmp(w, "--help") || !strcmp(w, "--usage"))
            add(&a, "--help");
        else if (is_opt(w, "--user", 'u') && (v = value_of(argc, argv, &k, "--user", 'u')))
            add(&a, "-u"), add(&a, v);
        else if (is_opt(w, "--jobs", 'j') && (v = value_of(argc, argv, &k, "--jobs", 'j')))
            add(&a, "-j"), add(&a, v);
        else if (is_opt(w, "--partition", 'p') &&
                 (v = value_of(argc, argv, &k, "--partition", 'p')))
            add(&a, "-p"), add(&a, v);
        else if (is_opt(w, "--states", 't') && (v = value_of(argc, argv, &k, "--states", 't')))
            add(&a, "-t"), add(&a, strcasecmp(v, "all") ? v : "PD,R,RS,CG");
        else if (is_opt(w, "--format", 'o') && (v = value_of(argc, argv, &k, "--format", 'o')))
            cmd_queue_format_opt = "squeue: -o", add(&a, "--format"), add(&a, v);
        else if (is_opt(w, "--Format", 'O') && (v = value_of(argc, argv, &k, "--Format", 'O')))
            cmd_queue_format_opt = "squeue: -O", add(&a, "--format"), add(&a, v);
        else if (is_opt(w, "--sort", 'S') && (v = value_of(argc, argv, &k, "--sort", 'S')))
            cmd_queue_sort_opt = "squeue: -S", add(&a, "--sort"), add(&a, v);
        else
            return cmd_fail("squeue: %s is not supported (Ductile's squeue takes -u, --me, -j, "
                            "-p, -t, --start, -o, -O, -S and -h: docs/slurm-users.md)", w);
    }
    return cmd_queue(a.n, a.v);
}

/* scancel ID... [-u U] [-n NAME] [-t STATE] */
static int scancel(int argc, char **argv)
{
    argv_b a = {0};
    add(&a, "cancel");
    for (int k = 1; k < argc; k++) {
        const char *w = argv[k], *v;
        if (w[0] != '-') {
            add(&a, w);
        } else if (!strcmp(w, "--help") || !strcmp(w, "-h")) {
            add(&a, "--help");
        } else if (!strcmp(w, "--me")) {
            add(&a, "--me");
        } else if (is_opt(w, "--user", 'u') && (v = value_of(argc, argv, &k, "--user", 'u'))) {
            add(&a, "-u"), add(&a, v);
        } else if (is_opt(w, "--name", 'n') && (v = value_of(argc, argv, &k, "--name", 'n'))) {
            add(&a, "-n"), add(&a, v);
        } else if (is_opt(w, "--state", 't') && (v = value_of(argc, argv, &k, "--state", 't'))) {
            add(&a, "-t"), add(&a, v);
        } else if (is_opt(w, "--signal", 's') &&
                   (v = value_of(argc, argv, &k, "--signal", 's'))) {
            add(&a, "--signal"), add(&a, v);
        } else if (!strcmp(w, "-b") || !strcmp(w, "--batch")) {
            add(&a, "--batch");
        } else if (!strcmp(w, "-f") || !strcmp(w, "--full")) {
            add(&a, "--full");
        } else {
            return cmd_fail("scancel: %s is not supported (Ductile's scancel takes job ids, -u, "
                            "-n, -t, -s, -b and -f: docs/slurm-users.md)", w);
        }
    }
    return cmd_cancel(a.n, a.v);
}

/* scontrol show job ID | show node[s] [NODE] | show hostnames [LIST] | hold ID... |
 * release ID... */
/* scontrol update JobId=12 TimeLimit=30 JobName=x NumNodes=2[-4] (keys in any case) */
static int scontrol_update(int argc, char **argv)
{
    static const struct { const char *key, *opt; } keys[] = {
        {"timelimit", "--time"}, {"jobname", "--job-name"}, {"name", "--job-name"},
        {"numnodes", "--nodes"}, {"reqnodes", "--nodes"}, {"nice", "--nice"},
    };
    argv_b a = {0};
    const char *job = NULL;
    /* scontrol update PartitionName=P State=S: ductile partitions update P --state S */
    if (argc > 2 && !strncasecmp(argv[2], "PartitionName=", 14)) {
        add(&a, "partitions"), add(&a, "update");
        for (int k = 3; k < argc; k++) {
            if (strncasecmp(argv[k], "State=", 6))
                return cmd_fail("scontrol update PartitionName: only State= is supported, not "
                                "'%s' (docs/partitions.md)", argv[k]);
            add(&a, "--state"), add(&a, argv[k] + 6);
        }
        add(&a, argv[2] + 14);
        return cmd_partitions(a.n, a.v);
    }
    add(&a, "update");
    for (int k = 2; k < argc; k++) {
        char *eq = strchr(argv[k], '=');
        if (!eq || eq == argv[k])
            return cmd_fail("scontrol update: '%s' is not KEY=VALUE (JobId=12 TimeLimit=30)",
                            argv[k]);
        size_t n = (size_t)(eq - argv[k]);
        if ((n == 5 && !strncasecmp(argv[k], "jobid", 5)) ||
            (n == 3 && !strncasecmp(argv[k], "job", 3))) {
            job = eq + 1;
            continue;
        }
        size_t i = 0;
        while (i < sizeof(keys) / sizeof(keys[0]) &&
               !(strlen(keys[i].key) == n && !strncasecmp(argv[k], keys[i].key, n)))
            i++;
        if (i == sizeof(keys) / sizeof(keys[0]))
            return cmd_fail("scontrol update: %.*s is not supported (JobId, TimeLimit, JobName, "
                            "NumNodes, Nice: docs/slurm-users.md)", (int)n, argv[k]);
        if (eq[1] == '+' || (eq[1] == '-' && i == 0))
            return cmd_fail("scontrol update: TimeLimit=%s: give the new limit itself, not a "
                            "change to it", eq + 1);
        add(&a, keys[i].opt), add(&a, eq + 1);
    }
    if (!job)
        return cmd_fail("scontrol update: which job? (JobId=12)");
    add(&a, job);
    return cmd_update(a.n, a.v);
}

static int scontrol(int argc, char **argv)
{
    argv_b a = {0};
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "show") && argc > 2) {
        const char *obj = argv[2];
        if (!strcmp(obj, "job") || !strcmp(obj, "jobid")) {
            if (argc != 4)
                return cmd_fail("scontrol show job: give one job id");
            add(&a, "show"), add(&a, argv[3]);
            return cmd_show(a.n, a.v);
        }
        if (!strcmp(obj, "node") || !strcmp(obj, "nodes")) {
            add(&a, "nodes");
            for (int k = 3; k < argc; k++)
                add(&a, argv[k]);
            return cmd_nodes(a.n, a.v);
        }
        if (!strcmp(obj, "hostnames") || !strcmp(obj, "hostname")) {
            add(&a, "hostnames");
            for (int k = 3; k < argc; k++)
                add(&a, argv[k]);
            return cmd_hostnames(a.n, a.v);
        }
        return cmd_fail("scontrol show %s is not supported (job, node, hostnames)", obj);
    }
    if (!strcmp(what, "hold") || !strcmp(what, "release") || !strcmp(what, "uhold") ||
        !strcmp(what, "requeue")) {
        add(&a, !strcmp(what, "release") || !strcmp(what, "requeue") ? what : "hold");
        for (int k = 2; k < argc; k++) { /* "12,13" or "12 13" */
            char *save = NULL;
            for (char *t = strtok_r(argv[k], ",", &save); t; t = strtok_r(NULL, ",", &save))
                add(&a, t);
        }
        if (a.n < 2)
            return cmd_fail("scontrol %s: give job ids", what);
        return !strcmp(what, "release")   ? cmd_release(a.n, a.v)
               : !strcmp(what, "requeue") ? cmd_requeue(a.n, a.v)
                                          : cmd_hold(a.n, a.v);
    }
    if (!strcmp(what, "update"))
        return scontrol_update(argc, argv);
    return cmd_fail("scontrol %s is not supported (show job, show node, show hostnames, hold, "
                    "release, requeue, update: docs/slurm-users.md)",
                    *what ? what : "without a command");
}

/* sinfo: the nodes */
static int sinfo(int argc, char **argv)
{
    argv_b a = {0};
    add(&a, "nodes");
    for (int k = 1; k < argc; k++) {
        const char *w = argv[k], *v;
        if (!strcmp(w, "-N") || !strcmp(w, "--Node") || !strcmp(w, "-l") || !strcmp(w, "--long"))
            continue; /* Ductile lists nodes one a line, with their states, anyway */
        if (is_opt(w, "--nodes", 'n') && (v = value_of(argc, argv, &k, "--nodes", 'n')))
            add(&a, v);
        else if (!strcmp(w, "--help") || !strcmp(w, "-h"))
            add(&a, "--help");
        else
            return cmd_fail("sinfo: %s is not supported (Ductile's sinfo takes -n NODES, -N, "
                            "-l: docs/slurm-users.md)", w);
    }
    return cmd_nodes(a.n, a.v);
}

/* sacct [-j IDS] [-u U] [-X]: finished jobs */
static int sacct(int argc, char **argv)
{
    argv_b a = {0};
    add(&a, "history");
    add(&a, "--running"); /* as sacct: jobs that have not ended too, */
    add(&a, "--sort"), add(&a, "JobIDRaw"); /* in the order of their ids */
    bool steps = true;
    for (int k = 1; k < argc; k++) {
        const char *w = argv[k], *v;
        if (!strcmp(w, "-X") || !strcmp(w, "--allocations"))
            steps = false; /* the jobs alone, not their steps */
        else if (is_opt(w, "--jobs", 'j') && (v = value_of(argc, argv, &k, "--jobs", 'j'))) {
            char *save = NULL, *list = (char *)v; /* "12,13": ids (argv's own words) */
            for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
                add(&a, t);
        } else if (is_opt(w, "--user", 'u') && (v = value_of(argc, argv, &k, "--user", 'u'))) {
            add(&a, "-u"), add(&a, v);
        } else if (is_opt(w, "--format", 'o') && (v = value_of(argc, argv, &k, "--format", 'o'))) {
            add(&a, "--format"), add(&a, v);
        } else if (!strcmp(w, "-P") || !strcmp(w, "--parsable2") || !strcmp(w, "-p") ||
                   !strcmp(w, "--parsable")) {
            add(&a, "--parsable");
        } else if (!strcmp(w, "-n") || !strcmp(w, "--noheader")) {
            add(&a, "--noheader");
        } else if (is_opt(w, "--starttime", 'S') &&
                   (v = value_of(argc, argv, &k, "--starttime", 'S'))) {
            add(&a, "--since"), add(&a, v);
        } else if (is_opt(w, "--endtime", 'E') && (v = value_of(argc, argv, &k, "--endtime", 'E'))) {
            add(&a, "--until"), add(&a, v);
        } else if (is_opt(w, "--state", 's') && (v = value_of(argc, argv, &k, "--state", 's'))) {
            add(&a, "-t"), add(&a, v);
        } else if (!strcmp(w, "--help") || !strcmp(w, "-h")) {
            add(&a, "--help");
        } else {
            return cmd_fail("sacct: %s is not supported (Ductile's sacct takes -j, -u, -X, "
                            "--format/-o, -P, -n, -S, -E, -s: docs/slurm-users.md)", w);
        }
    }
    if (steps)
        add(&a, "--steps");
    return cmd_history(a.n, a.v);
}

/* srun inside a job: ductile run (one task per node of the job, or -N of them) */
static int srun(int argc, char **argv)
{
    argv_b a = {0};
    add(&a, "run");
    int k = 1;
    for (; k < argc && argv[k][0] == '-'; k++) {
        const char *w = argv[k], *v;
        if (is_opt(w, "--nodes", 'N') && (v = value_of(argc, argv, &k, "--nodes", 'N')))
            add(&a, "-N"), add(&a, v);
        else if (!strcmp(w, "-l") || !strcmp(w, "--label"))
            add(&a, "--label");
        else if (is_opt(w, "--time", 't') && (v = value_of(argc, argv, &k, "--time", 't')))
            add(&a, "-t"), add(&a, v); /* outside a job: its own allocation's */
        else if (is_opt(w, "--job-name", 'J') &&
                 (v = value_of(argc, argv, &k, "--job-name", 'J')))
            add(&a, "-J"), add(&a, v);
        else if (!strcmp(w, "--"))
            break;
        else
            return cmd_fail("srun: %s is not supported (Ductile's srun runs one task on each "
                            "node of the job: -N, -l, and outside a job -t, -J; "
                            "docs/slurm-users.md)", w);
    }
    if (k < argc && !strcmp(argv[k], "--"))
        k++;
    if (k >= argc)
        return cmd_fail("srun: no command given");
    for (; k < argc; k++)
        add(&a, argv[k]);
    return cmd_run(a.n, a.v);
}

static int sbatch(int argc, char **argv)
{
    cmd_submit_banner = "Submitted batch job";
    argv[0] = "submit";
    return cmd_submit(argc, argv);
}

/* sprio: ductile priority; sshare: ductile account list (their options are not taken) */
static int sprio(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--help"))
        return cmd_fail("sprio: %s is not supported (Ductile's sprio lists every waiting job: "
                        "docs/accounts.md)", argv[1]);
    argv[0] = "priority";
    return cmd_priority(argc, argv);
}

static int sshare(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--help"))
        return cmd_fail("sshare: %s is not supported (Ductile's sshare lists every account and "
                        "user: docs/accounts.md)", argv[1]);
    char *a[] = {"account", argc > 1 ? "--help" : "list", NULL};
    return cmd_account(2, a);
}

static int salloc(int argc, char **argv)
{
    argv[0] = "alloc"; /* sbatch's options, then the command */
    return cmd_alloc(argc, argv);
}

int slurm_compat(const char *prog, int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {{"sbatch", sbatch}, {"squeue", squeue}, {"scancel", scancel},
                {"scontrol", scontrol}, {"sinfo", sinfo}, {"sacct", sacct},
                {"srun", srun}, {"salloc", salloc}, {"sprio", sprio}, {"sshare", sshare}};
    for (size_t k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
        if (strcmp(prog, cmds[k].name))
            continue;
        int rc = cmds[k].fn(argc, argv);
        /* Slurm's commands fail with 1 whatever the kind (ductile's own names say the
         * kind: 20 denied, 21 not found...); srun and salloc pass on the job's status */
        if (rc > 1 && cmds[k].fn != srun && cmds[k].fn != salloc)
            rc = 1;
        return rc;
    }
    return -1;
}
