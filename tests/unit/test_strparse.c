/* strparse: the strict parsers every `ductile` option and #DUCTILE directive uses,
 * and the escaping of user text (issue 7, defect 11). */
#include "testutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/featexpr.h"
#include "common/strparse.h"

static void long_strict(void **state)
{
    (void)state;
    long v = -1;
    assert_int_equal(strparse_long("42", 1, 100, &v), 0);
    assert_int_equal(v, 42);
    assert_int_equal(strparse_long("007", 1, 100, &v), 0); /* decimal, not octal */
    assert_int_equal(v, 7);
    assert_int_equal(strparse_long("-3", -10, 10, &v), 0);
    assert_int_equal(v, -3);
    const char *bad[] = {"", " 1", "1 ", "+1", "0x10", "1e3", "1.0", "inf", "nan", "1x", "--1", "-"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        v = 99;
        assert_int_equal(strparse_long(bad[i], -10, 100, &v), -EINVAL);
        assert_int_equal(v, 99); /* untouched on error */
    }
    assert_int_equal(strparse_long("-1", 1, 100, &v), -EINVAL); /* no sign when min >= 0 */
    assert_int_equal(strparse_long("0", 1, 100, &v), -ERANGE);
    assert_int_equal(strparse_long("101", 1, 100, &v), -ERANGE);
    assert_int_equal(strparse_long("99999999999999999999", 1, 100, &v), -ERANGE);
    assert_int_equal(strparse_long(NULL, 1, 100, &v), -EINVAL);
}

static void host_and_port(void **state)
{
    (void)state;
    char host[16];
    int port = -1;
    assert_int_equal(strparse_hostport("10.0.0.5:7300", host, sizeof(host), 1, &port), 0);
    assert_string_equal(host, "10.0.0.5");
    assert_int_equal(port, 7300);
    assert_int_equal(strparse_hostport("::1:80", host, sizeof(host), 1, &port), 0); /* last colon */
    assert_string_equal(host, "::1");
    assert_int_equal(strparse_hostport("h:0", host, sizeof(host), 0, &port), 0);
    assert_int_equal(port, 0);
    assert_int_equal(strparse_hostport("h:0", host, sizeof(host), 1, &port), -ERANGE);
    assert_int_equal(strparse_hostport("h:99999", host, sizeof(host), 1, &port), -ERANGE);
    assert_int_equal(strparse_hostport("h:", host, sizeof(host), 0, &port), -EINVAL);
    assert_int_equal(strparse_hostport("h:7x", host, sizeof(host), 0, &port), -EINVAL);
    assert_int_equal(strparse_hostport(":7300", host, sizeof(host), 0, &port), -EINVAL);
    assert_int_equal(strparse_hostport("nohost", host, sizeof(host), 0, &port), -EINVAL);
    assert_int_equal(strparse_hostport("a-much-too-long-host:1", host, sizeof(host), 0, &port),
                     -EINVAL);
}

static void duration_forms(void **state)
{
    (void)state;
    struct { const char *s; double v; } ok[] = {
        {"10", 600},       {"0", 0},         {"1.5", 90},        {"90s", 90},
        {"30m", 1800},     {"2h", 7200},     {"1d", 86400},      {"1.5h", 5400},
        {"1:30", 90},      {"90:00", 5400},  {"1:02:03", 3723},  {"1-0", 86400},
        {"1-2", 93600},    {"1-2:03", 93780}, {"1-02:03:04", 93784},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        double v = -1;
        assert_int_equal(strparse_duration(ok[i].s, &v), 0);
        assert_true(v == ok[i].v);
    }
    const char *bad[] = {"", "inf", "nan", "infinity", "0x10", "1e3", "-5", " 5", "5 ",
                         "5x", "1.5.2", ".5", "5.", "10:99", "1:60:00", "1:2:3:4", "1-24",
                         "1-", "-1-2", "a:b", ":", "1::2", "5ms", "+5", "1-2-3"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        double v = -1;
        int rc = strparse_duration(bad[i], &v);
        if (rc != -EINVAL)
            fail_msg("'%s' gave %d", bad[i], rc);
        assert_true(v == -1);
    }
    double v;
    assert_int_equal(strparse_duration("99999999999999999999", &v), -ERANGE);
    assert_int_equal(strparse_duration("999999999d", &v), -ERANGE);
    assert_int_equal(strparse_duration("36500d", &v), 0);
}

static void control_and_escape(void **state)
{
    (void)state;
    assert_false(strparse_has_control("job-1 é"));
    assert_false(strparse_has_control(""));
    assert_true(strparse_has_control("a\nb"));
    assert_true(strparse_has_control("x\033[2J"));
    assert_true(strparse_has_control("del\x7f"));
    assert_true(strparse_has_control("\t"));
    struct { const char *in, *out; } e[] = {
        {"plain", "plain"},
        {"a\nb\tc\r", "a\\nb\\tc\\r"},
        {"x\033[2Jy", "x\\x1b[2Jy"},
        {"back\\slash", "back\\\\slash"},
        {"caf\xc3\xa9", "caf\xc3\xa9"},          /* valid UTF-8 stays */
        {"bad\xff\xfe", "bad\\xff\\xfe"},        /* invalid bytes are escaped */
        {"half\xc3", "half\\xc3"},               /* truncated sequence */
        {"c1\xc2\x9b" "31m", "c1\\xc2\\x9b31m"}, /* a C1 control (CSI) */
        {"\xed\xa0\x80", "\\xed\\xa0\\x80"},     /* a surrogate */
    };
    for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++) {
        char *s = strparse_escape(e[i].in);
        assert_non_null(s);
        assert_string_equal(s, e[i].out);
        assert_false(strparse_has_control(s));
        free(s);
    }
    char *s = strparse_escape(NULL);
    assert_string_equal(s, "");
    free(s);
}

/* Names cut to a column's width between characters, never inside one (the queue's
 * NAME column cut 'relax-Ångström-öäü-2' inside 'ü' and the reply could not be sent). */
static void utf8_cuts(void **state)
{
    (void)state;
    const char *name = "relax-\xc3\x85ngstr\xc3\xb6m-\xc3\xb6\xc3\xa4\xc3\xbc-2";
    size_t chars;
    size_t b = strparse_utf8_cut(name, 20, &chars);
    assert_int_equal(chars, 20);
    assert_int_equal(b, 25); /* 20 characters, five of them two bytes long */
    assert_int_equal(strparse_utf8_chars(name), 20);
    assert_int_equal(strparse_utf8_cut(name, 17, NULL), 21); /* up to the 'ä' */
    assert_int_equal(strparse_utf8_cut(name, 18, NULL), 23); /* and the 'ü' whole */
    assert_int_equal(strparse_utf8_cut("abc", 10, &chars), 3);
    assert_int_equal(chars, 3);
    assert_int_equal(strparse_utf8_cut("a\xffz", 2, &chars), 2); /* invalid: one each */
    assert_int_equal(strparse_utf8_cut(NULL, 2, &chars), 0);
    struct { const char *in, *out; } f[] = {
        {"plain", "plain"},
        {"caf\xc3\xa9", "caf\xc3\xa9"},
        {"cut \xc3", "cut "},               /* a two-byte character cut after its lead */
        {"cut \xe2\x82", "cut "},          /* a three-byte one after two */
        {"bad\xff!", "bad?!"},
        {"mid\xc3x", "mid?x"},              /* a lead byte without its follower */
        {"c1\xc2\x9b", "c1\xc2\x9b"},        /* a C1 control is valid UTF-8 */
    };
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
        char buf[64];
        snprintf(buf, sizeof(buf), "%s", f[i].in);
        strparse_utf8_fix(buf);
        assert_string_equal(buf, f[i].out);
    }
    /* what a bounded snprintf of a message leaves, made whole */
    char full[64], err[13]; /* 'name relax-' and the first byte of 'Å' */
    snprintf(full, sizeof(full), "name %s", name);
    memcpy(err, full, sizeof(err) - 1);
    err[sizeof(err) - 1] = '\0';
    strparse_utf8_fix(err);
    assert_string_equal(err, "name relax-");
}

/* --mem and NodeMemory: MiB, or with a unit as sbatch takes it. */
static void memory_sizes(void **state)
{
    (void)state;
    long v;
    assert_int_equal(strparse_memory("4000", INT_MAX, &v), 0);
    assert_int_equal(v, 4000);
    assert_int_equal(strparse_memory("512G", INT_MAX, &v), 0);
    assert_int_equal(v, 524288);
    assert_int_equal(strparse_memory("2t", INT_MAX, &v), 0);
    assert_int_equal(v, 2097152);
    assert_int_equal(strparse_memory("1025K", INT_MAX, &v), 0);
    assert_int_equal(v, 2); /* rounded up to whole MiB */
    assert_int_equal(strparse_memory("64M", INT_MAX, &v), 0);
    assert_int_equal(v, 64);
    const char *bad[] = {"", "G", "1.5G", "-4", "4GB", "4 G", "0x10", "4X"};
    for (size_t k = 0; k < sizeof(bad) / sizeof(*bad); k++)
        assert_int_equal(strparse_memory(bad[k], INT_MAX, &v), -EINVAL);
    assert_int_equal(strparse_memory("4096T", INT_MAX, &v), -ERANGE);
    assert_int_equal(strparse_memory("9999999999999999999", INT_MAX, &v), -ERANGE);
}

static void expect_refused(const char *expr, const char *words)
{
    char err[256] = "";
    assert_int_equal(featexpr_check(expr, err, sizeof(err)), -EINVAL);
    if (!strstr(err, words))
        fail_msg("'%s': '%s' does not say '%s'", expr, err, words);
}

/* --constraint: & before |, parentheses; Slurm's forms Ductile lacks, refused by name. */
static void feature_expressions(void **state)
{
    (void)state;
    const char *gpu = "gpu,a100,ib";
    assert_int_equal(featexpr_check("gpu & (a100|h100)", NULL, 0), 0);
    assert_true(featexpr_match("gpu", gpu));
    assert_true(featexpr_match("gpu&a100", gpu));
    assert_false(featexpr_match("gpu&h100", gpu));
    assert_true(featexpr_match("h100|a100", gpu));
    assert_true(featexpr_match("h100&ib|a100", gpu)); /* (h100&ib)|a100 */
    assert_false(featexpr_match("h100&(ib|a100)", gpu));
    assert_false(featexpr_match("gpu", NULL));
    assert_false(featexpr_match("gp", gpu)); /* whole names only */
    expect_refused("", "empty");
    expect_refused("gpu&", "ends where a feature name should be");
    expect_refused("(gpu|a100", "not closed");
    expect_refused("gpu)", "closes nothing");
    expect_refused("gpu,a100", "write & (and) or | (or)");
    expect_refused("[a100|h100]", "matching OR");
    expect_refused("gpu*2", "counts");
    expect_refused("gpu a100", "operator (& or |) is missing");
    expect_refused("gpu&!a100", "'!' at position 5");
    assert_int_equal(featexpr_check_list("gpu,a100", NULL, 0), 0);
    char err[256];
    assert_int_equal(featexpr_check_list("gpu,,a100", err, sizeof(err)), -EINVAL);
    assert_int_equal(featexpr_check_list("gpu&a100", err, sizeof(err)), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(long_strict),
        cmocka_unit_test(host_and_port),
        cmocka_unit_test(duration_forms),
        cmocka_unit_test(control_and_escape),
        cmocka_unit_test(memory_sizes),
        cmocka_unit_test(utf8_cuts),
        cmocka_unit_test(feature_expressions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
