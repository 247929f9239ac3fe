/*
 * bench_dev: round trips per second of the dev protocol's status command
 * over a Unix socket, unpipelined (one request in flight) and pipelined
 * (depth requests in flight), from one or more client threads.
 *
 * By default the host is in-process: a thread runs a transport whose handler
 * parses each line with cradle_dev_parse and answers status the way
 * cradle-record does. With --socket PATH it measures an external host instead
 * (cradle-record --game LIB --log FILE --commanded --dev-socket PATH). It prints figures and asserts
 * nothing about time.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cradle/cradle.h"


static const char REQUEST[] = "{\"cmd\":\"status\"}\n";

/* ---- the in-process host ---- */

typedef struct bench_host {
    cradle_transport transport;
    uint64_t step;
} bench_host;

static bool bench_handle(void *context, const char *line, size_t length, cradle_writer *reply, cradle_arena *scratch) {
    (void)scratch;
    bench_host *h = context;
    cradle_dev_request request;
    int rc = cradle_dev_parse(&request, line, length, 100000);
    const cradle_dev_command *command = cradle_dev_common(&request);
    bool quit = false;
    if (rc != 0 || command == NULL) {
        cradle_dev_reply_parse_error(reply, &request);
    } else {
        if (command->kind == CRADLE_DEV_STEP) h->step += command->count;
        quit = command->kind == CRADLE_DEV_QUIT;
        cradle_dev_reply_begin(reply, &request);
        cradle_dev_field_u64(reply, "step", h->step);
        cradle_dev_field_string(reply, "mode", "commanded");
        cradle_dev_field_raw(reply, "positions", "[0,0,0,0]");
        cradle_dev_reply_end(reply);
    }
    cradle_dev_request_deinit(&request);
    return quit;
}

static void *host_thread(void *arg) {
    bench_host *h = arg;
    while (cradle_transport_state(&h->transport) == CRADLE_TRANSPORT_RUNNING) {
        if (cradle_transport_poll(&h->transport, 100) != 0) break;
    }
    return NULL;
}

/* ---- clients ---- */

typedef struct bench_client {
    const char *path;
    uint64_t requests;
    uint32_t depth;
    int failed;
} bench_client;

static int connect_to(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        fprintf(stderr, "bench_dev: connect %s: %s\n", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

static bool send_all(int fd, const char *data, size_t length) {
    while (length) {
        ssize_t n = send(fd, data, length, MSG_NOSIGNAL);
        if (n <= 0) return false;
        data += n;
        length -= (size_t)n;
    }
    return true;
}

/* Sends `requests` status lines keeping up to depth in flight; counts the
 * reply lines. */
static void *client_thread(void *arg) {
    bench_client *c = arg;
    int fd = connect_to(c->path);
    if (fd < 0) {
        c->failed = 1;
        return NULL;
    }
    enum { REQ = sizeof REQUEST - 1 };
    char batch[REQ * 256];
    for (size_t i = 0; i < 256; i++) memcpy(batch + i * REQ, REQUEST, REQ);
    static _Thread_local char buffer[1 << 16];
    uint64_t sent = 0, received = 0;
    while (received < c->requests) {
        uint64_t want = c->requests - sent;
        uint64_t room = c->depth - (sent - received);
        uint64_t n = want < room ? want : room;
        if (n > 256) n = 256;
        if (n && !send_all(fd, batch, (size_t)n * REQ)) break;
        sent += n;
        ssize_t got = recv(fd, buffer, sizeof buffer, 0);
        if (got <= 0) break;
        for (ssize_t i = 0; i < got; i++) received += buffer[i] == '\n';
    }
    if (received < c->requests) c->failed = 1;
    close(fd);
    return NULL;
}

/* Round trips per second with `clients` threads sharing `requests`. */
static double measure(const char *path, uint64_t requests, uint32_t depth, uint32_t clients) {
    bench_client c[16];
    pthread_t threads[16];
    uint64_t started = cradle_mono_ns();
    for (uint32_t i = 0; i < clients; i++) {
        c[i] = (bench_client){.path = path, .requests = requests / clients, .depth = depth};
        pthread_create(&threads[i], NULL, client_thread, &c[i]);
    }
    int failed = 0;
    for (uint32_t i = 0; i < clients; i++) {
        pthread_join(threads[i], NULL);
        failed |= c[i].failed;
    }
    double seconds = (double)(cradle_mono_ns() - started) / 1e9;
    if (failed) {
        fprintf(stderr, "bench_dev: a client lost its connection\n");
        return 0;
    }
    return (double)(requests / clients * clients) / seconds;
}

static void usage(FILE *to) {
    fprintf(to,
            "usage: bench_dev [--requests N] [--depth D] [--clients C] [--socket PATH]\n"
            "  -n, --requests N   status requests per measurement (default 200000)\n"
            "  -d, --depth D      pipelining depth of the second measurement (default 16)\n"
            "  -c, --clients C    client threads, 1..16 (default 1)\n"
            "  -s, --socket PATH  measure the host at PATH instead of an in-process one\n");
}

int main(int argc, char **argv) {
    uint64_t requests = 200000;
    unsigned long depth = 16, clients = 1;
    const char *path = NULL;
    static const struct option options[] = {
        {"requests", required_argument, NULL, 'n'}, {"depth", required_argument, NULL, 'd'},
        {"clients", required_argument, NULL, 'c'},  {"socket", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    int opt;
    while ((opt = getopt_long(argc, argv, "n:d:c:s:h", options, NULL)) != -1) {
        switch (opt) {
        case 'n': requests = strtoull(optarg, NULL, 10); break;
        case 'd': depth = strtoul(optarg, NULL, 10); break;
        case 'c': clients = strtoul(optarg, NULL, 10); break;
        case 's': path = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (requests < 1 || depth < 1 || depth > 4096 || clients < 1 || clients > 16) {
        usage(stderr);
        return 2;
    }

    bench_host *host = NULL;
    pthread_t server;
    char dir[] = "/tmp/cradle-bench-dev-XXXXXX";
    char socket_path[96];
    if (path == NULL) {
        if (!mkdtemp(dir)) {
            fprintf(stderr, "bench_dev: mkdtemp: %s\n", strerror(errno));
            return 1;
        }
        snprintf(socket_path, sizeof socket_path, "%s/dev.sock", dir);
        path = socket_path;
        host = calloc(1, sizeof *host);
        cradle_transport_config config = {.socket_path = path, .handler = bench_handle, .context = host};
        int rc = host ? cradle_transport_open(&host->transport, &config) : CRADLE_ENOMEM;
        if (rc != 0) {
            fprintf(stderr, "bench_dev: %s\n", cradle_strerror(rc));
            return 1;
        }
        pthread_create(&server, NULL, host_thread, host);
    }

    printf("bench_dev: %" PRIu64 " status round trips over a Unix socket, %lu client%s, %s host\n", requests, clients,
           clients == 1 ? "" : "s", host ? "in-process" : path);
    (void)measure(path, requests / 10 + 1, 1, (uint32_t)clients); /* warm-up */
    double unpipelined = measure(path, requests, 1, (uint32_t)clients);
    double pipelined = measure(path, requests, (uint32_t)depth, (uint32_t)clients);
    printf("  unpipelined %12.0f round trips/s\n", unpipelined);
    printf("  pipelined   %12.0f round trips/s (depth %lu)\n", pipelined, depth);

    if (host) {
        int fd = connect_to(path);
        if (fd >= 0) {
            const char quit[] = "{\"cmd\":\"quit\"}\n";
            (void)send_all(fd, quit, sizeof quit - 1);
            char reply[256];
            (void)recv(fd, reply, sizeof reply, 0);
            close(fd);
        }
        pthread_join(server, NULL);
        cradle_transport_close(&host->transport);
        free(host);
        rmdir(dir);
    }
    return unpipelined > 0 && pipelined > 0 ? 0 : 1;
}
