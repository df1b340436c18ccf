#include "ckptfiles.h"

#include <limits.h>
#include <stdio.h>

long ckptfiles_latest(const char *app_dir)
{
    char p[PATH_MAX + 16];
    snprintf(p, sizeof(p), "%s/latest", app_dir);
    FILE *f = fopen(p, "re");
    long v = 0;
    if (f && fscanf(f, "%ld", &v) != 1)
        v = 0;
    if (f)
        fclose(f);
    return v > 0 ? v : 0;
}
