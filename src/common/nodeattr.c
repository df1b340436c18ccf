#include "nodeattr.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "featexpr.h"
#include "strparse.h"

static const char *const key_names[] = {"NodeFeatures", "NodeGres", "NodeMemory"};

int nodeattr_init(config_t *cfg)
{
    int n = cfg->nnodes;
    cfg->node_features = calloc((size_t)n, sizeof(char *));
    cfg->node_gpus = calloc((size_t)n, sizeof(int));
    cfg->node_memory = malloc((size_t)n * sizeof(int));
    if (!cfg->node_features || !cfg->node_gpus || !cfg->node_memory)
        return -ENOMEM;
    for (int i = 0; i < n; i++)
        cfg->node_memory[i] = cfg->memory_per_node;
    return 0;
}

void nodeattr_free(config_t *cfg)
{
    if (cfg->node_features)
        for (int i = 0; i < cfg->nnodes; i++)
            free(cfg->node_features[i]);
    free(cfg->node_features);
    free(cfg->node_gpus);
    free(cfg->node_memory);
    cfg->node_features = NULL;
    cfg->node_gpus = cfg->node_memory = NULL;
}

int nodeattr_parse_gres(const char *v, int *gpus)
{
    long n;
    if (strncmp(v, "gpu:", 4) || strparse_long(v + 4, 0, NODEATTR_GPUS_MAX, &n) < 0)
        return -EINVAL;
    *gpus = (int)n;
    return 0;
}

/* Check one entry's value; *num: its number (GPUs, MiB). */
static int check_value(nodeattr_kind_t kind, const char *v, int *num, char *err, size_t errlen)
{
    const char *key = key_names[kind];
    long mib;
    switch (kind) {
    case NODEATTR_FEATURES: {
        char why[FEATEXPR_MAX + 160];
        if (featexpr_check_list(v, why, sizeof(why)) < 0)
            return snprintf(err, errlen, "%s: %s", key, why), -EINVAL;
        return 0;
    }
    case NODEATTR_GRES:
        if (nodeattr_parse_gres(v, num) < 0)
            return snprintf(err, errlen, "%s: '%.60s' is not gpu:COUNT (0 to %d); GPUs are the "
                            "only generic resource counted", key, v, NODEATTR_GPUS_MAX),
                   -EINVAL;
        return 0;
    case NODEATTR_MEMORY:
        if (strparse_memory(v, INT_MAX, &mib) < 0 || mib < 1)
            return snprintf(err, errlen, "%s: '%.60s' is not an amount of memory (MiB, or with "
                            "K, M, G or T: 256000, 512G)", key, v),
                   -EINVAL;
        *num = (int)mib;
        return 0;
    }
    return -EINVAL;
}

/* Set the value on every node of hosts, each at most once per key. */
static int set_nodes(config_t *cfg, nodeattr_kind_t kind, const char *hosts, const char *v,
                     int num, char *seen, char *err, size_t errlen)
{
    const char *key = key_names[kind];
    char **names = NULL, herr[256];
    int n = 0, rc = hostlist_expand(hosts, &names, &n, herr, sizeof(herr));
    if (rc == -ENOMEM)
        return rc;
    if (rc < 0)
        return snprintf(err, errlen, "%s: %s", key, herr), -EINVAL;
    for (int k = 0; k < n && rc == 0; k++) {
        int i = config_node_index(cfg, names[k]);
        if (i < 0)
            rc = (snprintf(err, errlen, "%s: %s is not one of Nodes", key, names[k]), -EINVAL);
        else if (seen[i])
            rc = (snprintf(err, errlen, "%s: %s is given twice", key, names[k]), -EINVAL);
        else if (kind == NODEATTR_FEATURES && !(cfg->node_features[i] = strdup(v)))
            rc = -ENOMEM;
        else if (kind == NODEATTR_GRES)
            cfg->node_gpus[i] = num;
        else if (kind == NODEATTR_MEMORY)
            cfg->node_memory[i] = num;
        if (i >= 0)
            seen[i] = 1;
    }
    hostlist_free(names, n);
    return rc;
}

int nodeattr_parse(config_t *cfg, nodeattr_kind_t kind, const char *text, char *err,
                   size_t errlen)
{
    char *copy = strdup(text), *seen = calloc((size_t)cfg->nnodes, 1), *save = NULL;
    int rc = copy && seen ? 0 : -ENOMEM;
    for (char *t = rc ? NULL : strtok_r(copy, " \t;", &save); t && rc == 0;
         t = strtok_r(NULL, " \t;", &save)) {
        char *eq = strchr(t, '=');
        int num = 0;
        if (!eq || eq == t || !eq[1]) {
            rc = (snprintf(err, errlen, "%s: '%.60s' is not HOSTS=VALUE (e.g. gpu[01-04]=%s)",
                           key_names[kind], t,
                           kind == NODEATTR_FEATURES ? "gpu,a100"
                           : kind == NODEATTR_GRES   ? "gpu:4"
                                                     : "512G"),
                  -EINVAL);
            break;
        }
        *eq = '\0';
        if ((rc = check_value(kind, eq + 1, &num, err, errlen)) == 0)
            rc = set_nodes(cfg, kind, t, eq + 1, num, seen, err, errlen);
    }
    free(copy);
    free(seen);
    return rc;
}
