/* ductile power: the power corridor, the cluster's and jobs' draw, the violations and
 * the forecast; `ductile power corridor` changes the corridor (operators). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "strparse.h"
#include "util.h"

enum { O_CONF = 256, O_JSON, O_FORECAST, O_AHEAD, O_SEASON, O_LOWER, O_UPPER, O_AT, O_RESET,
       O_HELP };

static const char *usage =
    "usage: ductile power [--forecast [--ahead N] [--season N]] [--json] [--conf FILE]\n"
    "       ductile power corridor --lower W --upper W|none [--at TIME] [--conf FILE]\n"
    "       ductile power corridor --reset [--conf FILE]\n"
    "  --forecast      forecast the draw N samples ahead (default 6), with its error\n"
    "                  measured on the recorded samples; --season N: Holt-Winters with a\n"
    "                  season of N samples (default: none, Holt's linear trend)\n"
    "  corridor        set the corridor now or --at TIME (now, +30m, a Unix time or\n"
    "                  YYYY-MM-DDTHH:MM[:SS]); --reset goes back to the configuration's\n"
    "                  PowerLower/PowerUpper and PowerSchedule (operators only)\n";

static void corridor_text(const json_t *c, char *buf, size_t len)
{
    const json_t *up = json_object_get(c, "upper");
    if (json_is_number(up))
        snprintf(buf, len, "%.0f-%.0f W", cu_num(c, "lower"), json_number_value(up));
    else if (cu_num(c, "lower") > 0)
        snprintf(buf, len, "at least %.0f W", cu_num(c, "lower"));
    else
        snprintf(buf, len, "none");
}

static void print_corridor(const char *label, const json_t *c)
{
    char cor[64], t[64];
    corridor_text(c, cor, sizeof(cor));
    printf("%-12s %s (%s", label, cor, cu_str(c, "by"));
    if (cu_num(c, "at") > 0) {
        cu_fmt_time(cu_num(c, "at"), t, sizeof(t));
        printf(", %s %s", strcmp(label, "Corridor") ? "at" : "since", t);
    }
    printf(")\n");
}

static void print_forecast(const json_t *f, double every)
{
    const json_t *v = json_object_get(f, "values");
    size_t k;
    json_t *x;
    printf("%-12s next %zu samples, every %g s:", "Forecast", json_array_size(v), every);
    json_array_foreach(v, k, x) printf(" %.0f", json_number_value(x));
    printf(" W\n");
    int season = (int)cu_num(f, "season");
    if (season > 1)
        printf("%-12s Holt-Winters, season %d samples (alpha %.2f, beta %.2f, gamma %.2f)\n",
               "Method", season, cu_num(f, "alpha"), cu_num(f, "beta"), cu_num(f, "gamma"));
    else
        printf("%-12s Holt's linear trend (alpha %.2f, beta %.2f)\n", "Method", cu_num(f, "alpha"),
               cu_num(f, "beta"));
    printf("%-12s over %.0f recorded samples: one ahead MAE %.1f W (%.1f%%), RMSE %.1f W; "
           "%zu ahead MAE %.1f W; the last value as forecast: MAE %.1f W\n",
           "Error", cu_num(f, "scored"), cu_num(f, "mae"), cu_num(f, "mape"), cu_num(f, "rmse"),
           json_array_size(v), cu_num(f, "mae_h"), cu_num(f, "naive_mae"));
}

static int show(const char *conf, bool json, bool forecast, long ahead, long season)
{
    json_t *req = json_pack("{s:s,s:b,s:i,s:i}", "type", "power", "forecast", forecast, "ahead",
                            (int)ahead, "season", (int)season);
    json_t *rep = cu_request(conf, req);
    if (!rep)
        return 1;
    if (json) {
        json_object_del(rep, "ok");
        cu_print_json(rep);
        json_decref(rep);
        return 0;
    }
    char t[64], en[48];
    print_corridor("Corridor", json_object_get(rep, "corridor"));
    size_t k;
    json_t *x;
    json_array_foreach(json_object_get(rep, "pending"), k, x) print_corridor("Next", x);
    int reporting = (int)cu_num(rep, "reporting");
    if (reporting)
        printf("%-12s %.0f W measured (%d of %d nodes reporting, PowerSource %s); predicted "
               "from the jobs' declared power: %.0f-%.0f W\n",
               "Draw", cu_num(rep, "draw"), reporting, (int)cu_num(rep, "nodes"),
               cu_str(rep, "source"), cu_num(rep, "estimate_min"), cu_num(rep, "estimate_max"));
    else
        printf("%-12s no node reports its power yet (PowerSource %s); predicted from the "
               "jobs' declared power: %.0f-%.0f W\n", "Draw", cu_str(rep, "source"),
               cu_num(rep, "estimate_min"), cu_num(rep, "estimate_max"));
    const json_t *un = json_object_get(rep, "unreachable");
    if (un)
        printf("%-12s the corridor cannot be met with the running jobs' sizes and powers: the "
               "closest plan, chosen, is %.0f W outside\n", "Unreachable", cu_num(un, "outside"));
    const json_t *v = json_object_get(rep, "violations");
    cu_fmt_time(cu_num(v, "since"), t, sizeof(t));
    printf("%-12s %.0f since %s: %.0f s outside, %.0f W s; %s now\n", "Violations",
           cu_num(v, "count"), t, cu_num(v, "seconds"), cu_num(v, "watt_seconds"),
           json_is_true(json_object_get(v, "outside")) ? "OUTSIDE" : "inside");
    const json_t *f = json_object_get(rep, "forecast");
    if (f)
        print_forecast(f, cu_num(rep, "interval"));
    else if (forecast)
        printf("%-12s %s\n", "Forecast", cu_str(rep, "forecast_error"));
    const json_t *jobs = json_object_get(rep, "jobs");
    if (json_array_size(jobs)) {
        printf("%-8s %-16s %-10s %5s %8s %12s %-9s %s\n", "JOBID", "NAME", "USER", "NODES",
               "DRAW", "W/NODE", "FROM", "ENERGY");
        json_array_foreach(jobs, k, x)
        {
            char *name = strparse_escape(cu_str(x, "name"));
            char *user = strparse_escape(cu_str(x, "user"));
            char range[40];
            snprintf(range, sizeof(range), "%.0f-%.0f", cu_num(x, "power_min"),
                     cu_num(x, "power_max"));
            cu_fmt_energy(cu_num(x, "energy"), en, sizeof(en));
            printf("%-8lld %-16.16s %-10.10s %5d %6.0f W %12s %-9s %s\n",
                   (long long)cu_num(x, "id"), name ? name : "", user ? user : "",
                   (int)cu_num(x, "nodes"), cu_num(x, "draw"), range, cu_str(x, "power_from"), en);
            free(name);
            free(user);
            const json_t *pl = json_object_get(x, "planned");
            if (pl)
                printf("%-8s measured: planned with %.0f-%.0f W per node\n", "",
                       json_number_value(json_array_get(pl, 0)),
                       json_number_value(json_array_get(pl, 1)));
            const json_t *jf = json_object_get(x, "forecast");
            if (jf) {
                printf("%-8s forecast:", "");
                size_t i;
                json_t *y;
                json_array_foreach(json_object_get(jf, "values"), i, y)
                    printf(" %.0f", json_number_value(y));
                printf(" W (one ahead MAE %.1f W over %.0f samples)\n", cu_num(jf, "mae"),
                       cu_num(jf, "scored"));
            }
        }
    }
    json_decref(rep);
    return 0;
}

static int watts(const char *opt, const char *v, double *out)
{
    if (!strcmp(opt, "upper") && !strcmp(v, "none")) {
        *out = 0;
        return 0;
    }
    if (strparse_decimal(v, CONFIG_WATTS_MAX, out) < 0)
        return cmd_fail("power corridor: --%s: '%s' is not a power in watts (e.g. 1700%s)", opt,
                        v, strcmp(opt, "upper") ? "" : ", or none");
    return 0;
}

static int corridor(int argc, char **argv, const char *conf)
{
    static const struct option lo[] = {
        {"lower", required_argument, 0, O_LOWER}, {"upper", required_argument, 0, O_UPPER},
        {"at", required_argument, 0, O_AT},       {"reset", no_argument, 0, O_RESET},
        {"conf", required_argument, 0, O_CONF},   {"help", no_argument, 0, O_HELP},
        {0, 0, 0, 0}};
    double lower = -1, upper = -1, at = 0;
    bool reset = false;
    int o;
    opterr = 0;
    optind = 1;
    while ((o = getopt_long(argc, argv, ":", lo, NULL)) != -1) {
        switch (o) {
        case O_LOWER:
            if (watts("lower", optarg, &lower))
                return 1;
            break;
        case O_UPPER:
            if (watts("upper", optarg, &upper))
                return 1;
            break;
        case O_AT:
            if (strparse_time(optarg, (double)time(NULL), &at) < 0)
                return cmd_fail("power corridor: --at: '%s' is not a time (now, +30m, a Unix "
                                "time, or YYYY-MM-DDTHH:MM[:SS])", optarg);
            break;
        case O_RESET: reset = true; break;
        case O_CONF: conf = optarg; break;
        case O_HELP: fputs(usage, stdout); return 0;
        case ':': return cmd_fail("power corridor: %s needs a value", argv[optind - 1]);
        default: return cmd_fail("power corridor: bad option '%s' (try --help)", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cmd_fail("power corridor: unexpected argument '%s'", argv[optind]);
    if (reset && (lower >= 0 || upper >= 0 || at > 0))
        return cmd_fail("power corridor: --reset takes no --lower, --upper or --at");
    if (!reset && (lower < 0 || upper < 0))
        return cmd_fail("power corridor: give both --lower W and --upper W (or --upper none), "
                        "or --reset");
    if (!reset && upper > 0 && upper < lower)
        return cmd_fail("power corridor: --upper (%g W) is below --lower (%g W)", upper, lower);
    json_t *req = reset ? json_pack("{s:s,s:b}", "type", "power_corridor", "reset", 1)
                        : json_pack("{s:s,s:f,s:f,s:f}", "type", "power_corridor", "lower", lower,
                                    "upper", upper, "at", at);
    json_t *rep = cu_request(conf, req);
    if (!rep)
        return 1;
    if (at > (double)time(NULL)) {
        char cor[64], t[64];
        json_t *c = json_pack("{s:f,s:o}", "lower", lower, "upper",
                              upper > 0 ? json_real(upper) : json_null());
        corridor_text(c, cor, sizeof(cor));
        json_decref(c);
        cu_fmt_time(at, t, sizeof(t));
        printf("Corridor %s from %s\n", cor, t);
    } else {
        print_corridor("Corridor", json_object_get(rep, "corridor"));
    }
    json_decref(rep);
    return 0;
}

int cmd_power(int argc, char **argv)
{
    const char *conf = NULL;
    bool json = false, forecast = false;
    long ahead = 6, season = 0;
    if (argc > 1 && !strcmp(argv[1], "corridor"))
        return corridor(argc - 1, argv + 1, NULL);
    static const struct option lo[] = {
        {"conf", required_argument, 0, O_CONF},    {"json", no_argument, 0, O_JSON},
        {"forecast", no_argument, 0, O_FORECAST},  {"ahead", required_argument, 0, O_AHEAD},
        {"season", required_argument, 0, O_SEASON}, {"help", no_argument, 0, O_HELP},
        {0, 0, 0, 0}};
    int o;
    opterr = 0;
    optind = 1;
    while ((o = getopt_long(argc, argv, ":", lo, NULL)) != -1) {
        switch (o) {
        case O_CONF: conf = optarg; break;
        case O_JSON: json = true; break;
        case O_FORECAST: forecast = true; break;
        case O_AHEAD:
        case O_SEASON:
            if (strparse_long(optarg, o == O_AHEAD ? 1 : 0, o == O_AHEAD ? 100 : 2048,
                              o == O_AHEAD ? &ahead : &season) < 0)
                return cmd_fail("power: --%s: '%s' is not a number of samples (%s)",
                                o == O_AHEAD ? "ahead" : "season", optarg,
                                o == O_AHEAD ? "1 to 100" : "0 to 2048");
            break;
        case O_HELP: fputs(usage, stdout); return 0;
        case ':': return cmd_fail("power: %s needs a value", argv[optind - 1]);
        default: return cmd_fail("power: bad option '%s' (try --help)", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cmd_fail("power: unexpected argument '%s' (did you mean 'ductile power "
                        "corridor'?)", argv[optind]);
    return show(conf, json, forecast, ahead, season);
}
