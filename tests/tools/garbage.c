/* garbage: sends hostile input to a daemon's socket, for the security tests.
 *   garbage unix PATH MODE     garbage tcp HOST PORT MODE
 * MODE: random (64 KiB of random bytes), huge (a frame header announcing 2 GiB),
 * badmac (a well-formed frame with a wrong MAC), json (a frame whose payload is not
 * JSON), slow (one byte, then hang up), many (1000 connections at once).
 * Holding modes, for the denial-of-service tests (test_dos.sh, bench/dos): they print
 * one line when done and then keep their connections until killed:
 *   hold N       N idle connections ("held K": how many the kernel accepted)
 *   bigframe N   N connections, each announcing a 2 MiB frame and sending all of it
 *                but its last byte ("sent K": how many got their bytes through)
 *   stall SECS   one connection that sends half a frame, then waits for the daemon to
 *                hang up: prints "closed after S s" (exit 0) or "still open" (exit 1)
 *   silent SECS  the same without sending anything.
 * With GARBAGE_SOURCES=K, TCP connections come from K loopback addresses in turn.
 * Well-formed requests, on a Unix socket (no MAC: the kernel names the sender):
 *   request FILE...  for each FILE in turn, on one connection, a frame whose payload is
 *                 its bytes; prints the first frame that comes back for it ("reply: " and
 *                 up to 300 bytes of it), or "closed" and stops. */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
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
        /* GARBAGE_SOURCES=K: from K loopback addresses in turn, 127.0.1.1 to 127.0.1.K
         * (a flood from many hosts, for the per-address limits) */
        static int turn;
        const char *k = getenv("GARBAGE_SOURCES");
        if (k && atoi(k) > 0) {
            struct sockaddr_in me = {.sin_family = AF_INET};
            me.sin_addr.s_addr = htonl(0x7f000101u + (uint32_t)(turn++ % atoi(k)));
            if (bind(fd, (struct sockaddr *)&me, sizeof(me)) < 0) {
                close(fd);
                return -1;
            }
        }
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
            close(fd);
            return -1;
        }
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

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Did the daemon hang up? Reads (and drops) what it sent, such as the hello. */
static bool hung_up(int fd, int wait_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (poll(&p, 1, wait_ms) > 0) {
        char buf[4096];
        ssize_t r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
            return true;
        wait_ms = 0;
    }
    return false;
}

static int hold(int argc, char **argv, const char *mode, int n)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) { /* as many descriptors as we may */
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (!strcmp(mode, "stall") || !strcmp(mode, "silent")) {
        int fd = dial(argc, argv);
        if (fd < 0) {
            perror("connect");
            return 1;
        }
        if (!strcmp(mode, "stall"))
            frame(fd, "{\"type\":", 100); /* 9 of the 100 bytes announced */
        double t0 = now_s();
        while (now_s() - t0 < n)
            if (hung_up(fd, 100)) {
                printf("closed after %.1f s\n", now_s() - t0);
                return 0;
            }
        printf("still open after %d s\n", n);
        return 1;
    }
    static char payload[2u << 20];
    memset(payload, ' ', sizeof(payload) - 1); /* a string of 2 MiB - 1 bytes */
    int ok = 0;
    for (int i = 0; i < n; i++) {
        int fd = dial(argc, argv);
        if (fd < 0)
            continue;
        if (!strcmp(mode, "bigframe")) {
            uint8_t h[48] = {0};
            put32(h, 0x44435431u);
            put32(h + 4, (uint32_t)sizeof(payload));
            h[15] = 1;
            if (send(fd, h, sizeof(h), MSG_NOSIGNAL) < 0)
                continue;
            size_t off = 0;
            while (off < sizeof(payload) - 1) {
                ssize_t w = send(fd, payload + off, sizeof(payload) - 1 - off, MSG_NOSIGNAL);
                if (w <= 0)
                    break;
                off += (size_t)w;
            }
            if (off < sizeof(payload) - 1)
                continue;
        }
        ok++;
    }
    printf("%s %d\n", !strcmp(mode, "hold") ? "held" : "sent", ok);
    fflush(stdout);
    for (;;)
        pause();
}

/* Reads exactly n bytes (false: the peer closed or 60 s passed). */
static bool read_all(int fd, uint8_t *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 60000) <= 0)
            return false;
        ssize_t r = read(fd, buf + got, n - got);
        if (r <= 0)
            return false;
        got += (size_t)r;
    }
    return true;
}

/* One request on fd, frame number seq: prints its reply; false once the peer closed. */
static bool request_one(int fd, uint64_t seq, const char *payload, size_t n)
{
    uint8_t h[48] = {0};
    put32(h, 0x44435431u);
    put32(h + 4, (uint32_t)n);
    put32(h + 12, (uint32_t)seq); /* a Unix socket's frames carry no MAC */
    /* A refusal is written, then the connection closed, maybe before our request is
     * all sent: the answer may still be there to read. */
    if (write(fd, h, sizeof(h)) == (ssize_t)sizeof(h))
        for (size_t off = 0; off < n;) {
            ssize_t w = write(fd, payload + off, n - off);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
    uint8_t rh[48];
    if (!read_all(fd, rh, sizeof(rh))) {
        printf("closed\n");
        return false;
    }
    uint32_t len = (uint32_t)rh[4] << 24 | (uint32_t)rh[5] << 16 | (uint32_t)rh[6] << 8 | rh[7];
    /* all of it, so that the next reply starts where it should */
    uint8_t *body = malloc((size_t)len + 1);
    if (!body || !read_all(fd, body, len)) {
        free(body);
        printf("closed\n");
        return false;
    }
    body[len] = '\0';
    printf("reply: %.300s\n", (char *)body);
    free(body);
    return true;
}

static int request(const char *path, char **files, int nfiles)
{
    static char payload[64u << 20];
    char *args[] = {"garbage", "unix", (char *)path};
    int fd = dial(3, args);
    if (fd < 0) {
        perror("connect");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    for (int k = 0; k < nfiles; k++) {
        FILE *f = fopen(files[k], "rb");
        if (!f) {
            perror(files[k]);
            return 2;
        }
        size_t n = fread(payload, 1, sizeof(payload) - 1, f);
        fclose(f);
        payload[n] = '\0';
        if (!request_one(fd, (uint64_t)k + 1, payload, n))
            break;
    }
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: garbage unix PATH MODE | tcp HOST PORT MODE\n");
        return 2;
    }
    const char *mode = argv[argc - 1];
    if (argc >= 5 && !strcmp(argv[1], "unix") && !strcmp(argv[3], "request"))
        return request(argv[2], argv + 4, argc - 4);
    if (argc >= 5 && (!strcmp(argv[argc - 2], "hold") || !strcmp(argv[argc - 2], "bigframe") ||
                      !strcmp(argv[argc - 2], "stall") ||
                      !strcmp(argv[argc - 2], "silent")))
        return hold(argc - 1, argv, argv[argc - 2], atoi(argv[argc - 1]));
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
