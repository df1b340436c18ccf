/* Partition lines of ductile.conf (partition.h). */
#include "partition.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "hostlist.h"
#include "strparse.h"

#define BAD(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

static const char *const state_names[] = {"UP", "DOWN", "DRAIN", "INACTIVE"};

int partition_state_parse(const char *s, partition_state_t *out)
{
    for (int k = PART_UP; k <= PART_INACTIVE; k++)
        if (!strcasecmp(s, state_names[k])) {
            *out = (partition_state_t)k;
            return 0;
        }
    return -EINVAL;
}

const char *partition_state_name(partition_state_t s)
{
    return s >= PART_UP && s <= PART_INACTIVE ? state_names[s] : "?";
}

static void part_free(config_partition_t *p)
{
    free(p->name);
    free(p->nodes);
    hostlist_free(p->accounts, p->naccounts);
    hostlist_free(p->groups, p->ngroups);
}

void partitions_free(struct config *cfg)
{
    for (int i = 0; i < cfg->npartitions; i++)
        part_free(&cfg->partitions[i]);
    free(cfg->partitions);
    cfg->partitions = NULL;
    cfg->npartitions = 0;
}

const config_partition_t *partition_find(const struct config *cfg, const char *name)
{
    for (int i = 0; name && i < cfg->npartitions; i++)
        if (!strcmp(cfg->partitions[i].name, name))
            return &cfg->partitions[i];
    return NULL;
}

/* A comma-separated list of names (ALL: NULL). */
static int name_list(const char *v, char ***out, int *n, const char *key, char *err,
                     size_t errlen)
{
    *out = NULL;
    *n = 0;
    if (!strcasecmp(v, "ALL"))
        return 0;
    char *dup = strdup(v), *save = NULL;
    if (!dup)
        return -ENOMEM;
    for (char *w = strtok_r(dup, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (!hostlist_valid_name(w)) {
            free(dup);
            hostlist_free(*out, *n);
            *out = NULL;
            *n = 0;
            return BAD("%s: '%s' is not a name", key, w);
        }
        char **na = realloc(*out, (size_t)(*n + 1) * sizeof(char *));
        if (!na) {
            free(dup);
            return -ENOMEM; /* what is in *out goes with the partition */
        }
        *out = na;
        if (!(na[*n] = strdup(w))) {
            free(dup);
            return -ENOMEM;
        }
        (*n)++;
    }
    free(dup);
    return 0;
}

static int time_value(const char *v, double *out, const char *key, char *err, size_t errlen)
{
    if (!strcasecmp(v, "UNLIMITED") || !strcasecmp(v, "INFINITE")) {
        *out = 0;
        return 0;
    }
    if (strparse_duration(v, out) < 0 || *out <= 0)
        return BAD("%s: '%s' is not a time (minutes, H:MM:SS, D-HH:MM, 30m, 2h, UNLIMITED)",
                   key, v);
    return 0;
}

static int set_attr(struct config *cfg, config_partition_t *p, const char *k, const char *v,
                    char *err, size_t errlen)
{
    long n;
    if (!strcasecmp(k, "Nodes")) {
        memset(p->nodes, 0, (size_t)cfg->nnodes * sizeof(bool));
        if (!strcasecmp(v, "ALL")) {
            for (int i = 0; i < cfg->nnodes; i++)
                p->nodes[i] = true;
            return 0;
        }
        char **names = NULL, herr[256];
        int count = 0;
        if (hostlist_expand(v, &names, &count, herr, sizeof(herr)) < 0)
            return BAD("Nodes: %s", herr);
        for (int i = 0; i < count; i++) {
            int idx = config_node_index(cfg, names[i]);
            if (idx < 0) {
                int rc = BAD("Nodes: %s is not one of Nodes", names[i]);
                hostlist_free(names, count);
                return rc;
            }
            p->nodes[idx] = true;
        }
        hostlist_free(names, count);
        return 0;
    }
    if (!strcasecmp(k, "Default")) {
        if (strcasecmp(v, "YES") && strcasecmp(v, "NO"))
            return BAD("Default: YES or NO, not '%s'", v);
        p->is_default = !strcasecmp(v, "YES");
        return 0;
    }
    if (!strcasecmp(k, "DefaultTime"))
        return time_value(v, &p->default_time, "DefaultTime", err, errlen);
    if (!strcasecmp(k, "MaxTime"))
        return time_value(v, &p->max_time, "MaxTime", err, errlen);
    if (!strcasecmp(k, "MaxNodes")) {
        if (!strcasecmp(v, "UNLIMITED")) {
            p->max_nodes = 0;
            return 0;
        }
        if (strparse_long(v, 1, 1L << 24, &n) < 0)
            return BAD("MaxNodes: '%s' is not a node count (or UNLIMITED)", v);
        p->max_nodes = (int)n;
        return 0;
    }
    if (!strcasecmp(k, "AllowAccounts"))
        return name_list(v, &p->accounts, &p->naccounts, "AllowAccounts", err, errlen);
    if (!strcasecmp(k, "AllowGroups"))
        return name_list(v, &p->groups, &p->ngroups, "AllowGroups", err, errlen);
    if (!strcasecmp(k, "PriorityTier")) {
        if (strparse_long(v, 0, 65535, &n) < 0)
            return BAD("PriorityTier: '%s' is not a whole number from 0 to 65535", v);
        p->tier = (int)n;
        return 0;
    }
    if (!strcasecmp(k, "State"))
        return partition_state_parse(v, &p->state) == 0
                   ? 0
                   : BAD("State: UP, DOWN, DRAIN or INACTIVE, not '%s'", v);
    if (!strcasecmp(k, "PreemptMode")) {
        if (strcasecmp(v, "OFF") && strcasecmp(v, "REQUEUE"))
            return BAD("PreemptMode: OFF or REQUEUE, not '%s'", v);
        p->preempt = !strcasecmp(v, "REQUEUE");
        return 0;
    }
    return BAD("'%s' is not a partition setting (Nodes, Default, DefaultTime, MaxTime, "
               "MaxNodes, AllowAccounts, AllowGroups, PriorityTier, State, PreemptMode)", k);
}

int partition_parse(struct config *cfg, const char *text, char *err, size_t errlen)
{
    config_partition_t p = {0};
    char *dup = strdup(text), *save = NULL;
    if (!dup || !(p.nodes = calloc((size_t)cfg->nnodes, sizeof(bool)))) {
        free(dup);
        return -ENOMEM;
    }
    for (int i = 0; i < cfg->nnodes; i++)
        p.nodes[i] = true; /* Nodes=ALL unless said */
    int rc = 0;
    for (char *w = strtok_r(dup, " \t", &save); rc == 0 && w; w = strtok_r(NULL, " \t", &save)) {
        char *eq = strchr(w, '=');
        if (!p.name) {
            if (eq || !hostlist_valid_name(w)) {
                rc = BAD("Partition: first its name (letters, digits, '.', '_', '-'), then "
                         "KEY=VALUE settings, e.g. Partition = debug Nodes=n[1-2] MaxTime=30");
                break;
            }
            if (!(p.name = strdup(w)))
                rc = -ENOMEM;
            continue;
        }
        if (!eq || eq == w || !eq[1]) {
            rc = BAD("Partition %s: '%s' is not KEY=VALUE", p.name, w);
            break;
        }
        *eq = '\0';
        char why[384];
        rc = set_attr(cfg, &p, w, eq + 1, why, sizeof(why));
        if (rc == -EINVAL)
            snprintf(err, errlen, "Partition %s: %s", p.name, why);
    }
    free(dup);
    if (rc == 0 && !p.name)
        rc = BAD("Partition: a name is needed (Partition = debug Nodes=n[1-2])");
    if (rc == 0) {
        for (int i = 0; i < cfg->nnodes; i++)
            p.nnodes += p.nodes[i];
        if (!p.nnodes)
            rc = BAD("Partition %s: it has no node", p.name);
        else if (partition_find(cfg, p.name))
            rc = BAD("Partition %s is given twice", p.name);
        else if (p.default_time > 0 && p.max_time > 0 && p.default_time > p.max_time)
            rc = BAD("Partition %s: DefaultTime is longer than MaxTime (a job without --time "
                     "would be refused)", p.name);
    }
    config_partition_t *np = rc == 0 ? realloc(cfg->partitions,
                                               (size_t)(cfg->npartitions + 1) * sizeof(*np))
                                     : NULL;
    if (rc == 0 && !np)
        rc = -ENOMEM;
    if (rc < 0) {
        part_free(&p);
        return rc;
    }
    cfg->partitions = np;
    cfg->partitions[cfg->npartitions++] = p;
    return 0;
}

int partition_finish(struct config *cfg, char *err, size_t errlen)
{
    int def = -1;
    for (int i = 0; i < cfg->npartitions; i++)
        if (cfg->partitions[i].is_default) {
            if (def >= 0)
                return BAD("Partition %s: Default=YES, but %s is the default already",
                           cfg->partitions[i].name, cfg->partitions[def].name);
            def = i;
        }
    if (def < 0 && cfg->npartitions)
        cfg->partitions[0].is_default = true;
    return 0;
}
