/* ductile update JOB: change a live job's time limit, name or (while it waits) node
 * counts, as scontrol update does. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "strparse.h"
#include "util.h"

static void usage(void)
{
    printf("usage: ductile update JOB [-t TIME] [-J NAME] [-N N | -N MIN-MAX] [--nice N] [--json]\n"
           "  -t, --time TIME       a new time limit (as submit takes it). You may lower\n"
           "                        your job's; only an operator raises one (or sets\n"
           "                        UNLIMITED). A running job ends when it passes it.\n"
           "  -J, --job-name NAME   a new name\n"
           "  -N, --nodes N|MIN-MAX a waiting job's size, or the range of a moldable or\n"
           "                        malleable one\n"
           "  --nice N              lowers a waiting job's priority by N (0 or more; only\n"
           "                        an operator gives a negative one, a higher priority)\n");
}

int cmd_update(int argc, char **argv)
{
    static const struct option lopts[] = {{"time", required_argument, 0, 't'},
                                          {"job-name", required_argument, 0, 'J'},
                                          {"nodes", required_argument, 0, 'N'},
                                          {"nice", required_argument, 0, 'n'},
                                          {"json", no_argument, 0, 'j'},
                                          {"conf", required_argument, 0, 'c'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    const char *conf = NULL, *name = NULL;
    double limit = -1;
    long nodes = 0, minn = 0, maxn = 0, nice = 0;
    bool has_nice = false;
    bool json = false;
    int o;
    opterr = 0;
    optind = 1;
    while ((o = getopt_long(argc, argv, ":t:J:N:h", lopts, NULL)) != -1) {
        switch (o) {
        case 't':
            if (cu_parse_limit(optarg, &limit) < 0)
                return cmd_fail("update: --time: '%s' is not a duration (" CU_LIMIT_FORMATS ")",
                                optarg);
            break;
        case 'J':
            if (!*optarg || strparse_has_control(optarg))
                return cmd_fail("update: --job-name: a name must not be empty or hold control "
                                "characters");
            name = optarg;
            break;
        case 'N': {
            const char *dash = strchr(optarg, '-');
            char lo[32];
            if (!dash) {
                if (strparse_long(optarg, 1, 1L << 24, &nodes) < 0)
                    return cmd_fail("update: --nodes: '%s' is not a node count (1 to 16777216)",
                                    optarg);
                break;
            }
            if ((size_t)(dash - optarg) >= sizeof(lo) ||
                (snprintf(lo, sizeof(lo), "%.*s", (int)(dash - optarg), optarg), 0) ||
                strparse_long(lo, 1, 1L << 24, &minn) < 0 ||
                strparse_long(dash + 1, 1, 1L << 24, &maxn) < 0 || minn > maxn)
                return cmd_fail("update: --nodes: '%s' is not a node count or a range MIN-MAX",
                                optarg);
            break;
        }
        case 'n':
            if (strparse_long(optarg, -10000000, 10000000, &nice) < 0)
                return cmd_fail("update: --nice: '%s' is not a whole number from -10000000 to "
                                "10000000", optarg);
            has_nice = true;
            break;
        case 'j': json = true; break;
        case 'c': conf = optarg; break;
        case 'h': usage(); return 0;
        case ':': return cmd_fail("update: %s needs a value", argv[optind - 1]);
        default: return cmd_fail("update: bad option '%s' (try --help)", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cmd_fail("update: which job? (ductile update JOB [-t TIME] [-J NAME] [-N N])");
    if (optind + 1 < argc)
        return cmd_fail("update: one job at a time ('%s' is extra)", argv[optind + 1]);
    if (limit < 0 && !name && !nodes && !minn && !has_nice)
        return cmd_fail("update: nothing to change: give --time, --job-name, --nodes or --nice");
    json_t *ref = cu_job_ref(argv[optind]);
    if (!ref)
        return 1;
    json_t *req = json_pack("{s:s,s:o}", "type", "update", "job", ref);
    if (limit >= 0)
        json_object_set_new(req, "time", json_real(limit));
    if (name)
        json_object_set_new(req, "name", json_string(name));
    if (nodes)
        json_object_set_new(req, "nodes", json_integer(nodes));
    if (has_nice)
        json_object_set_new(req, "nice", json_integer(nice));
    if (minn) {
        json_object_set_new(req, "min_nodes", json_integer(minn));
        json_object_set_new(req, "max_nodes", json_integer(maxn));
    }
    json_t *rep = cu_request(conf, req);
    if (!rep)
        return 1;
    const json_t *job = json_object_get(rep, "job");
    if (json) {
        cu_print_json(job);
    } else {
        char tl[32] = "UNLIMITED";
        double t = cu_num(job, "time_limit");
        if (t > 0)
            cu_fmt_duration(t, tl, sizeof(tl));
        long long el = (long long)json_integer_value(json_object_get(rep, "elements"));
        if (el > 1)
            printf("Array %s updated (%lld elements); its first: ", argv[optind], el);
        long long nv = (long long)json_integer_value(json_object_get(job, "nice"));
        printf("Job %s updated: name %s, %lld node%s, time limit %s", argv[optind],
               cu_str(job, "name"), (long long)json_integer_value(json_object_get(job, "nodes")),
               json_integer_value(json_object_get(job, "nodes")) == 1 ? "" : "s", tl);
        if (nv)
            printf(", nice %lld", nv);
        printf("\n");
    }
    json_decref(rep);
    return 0;
}
