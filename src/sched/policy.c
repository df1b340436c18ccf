/* The policy table and the parsing of "name:key=value:key=value" specs.
 * Adding a policy: write policies/NAME.c defining a sched_policy_t, declare it in
 * policies/policies.h and list it in the table below. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/policies.h"
#include "sched_internal.h"

static const sched_policy_t *const table[] = {
    &policy_fcfs,       &policy_easy,       &policy_conservative, &policy_fpsma_prma,
    &policy_fpsma_pwma, &policy_egs_prma,   &policy_egs_pwma,     &policy_perf,
    &policy_dmr,        &policy_mebf,       &policy_equi,        &policy_power,
    &policy_sfsj,       &policy_ioaware,    &policy_elastic,
};
#define NPOLICIES (sizeof(table) / sizeof(table[0]))

const sched_policy_t *policy_lookup(const char *name)
{
    for (size_t i = 0; i < NPOLICIES; i++)
        if (!strcmp(table[i]->name, name))
            return table[i];
    return NULL;
}

const char *sched_policy_name_at(int i, const char **summary)
{
    if (i < 0 || (size_t)i >= NPOLICIES)
        return NULL;
    if (summary)
        *summary = table[i]->summary;
    return table[i]->name;
}

int sched_policy_params_at(int i, int k, const char **name, double *def, const char **help)
{
    if (i < 0 || (size_t)i >= NPOLICIES)
        return -1;
    const sched_param_def_t *p = table[i]->params;
    for (int m = 0; p && p[m].name; m++)
        if (m == k) {
            *name = p[m].name;
            *def = p[m].def;
            *help = p[m].help;
            return 0;
        }
    return -1;
}

static void list_names(char *buf, size_t len)
{
    size_t pos = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NPOLICIES && pos < len; i++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", i ? ", " : "", table[i]->name);
}

int policy_parse(const char *spec, const sched_policy_t **pol, double *params, double *tick,
                 bool *power, char *canon, size_t canonlen, char *err, size_t errlen)
{
    char buf[256];
    if (strlen(spec) >= sizeof(buf))
        return snprintf(err, errlen, "policy spec too long"), -EINVAL;
    strcpy(buf, spec);
    char *save = NULL, *name = strtok_r(buf, ":", &save);
    if (!name) {
        snprintf(err, errlen, "empty policy name");
        return -EINVAL;
    }
    const sched_policy_t *p = policy_lookup(name);
    if (!p) {
        char names[512];
        list_names(names, sizeof(names));
        snprintf(err, errlen, "unknown policy '%s' (known: %s)", name, names);
        return -EINVAL;
    }
    int np = 0;
    while (p->params && p->params[np].name)
        np++;
    for (int i = 0; i < np; i++)
        params[i] = p->params[i].def;
    *tick = 0;
    *power = false;
    char *kv;
    const char *seen[SCHED_MAX_PARAMS + 2]; /* each key once, as in ductile.conf */
    int nseen = 0;
    while ((kv = strtok_r(NULL, ":", &save))) {
        char *eq = strchr(kv, '=');
        if (!eq || eq == kv || !eq[1]) {
            snprintf(err, errlen, "policy %s: parameter '%s' is not key=value", name, kv);
            return -EINVAL;
        }
        *eq = '\0';
        for (int i = 0; i < nseen; i++)
            if (!strcmp(seen[i], kv)) {
                snprintf(err, errlen, "policy %s: %s is given twice", name, kv);
                return -EINVAL;
            }
        if (nseen < SCHED_MAX_PARAMS + 2)
            seen[nseen++] = kv;
        char *end;
        errno = 0;
        double v = strtod(eq + 1, &end);
        if (errno || *end || !isfinite(v)) {
            snprintf(err, errlen, "policy %s: value '%s' of %s is not a number", name, eq + 1, kv);
            return -EINVAL;
        }
        if (!strcmp(kv, "tick")) {
            if (v < 0) {
                snprintf(err, errlen, "policy %s: tick must be >= 0", name);
                return -EINVAL;
            }
            *tick = v;
            continue;
        }
        /* power=1: any policy admits jobs by the power corridor (docs/power.md) */
        if (!strcmp(kv, "power")) {
            if (p->no_power_admit && v == 1) {
                snprintf(err, errlen, "policy %s does not admit jobs by power (power=1): its "
                         "starts follow the I/O balance only", name);
                return -EINVAL;
            }
            if (p->uses_power) {
                snprintf(err, errlen, "policy %s admits jobs by power already (admit=0 turns "
                         "it off)", name);
                return -EINVAL;
            }
            if (v != 0 && v != 1) {
                snprintf(err, errlen, "policy %s: power takes 0 or 1", name);
                return -EINVAL;
            }
            *power = v == 1;
            continue;
        }
        int k = 0;
        while (k < np && strcmp(p->params[k].name, kv))
            k++;
        if (k == np) {
            char known[256] = "tick, power";
            size_t pos = 11;
            for (int i = 0; i < np && pos < sizeof(known); i++)
                pos += (size_t)snprintf(known + pos, sizeof(known) - pos, ", %s", p->params[i].name);
            snprintf(err, errlen, "policy %s has no parameter '%s' (known: %s)", name, kv, known);
            return -EINVAL;
        }
        if (p->params[k].whole && v != floor(v)) {
            snprintf(err, errlen, "policy %s: %s takes a whole number%s, not %s", name, kv,
                     p->params[k].lo == 0 && p->params[k].hi == 1 ? " (0 or 1)" : "", eq + 1);
            return -EINVAL;
        }
        if (v < p->params[k].lo || v > p->params[k].hi) {
            snprintf(err, errlen, "policy %s: %s=%g out of range [%g, %g]", name, kv, v,
                     p->params[k].lo, p->params[k].hi);
            return -EINVAL;
        }
        params[k] = v;
    }
    *pol = p;
    size_t pos = (size_t)snprintf(canon, canonlen, "%s", p->name);
    for (int i = 0; i < np && pos < canonlen; i++)
        pos += (size_t)snprintf(canon + pos, canonlen - pos, ":%s=%g", p->params[i].name, params[i]);
    if (*tick > 0 && pos < canonlen)
        pos += (size_t)snprintf(canon + pos, canonlen - pos, ":tick=%g", *tick);
    if (*power && pos < canonlen)
        snprintf(canon + pos, canonlen - pos, ":power=1");
    return 0;
}
