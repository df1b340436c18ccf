/* libFuzzer target: the node daemon's message dispatch (noded_dispatch, src/noded/noded.c)
 * fed random and mutated controller messages, on a noded_t set up on a loop with no
 * controller connection (everything it sends is dropped, as while disconnected).
 *
 * The first byte of an input picks a message type from the protocol's table (or leaves
 * the type to the input); the rest is parsed as a JSON object and gets that type, or,
 * if it is not one, fills a message of well-typed fields (job, step, rank...) from raw
 * bytes. So most inputs reach the handlers' validation and state, not just the parser.
 *
 * Safety: the spool directory does not exist, so a job_start cannot write its script
 * and a step_start cannot make its FIFOs: nothing a fuzzed message says is ever run.
 * Nothing may crash, and under ASan nothing may leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "noded/noded.h"

static const char *types[] = {
    "registered", "job_start", "job_cleanup", "step_start", "step_kill", "step_credit",
    "resize_offer", "resize_withdraw", "job_ended_ack", "ping",
};
#define NTYPES (sizeof(types) / sizeof(types[0]))

static noded_t *daemon_once(void)
{
    static noded_t d;
    static bool ready;
    if (ready)
        return &d;
    static char name[] = "n1";
    d.name = name;
    d.cfg.max_script_size = 1 << 20;
    d.cfg.cluster_name = name;
    d.loop = uv_default_loop();
    d.jobs = idmap_create();
    snprintf(d.spool, sizeof(d.spool), "/nonexistent/ductile-fuzz-noded/spool");
    snprintf(d.app_socket, sizeof(d.app_socket), "%s/noded.sock", d.spool);
    /* no cgroup_parent: nothing is created in the host's cgroup tree */
    ready = true;
    return &d;
}

static int64_t take(const uint8_t **p, size_t *n, int bytes)
{
    int64_t v = 0;
    for (int i = 0; i < bytes && *n > 0; i++, (*p)++, (*n)--)
        v = v << 8 | **p;
    return v;
}

/* A message of plausible fields from raw bytes (small ids, so that messages about the
 * same job or task meet). */
static json_t *from_bytes(const uint8_t *p, size_t n)
{
    json_t *m = json_object();
    json_object_set_new(m, "job", json_integer(take(&p, &n, 1) % 8));
    json_object_set_new(m, "step", json_integer(take(&p, &n, 1) % 4));
    json_object_set_new(m, "rank", json_integer(take(&p, &n, 1) % 3));
    json_object_set_new(m, "batch", json_boolean(take(&p, &n, 1) & 1));
    json_object_set_new(m, "offset", json_integer(take(&p, &n, 4) - 1000));
    json_object_set_new(m, "window", json_integer(take(&p, &n, 2)));
    json_object_set_new(m, "grace", json_real((double)take(&p, &n, 1) / 100));
    json_object_set_new(m, "cwd", json_string("/"));
    json_t *argv = json_array();
    json_array_append_new(argv, json_string("/bin/true"));
    json_object_set_new(m, "argv", argv);
    json_object_set_new(m, "script", json_stringn((const char *)p, n));
    json_object_set_new(m, "ok", json_boolean(n & 1));
    json_object_set_new(m, "error", json_stringn((const char *)p, n));
    return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    noded_t *d = daemon_once();
    uint8_t pick = data[0];
    json_error_t jerr;
    json_t *m = json_loadb((const char *)data + 1, size - 1, JSON_ALLOW_NUL, &jerr);
    if (!json_is_object(m)) {
        json_decref(m);
        m = from_bytes(data + 1, size - 1);
    }
    if (m && pick < 2 * NTYPES)
        json_object_set_new(m, "type", json_string(types[pick % NTYPES]));
    if (m)
        noded_dispatch(d, m);
    json_decref(m);
    /* Let closed handles finish (jobs cleaned up free their timers). */
    uv_run(d->loop, UV_RUN_NOWAIT);
    return 0;
}
