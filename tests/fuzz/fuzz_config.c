/* libFuzzer target: ductile.conf parsing (and through Nodes, host list expansion).
 *
 *   clang -fsanitize=fuzzer,address -Isrc -Isrc/common tests/fuzz/fuzz_config.c \
 *         src/common/config.c src/common/hostlist.c
 *
 * Any input must give 0 or a negative errno with a message, never a crash, a leak or
 * a read past the text. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    config_t cfg;
    char err[256];
    /* An origin with a directory, so relative paths are joined too. */
    if (config_parse_string(text, "/etc/ductile/ductile.conf", &cfg, err, sizeof(err)) == 0) {
        for (int i = 0; i < cfg.nnodes; i++)
            if (config_node_index(&cfg, cfg.nodes[i]) != i)
                abort();
        if (cfg.heartbeat_interval >= cfg.node_timeout || cfg.nnodes < 1)
            abort();
    } else if (!memchr(err, '\0', sizeof(err)) || err[0] == '\0') {
        abort(); /* every failure explains itself */
    }
    config_free(&cfg);
    free(text);
    return 0;
}
