/* A job's host files (src/noded/hosts.c): their contents, the job environment's
 * variables (a user's own Open MPI settings win, an enclosing job's do not), and how
 * the controller's job_resized rewrites them (for the job's current run, on its batch
 * node, while it is not ending). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "noded/noded.h"

static noded_t d;
static char spool[] = "/tmp/ductile-unit-hosts-XXXXXX";

static int setup(void **state)
{
    (void)state;
    memset(&d, 0, sizeof(d));
    d.name = "n1";
    if (!mkdtemp(spool))
        return -1;
    snprintf(d.spool, sizeof(d.spool), "%s", spool);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    hosts_remove(&d, 7);
    return rmdir(spool);
}

static void read_file(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static void assert_hosts(const char *plain, const char *ompi)
{
    char path[4200], buf[256];
    hosts_path(&d, 7, false, path, sizeof(path));
    read_file(path, buf, sizeof(buf));
    assert_string_equal(buf, plain);
    hosts_path(&d, 7, true, path, sizeof(path));
    read_file(path, buf, sizeof(buf));
    assert_string_equal(buf, ompi);
}

static void resized(const char *text)
{
    json_error_t e;
    json_t *m = json_loads(text, 0, &e);
    assert_non_null(m);
    noded_dispatch(&d, m);
    json_decref(m);
}

static void files_follow_committed_resizes(void **state)
{
    (void)state;
    char err[256];
    d.jobs = idmap_create();
    njob_t j = {.d = &d, .id = 7, .run = 2, .batch = true};
    idmap_put(d.jobs, 7, &j);
    assert_int_equal(hosts_write(&d, 7, "n[1-2]", err, sizeof(err)), 0);
    assert_hosts("n1\nn2\n", "n1 slots=1\nn2 slots=1\n");

    resized("{\"type\":\"job_resized\",\"job\":7,\"run\":2,\"nodelist\":\"n[1-3]\"}");
    assert_hosts("n1\nn2\nn3\n", "n1 slots=1\nn2 slots=1\nn3 slots=1\n");
    resized("{\"type\":\"job_resized\",\"job\":7,\"run\":2,\"nodelist\":\"n1,n3\"}");
    assert_hosts("n1\nn3\n", "n1 slots=1\nn3 slots=1\n");

    /* another run's, another job's, bad ones: nothing changes */
    const char *ignored[] = {
        "{\"type\":\"job_resized\",\"job\":7,\"run\":1,\"nodelist\":\"n1\"}",
        "{\"type\":\"job_resized\",\"job\":8,\"run\":2,\"nodelist\":\"n1\"}",
        "{\"type\":\"job_resized\",\"job\":7,\"run\":2,\"nodelist\":\"n[\"}",
        "{\"type\":\"job_resized\",\"job\":7,\"run\":2,\"nodelist\":5}",
        "{\"type\":\"job_resized\",\"job\":7,\"run\":2}",
        "{\"type\":\"job_resized\",\"job\":-7,\"run\":2,\"nodelist\":\"n1\"}",
    };
    for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
        resized(ignored[i]);
    assert_hosts("n1\nn3\n", "n1 slots=1\nn3 slots=1\n");
    /* nor on a node that does not run the script, nor once the job is ending */
    j.batch = false;
    resized("{\"type\":\"job_resized\",\"job\":7,\"run\":2,\"nodelist\":\"n1\"}");
    j.batch = true;
    j.cleaning = true;
    resized("{\"type\":\"job_resized\",\"job\":7,\"run\":2,\"nodelist\":\"n1\"}");
    assert_hosts("n1\nn3\n", "n1 slots=1\nn3 slots=1\n");

    /* a bad list is refused with a message, the files stay */
    assert_true(hosts_write(&d, 7, "n[", err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "n["));
    assert_hosts("n1\nn3\n", "n1 slots=1\nn3 slots=1\n");

    hosts_remove(&d, 7);
    char path[4200];
    hosts_path(&d, 7, false, path, sizeof(path));
    assert_int_equal(access(path, F_OK), -1);
    idmap_destroy(d.jobs);
}

static const char *kv_get(char kv[][HOSTS_KV_LEN], int n, const char *key)
{
    size_t k = strlen(key);
    for (int i = 0; i < n; i++)
        if (!strncmp(kv[i], key, k) && kv[i][k] == '=')
            return kv[i] + k + 1;
    return NULL;
}

static void users_settings_win(void **state)
{
    (void)state;
    char kv[HOSTS_ENV_MAX][HOSTS_KV_LEN], mine[4200], ompi[4200];
    hosts_path(&d, 7, false, mine, sizeof(mine));
    hosts_path(&d, 7, true, ompi, sizeof(ompi));

    /* nothing set: all of ours */
    char *none[] = {"PATH=/bin", NULL};
    int n = hosts_env(&d, 7, none, kv);
    assert_int_equal(n, 4);
    assert_string_equal(kv_get(kv, n, "DUCTILE_HOSTFILE"), mine);
    assert_string_equal(kv_get(kv, n, "OMPI_MCA_orte_default_hostfile"), ompi);
    const char *agent = kv_get(kv, n, "OMPI_MCA_plm_rsh_agent");
    assert_non_null(agent);
    assert_non_null(strstr(agent, "ductile rsh"));
    assert_string_equal(kv_get(kv, n, "OMPI_MCA_rtc_hwloc_vmhole"), "none");

    /* the user's own: kept (not in our list, so the submitted value stays) */
    char *user[] = {"OMPI_MCA_orte_default_hostfile=/home/u/hosts", "OMPI_MCA_plm_rsh_agent=ssh",
                    "OMPI_MCA_rtc_hwloc_vmhole=auto", NULL};
    n = hosts_env(&d, 7, user, kv);
    assert_int_equal(n, 1);
    assert_string_equal(kv_get(kv, n, "DUCTILE_HOSTFILE"), mine);

    /* submitted from inside job 3: its host file is not the user's choice */
    char *outer[] = {"DUCTILE_HOSTFILE=/var/spool/n4/job3.hosts",
                     "OMPI_MCA_orte_default_hostfile=/var/spool/n4/job3.hosts.ompi", NULL};
    n = hosts_env(&d, 7, outer, kv);
    assert_string_equal(kv_get(kv, n, "DUCTILE_HOSTFILE"), mine);
    assert_string_equal(kv_get(kv, n, "OMPI_MCA_orte_default_hostfile"), ompi);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(files_follow_committed_resizes),
        cmocka_unit_test(users_settings_win),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
