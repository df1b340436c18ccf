/* directives: #SBATCH and #DUCTILE lines read as sbatch reads them (issue 14). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/directives.h"

typedef struct seen {
    int n;
    int kind[16], line[16], argc[16];
    char words[16][8][64];
} seen_t;

static int collect(directive_kind_t kind, int argc, char **argv, int line, void *arg)
{
    seen_t *s = arg;
    if (s->n >= 16)
        return 0;
    s->kind[s->n] = kind;
    s->line[s->n] = line;
    s->argc[s->n] = argc;
    for (int k = 0; k < argc && k < 8; k++)
        snprintf(s->words[s->n][k], sizeof(s->words[0][0]), "%s", argv[k]);
    assert_null(argv[argc]);
    s->n++;
    return 0;
}

static int split(const char *text, char **argv, char *buf, size_t len, char *err)
{
    return directive_split(text, "#SBATCH", buf, len, argv, 16, err, 128);
}

static void words_split_as_sbatch_does(void **state)
{
    (void)state;
    char buf[512], err[128], *argv[17];
    int n = split(" --job-name=\"my job\"   -N 2 # a comment -t 5", argv, buf, sizeof(buf), err);
    assert_int_equal(n, 4);
    assert_string_equal(argv[0], "#SBATCH");
    assert_string_equal(argv[1], "--job-name=my job");
    assert_string_equal(argv[2], "-N");
    assert_string_equal(argv[3], "2");
    /* single quotes, a quote in the middle of a word, a backslash, a # inside quotes */
    n = split(" -J 'a b'c --output=x\\ y.out --comment=\"#not a comment\"", argv, buf,
              sizeof(buf), err);
    assert_int_equal(n, 5);
    assert_string_equal(argv[2], "a bc");
    assert_string_equal(argv[3], "--output=x y.out");
    assert_string_equal(argv[4], "--comment=#not a comment");
    /* an unquoted # ends the line even in a word */
    n = split(" --time=10#20", argv, buf, sizeof(buf), err);
    assert_int_equal(n, 2);
    assert_string_equal(argv[1], "--time=10");
    /* tabs and a CR are blanks */
    n = split("\t-N\t3\r", argv, buf, sizeof(buf), err);
    assert_int_equal(n, 3);
    assert_string_equal(argv[2], "3");
    /* nothing but a comment */
    assert_int_equal(split("   # only this", argv, buf, sizeof(buf), err), 1);
    assert_int_equal(split("", argv, buf, sizeof(buf), err), 1);
}

static void malformed_words_are_errors(void **state)
{
    (void)state;
    char buf[64], err[128], *argv[17];
    assert_int_equal(split(" -J \"open", argv, buf, sizeof(buf), err), -1);
    assert_non_null(strstr(err, "double quote"));
    assert_int_equal(split(" -J 'open", argv, buf, sizeof(buf), err), -1);
    assert_non_null(strstr(err, "single quote"));
    char many[256] = "";
    for (int k = 0; k < 20; k++)
        strcat(many, " -x");
    assert_int_equal(split(many, argv, buf, sizeof(buf), err), -1);
    assert_non_null(strstr(err, "more than"));
    char big[200];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(split(big, argv, buf, sizeof(buf), err), -1); /* buf is 64 bytes */
}

static void scan_reads_both_kinds_until_the_first_command(void **state)
{
    (void)state;
    const char *script = "#!/bin/bash\n"
                         "#SBATCH -N 2 --time=10\n"
                         "\n"
                         "# a plain comment\n"
                         "   #DUCTILE --malleable\n"
                         "  #SBATCH --nodes=9\n" /* indented: a comment, as in Slurm */
                         "#SBATCHX -N 7\n"       /* not the directive */
                         "#DUCTILE\t--min-nodes=1\n"
                         "echo start\n"
                         "#SBATCH -N 5\n";
    seen_t s = {0};
    char err[128];
    int late = -1;
    assert_int_equal(directives_scan(script, collect, &s, &late, err, sizeof(err)), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.kind[0], DIRECTIVE_SBATCH);
    assert_int_equal(s.line[0], 2);
    assert_int_equal(s.argc[0], 4);
    assert_string_equal(s.words[0][3], "--time=10");
    assert_int_equal(s.kind[1], DIRECTIVE_DUCTILE);
    assert_int_equal(s.line[1], 5);
    assert_string_equal(s.words[1][0], "#DUCTILE");
    assert_string_equal(s.words[1][1], "--malleable");
    assert_int_equal(s.line[2], 8);
    assert_int_equal(late, 10); /* the #SBATCH after the command: ignored, and named */

    /* without a late directive, late is 0; NULL is allowed */
    seen_t t = {0};
    assert_int_equal(directives_scan("#SBATCH -N 1\ntrue\n", collect, &t, &late, err,
                                     sizeof(err)), 0);
    assert_int_equal(late, 0);
    assert_int_equal(directives_scan("#SBATCH -N 1\ntrue\n#SBATCH -N 2", collect, &t, NULL,
                                     err, sizeof(err)), 0);
    assert_int_equal(t.n, 2);
}

static void scan_errors_name_the_line(void **state)
{
    (void)state;
    seen_t s = {0};
    char err[128];
    assert_int_equal(directives_scan("#!/bin/sh\n#SBATCH -J 'x\ntrue\n", collect, &s, NULL, err,
                                     sizeof(err)), -1);
    assert_non_null(strstr(err, "line 2"));
    char *big = malloc(DIRECTIVE_LINE_MAX + 32);
    assert_non_null(big);
    strcpy(big, "#SBATCH -J ");
    memset(big + 11, 'a', DIRECTIVE_LINE_MAX);
    big[11 + DIRECTIVE_LINE_MAX] = '\0';
    assert_int_equal(directives_scan(big, collect, &s, NULL, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "longer than"));
    /* a long line that is not a directive is no error */
    big[0] = 'x';
    assert_int_equal(directives_scan(big, collect, &s, NULL, err, sizeof(err)), 0);
    free(big);
}

static int stop_at_second(directive_kind_t kind, int argc, char **argv, int line, void *arg)
{
    (void)kind, (void)argc, (void)argv;
    int *calls = arg;
    return ++*calls == 2 ? 42 + line : 0;
}

static void a_callback_stops_the_scan(void **state)
{
    (void)state;
    int calls = 0;
    char err[64];
    assert_int_equal(directives_scan("#SBATCH -N 1\n#SBATCH -N 2\n#SBATCH -N 3\n", stop_at_second,
                                     &calls, NULL, err, sizeof(err)), 44);
    assert_int_equal(calls, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(words_split_as_sbatch_does),
        cmocka_unit_test(malformed_words_are_errors),
        cmocka_unit_test(scan_reads_both_kinds_until_the_first_command),
        cmocka_unit_test(scan_errors_name_the_line),
        cmocka_unit_test(a_callback_stops_the_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
