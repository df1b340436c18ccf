/* libFuzzer target: arbitrary scripts into the #DUCTILE directive scanner. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/directives.h"

static int needs(const char *name, void *arg)
{
    (void)arg;
    return strlen(name) % 2; /* some options take values, some do not */
}

static int on(const char *name, const char *value, int line, void *arg)
{
    size_t *count = arg;
    (*count) += strlen(name) + (value ? strlen(value) : 0) + (size_t)(line > 0);
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
    directives_scan(s, needs, on, &count, err, sizeof(err));
    free(s);
    return 0;
}
