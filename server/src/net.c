#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void sleep_us(long us) {
    struct timespec ts = {.tv_sec = 0, .tv_nsec = us * 1000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

int cradle_server_net_init_rings(cradle_server_net *net) {
    memset(net, 0, sizeof *net);
    net->wake_fd[0] = net->wake_fd[1] = -1;
    atomic_init(&net->stop, false);
    atomic_init(&net->stats.bytes_in, 0);
    atomic_init(&net->stats.bytes_out, 0);
    atomic_init(&net->stats.packets_in, 0);
    atomic_init(&net->stats.packets_out, 0);
    atomic_init(&net->stats.dropped_malformed, 0);
    atomic_init(&net->stats.dropped_in_full, 0);
    atomic_init(&net->stats.dropped_stale, 0);
    size_t in_bytes = cradle_ring_storage_bytes(CRADLE_SERVER_IN_SLOTS, sizeof(cradle_server_in));
    size_t out_bytes = cradle_ring_storage_bytes(CRADLE_SERVER_OUT_SLOTS, sizeof(cradle_server_out));
    net->in_storage = aligned_alloc(CRADLE_RING_CACHE_LINE, (in_bytes + 63u) & ~(size_t)63u);
    net->out_storage = aligned_alloc(CRADLE_RING_CACHE_LINE, (out_bytes + 63u) & ~(size_t)63u);
    if (!net->in_storage || !net->out_storage) goto out_free;
    if (cradle_ring_init(&net->in, net->in_storage, in_bytes, CRADLE_SERVER_IN_SLOTS,
                         sizeof(cradle_server_in)) != 0 ||
        cradle_ring_init(&net->out, net->out_storage, out_bytes, CRADLE_SERVER_OUT_SLOTS,
                         sizeof(cradle_server_out)) != 0)
        goto out_free;
    if (pipe(net->wake_fd) != 0) goto out_free;
    for (int i = 0; i < 2; i++) {
        int flags = fcntl(net->wake_fd[i], F_GETFL);
        if (flags < 0 || fcntl(net->wake_fd[i], F_SETFL, flags | O_NONBLOCK) != 0) goto out_free;
    }
    return 0;
out_free:
    cradle_server_net_close(net);
    return CRADLE_ENOMEM;
}

int cradle_server_net_open(cradle_server_net *net, const cradle_server_net_config *config) {
    if (config->max_peers < 1 || config->max_peers > CRADLE_SERVER_MAX_PEERS) return CRADLE_EINVAL;
    int rc = cradle_server_net_init_rings(net);
    if (rc != 0) return rc;
    net->timeout_ms = config->timeout_ms ? config->timeout_ms : 5000u;
    ENetAddress address = {.host = ENET_HOST_ANY, .port = config->port};
    if (config->bind_address && config->bind_address[0] != '\0' &&
        enet_address_set_host_ip(&address, config->bind_address) != 0) {
        cradle_server_net_close(net);
        return CRADLE_EINVAL;
    }
    net->host = enet_host_create(&address, config->max_peers, 1, 0, 0);
    if (!net->host) {
        cradle_server_net_close(net);
        return CRADLE_ENET_INIT;
    }
    return 0;
}

static uint16_t peer_index(const cradle_server_net *net, const ENetPeer *peer) {
    return (uint16_t)(peer - net->host->peers);
}

/* Hands an event to the game thread. Connects and disconnects must not be
 * lost (the game thread's view of who is there depends on them), so they
 * wait for room; the game thread drains the ring every loop. Messages are
 * dropped and counted when the ring is full. */
static void push_in(cradle_server_net *net, cradle_server_in *in, bool must_deliver) {
    while (!cradle_ring_push(&net->in, in)) {
        if (!must_deliver || atomic_load(&net->stop)) {
            atomic_fetch_add(&net->stats.dropped_in_full, 1);
            return;
        }
        sleep_us(100);
    }
}

static void fill_peer(cradle_server_net *net, cradle_server_in *in, const ENetPeer *peer, uint8_t kind) {
    uint16_t i = peer_index(net, peer);
    in->peer = i;
    in->kind = kind;
    in->generation = net->generation[i];
    in->rtt_ms = peer->roundTripTime;
    in->lowest_rtt_ms = peer->lowestRoundTripTime;
    in->address = peer->address.host;
    in->port = peer->address.port;
    in->length = 0;
}

static void send_to(ENetPeer *peer, const void *data, size_t length, uint32_t flags) {
    ENetPacket *packet = enet_packet_create(data, length, flags);
    if (packet && enet_peer_send(peer, 0, packet) != 0) enet_packet_destroy(packet);
}

static void on_receive(cradle_server_net *net, ENetEvent *event) {
    ENetPacket *packet = event->packet;
    cradle_server_in *in = &net->scratch_in;
    cradle_wire_message m;
    int rc = packet->dataLength <= CRADLE_SERVER_IN_BYTES
                 ? cradle_wire_decode(&m, packet->data, packet->dataLength)
                 : CRADLE_ENET_MESSAGE;
    if (rc != 0 && rc != CRADLE_ENET_VERSION) {
        atomic_fetch_add(&net->stats.dropped_malformed, 1);
        return;
    }
    if (rc == 0 && m.type == CRADLE_WIRE_PING) {
        uint8_t reply[16];
        size_t n = 0;
        cradle_wire_message pong = {.type = CRADLE_WIRE_PONG, .as.ping.echo = m.as.ping.echo};
        if (cradle_wire_encode(reply, sizeof reply, &n, &pong) == 0)
            send_to(event->peer, reply, n, ENET_PACKET_FLAG_UNSEQUENCED);
        return;
    }
    fill_peer(net, in, event->peer, CRADLE_SERVER_IN_MESSAGE);
    in->length = (uint16_t)packet->dataLength;
    memcpy(in->bytes, packet->data, packet->dataLength);
    push_in(net, in, false);
}

static void handle_event(cradle_server_net *net, ENetEvent *event) {
    cradle_server_in *in = &net->scratch_in;
    switch (event->type) {
    case ENET_EVENT_TYPE_CONNECT: {
        uint16_t i = peer_index(net, event->peer);
        net->generation[i]++;
        net->admitted[i] = false;
        enet_peer_timeout(event->peer, 0, net->timeout_ms, net->timeout_ms);
        fill_peer(net, in, event->peer, CRADLE_SERVER_IN_CONNECT);
        push_in(net, in, true);
        break;
    }
    case ENET_EVENT_TYPE_RECEIVE:
        on_receive(net, event);
        enet_packet_destroy(event->packet);
        break;
    case ENET_EVENT_TYPE_DISCONNECT: {
        uint16_t i = peer_index(net, event->peer);
        net->admitted[i] = false;
        fill_peer(net, in, event->peer, CRADLE_SERVER_IN_DISCONNECT);
        push_in(net, in, true);
        break;
    }
    case ENET_EVENT_TYPE_NONE: break;
    }
}

/* Sends everything the game thread queued. */
static void drain_out(cradle_server_net *net) {
    cradle_server_out *out = &net->scratch_out;
    while (cradle_ring_pop(&net->out, out)) {
        uint32_t flags = (out->flags & CRADLE_SERVER_OUT_RELIABLE) ? ENET_PACKET_FLAG_RELIABLE
                                                                   : ENET_PACKET_FLAG_UNSEQUENCED;
        bool has_message = !(out->flags & CRADLE_SERVER_OUT_CONTROL) && out->length > 0;
        if (out->peer == CRADLE_SERVER_BROADCAST) {
            if (!has_message) continue;
            /* One packet, reference-counted by ENet across every peer. */
            ENetPacket *packet = enet_packet_create(out->bytes, out->length, flags);
            if (!packet) continue;
            for (size_t i = 0; i < net->host->peerCount; i++) {
                ENetPeer *peer = &net->host->peers[i];
                if (net->admitted[i] && peer->state == ENET_PEER_STATE_CONNECTED)
                    (void)enet_peer_send(peer, 0, packet);
            }
            if (packet->referenceCount == 0) enet_packet_destroy(packet);
            continue;
        }
        if (out->peer >= net->host->peerCount || net->generation[out->peer] != out->generation ||
            net->host->peers[out->peer].state != ENET_PEER_STATE_CONNECTED) {
            atomic_fetch_add(&net->stats.dropped_stale, 1);
            continue;
        }
        ENetPeer *peer = &net->host->peers[out->peer];
        if (has_message) {
            if (out->bytes[0] == CRADLE_WIRE_WELCOME) net->admitted[out->peer] = true;
            send_to(peer, out->bytes, out->length, flags);
        }
        if (out->flags & CRADLE_SERVER_OUT_DISCONNECT) {
            net->admitted[out->peer] = false;
            enet_peer_disconnect_later(peer, 0);
        }
    }
}

static void account(cradle_server_net *net) {
    ENetHost *h = net->host;
    atomic_fetch_add(&net->stats.bytes_in, h->totalReceivedData);
    atomic_fetch_add(&net->stats.bytes_out, h->totalSentData);
    atomic_fetch_add(&net->stats.packets_in, h->totalReceivedPackets);
    atomic_fetch_add(&net->stats.packets_out, h->totalSentPackets);
    h->totalReceivedData = h->totalSentData = 0;
    h->totalReceivedPackets = h->totalSentPackets = 0;
}

void cradle_server_net_wake(cradle_server_net *net) {
    /* A full pipe already holds a wake-up: nothing is lost when this fails. */
    if (net->wake_fd[1] >= 0) (void)!write(net->wake_fd[1], "", 1);
}

static void *net_main(void *arg) {
    cradle_server_net *net = arg;
    ENetEvent event;
    struct pollfd fds[1] = {{.fd = net->wake_fd[0], .events = POLLIN}};
    while (!atomic_load(&net->stop)) {
        drain_out(net);
        int rc = enet_host_service(net->host, &event, 0);
        while (rc > 0) {
            handle_event(net, &event);
            rc = enet_host_check_events(net->host, &event);
        }
        drain_out(net);
        enet_host_flush(net->host);
        account(net);
        /* Sleeps until the game thread queues output (wake) or the 4 ms
         * tick. Datagrams that arrive meanwhile wait for the tick and are
         * handled in one batch: waking for each (every peer acknowledges
         * every step) costs more CPU than the few milliseconds it would save
         * an input, whose deadline is input_delay steps away. Measured with
         * 64 peers: a 1 ms tick costs the thread 5.5% of a core, 4 ms 4%. */
        if (poll(fds, 1, 4) > 0 && (fds[0].revents & POLLIN)) {
            char drain[64];
            while (read(net->wake_fd[0], drain, sizeof drain) > 0) {
            }
        }
    }
    return NULL;
}

int cradle_server_net_start(cradle_server_net *net) {
    /* The thread blocks every signal, so SIGINT and SIGTERM reach the game
     * thread, whose handler sets the flag its loop reads. */
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    int rc = pthread_create(&net->thread, NULL, net_main, net);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (rc != 0) return CRADLE_ENET_INIT;
    net->thread_started = true;
    return 0;
}

void cradle_server_net_stop(cradle_server_net *net, uint32_t linger_ms) {
    if (!net->thread_started) return;
    atomic_store(&net->stop, true);
    pthread_join(net->thread, NULL);
    net->thread_started = false;
    /* The game thread has stopped producing: send its last words, then let
     * peers acknowledge the disconnect. */
    drain_out(net);
    for (size_t i = 0; i < net->host->peerCount; i++) {
        ENetPeer *peer = &net->host->peers[i];
        if (peer->state == ENET_PEER_STATE_CONNECTED) enet_peer_disconnect_later(peer, 0);
    }
    ENetEvent event;
    uint32_t waited = 0;
    while (waited < linger_ms) {
        bool anyone = false;
        for (size_t i = 0; i < net->host->peerCount; i++)
            if (net->host->peers[i].state != ENET_PEER_STATE_DISCONNECTED) anyone = true;
        if (!anyone) break;
        int rc = enet_host_service(net->host, &event, 10);
        if (rc > 0 && event.type == ENET_EVENT_TYPE_RECEIVE) enet_packet_destroy(event.packet);
        waited += 10;
    }
    enet_host_flush(net->host);
    account(net);
}

void cradle_server_net_close(cradle_server_net *net) {
    if (net->host) enet_host_destroy(net->host);
    net->host = NULL;
    free(net->in_storage);
    free(net->out_storage);
    net->in_storage = net->out_storage = NULL;
    for (int i = 0; i < 2; i++) {
        if (net->wake_fd[i] >= 0) close(net->wake_fd[i]);
        net->wake_fd[i] = -1;
    }
}
