/* The controller's node selection (src/ctld/nodesel.c): what a submission asks for,
 * checked field by field, and the node sets it becomes against the configuration. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ctld.h"

static ctld_t *ctld_with(const char *conf)
{
    ctld_t *c = calloc(1, sizeof(*c));
    char err[512];
    if (config_parse_string(conf, "t.conf", &c->cfg, err, sizeof(err)) < 0)
        fail_msg("config: %s", err);
    return c;
}

static void ctld_done(ctld_t *c)
{
    free(c->sel_buf);
    config_free(&c->cfg);
    free(c);
}

static const char *conf = "Nodes = n[1-4], gpu[1-2]\nCheckpointNodes = n4\n"
                          "NodeFeatures = gpu[1-2]=gpu,a100 n[1-3]=ib\n"
                          "NodeGres = gpu[1-2]=gpu:2\nNodeMemory = gpu[1-2]=64G\n";

/* A malformed request is an error reply, never a crash. */
static void request_fields(void **state)
{
    (void)state;
    const char *bad[][2] = {
        {"{\"features\": 5}", "features"},
        {"{\"features\": \"gpu&\"}", "--constraint gpu&: it ends where"},
        {"{\"gpus_per_node\": -1}", "gpus_per_node"},
        {"{\"gpus_per_node\": 99999}", "gpus_per_node"},
        {"{\"mem\": 1e30}", "mem"},
        {"{\"req_nodelist\": [\"n1\"]}", "req_nodelist"},
    };
    for (size_t k = 0; k < sizeof(bad) / sizeof(*bad); k++) {
        json_t *m = json_loads(bad[k][0], 0, NULL);
        assert_non_null(m);
        job_sel_t sel = {0};
        char err[256] = "";
        assert_int_equal(nsel_from_request(m, &sel, err, sizeof(err)), -EINVAL);
        if (!strstr(err, bad[k][1]))
            fail_msg("%s: '%s' does not say '%s'", bad[k][0], err, bad[k][1]);
        nsel_free(&sel);
        json_decref(m);
    }
}

/* Resolve a request for a one-node rigid job: 0 and its sets, or the refusal. */
static int resolve(ctld_t *c, const char *req, job_t **out, char *err, size_t errlen)
{
    json_t *m = json_loads(req, 0, NULL);
    assert_non_null(m);
    job_t *j = job_new();
    j->nodes = 1;
    assert_int_equal(nsel_from_request(m, &j->sel, err, errlen), 0);
    json_decref(m);
    int rc = nsel_resolve(c, j, err, errlen);
    *out = j;
    return rc;
}

static void expect_nodes(ctld_t *c, const char *req, const char *want)
{
    job_t *j;
    char err[256] = "";
    if (resolve(c, req, &j, err, sizeof(err)) < 0)
        fail_msg("%s refused: %s", req, err);
    sched_jobspec_t spec = {0};
    nsel_spec(c, &j->sel, &spec);
    char got[256] = "";
    for (int i = 0; i < spec.nallowed; i++)
        snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? "," : "",
                 c->cfg.nodes[spec.allowed[i]]);
    assert_string_equal(got, want);
    job_free(j);
}

static void expect_refused(ctld_t *c, const char *req, const char *words)
{
    job_t *j;
    char err[256] = "";
    assert_int_equal(resolve(c, req, &j, err, sizeof(err)), -EINVAL);
    if (!strstr(err, words))
        fail_msg("%s: '%s' does not say '%s'", req, err, words);
    assert_null(j->sel.allowed);
    job_free(j);
}

static void resolved_sets(void **state)
{
    (void)state;
    ctld_t *c = ctld_with(conf);
    expect_nodes(c, "{\"features\": \"gpu\"}", "gpu1,gpu2");
    expect_nodes(c, "{\"features\": \"ib\"}", "n1,n2,n3"); /* n4 holds checkpoints */
    expect_nodes(c, "{\"features\": \"gpu|ib\", \"exc_nodelist\": \"gpu1,n2\"}", "n1,n3,gpu2");
    expect_nodes(c, "{\"mem\": 2048}", "gpu1,gpu2");
    expect_nodes(c, "{\"gpus_per_node\": 1}", "gpu1,gpu2");
    expect_nodes(c, "{}", "");
    expect_refused(c, "{\"features\": \"h100\"}", "no node has the feature h100");
    expect_refused(c, "{\"features\": \"gpu&ib\"}", "no node has features gpu&ib");
    expect_refused(c, "{\"gpus_per_node\": 3}", "no node has 3 GPUs (the most a node has is 2)");
    expect_refused(c, "{\"mem\": 70000}", "no node has 70000 MiB of memory");
    expect_refused(c, "{\"exc_nodelist\": \"n[1-3],gpu[1-2]\"}", "no node meets --exclude");
    expect_refused(c, "{\"req_nodelist\": \"zz\"}", "--nodelist: zz is not a node");
    expect_refused(c, "{\"req_nodelist\": \"n4\"}", "n4 holds checkpoints");
    expect_refused(c, "{\"req_nodelist\": \"n1\", \"features\": \"gpu\"}",
                   "n1 does not meet the job's --constraint");
    expect_refused(c, "{\"exc_nodelist\": \"n[1-\"}", "--exclude n[1-");
    /* a node list longer than the job raises its size, as in Slurm */
    job_t *j;
    char err[256];
    assert_int_equal(resolve(c, "{\"req_nodelist\": \"n[1-2]\"}", &j, err, sizeof(err)), 0);
    assert_int_equal(j->nodes, 2);
    assert_int_equal(j->sel.nrequired, 2);
    /* stored and read back */
    char *text = nsel_to_text(&j->sel);
    job_sel_t back = {0};
    assert_int_equal(nsel_from_text(text, &back), 0);
    assert_string_equal(back.nodelist, "n[1-2]");
    assert_null(back.features);
    free(text);
    nsel_free(&back);
    job_free(j);
    ctld_done(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(request_fields),
        cmocka_unit_test(resolved_sets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
