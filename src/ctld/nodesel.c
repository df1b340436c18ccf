/* Jobs restricted to some nodes: --constraint (features), --gpus-per-node, --mem,
 * --exclude and --nodelist become the two node sets the engine takes, allowed and
 * required (docs/policies.md, "Node selection"). Computed at submission and again at
 * every restart, from the job's own request and the nodes' attributes in ductile.conf
 * (NodeFeatures, NodeGres, NodeMemory): a changed configuration applies to the jobs
 * that wait. A request no node could ever satisfy is refused, saying which part. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld.h"
#include "featexpr.h"
#include "hostlist.h"
#include "nodeattr.h"
#include "proto.h"

#define HOSTLIST_TEXT_MAX 65536

#define BAD(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

static int dup_opt(const char *v, char **out)
{
    *out = v && *v ? strdup(v) : NULL;
    return v && *v && !*out ? -ENOMEM : 0;
}

int nsel_from_request(const json_t *m, job_sel_t *sel, char *err, size_t errlen)
{
    const char *feat, *list, *excl;
    int64_t gpus, mem;
    if (proto_str_opt(m, "features", FEATEXPR_MAX, NULL, &feat, err, errlen) < 0 ||
        proto_int_opt(m, "gpus_per_node", 0, NODEATTR_GPUS_MAX, 0, &gpus, err, errlen) < 0 ||
        proto_int_opt(m, "mem", 0, INT_MAX, 0, &mem, err, errlen) < 0 ||
        proto_str_opt(m, "req_nodelist", HOSTLIST_TEXT_MAX, NULL, &list, err, errlen) < 0 ||
        proto_str_opt(m, "exc_nodelist", HOSTLIST_TEXT_MAX, NULL, &excl, err, errlen) < 0)
        return -EINVAL;
    char why[256];
    if (feat && *feat && featexpr_check(feat, why, sizeof(why)) < 0)
        return BAD("--constraint %.200s: %s", feat, why);
    sel->gpus = (int)gpus;
    sel->mem = (int)mem;
    if (dup_opt(feat, &sel->features) || dup_opt(list, &sel->nodelist) ||
        dup_opt(excl, &sel->exclude))
        return BAD("out of memory");
    return 0;
}

/* The node indices of a host list; every name must be a node of the cluster. */
static int nodes_of(const ctld_t *c, const char *opt, const char *text, int **out, int *n,
                    char *err, size_t errlen)
{
    char **names = NULL, herr[256];
    int count = 0, rc = hostlist_expand(text, &names, &count, herr, sizeof(herr));
    if (rc == -ENOMEM)
        return BAD("out of memory");
    if (rc < 0)
        return BAD("%s %.200s: %s", opt, text, herr);
    *out = malloc(((size_t)count + 1) * sizeof(int));
    *n = 0;
    for (int k = 0; rc == 0 && k < count; k++) {
        int i = config_node_index(&c->cfg, names[k]);
        if (i < 0)
            rc = BAD("%s: %s is not a node of this cluster", opt, names[k]);
        else if (*out)
            (*out)[(*n)++] = i;
    }
    hostlist_free(names, count);
    if (rc == 0 && !*out)
        rc = BAD("out of memory");
    if (rc < 0) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

/* A feature name the constraint uses that no node has (featexpr_each). */
typedef struct unknown {
    const ctld_t *c;
    char name[72];
} unknown_t;

static int known_feature(const char *name, size_t len, void *arg)
{
    unknown_t *u = arg;
    for (int i = 0; i < u->c->cfg.nnodes; i++)
        if (featexpr_has(u->c->cfg.node_features[i], name, len))
            return 0;
    snprintf(u->name, sizeof(u->name), "%.*s", (int)(len > 64 ? 64 : len), name);
    return 1;
}

/* Why no node is allowed: the first part of the request no node meets alone. */
static int none_allowed(const ctld_t *c, const job_sel_t *s, char *err, size_t errlen)
{
    int gmax = 0, mmax = 0;
    bool feat = false;
    for (int i = 0; i < c->cfg.nnodes; i++) {
        if (c->cfg.ckpt_node[i])
            continue;
        gmax = c->cfg.node_gpus[i] > gmax ? c->cfg.node_gpus[i] : gmax;
        mmax = c->cfg.node_memory[i] > mmax ? c->cfg.node_memory[i] : mmax;
        feat |= s->features && featexpr_match(s->features, c->cfg.node_features[i]);
    }
    if (s->features && !feat)
        return BAD("no node has features %s", s->features);
    if (s->gpus > gmax)
        return BAD("no node has %d GPUs (the most a node has is %d)", s->gpus, gmax);
    if (s->mem > mmax)
        return BAD("no node has %d MiB of memory (the most a node has is %d MiB)", s->mem,
                   mmax);
    char what[FEATEXPR_MAX + 200] = "";
    size_t n = 0;
    if (s->features)
        n += (size_t)snprintf(what + n, sizeof(what) - n, ", --constraint %s", s->features);
    if (s->gpus && n < sizeof(what))
        n += (size_t)snprintf(what + n, sizeof(what) - n, ", --gpus-per-node %d", s->gpus);
    if (s->mem && n < sizeof(what))
        n += (size_t)snprintf(what + n, sizeof(what) - n, ", --mem %dM", s->mem);
    if (s->exclude && n < sizeof(what))
        snprintf(what + n, sizeof(what) - n, ", --exclude %.200s", s->exclude);
    return BAD("no node meets %s together", what + 2);
}

static bool node_allowed(const ctld_t *c, const job_sel_t *s, int i, const nodeset_t *excluded,
                         const bool *parts)
{
    return !c->cfg.ckpt_node[i] && !(excluded && nodeset_test(excluded, i)) &&
           (!parts || parts[i]) &&
           (!s->features || featexpr_match(s->features, c->cfg.node_features[i])) &&
           c->cfg.node_gpus[i] >= s->gpus && c->cfg.node_memory[i] >= s->mem;
}

static int compute_allowed(const ctld_t *c, job_sel_t *s, const bool *parts, char *err,
                           size_t errlen)
{
    int n = c->cfg.nnodes, *ex = NULL, nex = 0, rc;
    if (s->features) {
        char why[256];
        if (featexpr_check(s->features, why, sizeof(why)) < 0)
            return BAD("--constraint %.200s: %s", s->features, why);
        unknown_t u = {.c = c};
        if (featexpr_each(s->features, known_feature, &u))
            return BAD("no node has the feature %s (NodeFeatures in ductile.conf)", u.name);
    }
    if (s->exclude && (rc = nodes_of(c, "--exclude", s->exclude, &ex, &nex, err, errlen)) < 0)
        return rc;
    nodeset_t *excluded = nex ? nodeset_create(n) : NULL;
    s->allowed = nodeset_create(n);
    if ((nex && !excluded) || !s->allowed) {
        free(ex);
        nodeset_destroy(excluded);
        return BAD("out of memory");
    }
    for (int k = 0; k < nex; k++)
        nodeset_set(excluded, ex[k]);
    free(ex);
    for (int i = 0; i < n; i++)
        if (node_allowed(c, s, i, excluded, parts))
            nodeset_set(s->allowed, i);
    nodeset_destroy(excluded);
    if (!nodeset_count(s->allowed) && parts)
        return BAD("no node of its partitions meets its --constraint, --gpus-per-node, --mem "
                   "and --exclude");
    return nodeset_count(s->allowed) ? 0 : none_allowed(c, s, err, errlen);
}

/* Every required node must be allowed; a longer list than the job's size raises it. */
static int compute_required(const ctld_t *c, job_t *j, char *err, size_t errlen)
{
    job_sel_t *s = &j->sel;
    int rc = nodes_of(c, "--nodelist", s->nodelist, &s->required, &s->nrequired, err, errlen);
    if (rc < 0)
        return rc;
    for (int k = 0; k < s->nrequired; k++)
        if (c->cfg.ckpt_node[s->required[k]])
            return BAD("--nodelist: %s holds checkpoints and runs no jobs (CheckpointNodes)",
                       c->cfg.nodes[s->required[k]]);
        else if (s->allowed && !nodeset_test(s->allowed, s->required[k]))
            return BAD("--nodelist: %s does not meet the job's --constraint, --gpus-per-node, "
                       "--mem or --exclude (or is a checkpoint node)",
                       c->cfg.nodes[s->required[k]]);
    if (j->nodes < s->nrequired)
        j->nodes = s->nrequired;
    if (j->min_nodes && j->min_nodes < s->nrequired)
        j->min_nodes = s->nrequired;
    return 0;
}

static void forget_sets(job_sel_t *s)
{
    nodeset_destroy(s->allowed);
    free(s->required);
    s->allowed = NULL;
    s->required = NULL;
    s->nrequired = 0;
}

void nsel_spec(ctld_t *c, const job_sel_t *s, sched_jobspec_t *spec)
{
    spec->required = s->required;
    spec->nrequired = s->nrequired;
    if (!s->allowed)
        return;
    /* the engine copies them at once: one buffer serves every job */
    if (!c->sel_buf && !(c->sel_buf = malloc(((size_t)c->cfg.nnodes + 1) * sizeof(int))))
        abort(); /* as the engine's own arrays: no sane decision without memory */
    int n = 0;
    for (int i = nodeset_next(s->allowed, 0); i >= 0; i = nodeset_next(s->allowed, i + 1))
        c->sel_buf[n++] = i;
    spec->allowed = c->sel_buf;
    spec->nallowed = n;
}

int nsel_no_node(const ctld_t *c, job_sel_t *s)
{
    forget_sets(s);
    return (s->allowed = nodeset_create(c->cfg.nnodes)) ? 0 : -ENOMEM;
}

int nsel_resolve(const ctld_t *c, job_t *j, char *err, size_t errlen)
{
    job_sel_t *s = &j->sel;
    forget_sets(s);
    int rc = 0;
    bool *parts = parts_nodes(c, j, &j->tier); /* partitions.c; NULL: every node */
    if (s->features || s->gpus || s->mem || s->exclude || parts)
        rc = compute_allowed(c, s, parts, err, errlen);
    free(parts);
    if (rc == 0 && s->nodelist)
        rc = compute_required(c, j, err, errlen);
    if (rc < 0)
        forget_sets(s);
    return rc;
}

char *nsel_to_text(const job_sel_t *s)
{
    if (!s->features && !s->gpus && !s->mem && !s->nodelist && !s->exclude)
        return strdup("");
    json_t *o = json_object();
    nsel_show(s, o);
    char *t = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return t;
}

int nsel_from_text(const char *text, job_sel_t *s)
{
    if (!text || !*text)
        return 0;
    json_t *o = json_loads(text, 0, NULL);
    char err[256];
    int rc = json_is_object(o) ? nsel_from_request(o, s, err, sizeof(err)) : -EINVAL;
    json_decref(o);
    return rc;
}

void nsel_show(const job_sel_t *s, json_t *o)
{
    if (s->features)
        json_object_set_new(o, "features", json_string(s->features));
    if (s->gpus)
        json_object_set_new(o, "gpus_per_node", json_integer(s->gpus));
    if (s->mem)
        json_object_set_new(o, "mem", json_integer(s->mem));
    if (s->nodelist)
        json_object_set_new(o, "req_nodelist", json_string(s->nodelist));
    if (s->exclude)
        json_object_set_new(o, "exc_nodelist", json_string(s->exclude));
}

int nsel_copy_request(const job_sel_t *from, job_sel_t *to)
{
    to->gpus = from->gpus;
    to->mem = from->mem;
    return dup_opt(from->features, &to->features) || dup_opt(from->nodelist, &to->nodelist) ||
                   dup_opt(from->exclude, &to->exclude)
               ? -ENOMEM
               : 0;
}

void nsel_free(job_sel_t *s)
{
    forget_sets(s);
    free(s->features);
    free(s->nodelist);
    free(s->exclude);
    s->features = s->nodelist = s->exclude = NULL;
}
