/* ckptmeas: what the checkpoint nodes' managers measure (seed 002 §6.3; the monitoring
 * of docs/checkpointing.md, "measurements").
 *
 * The node daemon of a checkpoint node (or of a lent node that has agents) adds to each
 * heartbeat what its agents hold, the bytes they moved per second and the versions they
 * published per second since the heartbeat before ("ckpt" in the ping; agents.c in
 * noded). The controller keeps the last report per node, and derives the rate at which
 * the node's free memory shrinks (Eq. 6.5) from two reports in a row. Nothing is kept
 * in the database: a restarted controller has them again at the next heartbeat, and
 * until a node reports (or when its report is older than NodeTimeout) placement counts
 * agents as their CheckpointAgentMemory budget and the scaler leaves the node out. */
#include <math.h>

#include "ctld.h"

/* Beyond any node's memory or link: a report past these is not a measure. */
#define HELD_MAX 1e16    /* bytes */
#define TRAFFIC_MAX 1e13 /* bytes/s */
#define OPS_MAX 1e6      /* commits/s */

static bool in_range(const json_t *v, double max, double *out)
{
    if (!json_is_number(v))
        return false;
    *out = json_number_value(v);
    return isfinite(*out) && *out >= 0 && *out <= max;
}

void ckptmeas_on_ping(ctld_t *c, node_t *n, const json_t *msg)
{
    const json_t *m = json_object_get(msg, "ckpt");
    double held, traffic, ops, now = ctld_mono();
    if (!json_is_object(m) || !in_range(json_object_get(m, "held"), HELD_MAX, &held) ||
        !in_range(json_object_get(m, "traffic"), TRAFFIC_MAX, &traffic) ||
        !in_range(json_object_get(m, "ops"), OPS_MAX, &ops))
        return; /* none (a node for jobs), or malformed: dropped, never kept */
    /* two reports in a row: how fast the agents took memory meanwhile */
    n->ck_depletion = ckptmeas_fresh(c, n) && now > n->ck_at
                          ? (held - n->ck_held) / (now - n->ck_at) : 0;
    n->ck_held = held;
    n->ck_traffic = traffic;
    n->ck_ops = ops;
    n->ck_at = now;
    ckptsvc_scale(c);
}

bool ckptmeas_fresh(const ctld_t *c, const node_t *n)
{
    return n->ck_at > 0 && ctld_mono() - n->ck_at <= c->cfg.node_timeout;
}

long ckptmeas_node_mb(const ctld_t *c, const node_t *n)
{
    if (c->cfg.ckpt_node_memory > 0)
        return c->cfg.ckpt_node_memory;
    return n->memory_mb > 0 ? n->memory_mb : c->cfg.memory_per_node;
}
