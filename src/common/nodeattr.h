/* nodeattr: the per-node attributes of ductile.conf (docs/configuration.md, "Node
 * features, GPUs and memory"), each a list of HOSTS=VALUE entries separated by blanks
 * or ';', HOSTS a host list of some of Nodes:
 *   NodeFeatures = gpu[01-04]=gpu,a100 n[001-128]=skylake
 *   NodeGres     = gpu[01-04]=gpu:4
 *   NodeMemory   = gpu[01-04]=512G n[001-128]=256000
 * A node not named has no features, no GPUs and MemoryPerNode MiB. */
#ifndef DUCTILE_NODEATTR_H
#define DUCTILE_NODEATTR_H

#include <stddef.h>

#include "config.h"

typedef enum nodeattr_kind {
    NODEATTR_FEATURES,
    NODEATTR_GRES,
    NODEATTR_MEMORY,
} nodeattr_kind_t;

/* Most GPUs a node may have in NodeGres. */
#define NODEATTR_GPUS_MAX 1024

/* Allocate cfg's per-node arrays with their defaults (Nodes and MemoryPerNode known):
 * 0 or -ENOMEM. */
int nodeattr_init(config_t *cfg);
/* Parse one key's text into cfg: 0, -ENOMEM, or -EINVAL with the reason in err (the
 * key's name first). */
int nodeattr_parse(config_t *cfg, nodeattr_kind_t kind, const char *text, char *err,
                   size_t errlen);
void nodeattr_free(config_t *cfg);
/* "gpu:4" -> 4; 0 or -EINVAL. */
int nodeattr_parse_gres(const char *v, int *gpus);

#endif
