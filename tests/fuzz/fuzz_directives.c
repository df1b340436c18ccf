/* libFuzzer target: arbitrary scripts into the #SBATCH/#DUCTILE directive scanner. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/directives.h"

static int on(directive_kind_t kind, int argc, char **argv, int line, void *arg)
{
    size_t *count = arg;
    for (int k = 0; k < argc; k++)
        (*count) += strlen(argv[k]) + (size_t)kind;
    (*count) += (size_t)(line > 0) + (argv[argc] != NULL);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    size_t count = 0;
    char err[256];
    int late;
    directives_scan(s, on, &count, &late, err, sizeof(err));
    free(s);
    return 0;
}
