/* garbage: sends hostile input to a daemon's socket, for the security tests.
 *   garbage unix PATH MODE     garbage tcp HOST PORT MODE
 * MODE: random (64 KiB of random bytes), huge (a frame header announcing 2 GiB),
 * badmac (a well-formed frame with a wrong MAC), json (a frame whose payload is not
 * JSON), slow (one byte, then hang up), many (1000 connections at once). */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int dial(int argc, char **argv)
{
    int fd;
    if (!strcmp(argv[1], "unix")) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[2]);
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
            return -1;
    } else {
        if (argc < 5)
            return -1;
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[3]))};
        inet_pton(AF_INET, argv[2], &sa.sin_addr);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
            return -1;
    }
    return fd;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

static void frame(int fd, const char *payload, uint32_t announced)
{
    uint8_t h[48] = {0};
    put32(h, 0x44435431u);
    put32(h + 4, announced);
    h[15] = 1; /* seq 1 */
    memset(h + 16, 0xab, 32);
    if (write(fd, h, sizeof(h)) < 0 || write(fd, payload, strlen(payload)) < 0)
        return;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: garbage unix PATH MODE | tcp HOST PORT MODE\n");
        return 2;
    }
    const char *mode = argv[argc - 1];
    if (!strcmp(mode, "many")) {
        int fds[1000], n = 0;
        for (int i = 0; i < 1000; i++)
            if ((fds[n] = dial(argc, argv)) >= 0)
                n++;
        for (int i = 0; i < n; i++)
            close(fds[i]);
        return 0;
    }
    int fd = dial(argc, argv);
    if (fd < 0) {
        perror("connect");
        return 1;
    }
    if (!strcmp(mode, "random")) {
        char buf[65536];
        FILE *r = fopen("/dev/urandom", "r");
        if (!r || fread(buf, 1, sizeof(buf), r) != sizeof(buf))
            return 1;
        fclose(r);
        ssize_t w = write(fd, buf, sizeof(buf)); /* the daemon may hang up early */
        (void)w;
    } else if (!strcmp(mode, "huge")) {
        frame(fd, "", 0x7fffffffu);
    } else if (!strcmp(mode, "badmac")) {
        const char *p = "{\"type\":\"register\",\"node\":\"n1\"}";
        frame(fd, p, (uint32_t)strlen(p));
    } else if (!strcmp(mode, "json")) {
        const char *p = "{not json";
        frame(fd, p, (uint32_t)strlen(p));
    } else if (!strcmp(mode, "slow")) {
        if (write(fd, "D", 1) < 0)
            return 1;
    }
    usleep(100000);
    close(fd);
    return 0;
}
