/*
 * cradle-server: hosts one session of one game over ENet.
 *
 * main wires the parts: options (options.c), the network thread (net.c) and
 * the game thread, which is this thread (host.c). Exit status: 0 after a
 * quit or SIGINT/SIGTERM, 2 for a usage error, 1 for anything else.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <enet/enet.h>

#include "cradle/dev.h"
#include "cradle/errors.h"

#include "host.h"
#include "net.h"
#include "options.h"

static volatile sig_atomic_t signalled;

static void on_signal(int signo) { signalled = signo; }

static void install_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* a vanished dev client must not kill the server */
}

int main(int argc, char **argv) {
    static cradle_server_options options;
    switch (cradle_server_options_parse(&options, argc, argv)) {
    case CRADLE_SERVER_RUN: break;
    case CRADLE_SERVER_EXIT_OK: return 0;
    case CRADLE_SERVER_EXIT_USAGE: return 2;
    }
    install_signals();
    if (enet_initialize() != 0) {
        fprintf(stderr, "cradle-server: ENet failed to initialise\n");
        return 1;
    }
    int status = 1;
    /* Both are large and need cache-line alignment for their rings. */
    cradle_server_net *net =
        aligned_alloc(CRADLE_RING_CACHE_LINE, (sizeof *net + CRADLE_RING_CACHE_LINE - 1) /
                                                  CRADLE_RING_CACHE_LINE * CRADLE_RING_CACHE_LINE);
    cradle_server_host *host =
        aligned_alloc(CRADLE_RING_CACHE_LINE, (sizeof *host + CRADLE_RING_CACHE_LINE - 1) /
                                                  CRADLE_RING_CACHE_LINE * CRADLE_RING_CACHE_LINE);
    if (!net || !host) {
        fprintf(stderr, "cradle-server: out of memory\n");
        goto out_free;
    }
    memset(net, 0, sizeof *net);
    int rc = cradle_server_host_init(host, &options, net, (volatile const int *)&signalled);
    if (rc == CRADLE_ERANGE) status = 2; /* --players beyond the game's maximum */
    if (rc != 0) goto out_host;

    uint32_t max_peers = host->players + options.spectators + 8u; /* room to refuse politely */
    if (max_peers > CRADLE_SERVER_MAX_PEERS) max_peers = CRADLE_SERVER_MAX_PEERS;
    cradle_server_net_config nc = {.bind_address = options.bind,
                                   .port = options.port,
                                   .max_peers = max_peers,
                                   .timeout_ms = options.timeout_ms};
    rc = cradle_server_net_open(net, &nc);
    if (rc == CRADLE_EINVAL) {
        fprintf(stderr, "cradle-server: --bind must be an IPv4 address, got '%s'\n", options.bind);
        cradle_server_host_deinit(host);
        status = 2;
        goto out_free;
    }
    if (rc != 0) {
        cradle_server_say(host, "error", "bind", "cannot listen on UDP %s:%u: %s",
                          options.bind[0] ? options.bind : "*", (unsigned)options.port, cradle_strerror(rc));
        status = 3; /* distinct, so a test can retry another port */
        goto out_host;
    }
    if (cradle_server_net_start(net) != 0) {
        cradle_server_say(host, "error", "thread", "cannot start the network thread");
        goto out_net;
    }

    char line[512];
    cradle_writer w;
    cradle_writer_init(&w, line, sizeof line);
    if (host->transport_open) cradle_transport_listening_event(&host->transport, &w);
    cradle_writer_text(&w, "{\"event\":\"serving\",\"address\":");
    const char *shown = options.bind[0] ? options.bind : "0.0.0.0";
    cradle_writer_json_string(&w, shown, strlen(shown));
    cradle_writer_format(&w, ",\"port\":%u,\"game\":", (unsigned)options.port);
    cradle_writer_json_string(&w, host->contract->name, strlen(host->contract->name));
    cradle_writer_text(&w, ",\"build\":");
    cradle_writer_json_string(&w, host->contract->build_id, strlen(host->contract->build_id));
    cradle_writer_format(&w, ",\"players\":%u}\n", host->players);
    fwrite(line, 1, w.length, stdout);
    fflush(stdout);
    cradle_server_say(host, "info", "start", "hosting '%s' build %s for %u players on UDP port %u (%s mode)",
                      host->contract->name, host->contract->build_id, host->players, (unsigned)options.port,
                      options.mode == CRADLE_SERVER_PACED ? "paced" : "commanded");

    (void)cradle_server_host_run(host);
    if (signalled) cradle_server_say(host, "info", "signal", "signal %d: stopping", (int)signalled);
    status = cradle_server_host_finish(host) == 0 ? 0 : 1;
    cradle_server_net_stop(net, 500);
    cradle_server_say(host, "info", "stop", "stopped at step %llu", (unsigned long long)host->next_step);
out_net:
    cradle_server_net_stop(net, 0);
    cradle_server_net_close(net);
out_host:
    cradle_server_host_deinit(host);
out_free:
    free(host);
    free(net);
    enet_deinitialize();
    return status;
}
