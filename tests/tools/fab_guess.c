/* What a local attacker does to a checkpoint agent's or an application's data endpoint
 * (the security issue; tests/integration/test_ckpt_auth.sh): it found the port with
 * `ss -tln`, has no region's blob (those travel on the keyed control channel), and
 * guesses the keys a naive registration hands out, 1, 2, ..., at offset 0 (offsets count
 * from 0 on tcp;ofi_rxm), reading and then writing LEN bytes.
 *
 *   fab_guess [-k KEYS] [-l LEN] [-t TIMEOUT_MS] ADDR PORT...
 *
 * Prints a line per attempt that succeeded, and one per port with the counts. Exit 0
 * when every read and write was refused (or timed out), 1 when any got through, 2 on a
 * usage error or when no endpoint could be opened. Its endpoint binds ADDR (it runs on
 * the target's host). The address blob is built from a blob of its own endpoint, whose
 * format (fabric.c: magic, length, the provider's sockaddr) it shares. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabric.h"

#define ADDR_HDR 8 /* fabric.c: magic and length before the provider's name */

typedef struct mr_wire { /* fabric.c's region blob */
    uint32_t magic, pad;
    uint64_t key, base, len;
} mr_wire_t;

static int attempt(fab_t *f, const uint8_t *addr, size_t alen, fab_dir_t dir, uint64_t key,
                   fab_mr_t *mine, size_t len)
{
    char err[256];
    fab_peer_t *p;
    fab_rmr_t *r;
    mr_wire_t w = {.magic = 0x464d5231u, .key = key, .len = len};
    if (fab_peer_add(f, addr, alen, &p, err, sizeof(err)) < 0)
        return -1;
    int rc = fab_rmr_import(&w, sizeof(w), &r, err, sizeof(err));
    if (rc == 0) {
        rc = dir == FAB_PUSH ? fab_write(f, p, mine, 0, r, 0, len, err, sizeof(err))
                             : fab_read(f, p, mine, 0, r, 0, len, err, sizeof(err));
        fab_rmr_free(r);
    }
    fab_peer_remove(f, p); /* (abandoned after a timeout: a fresh one for each try) */
    return rc;
}

int main(int argc, char **argv)
{
    int keys = 4, timeout = 300;
    size_t len = 64;
    for (int o; (o = getopt(argc, argv, "k:l:t:")) != -1;) {
        if (o == 'k')
            keys = atoi(optarg);
        else if (o == 'l')
            len = (size_t)atol(optarg);
        else if (o == 't')
            timeout = atoi(optarg);
        else
            return 2;
    }
    if (argc - optind < 2 || keys < 1 || len < 1 || timeout < 1) {
        fprintf(stderr, "usage: fab_guess [-k KEYS] [-l LEN] [-t TIMEOUT_MS] ADDR PORT...\n");
        return 2;
    }
    const char *host = argv[optind];
    char err[256];
    fab_t *f;
    if (fab_open(NULL, host, &f, err, sizeof(err)) < 0) {
        fprintf(stderr, "fab_guess: %s\n", err);
        return 2;
    }
    fab_set_timeout(f, timeout);
    uint8_t addr[FAB_BLOB_MAX], *buf = malloc(len);
    size_t alen = sizeof(addr);
    struct sockaddr_in sin;
    fab_mr_t *mine;
    if (!buf || fab_addr_blob(f, addr, &alen, err, sizeof(err)) < 0 ||
        alen < ADDR_HDR + sizeof(sin) || fab_mr_reg(f, buf, len, FAB_LOCAL, &mine, err,
                                                     sizeof(err)) < 0) {
        fprintf(stderr, "fab_guess: no endpoint to attack from: %s\n", err);
        return 2;
    }
    memcpy(&sin, addr + ADDR_HDR, sizeof(sin));
    if (sin.sin_family != AF_INET || inet_pton(AF_INET, host, &sin.sin_addr) != 1) {
        fprintf(stderr, "fab_guess: %s: give an IPv4 address (the provider's is IPv4)\n", host);
        return 2;
    }
    int got = 0;
    for (int i = optind + 1; i < argc; i++) {
        sin.sin_port = htons((uint16_t)atoi(argv[i]));
        memcpy(addr + ADDR_HDR, &sin, sizeof(sin));
        int reads = 0, writes = 0;
        for (uint64_t key = 1; key <= (uint64_t)keys; key++) {
            memset(buf, 0, len);
            if (attempt(f, addr, alen, FAB_PULL, key, mine, len) == 0) {
                printf("port %s: read %zu bytes with key %llu\n", argv[i], len,
                       (unsigned long long)key);
                reads++;
            }
            memset(buf, 0xee, len);
            if (attempt(f, addr, alen, FAB_PUSH, key, mine, len) == 0) {
                printf("port %s: wrote %zu bytes with key %llu\n", argv[i], len,
                       (unsigned long long)key);
                writes++;
            }
        }
        printf("port %s: %d of %d reads and %d of %d writes got through\n", argv[i], reads,
               keys, writes, keys);
        got += reads + writes;
    }
    fab_mr_close(mine);
    fab_close(f);
    free(buf);
    return got ? 1 : 0;
}
