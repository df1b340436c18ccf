/* ductile account add|modify|list (operators manage the account tree, as sacctmgr;
 * list shows it with its fair share, as sshare) and ductile priority (the waiting
 * jobs' priorities and their factors, as sprio). docs/accounts.md. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "strparse.h"
#include "util.h"

static void usage(void)
{
    printf("usage: ductile account add NAME [--parent ACCOUNT] [--shares N] [--description TEXT]\n"
           "                           [--add-user USER[,USER...]] [--default-for USER[,...]]\n"
           "                           [LIMITS]\n"
           "       ductile account modify NAME [the same] [--remove-user USER[,USER...]]\n"
           "       ductile account user USER LIMITS\n"
           "       ductile account list [--json]\n"
           "  LIMITS (0: none): --max-running N (jobs running at once), --max-nodes N (nodes\n"
           "  held at once), --max-node-hours H (used, decayed as fair share counts it, plus\n"
           "  what the running jobs' time limits allow them), --max-submit N (jobs queued or\n"
           "  running). An account's count its sub-accounts' jobs; a user's all their jobs.\n"
           "  add, modify (operators): an account under ACCOUNT (root: the top), with N\n"
           "  shares of its parent's (1 by default); its members submit with --account\n"
           "  NAME. A member's first account is its default; --default-for makes this one\n"
           "  the default of those users (and members).\n"
           "  list: the tree, each account's and user's share, usage (node-seconds, decayed)\n"
           "  and fair-share factor (1: used nothing; 0.5: used its share; towards 0: more)\n");
}

/* "a,b,c" as a JSON array of names. */
static json_t *names(const char *list)
{
    json_t *a = json_array();
    char *dup = strdup(list), *save = NULL;
    for (char *p = dup ? strtok_r(dup, ",", &save) : NULL; p; p = strtok_r(NULL, ",", &save))
        if (*p)
            json_array_append_new(a, json_string(p));
    free(dup);
    return a;
}

/* A figure of the reply; "-" where the controller keeps it from this user (hidden: the
 * reply says PrivateData hides something). */
static char *figure(const json_t *o, const char *key, const char *fmt, bool hidden)
{
    const json_t *v = json_object_get(o, key);
    return !json_is_number(v) && hidden ? cu_sprintf("-") : cu_sprintf(fmt, cu_num(o, key));
}

/* What PrivateData left out of a reply, said once under it. */
static void private_note(const json_t *rep)
{
    const char *p = cu_str(rep, "private");
    bool usage = strstr(p, "usage") != NULL, accounts = strstr(p, "accounts") != NULL;
    if (usage || accounts)
        printf("(not shown, PrivateData = %s: %s%s%s)\n", p,
               usage ? "other users' usage and priority" : "", usage && accounts ? "; " : "",
               accounts ? "the accounts you are not a member of, other users' limits" : "");
}

/* "running=2,nodes=8,node-hours=100,submit=50", or "-" without any */
static char *limits_text(const json_t *l)
{
    char buf[160] = "";
    size_t pos = 0;
    static const char *const key[] = {"max_running", "max_nodes", "max_node_hours", "max_submit"};
    static const char *const word[] = {"running", "nodes", "node-hours", "submit"};
    for (int k = 0; k < 4; k++) {
        double v = cu_num(l, key[k]);
        if (v > 0)
            pos += (size_t)snprintf(buf + pos, sizeof(buf) - pos, "%s%s=%g", pos ? "," : "",
                                    word[k], v);
    }
    return cu_sprintf("%s", pos ? buf : "-");
}

static int list(const char *conf, bool json)
{
    json_t *rep = cu_request(conf, json_pack("{s:s}", "type", "account_list"));
    if (!rep)
        return 1;
    if (json) {
        cu_print_json(rep);
        json_decref(rep);
        return 0;
    }
    json_t *accts = json_object_get(rep, "accounts"), *assoc = json_object_get(rep, "associations");
    size_t na = json_array_size(accts), nu = json_array_size(assoc), k;
    json_t *x;
    bool hidden = *cu_str(rep, "private");
    if (na) {
        static const char *hdr[] = {"ACCOUNT", "PARENT", "SHARES", "NORM_SHARES", "USAGE_NODE_S",
                                    "FAIRSHARE", "USERS", "LIMITS"};
        char ***rows = calloc(na, sizeof(char **));
        json_array_foreach(accts, k, x)
        {
            rows[k] = calloc(8, sizeof(char *));
            rows[k][0] = cu_sprintf("%s", cu_str(x, "name"));
            rows[k][1] = cu_sprintf("%s", cu_str(x, "parent"));
            rows[k][2] = cu_sprintf("%g", cu_num(x, "shares"));
            rows[k][3] = cu_sprintf("%.3f", cu_num(x, "norm_shares"));
            rows[k][4] = figure(x, "usage", "%.0f", hidden);
            rows[k][5] = figure(x, "fairshare", "%.3f", hidden);
            char users[512] = "";
            size_t q, pos = 0;
            json_t *u;
            json_array_foreach(json_object_get(x, "users"), q, u)
            {
                if (pos + 80 < sizeof(users))
                    pos += (size_t)snprintf(users + pos, sizeof(users) - pos, "%s%s%s",
                                            q ? "," : "", cu_str(u, "user"),
                                            json_is_true(json_object_get(u, "default")) ? "*" : "");
            }
            rows[k][6] = cu_sprintf("%s", *users ? users : "-");
            rows[k][7] = limits_text(json_object_get(x, "limits"));
        }
        cu_table(hdr, rows, (int)na, 8);
        cu_free_rows(rows, (int)na, 8);
        printf("(* the user's default account)\n");
    } else if (strstr(cu_str(rep, "private"), "accounts")) {
        printf("No account of yours.\n");
    } else {
        printf("No accounts: jobs run under none, and fair share is between users.\n");
    }
    if (nu) {
        printf("\n");
        static const char *hdr[] = {"ACCOUNT", "USER", "NORM_SHARES", "USAGE_NODE_S", "EFF_USAGE",
                                    "FAIRSHARE"};
        char ***rows = calloc(nu, sizeof(char **));
        json_array_foreach(assoc, k, x)
        {
            rows[k] = calloc(6, sizeof(char *));
            rows[k][0] = cu_sprintf("%s", *cu_str(x, "account") ? cu_str(x, "account") : "-");
            rows[k][1] = cu_sprintf("%s", cu_str(x, "user"));
            rows[k][2] = cu_sprintf("%.3f", cu_num(x, "norm_shares"));
            rows[k][3] = figure(x, "usage", "%.0f", hidden);
            rows[k][4] = cu_sprintf("%.3f", cu_num(x, "eff_usage"));
            rows[k][5] = cu_sprintf("%.3f", cu_num(x, "fairshare"));
        }
        cu_table(hdr, rows, (int)nu, 6);
        cu_free_rows(rows, (int)nu, 6);
    }
    json_t *ul = json_object_get(rep, "user_limits");
    size_t nl = json_array_size(ul);
    if (nl) {
        printf("\n");
        static const char *hdr[] = {"USER", "LIMITS"};
        char ***rows = calloc(nl, sizeof(char **));
        json_array_foreach(ul, k, x)
        {
            rows[k] = calloc(2, sizeof(char *));
            rows[k][0] = cu_sprintf("%s", cu_str(x, "user"));
            rows[k][1] = limits_text(json_object_get(x, "limits"));
        }
        cu_table(hdr, rows, (int)nl, 2);
        cu_free_rows(rows, (int)nl, 2);
    }
    private_note(rep);
    json_decref(rep);
    return 0;
}

/* The request with the limits given (lim[k] >= 0); says done in the words of fmt. */
static int send(const char *conf, json_t *req, const double *lim, const char *fmt,
                const char *name)
{
    static const char *const limname[4] = {"max_running", "max_nodes", "max_node_hours",
                                           "max_submit"};
    for (int k = 0; k < 4; k++)
        if (lim[k] >= 0)
            json_object_set_new(req, limname[k],
                                k == 2 ? json_real(lim[k]) : json_integer((json_int_t)lim[k]));
    json_t *rep = cu_request(conf, req);
    if (!rep)
        return 1;
    printf(fmt, name);
    json_decref(rep);
    return 0;
}

int cmd_account(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage();
        return argc < 2;
    }
    const char *sub = argv[1];
    bool add = !strcmp(sub, "add"), modify = !strcmp(sub, "modify"), lst = !strcmp(sub, "list"),
         user = !strcmp(sub, "user");
    if (!add && !modify && !lst && !user)
        return cmd_fail("account: '%s' is not add, modify, user or list (try --help)", sub);
    static const struct option lopts[] = {{"parent", required_argument, 0, 'p'},
                                          {"shares", required_argument, 0, 's'},
                                          {"description", required_argument, 0, 'd'},
                                          {"add-user", required_argument, 0, 'u'},
                                          {"remove-user", required_argument, 0, 'r'},
                                          {"default-for", required_argument, 0, 'f'},
                                          {"max-running", required_argument, 0, 'R'},
                                          {"max-nodes", required_argument, 0, 'N'},
                                          {"max-node-hours", required_argument, 0, 'H'},
                                          {"max-submit", required_argument, 0, 'S'},
                                          {"json", no_argument, 0, 'j'},
                                          {"conf", required_argument, 0, 'c'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    const char *conf = NULL, *parent = NULL, *desc = NULL, *addu = NULL, *rem = NULL,
               *deff = NULL;
    long shares = -1;
    double lim[4] = {-1, -1, -1, -1}; /* running, nodes, node-hours, submit */
    bool json = false;
    int o;
    opterr = 0;
    optind = 2;
    while ((o = getopt_long(argc, argv, ":h", lopts, NULL)) != -1) {
        switch (o) {
        case 'p': parent = optarg; break;
        case 's':
            if (strparse_long(optarg, 0, 1000000000, &shares) < 0)
                return cmd_fail("account: --shares: '%s' is not a whole number from 0 to "
                                "1000000000", optarg);
            break;
        case 'R':
        case 'N':
        case 'H':
        case 'S': {
            /* the controller's ranges, said here in the option's words */
            static const char *const opt[4] = {"--max-running", "--max-nodes",
                                               "--max-node-hours", "--max-submit"};
            static const long most[4] = {1000000000, 1L << 24, 0, 1000000000};
            int k = o == 'R' ? 0 : o == 'N' ? 1 : o == 'H' ? 2 : 3;
            long v;
            if (k == 2 ? strparse_decimal(optarg, 1e12, &lim[k]) < 0
                       : strparse_long(optarg, 0, most[k], &v) < 0)
                return k == 2 ? cmd_fail("account: %s: '%s' is not a number of node-hours from "
                                         "0 (no limit) to 1000000000000", opt[k], optarg)
                              : cmd_fail("account: %s: '%s' is not a whole number from 0 (no "
                                         "limit) to %ld", opt[k], optarg, most[k]);
            if (k != 2)
                lim[k] = (double)v;
            break;
        }
        case 'd': desc = optarg; break;
        case 'u': addu = optarg; break;
        case 'r': rem = optarg; break;
        case 'f': deff = optarg; break;
        case 'j': json = true; break;
        case 'c': conf = optarg; break;
        case 'h': usage(); return 0;
        case ':': return cmd_fail("account: %s needs a value", argv[optind - 1]);
        default: return cmd_fail("account: bad option '%s' (try --help)", argv[optind - 1]);
        }
    }
    if (lst) {
        if (optind < argc)
            return cmd_fail("account list: unexpected argument '%s'", argv[optind]);
        return list(conf, json);
    }
    bool any_lim = lim[0] >= 0 || lim[1] >= 0 || lim[2] >= 0 || lim[3] >= 0;
    if (optind >= argc)
        return cmd_fail("account %s: which %s? (ductile account %s %s ...)", sub,
                        user ? "user" : "account", sub, user ? "USER" : "NAME");
    if (optind + 1 < argc)
        return cmd_fail("account %s: one %s at a time ('%s' is extra)", sub,
                        user ? "user" : "account", argv[optind + 1]);
    if (user) {
        if (parent || desc || shares >= 0 || addu || rem || deff)
            return cmd_fail("account user: only limits (--max-running, --max-nodes, "
                            "--max-node-hours, --max-submit)");
        if (!any_lim)
            return cmd_fail("account user: give a limit (--max-running, --max-nodes, "
                            "--max-node-hours, --max-submit; 0: none)");
        json_t *req = json_pack("{s:s,s:s}", "type", "account_user", "user", argv[optind]);
        return send(conf, req, lim, "Limits of user %s set\n", argv[optind]);
    }
    if (rem && add)
        return cmd_fail("account add: --remove-user is for modify");
    if (modify && !parent && !desc && shares < 0 && !addu && !rem && !deff && !any_lim)
        return cmd_fail("account modify: nothing to change: give --parent, --shares, "
                        "--description, --add-user, --remove-user, --default-for or a limit");
    json_t *req = json_pack("{s:s,s:s}", "type", add ? "account_add" : "account_modify", "name",
                            argv[optind]);
    if (parent)
        json_object_set_new(req, "parent", json_string(parent));
    if (desc)
        json_object_set_new(req, "description", json_string(desc));
    if (shares >= 0)
        json_object_set_new(req, "shares", json_integer(shares));
    if (addu)
        json_object_set_new(req, "add_users", names(addu));
    if (rem)
        json_object_set_new(req, "remove_users", names(rem));
    if (deff)
        json_object_set_new(req, "default_for", names(deff));
    return send(conf, req, lim, add ? "Account %s added\n" : "Account %s modified\n",
                argv[optind]);
}

/* `ductile NAME [--json]`: the request of that type; its reply (NULL once an error is
 * printed, or after --help: *done set), and whether --json was asked for. */
static json_t *list_request(int argc, char **argv, const char *name, const char *help,
                            bool *json, bool *done)
{
    static const struct option lopts[] = {{"json", no_argument, 0, 'j'},
                                          {"conf", required_argument, 0, 'c'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    const char *conf = NULL;
    int o;
    *json = *done = false;
    opterr = 0;
    optind = 1;
    while ((o = getopt_long(argc, argv, ":h", lopts, NULL)) != -1) {
        switch (o) {
        case 'j': *json = true; break;
        case 'c': conf = optarg; break;
        case 'h':
            printf("usage: ductile %s [--json]\n%s", name, help);
            *done = true;
            return NULL;
        case ':': cmd_fail("%s: %s needs a value", name, argv[optind - 1]); return NULL;
        default: cmd_fail("%s: bad option '%s' (try --help)", name, argv[optind - 1]); return NULL;
        }
    }
    if (optind < argc) {
        cmd_fail("%s: unexpected argument '%s'", name, argv[optind]);
        return NULL;
    }
    return cu_request(conf, json_pack("{s:s}", "type", name));
}

int cmd_priority(int argc, char **argv)
{
    bool json, done;
    json_t *rep = list_request(argc, argv, "priority",
                               "  the waiting jobs in the order they start (a partition's tier first,\n"
                               "  then the priority), each factor as it counts (its weight x its value,\n"
                               "  0 to 1): AGE (time waited), FAIRSHARE (its account's and user's past\n"
                               "  use against their shares), JOBSIZE, PARTITION, less NICE, as of the\n"
                               "  last recalculation (PriorityCalcPeriod). The weights are\n"
                               "  PriorityWeight* in ductile.conf.\n",
                               &json, &done);
    if (!rep)
        return !done;
    json_t *jobs = json_object_get(rep, "jobs");
    if (json) {
        cu_print_json(jobs);
        json_decref(rep);
        return 0;
    }
    size_t n = json_array_size(jobs), k;
    json_t **v = calloc(n + 1, sizeof(*v));
    json_t *x;
    json_array_foreach(jobs, k, x) v[k] = x; /* in the queue's order */
    static const char *hdr[] = {"JOBID", "USER", "ACCOUNT", "PRIORITY", "AGE", "FAIRSHARE",
                                "JOBSIZE", "PARTITION", "NICE"};
    char ***rows = calloc(n + 1, sizeof(char **));
    for (size_t i = 0; i < n; i++) {
        rows[i] = calloc(9, sizeof(char *));
        rows[i][0] = cu_sprintf("%lld", (long long)cu_num(v[i], "id"));
        rows[i][1] = cu_sprintf("%s", cu_str(v[i], "user"));
        rows[i][2] = cu_sprintf("%s", *cu_str(v[i], "account") ? cu_str(v[i], "account") : "-");
        rows[i][3] = figure(v[i], "priority", "%.0f", true);
        rows[i][4] = cu_sprintf("%.0f", cu_num(v[i], "age"));
        rows[i][5] = figure(v[i], "fairshare", "%.0f", true);
        rows[i][6] = cu_sprintf("%.0f", cu_num(v[i], "size"));
        rows[i][7] = cu_sprintf("%.0f", cu_num(v[i], "partition"));
        rows[i][8] = cu_sprintf("%lld", (long long)cu_num(v[i], "nice"));
    }
    cu_table(hdr, rows, (int)n, 9);
    cu_free_rows(rows, (int)n, 9);
    free(v);
    json_t *w = json_object_get(rep, "weights");
    if (!cu_num(w, "age") && !cu_num(w, "fairshare") && !cu_num(w, "size") &&
        !cu_num(w, "partition"))
        printf("(every PriorityWeight* is 0 in ductile.conf: jobs wait in the order they came, "
               "less their nice)\n");
    json_decref(rep);
    return 0;
}

/* ductile partitions update NAME --state STATE (operators; scontrol update
 * PartitionName=NAME State=STATE) */
static int partition_update(int argc, char **argv)
{
    static const struct option lopts[] = {{"state", required_argument, 0, 's'},
                                          {"conf", required_argument, 0, 'c'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    const char *conf = NULL, *state = NULL;
    int o;
    opterr = 0;
    optind = 2;
    while ((o = getopt_long(argc, argv, ":h", lopts, NULL)) != -1) {
        switch (o) {
        case 's': state = optarg; break;
        case 'c': conf = optarg; break;
        case 'h':
            printf("usage: ductile partitions update NAME --state UP|DOWN|DRAIN|INACTIVE\n"
                   "  (operators) DOWN: its jobs wait (PartitionDown); DRAIN: it takes no new\n"
                   "  jobs; INACTIVE: neither; UP again. Kept across restarts, over the State\n"
                   "  of its Partition line in ductile.conf.\n");
            return 0;
        case ':': return cmd_fail("partitions update: %s needs a value", argv[optind - 1]);
        default: return cmd_fail("partitions update: bad option '%s' (try --help)", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cmd_fail("partitions update: which partition? (ductile partitions update NAME "
                        "--state DOWN)");
    if (optind + 1 < argc)
        return cmd_fail("partitions update: one partition at a time ('%s' is extra)",
                        argv[optind + 1]);
    if (!state)
        return cmd_fail("partitions update: --state UP, DOWN, DRAIN or INACTIVE");
    json_t *rep = cu_request(conf, json_pack("{s:s,s:s,s:s}", "type", "partition_update",
                                             "name", argv[optind], "state", state));
    if (!rep)
        return 1;
    printf("Partition %s is %s\n", cu_str(rep, "name"), cu_str(rep, "state"));
    json_decref(rep);
    return 0;
}

/* ductile partitions (sinfo's partition view): each partition's state, nodes and rules. */
int cmd_partitions(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "update"))
        return partition_update(argc, argv);
    bool json, done;
    json_t *rep = list_request(argc, argv, "partitions",
                               "  the partitions (Partition lines of ductile.conf; docs/partitions.md): state,\n"
                               "  nodes, default and maximum time limits, most nodes a job, tier, accounts\n"
                               "  ductile partitions update NAME --state UP|DOWN|DRAIN|INACTIVE (operators)\n",
                               &json, &done);
    if (!rep)
        return !done;
    json_t *parts = json_object_get(rep, "partitions");
    if (json) {
        cu_print_json(parts);
        json_decref(rep);
        return 0;
    }
    size_t n = json_array_size(parts), k;
    if (!n) {
        printf("No partitions: every node is in one queue, %s (Partition lines in ductile.conf "
               "make some).\n", cu_str(rep, "cluster"));
        json_decref(rep);
        return 0;
    }
    static const char *hdr[] = {"PARTITION", "STATE", "NODES", "NODELIST", "DEFAULT_TIME",
                                "MAX_TIME", "MAX_NODES", "TIER", "ACCOUNTS"};
    char ***rows = calloc(n, sizeof(char **));
    json_t *x;
    json_array_foreach(parts, k, x)
    {
        rows[k] = calloc(9, sizeof(char *));
        char dt[32], mt[32];
        strparse_fmt_limit(cu_num(x, "default_time"), dt, sizeof(dt));
        strparse_fmt_limit(cu_num(x, "max_time"), mt, sizeof(mt));
        rows[k][0] = cu_sprintf("%s%s", cu_str(x, "name"),
                                json_is_true(json_object_get(x, "default")) ? "*" : "");
        rows[k][1] = cu_sprintf("%s", cu_str(x, "state"));
        rows[k][2] = cu_sprintf("%lld", (long long)cu_num(x, "nodes"));
        rows[k][3] = cu_sprintf("%s", cu_str(x, "nodelist"));
        rows[k][4] = cu_sprintf("%s", cu_num(x, "default_time") > 0 ? dt : "-");
        rows[k][5] = cu_sprintf("%s", mt);
        rows[k][6] = cu_num(x, "max_nodes") > 0 ? cu_sprintf("%lld", (long long)cu_num(x, "max_nodes"))
                                                : cu_sprintf("UNLIMITED");
        rows[k][7] = cu_sprintf("%lld", (long long)cu_num(x, "tier"));
        char acc[256] = "";
        size_t q, pos = 0;
        json_t *a;
        json_array_foreach(json_object_get(x, "accounts"), q, a)
        {
            if (pos + 70 < sizeof(acc))
                pos += (size_t)snprintf(acc + pos, sizeof(acc) - pos, "%s%s", q ? "," : "",
                                        json_string_value(a));
        }
        rows[k][8] = cu_sprintf("%s", pos ? acc : "ALL");
    }
    cu_table(hdr, rows, (int)n, 9);
    cu_free_rows(rows, (int)n, 9);
    printf("(* the default partition)\n");
    json_decref(rep);
    return 0;
}
