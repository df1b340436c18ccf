/* Partitions (docs/partitions.md): named sets of nodes with their own rules, one line
 * each in ductile.conf, as Slurm writes them:
 *
 *   Partition = debug Nodes=n[1-2] DefaultTime=10 MaxTime=1:00:00 MaxNodes=2 Default=YES
 *   Partition = batch Nodes=n[1-8] AllowAccounts=physics,chem PriorityTier=2 State=UP
 *
 * Sets may overlap. Without any Partition line, every node is in one partition named
 * after the cluster. */
#ifndef DUCTILE_PARTITION_H
#define DUCTILE_PARTITION_H

#include <stdbool.h>
#include <stddef.h>

typedef enum partition_state {
    PART_UP = 0,   /* takes jobs and starts them */
    PART_DOWN,     /* takes jobs; starts none */
    PART_DRAIN,    /* takes no new jobs; starts those it has */
    PART_INACTIVE, /* neither */
} partition_state_t;

typedef struct config_partition {
    char *name;
    bool *nodes;          /* nnodes flags */
    int nnodes;           /* how many are in it */
    bool is_default;      /* jobs that name none go here */
    double default_time;  /* s: a job without --time gets it; 0: none */
    double max_time;      /* s; 0: no maximum */
    int max_nodes;        /* per job; 0: no maximum */
    char **accounts;      /* AllowAccounts; NULL: any */
    int naccounts;
    char **groups;        /* AllowGroups (Unix groups); NULL: any */
    int ngroups;
    int tier;             /* PriorityTier: the priority's partition factor, preemption */
    partition_state_t state;
    bool preempt;         /* PreemptMode=REQUEUE: its jobs may preempt lower tiers' */
} config_partition_t;

struct config;
/* One Partition line's value into cfg->partitions (Nodes known). 0, -EINVAL with the
 * reason in err, -ENOMEM. */
int partition_parse(struct config *cfg, const char *text, char *err, size_t errlen);
/* After every line: one default at most (none: the first), names unique. */
int partition_finish(struct config *cfg, char *err, size_t errlen);
void partitions_free(struct config *cfg);
/* The partition named, or NULL. */
const config_partition_t *partition_find(const struct config *cfg, const char *name);
const char *partition_state_name(partition_state_t s);
/* "UP", "down"...: 0, or -EINVAL for another word. */
int partition_state_parse(const char *s, partition_state_t *out);

#endif
