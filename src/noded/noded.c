/* ductile-noded's shared plumbing, kept out of main.c so the daemon builds as a library
 * that unit tests link. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "noded.h"

noded_t *noded_all;
int noded_nall;

int noded_send(noded_t *d, json_t *msg)
{
    if (!msg)
        return -ENOMEM;
    /* Every message about a job names the run it is about (the controller ignores,
     * and ends, what belongs to another run). */
    json_t *job = json_object_get(msg, "job");
    if (json_is_integer(job) && !json_object_get(msg, "run")) {
        njob_t *j = idmap_get(d->jobs, json_integer_value(job));
        if (j)
            json_object_set_new(msg, "run", json_integer(j->run));
    }
    int rc = d->ctl && d->registered ? conn_send(d->ctl, msg) : -ENOTCONN;
    json_decref(msg);
    return rc;
}

int noded_umask(const json_t *msg)
{
    char err[64];
    int64_t v;
    return proto_int_opt(msg, "umask", 0, 0777, -1, &v, err, sizeof(err)) < 0 ? -1 : (int)v;
}

void noded_dispatch(noded_t *d, const json_t *msg)
{
    const char *type;
    char err[128];
    if (!json_object_get(msg, "type") && json_is_false(json_object_get(msg, "ok"))) {
        /* a refusal (of our registration: it has no type); said once while it stays the
         * same, as one comes every second */
        const char *e = json_string_value(json_object_get(msg, "error"));
        if (!e)
            e = "(no message)";
        if (strcmp(e, d->last_refusal))
            fprintf(stderr, "ductile-noded %s: controller: %s\n", d->name, e);
        snprintf(d->last_refusal, sizeof(d->last_refusal), "%s", e);
        return;
    }
    if (proto_type(msg, &type, err, sizeof(err)) < 0)
        return;
    if (!strcmp(type, "registered") || !strcmp(type, "pong") || !strcmp(type, "peers")) {
        const json_t *peers = json_object_get(msg, "peers");
        if (peers)
            peers_set_known(d, peers);
    }
    if (!strcmp(type, "registered")) {
        d->registered = true;
        d->registered_once = true;
        d->last_refusal[0] = '\0';
        if (!d->reregistering)
            fprintf(stderr, "ductile-noded %s: registered with the controller\n", d->name);
        d->reregistering = false;
        jobs_on_registered(d);
        steps_on_registered(d);
    } else if (!strcmp(type, "register_again")) {
        noded_register_again(d);
    } else if (!strcmp(type, "job_start")) {
        jobs_on_start(d, msg);
    } else if (!strcmp(type, "job_cleanup")) {
        jobs_on_cleanup(d, msg);
    } else if (!strcmp(type, "job_signal")) {
        jobs_on_signal(d, msg);
    } else if (!strcmp(type, "job_limit")) {
        jobs_on_limit(d, msg);
    } else if (!strcmp(type, "step_start")) {
        steps_on_start(d, msg);
    } else if (!strcmp(type, "step_kill")) {
        steps_on_kill(d, msg);
    } else if (!strcmp(type, "step_input")) {
        steps_on_input(d, msg);
    } else if (!strcmp(type, "step_credit")) {
        steps_on_credit(d, msg);
    } else if (!strcmp(type, "step_resend")) {
        steps_on_resend(d, msg);
    } else if (!strcmp(type, "resize_offer") || !strcmp(type, "resize_withdraw") ||
               !strcmp(type, "nodes_lost")) {
        apps_relay(d, msg);
    } else if (!strcmp(type, "relay") || !strcmp(type, "relay_close")) {
        apps_on_relay(d, msg, !strcmp(type, "relay_close"));
    } else if (!strcmp(type, "job_resized")) {
        hosts_on_resized(d, msg);
    } else if (!strcmp(type, "agent_start")) {
        agents_on_start(d, msg);
    } else if (!strcmp(type, "agent_stop")) {
        agents_on_stop(d, msg);
    } else if (!strcmp(type, "ckpt_agents")) {
        agents_on_list(d, msg);
    } else if (!strcmp(type, "job_ended_ack")) {
        jobs_on_ended_ack(d, msg);
    }
}

/* Tells the controller what we still hold: on each connection, and again when it asks
 * (register_again: it reloaded its state after a failed commit, noded_register_again). */
void noded_send_register(noded_t *d)
{
    long mem = sysconf(_SC_PHYS_PAGES) / 1024 * sysconf(_SC_PAGESIZE) / 1024;
    json_t *reg = json_pack("{s:s,s:s,s:i,s:I,s:o}", "type", "register", "node", d->name, "cpus",
                            d->cfg.cores_per_node, "memory_mb", (json_int_t)mem, "jobs",
                            jobs_report(d));
    /* Steps: the tasks we hold, and whether this daemon ever registered (if not, it is
     * a new incarnation and holds none of its predecessor's tasks). */
    json_object_set_new(reg, "steps", steps_report(d));
    json_object_set_new(reg, "first", json_boolean(!d->registered_once));
    /* every job message names its run: a controller refuses a daemon that does not */
    json_object_set_new(reg, "runs", json_true());
    /* where other nodes send the output of steps whose client runs here */
    json_object_set_new(reg, "step_port", json_integer(d->step_port));
    /* the limits its jobs' cgroups get: `ductile nodes` says where they are not enforced */
    json_object_set_new(reg, "limits", json_pack("{s:b,s:b}",
                                                 "memory", (d->limits & LAUNCH_LIMIT_MEMORY) != 0,
                                                 "pids", (d->limits & LAUNCH_LIMIT_PIDS) != 0));
    /* the jobs whose checkpoint agents run here (a checkpoint node) */
    json_object_set_new(reg, "agents", agents_report(d));
    conn_send_new(d->ctl, reg);
}


void noded_register_again(noded_t *d)
{
    if (!d->ctl || !d->registered)
        return; /* registering already: the answer to that will do */
    d->reregistering = true; /* said quietly: the connection stayed */
    noded_send_register(d);
}
