#include "net.h"

#include <assert.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cradle/ackpace.h"
#include "cradle/os.h"
#include "cradle/raw_datagram.h"
#include "cradle/systime.h"
#include "enet_filter.h"
#include "handshake.h"

#define BATCH_MS 4         /* inbound datagrams wait at most this long to be read in a batch */
#define HOUSEKEEPING_MS 20 /* the longest sleep with peers: ENet's pings, retransmissions and timeouts */
#define IDLE_MS 1000       /* with none, until a datagram or the game thread's wake (or this) */
#define EVENTS_PER_TURN 256 /* connects and disconnects handled before the output has its turn */

/* The turn's time in milliseconds, never 0: connected_ms[i] == 0 marks a
 * slot with no connection. */
static uint64_t now_ms(const cradle_server_net *net) { return net->now_ns / 1000000u + 1u; }

/* A non-blocking pipe: a full one already holds a wake-up, an empty one
 * reads dry without waiting. */
static int open_wake_pipe(int fds[2]) {
    if (pipe(fds) != 0) return -1;
    for (int i = 0; i < 2; i++) {
        int flags = fcntl(fds[i], F_GETFL);
        if (flags < 0 || fcntl(fds[i], F_SETFL, flags | O_NONBLOCK) != 0) return -1;
    }
    return 0;
}

static void close_wake_pipe(int fds[2]) {
    for (int i = 0; i < 2; i++) {
        if (fds[i] >= 0) close(fds[i]);
        fds[i] = -1;
    }
}

int cradle_server_net_init_rings(cradle_server_net *net) {
    memset(net, 0, sizeof *net);
    net->wake_fd[0] = net->wake_fd[1] = -1;
    net->game_wake_fd[0] = net->game_wake_fd[1] = -1;
    atomic_init(&net->stop, false);
    atomic_init(&net->stats.bytes_in, 0);
    atomic_init(&net->stats.bytes_out, 0);
    atomic_init(&net->stats.packets_in, 0);
    atomic_init(&net->stats.packets_out, 0);
    atomic_init(&net->stats.dropped_malformed, 0);
    atomic_init(&net->stats.dropped_garbage, 0);
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
    if (open_wake_pipe(net->wake_fd) != 0 || open_wake_pipe(net->game_wake_fd) != 0) goto out_free;
    return 0;
out_free:
    cradle_server_net_close(net);
    return CRADLE_ENOMEM;
}

static int intercept_raw(ENetHost *host, ENetEvent *event);

int cradle_server_net_open(cradle_server_net *net, const cradle_server_net_config *config) {
    if (config->max_peers < 1 || config->max_peers > CRADLE_SERVER_MAX_PEERS) return CRADLE_EINVAL;
    int rc = cradle_server_net_init_rings(net);
    if (rc != 0) return rc;
    net->timeout_ms = config->timeout_ms ? config->timeout_ms : 5000u;
    net->auth_timeout_ms = config->auth_timeout_ms ? config->auth_timeout_ms : CRADLE_SERVER_AUTH_TIMEOUT_DEFAULT;
    atomic_init(&net->build_changed, false);
    uint64_t seed = 0;
    net->max_peers = config->max_peers;
    net->peer = calloc(config->max_peers, sizeof *net->peer);
    net->rate_entries = calloc(CRADLE_SERVER_RATE_ENTRIES, sizeof *net->rate_entries);
    if (sodium_init() < 0 || !net->peer || !net->rate_entries || pthread_mutex_init(&net->build_lock, NULL) != 0) {
        cradle_server_net_close(net);
        return CRADLE_ENOMEM;
    }
    net->build_lock_ready = true;
    randombytes_buf(&seed, sizeof seed); /* an attacker must not aim hash collisions */
    rc = cradle_ratelimit_init(&net->ratelimit, net->rate_entries, CRADLE_SERVER_RATE_ENTRIES,
                               &(cradle_ratelimit_config){.per_second = config->connect_rate,
                                                          .burst = config->connect_burst,
                                                          .seed = seed});
    if (rc == 0)
        rc = cradle_stream_init(&net->stream, &(cradle_stream_config){.snapshot_size = config->snapshot_size,
                                                                      .peers = config->max_peers});
    if (rc == 0 && config->keys) {
        net->secure = true;
        net->keys = *config->keys;
        snprintf(net->game, sizeof net->game, "%s", config->game ? config->game : "");
        net->seen = calloc(CRADLE_SERVER_SEEN_TOKENS, sizeof *net->seen);
        rc = !net->seen ? CRADLE_ENOMEM
                        : cradle_token_verifier_init(
                              &net->verifier, &(cradle_token_verifier_config){
                                                  .issuers = config->issuers,
                                                  .issuer_count = config->issuer_count,
                                                  .server_id = net->keys.kx_public,
                                                  .build_id = config->build_id,
                                                  .seen = net->seen,
                                                  .seen_capacity = CRADLE_SERVER_SEEN_TOKENS});
    }
    if (rc != 0) {
        cradle_server_net_close(net);
        return rc;
    }
    ENetAddress address = {.host = ENET_HOST_ANY, .port = config->port};
    if (config->bind_address && config->bind_address[0] != '\0' &&
        enet_address_set_host_ip(&address, config->bind_address) != 0) {
        cradle_server_net_close(net);
        return CRADLE_EINVAL;
    }
    rc = cradle_enet_pool_init(&net->pool, &(cradle_enet_pool_config){.peers = config->max_peers});
    if (rc != 0) {
        cradle_server_net_close(net);
        return rc;
    }
    net->host = enet_host_create(&address, config->max_peers, 1, 0, 0);
    if (!net->host) {
        cradle_server_net_close(net);
        return CRADLE_ENET_INIT;
    }
    net->host->intercept = intercept_raw;
    cradle_raw_stamp_arrivals(net->host->socket);
    cradle_fanout_init(&net->fanout, net->host->socket);
    return 0;
}

uint32_t cradle_server_peer_table_size(uint32_t players, uint32_t spectators) {
    uint64_t n = (uint64_t)players + spectators + 8u + CRADLE_SERVER_HALF_OPEN_ROOM;
    return n > CRADLE_SERVER_MAX_PEERS ? CRADLE_SERVER_MAX_PEERS : (uint32_t)n;
}

static uint16_t peer_index(const cradle_server_net *net, const ENetPeer *peer) {
    return (uint16_t)(peer - net->host->peers);
}

static void wake_game(cradle_server_net *net) {
    if (net->game_wake_fd[1] >= 0) (void)!write(net->game_wake_fd[1], "", 1);
}

/* Hands an event to the game thread. Connects and disconnects must not be
 * lost (the game thread's view of who is there depends on them), so they
 * wait for room; the game thread drains the ring every loop. Messages are
 * dropped and counted when the ring is full. The game thread reads inputs
 * when a step is due; anything else (a join, a leave, a HELLO) and a ring
 * filling up wake it at once. */
static void push_in(cradle_server_net *net, cradle_server_in *in, bool must_deliver) {
    bool input = in->kind == CRADLE_SERVER_IN_MESSAGE && in->message.type == CRADLE_WIRE_INPUT;
    while (!cradle_ring_push(&net->in, in)) {
        wake_game(net);
        if (!must_deliver || atomic_load(&net->stop)) {
            atomic_fetch_add(&net->stats.dropped_in_full, 1);
            return;
        }
        cradle_sleep_ns(100000u);
    }
    if (!input || cradle_ring_count(&net->in) >= CRADLE_SERVER_IN_SLOTS / 4u) wake_game(net);
}

static void fill_peer(cradle_server_net *net, cradle_server_in *in, const ENetPeer *peer, uint8_t kind) {
    uint16_t i = peer_index(net, peer);
    in->peer = i;
    in->kind = kind;
    in->generation = net->peer[i].generation;
    in->rtt_us = net->peer[i].rtt_us;
    in->rtt_ms = in->rtt_us ? (in->rtt_us + 500u) / 1000u : peer->roundTripTime;
    in->lowest_rtt_ms = peer->lowestRoundTripTime;
    in->address = peer->address.host;
    in->port = peer->address.port;
    in->identified = net->peer[i].identified;
    in->client_id = net->peer[i].client_id;
    in->other_version = false;
    in->message.type = 0;
}

bool cradle_server_in_take(cradle_server_in *in, const cradle_wire_message *m, bool other_version) {
    in->other_version = other_version;
    in->message = (cradle_server_in_message){.type = m->type, .version = m->version};
    if (other_version) return true; /* only type and version were read */
    switch (m->type) {
    case CRADLE_WIRE_HELLO: in->message.as.hello = m->as.hello; return true;
    case CRADLE_WIRE_DESYNC: in->message.as.desync = m->as.desync; return true;
    case CRADLE_WIRE_REPORT: in->message.as.report = m->as.report; return true;
    case CRADLE_WIRE_BYE: in->message.as.bye = m->as.bye; return true;
    case CRADLE_WIRE_INPUT: {
        cradle_wire_message input = *m;
        size_t held = cradle_wire_detach(&input, in->payload, sizeof in->payload);
        assert(held != SIZE_MAX); /* a decoded INPUT holds at most CRADLE_SERVER_IN_PAYLOAD bytes */
        (void)held;
        in->message.as.input = input.as.input;
        return true;
    }
    default: return false;
    }
}

void cradle_server_in_message_of(const cradle_server_in *in, cradle_wire_message *out) {
    *out = (cradle_wire_message){.type = in->message.type, .version = in->message.version};
    if (in->other_version) return;
    switch (in->message.type) {
    case CRADLE_WIRE_HELLO: out->as.hello = in->message.as.hello; break;
    case CRADLE_WIRE_DESYNC: out->as.desync = in->message.as.desync; break;
    case CRADLE_WIRE_REPORT: out->as.report = in->message.as.report; break;
    case CRADLE_WIRE_BYE: out->as.bye = in->message.as.bye; break;
    case CRADLE_WIRE_INPUT:
        out->as.input = in->message.as.input;
        cradle_wire_attach(out, in->payload);
        break;
    default: break;
    }
}

static void send_to(ENetPeer *peer, const void *data, size_t length, uint32_t flags) {
    ENetPacket *packet = enet_packet_create(data, length, flags);
    if (packet && enet_peer_send(peer, 0, packet) != 0) enet_packet_destroy(packet);
}

/* The game thread learns of a peer: at connect (insecure) or once its token
 * verified (secure). */
static void announce(cradle_server_net *net, const ENetPeer *peer) {
    fill_peer(net, &net->scratch_in, peer, CRADLE_SERVER_IN_CONNECT);
    push_in(net, &net->scratch_in, true);
    net->peer[peer_index(net, peer)].announced = true;
}

/* The peer is gone (ENet's disconnect, or dropped here): forget its keys and
 * tell the game thread if it knew the peer. */
static void forget_peer(cradle_server_net *net, const ENetPeer *peer) {
    uint16_t i = peer_index(net, peer);
    net->peer[i].admitted = false;
    net->peer[i].auth = CRADLE_SERVER_AUTH_NONE;
    net->peer[i].connected_ms = 0;
    net->peer[i].hello_bytes = 0;
    net->peer[i].raw = false;
    net->peer[i].identified = false;
    net->peer[i].client_id = 0;
    net->peer[i].rtt_us = 0;
    if (net->stream.peers) cradle_stream_stop(&net->stream, i);
    cradle_secure_wipe(&net->peer[i].session);
    if (net->peer[i].announced) {
        net->peer[i].announced = false;
        fill_peer(net, &net->scratch_in, peer, CRADLE_SERVER_IN_DISCONNECT);
        push_in(net, &net->scratch_in, true);
    }
}

/* Drops a peer at once (ENet then reports no disconnect event). */
static void drop_peer(cradle_server_net *net, ENetPeer *peer) {
    enet_peer_disconnect_now(peer, 0);
    forget_peer(net, peer);
}

/* Sends one message to one peer, sealed with its session keys in secure mode. */
static void send_message_to(cradle_server_net *net, ENetPeer *peer, const void *data, size_t length,
                            uint32_t flags) {
    if (!net->secure) {
        send_to(peer, data, length, flags);
        return;
    }
    uint16_t i = peer_index(net, peer);
    if (net->peer[i].auth == CRADLE_SERVER_AUTH_NONE) return; /* no keys: nothing may leave */
    size_t n = 0;
    cradle_secure_lane_id lane = (flags & ENET_PACKET_FLAG_RELIABLE) ? CRADLE_SECURE_ORDERED : CRADLE_SECURE_UNORDERED;
    int rc = cradle_secure_seal_lane(&net->peer[i].session, lane, net->sealed, sizeof net->sealed, &n, data, length);
    if (rc == CRADLE_ESECURE_EXHAUSTED) {
        drop_peer(net, peer); /* never reuse a nonce: the client reconnects */
        return;
    }
    if (rc == 0) send_to(peer, net->sealed, n, flags);
}

/* Encodes a REFUSE into out (capacity bytes), its text cut so that it,
 * plus overhead, is no larger than limit (the HELLO that caused it; 0: no
 * limit): a forged source address must not earn a reply larger than its
 * request. Returns the length. */
static size_t encode_refuse(cradle_wire_message *m, uint8_t *out, size_t capacity, size_t overhead, size_t limit) {
    assert(m->type == CRADLE_WIRE_REFUSE);
    size_t n = 0;
    int rc = cradle_wire_encode(out, capacity, &n, m);
    assert(rc == 0); /* a REFUSE always fits */
    if (limit == 0 || n + overhead <= limit) return n;
    size_t text = strlen(m->as.refuse.text), excess = n + overhead - limit;
    m->as.refuse.text[excess >= text ? 0 : text - excess] = '\0';
    rc = cradle_wire_encode(out, capacity, &n, m);
    assert(rc == 0);
    (void)rc;
    return n;
}

/* Refuses a peer from the net thread (no slot was ever taken) and lets it go. */
static void refuse_here(cradle_server_net *net, ENetPeer *peer, uint8_t reason, const char *text,
                        bool sealed) {
    uint16_t i = peer_index(net, peer);
    uint8_t buf[CRADLE_WIRE_TEXT_MAX + 16];
    cradle_wire_message m = {.type = CRADLE_WIRE_REFUSE};
    m.as.refuse.reason = reason;
    cradle_wire_set_text(m.as.refuse.text, sizeof m.as.refuse.text, text);
    size_t n = encode_refuse(&m, buf, sizeof buf, sealed ? CRADLE_SECURE_OVERHEAD : 0, net->peer[i].hello_bytes);
    if (sealed)
        send_message_to(net, peer, buf, n, ENET_PACKET_FLAG_RELIABLE);
    else
        send_to(peer, buf, n, ENET_PACKET_FLAG_RELIABLE);
    net->peer[i].auth = CRADLE_SERVER_AUTH_CLOSING;
    enet_peer_disconnect_later(peer, 0);
}

static void sync_token_stats(cradle_server_net *net) {
    const cradle_token_stats *t = &net->verifier.stats;
    cradle_server_net_stats *s = &net->stats;
    atomic_store(&s->tokens_accepted, t->accepted);
    atomic_store(&s->token_malformed, t->malformed);
    atomic_store(&s->token_signature, t->signature);
    atomic_store(&s->token_server, t->server);
    atomic_store(&s->token_build, t->build);
    atomic_store(&s->token_future, t->future);
    atomic_store(&s->token_lifetime, t->lifetime);
    atomic_store(&s->token_expired, t->expired);
    atomic_store(&s->token_reused, t->reused);
    atomic_store(&s->token_cache_full, t->cache_full);
}

/* The rate limit's counters, for status (the game thread's reads). */
static void sync_rate_stats(cradle_server_net *net) {
    atomic_store(&net->stats.rate_refunded, net->ratelimit.stats.refunded);
    atomic_store(&net->stats.rate_evicted, net->ratelimit.stats.evicted);
}

void cradle_server_net_set_build(cradle_server_net *net, const char *build_id) {
    if (!net->build_lock_ready) return;
    pthread_mutex_lock(&net->build_lock);
    snprintf(net->build_pending, sizeof net->build_pending, "%s", build_id);
    atomic_store(&net->build_changed, true);
    pthread_mutex_unlock(&net->build_lock);
}

static void apply_build(cradle_server_net *net) {
    if (!atomic_exchange(&net->build_changed, false)) return;
    pthread_mutex_lock(&net->build_lock);
    int rc = cradle_token_verifier_set_build(&net->verifier, net->build_pending);
    (void)rc; /* a loaded contract's build id is always valid */
    pthread_mutex_unlock(&net->build_lock);
}

/* Secure mode, a peer not yet authenticated: its packet must be a plaintext
 * HELLO with a valid credential (token || the client's ephemeral key);
 * handshake.h decides, this applies the decision and counts it. */
static void on_first_packet(cradle_server_net *net, ENetPeer *peer, const uint8_t *data, size_t size) {
    uint16_t i = peer_index(net, peer);
    apply_build(net);
    cradle_handshake_config config = {
        .verifier = &net->verifier,
        .keys = &net->keys,
        .context = peer->connectID,
        .now_unix = net->now_unix,
        .max_bytes = CRADLE_SERVER_IN_BYTES,
        .game = net->game[0] ? net->game : NULL, /* not configured (a test, a bench): not checked */
    };
    cradle_handshake_result r;
    cradle_handshake_action action = cradle_handshake_first_packet(&r, &net->peer[i].session, &config, data, size);
    if (r.hello) net->peer[i].hello_bytes = (uint16_t)size; /* caps the REFUSE */
    if (r.bad_credential) atomic_fetch_add(&net->stats.bad_credential, 1);
    if (r.sealed) {
        net->peer[i].auth = CRADLE_SERVER_AUTH_OK; /* keys exist: replies are sealed */
        sync_token_stats(net);
    }
    switch (action) {
    case CRADLE_HANDSHAKE_IGNORE:
        atomic_fetch_add(&net->stats.unauthenticated, 1);
        return;
    case CRADLE_HANDSHAKE_DROP:
        drop_peer(net, peer); /* a degenerate key: nothing to seal a reply with */
        return;
    case CRADLE_HANDSHAKE_REFUSE:
        refuse_here(net, peer, r.reason, r.text, r.sealed);
        return;
    case CRADLE_HANDSHAKE_ADMIT:
        break;
    }
    /* A valid, unused token is its own proof: its connect does not count
     * against its address (a LAN party behind one address gets in). */
    cradle_ratelimit_refund(&net->ratelimit, &peer->address.host, sizeof peer->address.host, now_ms(net));
    sync_rate_stats(net);
    net->peer[i].identified = true;
    net->peer[i].client_id = r.token.client_id;
    announce(net, peer);
    cradle_server_in *in = &net->scratch_in;
    fill_peer(net, in, peer, CRADLE_SERVER_IN_MESSAGE);
    in->message = (cradle_server_in_message){.type = CRADLE_WIRE_HELLO, .version = CRADLE_WIRE_VERSION};
    in->message.as.hello = r.request;
    push_in(net, in, true); /* the HELLO must follow its CONNECT */
}

static void on_receive(cradle_server_net *net, ENetEvent *event) {
    net->peer[peer_index(net, event->peer)].heard_ms = now_ms(net);
    ENetPacket *packet = event->packet;
    cradle_server_in *in = &net->scratch_in;
    const uint8_t *data = packet->data;
    size_t size = packet->dataLength;
    if (net->secure) {
        uint16_t i = peer_index(net, event->peer);
        if (net->peer[i].auth == CRADLE_SERVER_AUTH_CLOSING) return;
        if (net->peer[i].auth == CRADLE_SERVER_AUTH_NONE) {
            net->peer[i].heard = true;
            on_first_packet(net, event->peer, data, size);
            return;
        }
        size_t plain = 0;
        int rc = size <= CRADLE_SERVER_IN_BYTES + CRADLE_SECURE_OVERHEAD
                     ? cradle_secure_open(&net->peer[i].session, net->opened, sizeof net->opened, &plain, data, size)
                     : CRADLE_ESECURE_LONG;
        if (rc != 0) {
            /* Dropped, never decoded: replays are counted once authentic. */
            if (rc == CRADLE_ESECURE_REPLAY || rc == CRADLE_ESECURE_OLD)
                atomic_fetch_add(&net->stats.replayed, 1);
            else
                atomic_fetch_add(&net->stats.auth_failed, 1);
            return;
        }
        data = net->opened;
        size = plain;
    }
    cradle_wire_message m;
    int rc = size <= CRADLE_SERVER_IN_BYTES ? cradle_wire_decode(&m, data, size) : CRADLE_ENET_MESSAGE;
    if (rc != 0 && rc != CRADLE_ENET_VERSION) {
        atomic_fetch_add(&net->stats.dropped_malformed, 1);
        return;
    }
    if (rc == 0 && m.type == CRADLE_WIRE_PING) {
        uint8_t reply[16];
        size_t n = 0;
        cradle_wire_message pong = {.type = CRADLE_WIRE_PONG, .as.ping.echo = m.as.ping.echo};
        if (cradle_wire_encode(reply, sizeof reply, &n, &pong) == 0)
            send_message_to(net, event->peer, reply, n, ENET_PACKET_FLAG_UNSEQUENCED);
        return;
    }
    if (rc == 0 && m.type == CRADLE_WIRE_INPUT) {
        uint16_t i = peer_index(net, event->peer);
        if (net->peer[i].admitted) {
            cradle_stream_ack(&net->stream, i, m.as.input.ack, net->now_ns);
            net->peer[i].raw = true; /* it reads the stream: the rest goes raw */
        }
        if (m.as.input.count == 0) return; /* only an ack: nothing for the game thread */
    }
    if (!net->secure && m.type == CRADLE_WIRE_HELLO)
        net->peer[peer_index(net, event->peer)].hello_bytes = (uint16_t)size; /* caps the REFUSE */
    fill_peer(net, in, event->peer, CRADLE_SERVER_IN_MESSAGE);
    if (!cradle_server_in_take(in, &m, rc == CRADLE_ENET_VERSION)) return; /* a server's type: nothing to take */
    push_in(net, in, false);
}

/* Secure mode: when few peer slots are left, the oldest connection that has
 * not authenticated yet makes room (a DISCONNECT that says the server is
 * busy; a real client tries again). A flood of half-open connections thus
 * cycles through the spare slots and never holds the last ones against a
 * client with a valid token, which authenticates within a round trip. */
static void make_room(cradle_server_net *net, const ENetPeer *arrived) {
    size_t free_slots = 0, oldest = SIZE_MAX;
    for (size_t i = 0; i < net->host->peerCount; i++) {
        const ENetPeer *p = &net->host->peers[i];
        if (p->state == ENET_PEER_STATE_DISCONNECTED) {
            free_slots++;
            continue;
        }
        if (p == arrived || net->peer[i].connected_ms == 0 || net->peer[i].auth != CRADLE_SERVER_AUTH_NONE) continue;
        if (oldest == SIZE_MAX || net->peer[i].connected_ms < net->peer[oldest].connected_ms) oldest = i;
    }
    if (free_slots >= CRADLE_SERVER_FREE_SLOTS || oldest == SIZE_MAX) return;
    atomic_fetch_add(&net->stats.evicted_unauthenticated, 1);
    ENetPeer *victim = &net->host->peers[oldest];
    enet_peer_disconnect_now(victim, CRADLE_WIRE_DISCONNECT_BUSY);
    forget_peer(net, victim);
}

/* ---- the link's round trip: raw PING and PONG (wire.h, raw_datagram.h) -- */

/* ENet's intercept hook has no context of its own: the net of the turn
 * this thread runs (cradle_server_net_turn and the linger set it). */
static _Thread_local cradle_server_net *intercepting;

/* A client's raw PING, answered at once with a PONG of the same length
 * whose hold is the time the PING waited in the socket (its kernel receive
 * timestamp to now): the client's round trip is then the link's, whatever
 * this thread's batching. Only a connected peer's (in secure mode, one that
 * authenticated and whose keys open it) is answered; everything with the
 * magic is taken from ENet. Anything else ENet would not read is garbage,
 * dropped here and counted. */
static int intercept_raw(ENetHost *host, ENetEvent *event) {
    (void)event;
    if (!cradle_raw_is(host->receivedData, host->receivedDataLength)) {
        if (cradle_enet_would_read(host, host->receivedData, host->receivedDataLength, &host->receivedAddress))
            return 0;
        if (intercepting) atomic_fetch_add(&intercepting->stats.dropped_garbage, 1);
        return 1; /* consumed: what ENet would have dropped, dropped here and counted */
    }
    cradle_server_net *net = intercepting;
    if (!net) return 1; /* no turn on this thread yet: nobody to answer */
    uint64_t arrived = cradle_raw_arrival_ns(host->socket);
    size_t i = 0;
    while (i < host->peerCount && !(host->peers[i].state == ENET_PEER_STATE_CONNECTED &&
                                    host->peers[i].address.host == host->receivedAddress.host &&
                                    host->peers[i].address.port == host->receivedAddress.port))
        i++;
    bool known = i < host->peerCount && (!net->secure || net->peer[i].auth == CRADLE_SERVER_AUTH_OK);
    cradle_secure *session = known && net->secure ? &net->peer[i].session : NULL;
    cradle_wire_message m;
    uint8_t scratch[CRADLE_RAW_MESSAGE_MAX];
    if (!known || cradle_raw_decode(session, host->receivedData, host->receivedDataLength, scratch, &m) != 0 ||
        m.type != CRADLE_WIRE_PING) {
        atomic_fetch_add(&net->stats.raw_dropped, 1);
        return 1;
    }
    if (m.as.ping.rtt_us) net->peer[i].rtt_us = m.as.ping.rtt_us;
    net->peer[i].heard_ms = now_ms(net); /* a PING a second: the client is there, paused session or not */
    uint64_t now = cradle_wall_ns();
    uint64_t hold = now > arrived ? (now - arrived) / 1000u : 0;
    cradle_wire_message pong = {.type = CRADLE_WIRE_PONG,
                                .as.ping = {.echo = m.as.ping.echo, .hold_us = hold > UINT32_MAX ? UINT32_MAX : (uint32_t)hold}};
    uint8_t datagram[CRADLE_RAW_DATAGRAM_MAX];
    size_t n = 0;
    /* as long as the PING: a PONG is never larger than what it answers */
    if (cradle_raw_encode(session, &pong, datagram, sizeof datagram, &n) != 0 || n > host->receivedDataLength)
        return 1;
    ENetBuffer buffer = {.data = datagram, .dataLength = n};
    if (enet_socket_send(host->socket, &host->receivedAddress, &buffer, 1) > 0)
        atomic_fetch_add(&net->stats.raw_pings, 1);
    return 1;
}

static void handle_event(cradle_server_net *net, ENetEvent *event) {
    switch (event->type) {
    case ENET_EVENT_TYPE_CONNECT: {
        uint16_t i = peer_index(net, event->peer);
        uint64_t now = now_ms(net);
        bool allowed = cradle_ratelimit_allow(&net->ratelimit, &event->peer->address.host,
                                              sizeof event->peer->address.host, now);
        sync_rate_stats(net);
        if (!allowed) {
            atomic_fetch_add(&net->stats.rate_limited, 1);
            /* Gone at once, with only a DISCONNECT that says why (the client
             * tries again later, and names the limit if it keeps failing). */
            enet_peer_disconnect_now(event->peer, CRADLE_WIRE_DISCONNECT_RATE_LIMITED);
            break;
        }
        if (net->secure) make_room(net, event->peer);
        net->peer[i].generation++;
        net->peer[i].admitted = false;
        net->peer[i].heard = false;
        net->peer[i].auth = CRADLE_SERVER_AUTH_NONE;
        net->peer[i].announced = false;
        net->peer[i].connected_ms = now;
        net->peer[i].hello_bytes = 0;
        net->peer[i].rtt_us = 0;
        net->peer[i].heard_ms = now;
        /* ENet's own timeout is off (wire.h): the peer lives while it
         * talks, and expire_silent drops it after timeout_ms of silence. */
        enet_peer_timeout(event->peer, 0, CRADLE_WIRE_ENET_TIMEOUT_MS, CRADLE_WIRE_ENET_TIMEOUT_MS);
        /* No throttle deceleration: ENet's default shrinks the reliable window to
         * one MTU per round trip under sustained loss or jitter, and the step
         * stream (reliable) then falls behind for good (seen in tools/soak.sh).
         * The command also configures the client's side of the connection. */
        enet_peer_throttle_configure(event->peer, ENET_PEER_PACKET_THROTTLE_INTERVAL,
                                     ENET_PEER_PACKET_THROTTLE_ACCELERATION, 0);
        if (!net->secure) announce(net, event->peer);
        break;
    }
    case ENET_EVENT_TYPE_RECEIVE:
        on_receive(net, event);
        enet_packet_destroy(event->packet);
        break;
    case ENET_EVENT_TYPE_DISCONNECT: forget_peer(net, event->peer); break;
    case ENET_EVENT_TYPE_NONE: break;
    }
}

/* A STEPS broadcast from the game thread: its steps join the history. */
static void append_steps(cradle_server_net *net, const cradle_wire_steps *s) {
    uint32_t h = 0;
    for (uint32_t k = 0; k < s->count; k++) {
        bool has_hash = h < s->hash_count && s->hashes[h].offset == k;
        cradle_stream_append(&net->stream, s->first_step + k, s->snapshots + (size_t)k * s->snapshot_size, s->epoch,
                             has_hash, has_hash ? s->hashes[h].hash : 0);
        if (has_hash) h++;
    }
}

/* A WELCOME is going out: the peer is admitted and its stream starts. */
static void start_stream(cradle_server_net *net, uint16_t i, const cradle_wire_welcome *w) {
    net->peer[i].admitted = true;
    net->peer[i].bye_sent = false;
    net->peer[i].raw = false; /* through ENet, behind its WELCOME, until it answers */
    if (!net->secure) { /* plaintext: admission is all the proof there is (loopback development) */
        ENetPeer *peer = &net->host->peers[i];
        cradle_ratelimit_refund(&net->ratelimit, &peer->address.host, sizeof peer->address.host, now_ms(net));
        sync_rate_stats(net);
    }
    cradle_stream_start(&net->stream, i, w->start_step, net->now_ns);
    if (w->slot == CRADLE_WIRE_SPECTATOR)
        cradle_stream_pace(&net->stream, i, CRADLE_ACKPACE_SPECTATOR_STEPS, cradle_ackpace_wait_ns(w->steps_per_second));
}

/* How long a peer's ack may stall before its steps are sent again: a round
 * trip and some of its variance, within 40 ms .. 3 s. */
static uint64_t repair_ns(const ENetPeer *peer) {
    uint64_t ms = (uint64_t)peer->roundTripTime + 2u * peer->roundTripTimeVariance + 16u;
    if (ms < 40u) ms = 40u;
    if (ms > 3000u) ms = 3000u;
    return ms * 1000000u;
}

/* One STEPS (stream_message, n bytes) to the peer: raw into the batch once
 * it reads the stream (fanout.h), through ENet before that or when too long
 * for a raw datagram. Returns false when the peer was dropped (its keys
 * used up every nonce). */
static bool send_steps(cradle_server_net *net, ENetPeer *peer, size_t n) {
    uint16_t i = peer_index(net, peer);
    if (!net->peer[i].raw || n > CRADLE_RAW_MESSAGE_MAX) {
        send_message_to(net, peer, net->stream_message, n, ENET_PACKET_FLAG_UNSEQUENCED);
        return peer->state == ENET_PEER_STATE_CONNECTED;
    }
    size_t length = 0;
    int rc = cradle_raw_seal(net->secure ? &net->peer[i].session : NULL, net->stream_message, n,
                             cradle_fanout_buffer(&net->fanout), CRADLE_RAW_DATAGRAM_MAX, &length);
    if (rc == CRADLE_ESECURE_EXHAUSTED) {
        drop_peer(net, peer); /* never reuse a nonce: the client reconnects */
        return false;
    }
    assert(rc == 0); /* the length was checked, the buffer holds any raw datagram */
    cradle_fanout_queue(&net->fanout, length, peer->address.host, peer->address.port);
    return true;
}

/* Sends each admitted peer the steps it should get now (stream.h): the raw
 * ones in batches, the last batch once every peer had its turn. */
static void pump_steps(cradle_server_net *net) {
    uint64_t now = net->now_ns;
    for (uint16_t i = 0; i < net->host->peerCount; i++) {
        if (!cradle_stream_active(&net->stream, i)) continue;
        ENetPeer *peer = &net->host->peers[i];
        if (peer->state != ENET_PEER_STATE_CONNECTED) continue;
        size_t n = 0;
        int rc;
        while ((rc = cradle_stream_next(&net->stream, i, now, repair_ns(peer), net->stream_message,
                                        sizeof net->stream_message, &n)) == 0 &&
               n > 0 && send_steps(net, peer, n))
            ;
        if (rc == CRADLE_EFULL) {
            /* Its ack left the history: it cannot catch up from here. */
            uint8_t bye[CRADLE_WIRE_TEXT_MAX + 16];
            cradle_wire_message m = {.type = CRADLE_WIRE_BYE};
            m.as.bye.reason = CRADLE_WIRE_BYE_TIMEOUT;
            cradle_wire_set_text(m.as.bye.text, sizeof m.as.bye.text,
                                 "fell too far behind the step stream; join again");
            if (cradle_wire_encode(bye, sizeof bye, &n, &m) == 0)
                send_message_to(net, peer, bye, n, ENET_PACKET_FLAG_RELIABLE);
            net->peer[i].admitted = false;
            enet_peer_disconnect_later(peer, 0);
        }
    }
    cradle_fanout_flush(&net->fanout);
    const cradle_stream_stats *st = &net->stream.stats;
    atomic_store(&net->stats.steps_repeated, st->steps_repeated);
    atomic_store(&net->stats.repairs, st->repairs);
    atomic_store(&net->stats.fell_behind, st->fell_behind);
}

/* Shutdown: each admitted peer gets the held BYE and a disconnect once it
 * confirmed every step, or at once when force is set. */
static void release_byes(cradle_server_net *net, bool force) {
    for (uint16_t i = 0; i < net->host->peerCount; i++) {
        ENetPeer *peer = &net->host->peers[i];
        if (peer->state != ENET_PEER_STATE_CONNECTED || net->peer[i].bye_sent) continue;
        if (net->peer[i].admitted && !force && !cradle_stream_done(&net->stream, i)) continue;
        if (net->peer[i].admitted && net->bye_length > 0)
            send_message_to(net, peer, net->bye, net->bye_length, ENET_PACKET_FLAG_RELIABLE);
        net->peer[i].bye_sent = true;
        net->peer[i].admitted = false;
        enet_peer_disconnect_later(peer, 0);
    }
}

/* Encodes a message the game thread queued into net->encoded. Returns the
 * length. */
static size_t encode_out(cradle_server_net *net, const cradle_wire_message *m) {
    size_t n = 0;
    int rc = cradle_wire_encode(net->encoded, sizeof net->encoded, &n, m);
    assert(rc == 0); /* the host builds only valid messages that fit */
    (void)rc;
    return n;
}

/* A message for every admitted peer. */
static void broadcast_out(cradle_server_net *net, cradle_server_out *out, uint32_t flags) {
    const cradle_wire_message *m = &out->message;
    if (m->type == CRADLE_WIRE_STEPS) {
        append_steps(net, &m->as.steps);
        return;
    }
    size_t n = encode_out(net, m);
    if (m->type == CRADLE_WIRE_BYE) {
        assert(n <= sizeof net->bye);
        memcpy(net->bye, net->encoded, n); /* sent by release_byes */
        net->bye_length = (uint32_t)n;
        return;
    }
    if (net->secure) {
        /* Each peer's own keys: one sealed packet per peer. */
        for (size_t i = 0; i < net->host->peerCount; i++) {
            ENetPeer *peer = &net->host->peers[i];
            if (net->peer[i].admitted && peer->state == ENET_PEER_STATE_CONNECTED)
                send_message_to(net, peer, net->encoded, n, flags);
        }
        return;
    }
    /* One packet, reference-counted by ENet across every peer. */
    ENetPacket *packet = enet_packet_create(net->encoded, n, flags);
    if (!packet) return;
    for (size_t i = 0; i < net->host->peerCount; i++) {
        ENetPeer *peer = &net->host->peers[i];
        if (net->peer[i].admitted && peer->state == ENET_PEER_STATE_CONNECTED) (void)enet_peer_send(peer, 0, packet);
    }
    if (packet->referenceCount == 0) enet_packet_destroy(packet);
}

/* A message (or only a disconnect) for one peer. */
static void send_out(cradle_server_net *net, cradle_server_out *out, uint32_t flags) {
    if (out->peer >= net->host->peerCount || net->peer[out->peer].generation != out->generation ||
        net->host->peers[out->peer].state != ENET_PEER_STATE_CONNECTED) {
        atomic_fetch_add(&net->stats.dropped_stale, 1);
        return;
    }
    ENetPeer *peer = &net->host->peers[out->peer];
    cradle_wire_message *m = &out->message;
    if (!(out->flags & CRADLE_SERVER_OUT_CONTROL)) {
        if (m->type == CRADLE_WIRE_WELCOME) start_stream(net, out->peer, &m->as.welcome);
        size_t n = m->type == CRADLE_WIRE_REFUSE
                       ? encode_refuse(m, net->encoded, sizeof net->encoded, net->secure ? CRADLE_SECURE_OVERHEAD : 0,
                                       net->peer[out->peer].hello_bytes)
                       : encode_out(net, m);
        send_message_to(net, peer, net->encoded, n, flags);
    }
    if (out->flags & CRADLE_SERVER_OUT_DISCONNECT) {
        net->peer[out->peer].admitted = false;
        enet_peer_disconnect_later(peer, 0);
    }
}

/* Sends everything the game thread queued. Returns whether new steps
 * joined the stream. */
static bool drain_out(cradle_server_net *net) {
    cradle_server_out *out = &net->scratch_out;
    bool stepped = false;
    while (cradle_ring_pop(&net->out, out)) {
        uint32_t flags = (out->flags & CRADLE_SERVER_OUT_RELIABLE) ? ENET_PACKET_FLAG_RELIABLE
                                                                   : ENET_PACKET_FLAG_UNSEQUENCED;
        if (!(out->flags & CRADLE_SERVER_OUT_CONTROL)) cradle_wire_attach(&out->message, out->payload);
        if (out->peer != CRADLE_SERVER_BROADCAST) {
            send_out(net, out, flags);
            continue;
        }
        if (out->flags & CRADLE_SERVER_OUT_CONTROL) continue;
        broadcast_out(net, out, flags);
        stepped |= out->message.type == CRADLE_WIRE_STEPS;
    }
    return stepped;
}

/* Secure mode: drops peers that did not authenticate in time (a refused one
 * gets a second more for its REFUSE to arrive). */
static void expire_unauthenticated(cradle_server_net *net) {
    if (!net->secure) return;
    uint64_t now = now_ms(net);
    uint64_t silent = net->auth_timeout_ms < CRADLE_SERVER_SILENT_MS ? net->auth_timeout_ms : CRADLE_SERVER_SILENT_MS;
    for (size_t i = 0; i < net->host->peerCount; i++) {
        if (net->peer[i].connected_ms == 0 || net->peer[i].auth == CRADLE_SERVER_AUTH_OK) continue;
        uint64_t limit = net->auth_timeout_ms + (net->peer[i].auth == CRADLE_SERVER_AUTH_CLOSING ? 1000u : 0u);
        /* a peer that sent nothing at all since its CONNECT has far less time:
         * a client sends its HELLO the moment it is connected */
        if (net->peer[i].auth == CRADLE_SERVER_AUTH_NONE && !net->peer[i].heard) limit = silent;
        if (now - net->peer[i].connected_ms < limit) continue;
        if (net->peer[i].auth == CRADLE_SERVER_AUTH_NONE) atomic_fetch_add(&net->stats.auth_timeouts, 1);
        drop_peer(net, &net->host->peers[i]);
    }
}

/* A connected peer heard from (an ENet packet, a raw PING) not once in
 * timeout_ms is gone: dropped, and the game thread told. This, not ENet's
 * own timeout, ends a connection whose client stopped talking. ENet's
 * timeout follows its pings, reliable packets whose retries wait twice as
 * long each time one is lost: on a slow lossy link (a second each way, a
 * quarter lost) one ping in sixty outlived a 60 s timeout while the
 * client's inputs and acks arrived all along. */
static void expire_silent(cradle_server_net *net) {
    uint64_t now = now_ms(net);
    for (size_t i = 0; i < net->host->peerCount; i++) {
        if (net->peer[i].connected_ms == 0 || now - net->peer[i].heard_ms < net->timeout_ms) continue;
        atomic_fetch_add(&net->stats.silent_dropped, 1);
        drop_peer(net, &net->host->peers[i]);
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
    const cradle_fanout_stats *f = &net->fanout.stats;
    cradle_fanout_stats *seen = &net->fanout_accounted;
    atomic_fetch_add(&net->stats.bytes_out, f->bytes - seen->bytes);
    atomic_fetch_add(&net->stats.packets_out, f->datagrams - seen->datagrams);
    atomic_store(&net->stats.raw_steps, f->datagrams);
    atomic_store(&net->stats.raw_batches, f->batches);
    atomic_store(&net->stats.raw_refused, f->dropped);
    *seen = *f;
}

void cradle_server_net_wake(cradle_server_net *net) {
    /* A full pipe already holds a wake-up: nothing is lost when this fails. */
    if (net->wake_fd[1] >= 0) (void)!write(net->wake_fd[1], "", 1);
}

/* Whether ENet holds any peer, connected or on its way: only then do its
 * timers (pings, retransmissions, timeouts) need a look between datagrams. */
static bool any_peer(const cradle_server_net *net) {
    for (size_t i = 0; i < net->host->peerCount; i++)
        if (net->host->peers[i].state != ENET_PEER_STATE_DISCONNECTED) return true;
    return false;
}

/* Reads what waits at the UDP port and handles its events. ENet's service
 * reads datagrams only until one makes an event (a connect, a disconnect,
 * a timeout), and enet_host_check_events hands out only events already
 * made: one service a turn left everything behind the first connect in the
 * socket for the next turn, BATCH_MS later. A flood of connects (hundreds a
 * second) then queued every player's input behind it, and the input delay
 * rose from 1 step to 10 (issue 37; tools/bench/bench_flood.sh). So a turn
 * services again while events come, up to EVENTS_PER_TURN: returns true
 * when it stopped there with more perhaps waiting, for a turn at once. */
static bool read_datagrams(cradle_server_net *net) {
    ENetEvent event;
    for (unsigned events = 0; events < EVENTS_PER_TURN;) {
        int rc = enet_host_service(net->host, &event, 0);
        if (rc <= 0) return false; /* the socket is drained (or failed: the next turn tries again) */
        while (rc > 0) {
            handle_event(net, &event);
            events++;
            rc = enet_host_check_events(net->host, &event);
        }
    }
    return true;
}

/* The one place this thread reads the clock: at the start of each turn
 * (and of each round of stop's linger), for every decision the turn takes
 * (timeouts, rate limits, the stream's repairs, tokens' lifetimes). The raw
 * PONG's hold alone reads the wall clock where it answers: it measures the
 * PING's wait against the kernel's receive timestamp. */
static void read_clock(cradle_server_net *net) {
    net->now_ns = cradle_mono_ns();
    net->now_unix = cradle_wall_ns() / 1000000000u;
}

uint32_t cradle_server_net_turn(cradle_server_net *net, uint64_t now_ns, uint64_t now_unix, bool *watch_socket) {
    cradle_enet_pool_bind(&net->pool); /* already bound on the network thread: a no-op there */
    intercepting = net;
    net->now_ns = now_ns;
    net->now_unix = now_unix;
    /* New steps go out before the inbound batch is read: they are what
     * every client waits for, and the acks can wait a moment. */
    if (drain_out(net)) {
        pump_steps(net);
        enet_host_flush(net->host);
    }
    bool more = read_datagrams(net);
    drain_out(net);
    pump_steps(net);
    expire_unauthenticated(net);
    expire_silent(net);
    enet_host_flush(net->host);
    bool busy = net->host->totalReceivedPackets > 0 || net->host->totalSentPackets > 0;
    account(net);
    /* After a turn that sent or read datagrams, sleeps BATCH_MS unless
     * the game thread queues output (wake): the datagrams that arrive
     * meanwhile (a player's input each step, a spectator's ack every
     * other step, a round trip after it went out) are read in one batch.
     * Waking for each costs more CPU than the few milliseconds it would
     * save an input, whose deadline is input_delay steps away (64 peers:
     * a 1 ms batch cost the thread 5.5% of a core, 4 ms 4%, when every
     * peer acked every step). After a quiet turn it sleeps until a
     * datagram arrives, output is queued or ENet's timers (pings,
     * retransmissions, timeouts) want a look: an idle server does not
     * wake 250 times a second, and one with no peer at all once a second. */
    *watch_socket = !busy;
    return more ? 0u : busy ? BATCH_MS : any_peer(net) ? HOUSEKEEPING_MS : IDLE_MS;
}

static void *net_main(void *arg) {
    cradle_os_name_thread("net");
    cradle_server_net *net = arg;
    struct pollfd fds[2] = {{.fd = net->wake_fd[0], .events = POLLIN}, {.fd = net->host->socket, .events = POLLIN}};
    while (!atomic_load(&net->stop)) {
        read_clock(net);
        bool watch_socket = false;
        uint32_t wait_ms = cradle_server_net_turn(net, net->now_ns, net->now_unix, &watch_socket);
        if (poll(fds, watch_socket ? 2 : 1, (int)wait_ms) > 0 && (fds[0].revents & POLLIN))
            cradle_drain_wake_fd(net->wake_fd[0]);
    }
    cradle_enet_pool_bind(NULL); /* the host is the stopping thread's from here */
    intercepting = NULL;
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

void cradle_server_net_finish(cradle_server_net *net, uint32_t linger_ms, uint64_t now_ns) {
    cradle_enet_pool_bind(&net->pool);
    intercepting = net;
    net->now_ns = now_ns;
    drain_out(net);
    uint32_t slowest = 0;
    for (size_t i = 0; i < net->host->peerCount; i++)
        if (net->peer[i].admitted && net->host->peers[i].roundTripTime > slowest)
            slowest = net->host->peers[i].roundTripTime;
    uint64_t extra = 2u * (uint64_t)slowest;
    uint64_t limit = (uint64_t)linger_ms + (extra > 4500u ? 4500u : extra);
    if (limit > 5000u) limit = 5000u;
    net->linger_ms = linger_ms;
    net->linger_limit_ms = limit;
    net->linger_start_ms = now_ms(net);
}

bool cradle_server_net_linger(cradle_server_net *net, uint64_t now_ns) {
    cradle_enet_pool_bind(&net->pool);
    intercepting = net;
    net->now_ns = now_ns;
    uint64_t elapsed = now_ms(net) - net->linger_start_ms;
    uint64_t limit = net->linger_limit_ms;
    pump_steps(net);
    release_byes(net, net->linger_ms == 0 || elapsed >= limit);
    bool anyone = false;
    for (size_t i = 0; i < net->host->peerCount; i++)
        if (net->host->peers[i].state != ENET_PEER_STATE_DISCONNECTED) anyone = true;
    if (!anyone || net->linger_ms == 0 || elapsed >= limit + net->linger_ms) {
        enet_host_flush(net->host);
        account(net);
        return false;
    }
    ENetEvent event;
    int rc = enet_host_service(net->host, &event, 0);
    while (rc > 0) {
        if (event.type == ENET_EVENT_TYPE_RECEIVE) {
            on_receive(net, &event); /* acks still move the stream */
            enet_packet_destroy(event.packet);
        } else if (event.type == ENET_EVENT_TYPE_DISCONNECT) {
            forget_peer(net, event.peer);
        }
        rc = enet_host_check_events(net->host, &event);
    }
    return true;
}

void cradle_server_net_stop(cradle_server_net *net, uint32_t linger_ms) {
    if (!net->thread_started) return;
    atomic_store(&net->stop, true);
    cradle_server_net_wake(net);
    pthread_join(net->thread, NULL);
    net->thread_started = false;
    /* The game thread has stopped producing: send its last words, let every
     * peer confirm the last steps, then let them acknowledge the disconnect. */
    read_clock(net);
    cradle_server_net_finish(net, linger_ms, net->now_ns);
    for (;;) {
        read_clock(net);
        if (!cradle_server_net_linger(net, net->now_ns)) break;
        struct pollfd socket = {.fd = net->host->socket, .events = POLLIN};
        (void)poll(&socket, 1, 10);
    }
    cradle_enet_pool_bind(NULL);
    intercepting = NULL;
}

void cradle_server_net_close(cradle_server_net *net) {
    if (net->host) enet_host_destroy(net->host);
    net->host = NULL;
    cradle_enet_pool_deinit(&net->pool); /* after the host: it returned every block */
    cradle_stream_deinit(&net->stream);
    cradle_keys_wipe(&net->keys);
    for (size_t i = 0; net->peer && i < net->max_peers; i++) cradle_secure_wipe(&net->peer[i].session);
    free(net->peer);
    net->peer = NULL;
    free(net->seen);
    free(net->rate_entries);
    net->seen = NULL;
    net->rate_entries = NULL;
    if (net->build_lock_ready) pthread_mutex_destroy(&net->build_lock);
    net->build_lock_ready = false;
    free(net->in_storage);
    free(net->out_storage);
    net->in_storage = net->out_storage = NULL;
    close_wake_pipe(net->wake_fd);
    close_wake_pipe(net->game_wake_fd);
}
