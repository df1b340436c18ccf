/* The node's power readings (src/noded/nodepower.c): RAPL packages found and read over
 * an interval, wrapping counters, the model, a job's CPU time from its cgroups; and
 * the configuration keys of power (src/common/config.c) with their errors. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#include "common/config.h"
#include "common/strparse.h"
#include "noded/nodepower.h"

/* Two packages (their parts, intel-rapl:0:0, are inside them and not added again); 30 J
 * and 20 J over 2 s is 25 W; the next reading wraps the first counter at its range. */
static void rapl_packages_and_wrap(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    tu_put(dir, "intel-rapl:0/energy_uj", "1000000\n");
    tu_put(dir, "intel-rapl:0/max_energy_range_uj", "100000000\n");
    tu_put(dir, "intel-rapl:0:0/energy_uj", "500000\n");
    tu_put(dir, "intel-rapl:1/energy_uj", "0\n");
    tu_put(dir, "intel-rapl:1/max_energy_range_uj", "100000000\n");
    nodepower_t p;
    assert_int_equal(nodepower_init(&p, CONFIG_POWER_RAPL, dir), 0);
    assert_int_equal(p.nzones, 2);
    assert_int_equal(p.source, CONFIG_POWER_RAPL);
    double w = -1;
    assert_int_equal(nodepower_rapl(&p, 10, &w), -EAGAIN);
    tu_put(dir, "intel-rapl:0/energy_uj", "31000000\n");
    tu_put(dir, "intel-rapl:1/energy_uj", "20000000\n");
    tu_put(dir, "intel-rapl:0:0/energy_uj", "99000000\n");
    assert_int_equal(nodepower_rapl(&p, 12, &w), 0);
    assert_true(fabs(w - 25) < 1e-9);
    /* package 0 wraps: 31 J -> range 100 J -> 1 J is 70 J; package 1 adds 10 J */
    tu_put(dir, "intel-rapl:0/energy_uj", "1000000\n");
    tu_put(dir, "intel-rapl:1/energy_uj", "30000000\n");
    assert_int_equal(nodepower_rapl(&p, 13, &w), 0);
    assert_true(fabs(w - 80) < 1e-9);
    /* a counter that cannot be read: an error, then a fresh start */
    char path[512];
    snprintf(path, sizeof(path), "%s/intel-rapl:1/energy_uj", dir);
    unlink(path);
    assert_int_equal(nodepower_rapl(&p, 14, &w), -EIO);
    assert_non_null(strstr(p.why, "intel-rapl:1"));
    tu_rmtree(dir);
    free(dir);
}

/* rapl without counters is an error naming the directory; auto falls back to the
 * model and says why; model and none read nothing. */
static void rapl_missing(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    nodepower_t p;
    assert_int_equal(nodepower_init(&p, CONFIG_POWER_RAPL, dir), -ENOENT);
    assert_non_null(strstr(p.why, "no RAPL package"));
    assert_int_equal(nodepower_init(&p, CONFIG_POWER_AUTO, "/nonexistent/powercap"), 0);
    assert_int_equal(p.source, CONFIG_POWER_MODEL);
    assert_non_null(strstr(p.why, "/nonexistent/powercap"));
    assert_int_equal(nodepower_init(&p, CONFIG_POWER_MODEL, dir), 0);
    assert_int_equal(p.nzones, 0);
    assert_string_equal(p.why, "");
    tu_rmtree(dir);
    free(dir);
}

static void model(void **state)
{
    (void)state;
    assert_true(nodepower_model(71, false, 170, 250, 0.5) == 71);
    assert_true(nodepower_model(71, true, 170, 250, 0) == 170);
    assert_true(nodepower_model(71, true, 170, 250, 0.5) == 210);
    assert_true(nodepower_model(71, true, 170, 250, 1) == 250);
    /* unknown use (no cgroup, first reading): the maximum, never below it */
    assert_true(nodepower_model(71, true, 170, 250, -1) == 250);
    assert_true(nodepower_model(71, true, 200, 100, 0.5) == 200);
}

/* job_12 and job_12_<tag> count for job 12, job_123 does not */
static void cgroup_usage(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    tu_put(dir, "job_12/cpu.stat", "usage_usec 1000\nuser_usec 800\nsystem_usec 200\n");
    tu_put(dir, "job_12_step3/cpu.stat", "usage_usec 500\n");
    tu_put(dir, "job_123/cpu.stat", "usage_usec 99999\n");
    uint64_t u = 0;
    assert_int_equal(nodepower_cgroup_usage(dir, "job_12", &u), 0);
    assert_int_equal(u, 1500);
    assert_int_equal(nodepower_cgroup_usage(dir, "job_7", &u), -ENOENT);
    assert_int_equal(nodepower_cgroup_usage("/nonexistent", "job_12", &u), -ENOENT);
    tu_rmtree(dir);
    free(dir);
}

static void config_keys(void **state)
{
    (void)state;
    config_t cfg;
    char err[512];
    assert_int_equal(config_parse_string("Nodes = n1\n", "t.conf", &cfg, err, sizeof(err)), 0);
    assert_int_equal(cfg.power_source, CONFIG_POWER_MODEL);
    assert_true(cfg.idle_power == 71 && cfg.default_job_power == 200);
    assert_true(cfg.power_lower == 0 && cfg.power_upper == 0);
    assert_string_equal(cfg.powercap_dir, "/sys/class/powercap");
    config_free(&cfg);
    assert_int_equal(config_parse_string("Nodes = n1\nPowerSource = RAPL\nIdlePower = 70.5\n"
                                         "PowerLower = 1000\nPowerUpper = 1700\n"
                                         "PowerSchedule = sched.txt\n",
                                         "/etc/d/t.conf", &cfg, err, sizeof(err)), 0);
    assert_int_equal(cfg.power_source, CONFIG_POWER_RAPL);
    assert_true(cfg.idle_power == 70.5 && cfg.power_lower == 1000 && cfg.power_upper == 1700);
    assert_string_equal(cfg.power_schedule, "/etc/d/sched.txt");
    config_free(&cfg);
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"PowerSource = solar", "PowerSource: 'solar' is not accepted (accepted: model, rapl, auto, none)"},
        {"IdlePower = -5", "IdlePower: '-5' is not a power in watts"},
        {"IdlePower = 1e3", "'1e3' is not a power in watts"},
        {"DefaultJobPower = inf", "'inf' is not a power in watts"},
        {"PowerUpper = 2000000000", "PowerUpper: '2000000000' is not a power in watts"},
        {"PowerLower = 2000\nPowerUpper = 1000", "below PowerLower (2000 W)"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[256];
        snprintf(text, sizeof(text), "Nodes = n1\n%s\n", bad[i].text);
        assert_int_equal(config_parse_string(text, "t.conf", &cfg, err, sizeof(err)), -EINVAL);
        if (!strstr(err, bad[i].msg))
            fail_msg("%s: got '%s'", bad[i].text, err);
    }
}

/* The times users give: --at and PowerSchedule */
static void times(void **state)
{
    (void)state;
    double t;
    assert_int_equal(strparse_time("now", 1000, &t), 0);
    assert_true(t == 1000);
    assert_int_equal(strparse_time("+30s", 1000, &t), 0);
    assert_true(t == 1030);
    assert_int_equal(strparse_time("+2h", 1000, &t), 0);
    assert_true(t == 1000 + 7200);
    assert_int_equal(strparse_time("1700000000", 1000, &t), 0);
    assert_true(t == 1700000000);
    setenv("TZ", "UTC", 1);
    assert_int_equal(strparse_time("2026-11-26T14:05", 0, &t), 0);
    assert_true(t == 1795701900);
    assert_int_equal(strparse_time("2026-11-26T14:05:09", 0, &t), 0);
    assert_true(t == 1795701909);
    const char *bad[] = {"", "soon", "+", "+-5", "2026-11-26", "2026-11-26T14:05x", "12:00", "2026-11-31T08:00", "2026-02-30T08:00",
                         "-5"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (strparse_time(bad[i], 0, &t) == 0)
            fail_msg("'%s' accepted", bad[i]);
    double w;
    assert_int_equal(strparse_decimal("70.5", 1e9, &w), 0);
    assert_true(w == 70.5);
    assert_int_equal(strparse_decimal("1.2.3", 1e9, &w), -EINVAL);
    assert_int_equal(strparse_decimal("5000", 1000, &w), -ERANGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rapl_packages_and_wrap), cmocka_unit_test(rapl_missing),
        cmocka_unit_test(model),                  cmocka_unit_test(cgroup_usage),
        cmocka_unit_test(config_keys),            cmocka_unit_test(times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
