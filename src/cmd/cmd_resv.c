/* ductile reservation create|list|delete: nodes set apart for a time (docs/reservations.md). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "strparse.h"
#include "util.h"

static void usage(void)
{
    printf("usage: ductile reservation create --start TIME --duration D (--nodes N | --nodelist L)\n"
           "                                  (--users U[,U...] | --maintenance) [--name NAME]\n"
           "       ductile reservation list [--json]\n"
           "       ductile reservation delete NAME\n"
           "  create, delete (operators): N nodes (the scheduler picks free ones) or those of L,\n"
           "  from TIME (now, now+1hour, 14:00, 2026-12-01T08:00) for D (90m, 2h, 1-0, as\n"
           "  --time). Jobs of other users keep off them from TIME on, by their time limits\n"
           "  (a job without one does not start on them); the users submit with --reservation\n"
           "  NAME. --maintenance: no job runs on them.\n");
}

static int list(const char *conf, bool json)
{
    json_t *rep = cu_request(conf, json_pack("{s:s}", "type", "reservation_list"));
    if (!rep)
        return 1;
    json_t *rs = json_object_get(rep, "reservations");
    if (json) {
        cu_print_json(rs);
        json_decref(rep);
        return 0;
    }
    size_t n = json_array_size(rs), k;
    if (!n) {
        printf("No reservations.\n");
        json_decref(rep);
        return 0;
    }
    static const char *hdr[] = {"NAME", "START", "END", "NODELIST", "USERS", "BY"};
    char ***rows = calloc(n, sizeof(char **));
    json_t *x;
    json_array_foreach(rs, k, x)
    {
        char a[40], b[40];
        cu_fmt_time(cu_num(x, "start"), a, sizeof(a));
        cu_fmt_time(cu_num(x, "end"), b, sizeof(b));
        rows[k] = calloc(6, sizeof(char *));
        rows[k][0] = cu_sprintf("%s", cu_str(x, "name"));
        rows[k][1] = cu_sprintf("%s", a);
        rows[k][2] = cu_sprintf("%s", b);
        rows[k][3] = cu_sprintf("%s", cu_str(x, "nodelist"));
        rows[k][4] = json_is_true(json_object_get(x, "maintenance"))
                         ? cu_sprintf("(maintenance)")
                         : cu_sprintf("%s", cu_str(x, "users"));
        rows[k][5] = cu_sprintf("%s", cu_str(x, "by"));
    }
    cu_table(hdr, rows, (int)n, 6);
    cu_free_rows(rows, (int)n, 6);
    json_decref(rep);
    return 0;
}

int cmd_reservation(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage();
        return argc < 2;
    }
    const char *sub = argv[1];
    bool create = !strcmp(sub, "create"), lst = !strcmp(sub, "list"), del = !strcmp(sub, "delete");
    if (!create && !lst && !del)
        return cmd_fail("reservation: '%s' is not create, list or delete (try --help)", sub);
    static const struct option lopts[] = {{"start", required_argument, 0, 's'},
                                          {"duration", required_argument, 0, 'd'},
                                          {"nodes", required_argument, 0, 'N'},
                                          {"nodelist", required_argument, 0, 'w'},
                                          {"users", required_argument, 0, 'u'},
                                          {"maintenance", no_argument, 0, 'm'},
                                          {"name", required_argument, 0, 'n'},
                                          {"json", no_argument, 0, 'j'},
                                          {"conf", required_argument, 0, 'c'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    const char *conf = NULL, *nodelist = NULL, *users = NULL, *name = NULL;
    double start = 0, duration = -1;
    long nodes = 0;
    bool maint = false, json = false;
    int o;
    opterr = 0;
    optind = 2;
    while ((o = getopt_long(argc, argv, ":h", lopts, NULL)) != -1) {
        switch (o) {
        case 's':
            if (strcmp(optarg, "now") && cmd_parse_begin(optarg, &start) < 0)
                return cmd_fail("reservation: --start: '%s' is not a time (now, now+1hour, HH:MM, "
                                "YYYY-MM-DD[THH:MM])", optarg);
            break;
        case 'd':
            if (cu_parse_limit(optarg, &duration) < 0 || !(duration > 0))
                return cmd_fail("reservation: --duration: '%s' is not a duration (minutes, MM:SS, "
                                "HH:MM:SS, D-HH[:MM[:SS]], or 90s, 30m, 2h, 1d; a reservation "
                                "ends)", optarg);
            break;
        case 'N':
            if (strparse_long(optarg, 1, 1L << 24, &nodes) < 0)
                return cmd_fail("reservation: --nodes: '%s' is not a node count", optarg);
            break;
        case 'w': nodelist = optarg; break;
        case 'u': users = optarg; break;
        case 'm': maint = true; break;
        case 'n': name = optarg; break;
        case 'j': json = true; break;
        case 'c': conf = optarg; break;
        case 'h': usage(); return 0;
        case ':': return cmd_fail("reservation: %s needs a value", argv[optind - 1]);
        default: return cmd_fail("reservation: bad option '%s' (try --help)", argv[optind - 1]);
        }
    }
    if (lst)
        return optind < argc ? cmd_fail("reservation list: unexpected '%s'", argv[optind])
                             : list(conf, json);
    json_t *req;
    if (del) {
        if (optind + 1 != argc)
            return cmd_fail("reservation delete: which one? (ductile reservation delete NAME)");
        req = json_pack("{s:s,s:s}", "type", "reservation_delete", "name", argv[optind]);
    } else {
        if (optind < argc)
            return cmd_fail("reservation create: unexpected '%s' (its name goes with --name)",
                            argv[optind]);
        if (duration < 0)
            return cmd_fail("reservation create: how long? give --duration (2h, 1-0, 90m)");
        if (!nodes == !nodelist)
            return cmd_fail("reservation create: give --nodes N or --nodelist L");
        if (maint == !!users)
            return cmd_fail("reservation create: give --users (whose it is) or --maintenance "
                            "(no job runs on it), one of them");
        req = json_pack("{s:s,s:f,s:f}", "type", "reservation_create", "start", start,
                        "duration", duration);
        if (nodes)
            json_object_set_new(req, "nodes", json_integer(nodes));
        if (nodelist)
            json_object_set_new(req, "nodelist", json_string(nodelist));
        if (users)
            json_object_set_new(req, "users", json_string(users));
        if (maint)
            json_object_set_new(req, "maintenance", json_true());
        if (name)
            json_object_set_new(req, "name", json_string(name));
    }
    json_t *rep = cu_request(conf, req);
    if (!rep)
        return 1;
    if (del) {
        printf("Reservation %s deleted\n", argv[optind]);
    } else {
        char a[40], b[40];
        cu_fmt_time(cu_num(rep, "start"), a, sizeof(a));
        cu_fmt_time(cu_num(rep, "end"), b, sizeof(b));
        printf("Reservation %s: %s from %s to %s\n", cu_str(rep, "name"), cu_str(rep, "nodelist"),
               a, b);
    }
    json_decref(rep);
    return 0;
}
