/*
 * cradle-test-client: a headless client for cradle-server's integration tests.
 *
 * A session is the client library's (client/net/netclient.h, the code
 * cradle-client runs): connect, HELLO, WELCOME, the state block of a join in
 * progress, the STEPS reorder queue, acks and inputs, reloads, the hash
 * checks, DESYNC, BYE. As a player it sends seeded input (splitmix of --seed,
 * the step and its slot). It runs steps up to --steps - 1 and stops there
 * (or, with --run N, N steps from the step it joined at: a check that must
 * not depend on how soon a loaded machine lets it join);
 * with --output FILE it writes the game's output() bytes of every step it
 * runs, for comparison with cradle-replay --output of the server's log.
 *
 * It prints one JSON line at the end:
 *   {"event":"done","slot":S,"start_step":N,"steps":M,"hashes_checked":H,
 *    "last_hash_step":K,"last_hash":"<hex>","final_hash":"<hex>","build":"<id>"}
 * or {"event":"refused","reason":"full","text":"..."} (exit 3; 0 when it is
 * the --expect-refusal reason), or {"event":"dropped","slot":S,"step":N}
 * (--drop-at). It exits 4 on a hash mismatch, 5 on a timeout (no server,
 * silence, --timeout-ms), 1 on any other failure, 2 on a usage error.
 *
 * Security (the server's default): --server-key HEX pins the server's public
 * key and --token TEXT or --issuer-key FILE (a fresh token per connect)
 * supplies the credential; when neither flag is given the environment's
 * CRADLE_TEST_SERVER_KEY and CRADLE_TEST_ISSUER_KEY are used
 * (tests/integration/server_common.sh sets them). --insecure talks
 * plaintext. A server whose first reply does not open within 5 s
 * (--peer-timeout-ms when longer, at most 20 s) is reported as "server
 * identity not proven" (exit 1).
 *
 * What the tests need beyond a normal client is done here, around the
 * library, with its public fields (net->enet.peer, net->session):
 *   --protocol N      a HELLO of protocol version N on a connection of its
 *                     own: the library speaks only its own version;
 *   --garbage N       N malformed messages right after HELLO (sealed with the
 *                     session's keys in secure mode); it then plays on;
 *   --attack KIND[,KIND]  after WELCOME, hostile packets over the
 *                     authenticated connection: forged, replay, truncated,
 *                     oversized, wrongkey, plaintext (--attack-count N of each);
 *   --raw-attack N    once a raw STEPS has arrived (wire.h "Raw datagrams"),
 *                     N of each hostile raw datagram at this client: the
 *                     captured one again from another socket (not the
 *                     server's address) and, handed to the library's
 *                     intercept hook as if from the server's address, the
 *                     same replayed, altered (forged), unsealed (secure) or
 *                     cut, and one too long; the session must drop and count
 *                     each (the done line's raw_dropped, dropped_unopened)
 *                     and play on;
 *   --save-token FILE writes the token it uses (minted here, not in the
 *                     library, so that it can be written);
 *   --drop-at STEP    at STEP, closes without BYE (the server sees a drop);
 *   --silent          connects and never says HELLO; prints
 *                     {"event":"silent","disconnected":B,"packets":P};
 *   --connect-flood N N connects at once, serviced until SIGTERM (at most
 *                     60 s: ENet retries the ones the server has no room
 *                     for yet); prints {"event":"flood","attempts":N,
 *                     "from":K,"connected":C,"disconnected":D}. The test
 *                     waits for the server's counters to show the flood,
 *                     then stops it;
 *   --flood-hold      with --connect-flood: every attempt the server drops
 *                     is made again at once, so the address's connect limit
 *                     stays spent, until SIGUSR1 (then only serviced);
 *   --flood-from K    spreads the flood over K loopback addresses,
 *                     127.0.0.2 and on (K <= 250).
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <enet/enet.h>
#include <sodium.h>

#include "cradle/keys.h"
#include "cradle/parse.h"
#include "cradle/raw_datagram.h"
#include "cradle/reload.h"
#include "cradle/secure.h"
#include "cradle/systime.h"
#include "cradle/token.h"
#include "cradle/wire.h"
#include "netclient.h"

#define NS_PER_MS 1000000ull

typedef struct options {
    const char *host_name;
    uint16_t port;
    const char *game_path;
    int protocol; /* -1: the library's */
    bool spectator;
    int slot_request;
    uint64_t steps_target;
    uint64_t run_steps; /* --run N: steps_target is the join step + N */
    uint64_t seed;
    uint64_t drop_at;
    uint64_t garbage;
    FILE *output;
    uint64_t timeout_ms;
    uint64_t peer_timeout_ms; /* the silence timeout; 0 = the library's */
    const char *expect_refusal;
    bool insecure;
    const char *server_key_hex;
    const char *token_text;
    const char *issuer_key_path;
    const char *save_token;
    const char *attack;
    uint64_t attack_count;
    uint64_t raw_attack;
    uint64_t client_id;
    bool silent;
    uint64_t connect_flood;
    uint64_t flood_from;     /* --flood-from K: the flood from 127.0.0.2 .. 127.0.0.(K+1) */
    bool flood_hold;         /* --flood-hold: attempts dropped are made again until SIGUSR1 */
} options;

typedef struct client {
    options o;
    uint32_t connect_wait_ms; /* ENet's handshake and the first opened reply */
    char token[CRADLE_TOKEN_TEXT_SIZE]; /* --save-token: the token minted here */
    cradle_netclient net;
    /* --raw-attack: the first raw STEPS datagram this client received */
    uint8_t raw_captured[CRADLE_RAW_DATAGRAM_MAX];
    size_t raw_captured_size;
} client;

static client *raw_capturing; /* --raw-attack: ENet's intercept hook has no context */

static uint64_t splitmix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void hex(char out[17], uint64_t v) { snprintf(out, 17, "%016" PRIx64, v); }

static void send_raw(ENetPeer *peer, const void *data, size_t n) {
    ENetPacket *packet = enet_packet_create(data, n, ENET_PACKET_FLAG_RELIABLE);
    if (packet && enet_peer_send(peer, 0, packet) != 0) enet_packet_destroy(packet);
}

/* The library's input function: seeded bot input for the step and slot. */
static void seeded_input(void *context, uint64_t step, uint8_t *out, uint32_t input_bytes) {
    const client *c = context;
    uint64_t r = splitmix(c->o.seed * 1000003u + step * 64u + c->net.welcome.slot);
    for (uint32_t i = 0; i < input_bytes; i++) out[i] = (uint8_t)(r >> (8u * (i % 8u)));
}

/* The game library's name and build id (it is loaded and closed again).
 * Returns false with the reason printed. */
static bool library_identity(const char *path, char name[CRADLE_GAME_NAME_MAX + 1],
                             char build_id[CRADLE_GAME_BUILD_ID_MAX + 1]) {
    cradle_reload lib;
    char message[CRADLE_RELOAD_MESSAGE_MAX];
    if (cradle_reload_open(&lib, &(cradle_reload_config){.path = path}, 0, message, sizeof message) != 0) {
        fprintf(stderr, "test-client: --game: %s\n", message);
        return false;
    }
    snprintf(name, CRADLE_GAME_NAME_MAX + 1, "%s", cradle_reload_contract(&lib)->name);
    snprintf(build_id, CRADLE_GAME_BUILD_ID_MAX + 1, "%s", cradle_reload_contract(&lib)->build_id);
    cradle_reload_close(&lib);
    return true;
}

/* ---- beside a session ---------------------------------------------------- */

/* --garbage: malformed messages right after HELLO; the server must drop
 * them and carry on. */
static void send_garbage(client *c) {
    cradle_netclient *net = &c->net;
    for (uint64_t i = 0; i < c->o.garbage; i++) {
        uint8_t junk[64];
        uint64_t r = splitmix(i);
        size_t n = 1 + (size_t)(r % sizeof junk);
        for (size_t j = 0; j < n; j++) junk[j] = (uint8_t)splitmix(r + j);
        if (n >= 2 && i % 2 == 0) { /* a valid header with a bad body */
            junk[0] = (uint8_t)(1 + r % CRADLE_WIRE_TYPE_LAST);
            junk[1] = CRADLE_WIRE_VERSION;
        }
        if (net->secure) {
            uint8_t sealed[64 + CRADLE_SECURE_OVERHEAD];
            if (cradle_secure_seal(&net->session, sealed, sizeof sealed, &n, junk, n) == 0)
                send_raw(net->enet.peer, sealed, n);
        } else {
            send_raw(net->enet.peer, junk, n);
        }
    }
    enet_host_flush(net->enet.host);
}

/* --attack: hostile packets over the authenticated connection; the server
 * must drop and count each without decoding it. */
static void attack(client *c) {
    cradle_netclient *net = &c->net;
    const char *kinds = c->o.attack;
    if (!net->secure) return;
    uint8_t pkt[CRADLE_SECURE_PACKET_MAX];
    uint8_t plain[64];
    size_t n = 0;
    cradle_wire_message ping = {.type = CRADLE_WIRE_PING, .as.ping.echo = 7};
    size_t pn = 0;
    if (cradle_wire_encode(plain, sizeof plain, &pn, &ping) != 0) return;
    for (uint64_t k = 0; k < c->o.attack_count; k++) {
        if (strstr(kinds, "forged") && cradle_secure_seal(&net->session, pkt, sizeof pkt, &n, plain, pn) == 0) {
            pkt[n - 1] ^= 0x5a; /* tag altered */
            send_raw(net->enet.peer, pkt, n);
        }
        if (strstr(kinds, "replay") && cradle_secure_seal(&net->session, pkt, sizeof pkt, &n, plain, pn) == 0) {
            send_raw(net->enet.peer, pkt, n); /* authentic once (answered with a PONG) */
            send_raw(net->enet.peer, pkt, n); /* then a replay */
        }
        if (strstr(kinds, "truncated") && cradle_secure_seal(&net->session, pkt, sizeof pkt, &n, plain, pn) == 0) {
            send_raw(net->enet.peer, pkt, 10);    /* shorter than counter + tag */
            send_raw(net->enet.peer, pkt, n - 3); /* a cut tag */
        }
        if (strstr(kinds, "oversized")) {
            static uint8_t big[CRADLE_SECURE_PACKET_MAX + 100];
            randombytes_buf(big, sizeof big);
            send_raw(net->enet.peer, big, sizeof big);
        }
        if (strstr(kinds, "wrongkey")) {
            uint8_t pk[32], sk[32], other_pk[32], other_sk[32];
            cradle_secure other;
            if (cradle_secure_keypair(pk, sk) == 0 && cradle_secure_keypair(other_pk, other_sk) == 0 &&
                cradle_secure_client_init(&other, pk, sk, other_pk,
                                          &(cradle_secure_config){.context = net->enet.peer->connectID}) == 0 &&
                cradle_secure_seal(&other, pkt, sizeof pkt, &n, plain, pn) == 0)
                send_raw(net->enet.peer, pkt, n);
            cradle_secure_wipe(&other);
            sodium_memzero(sk, sizeof sk);
            sodium_memzero(other_sk, sizeof other_sk);
        }
        if (strstr(kinds, "plaintext")) send_raw(net->enet.peer, plain, pn);
    }
    enet_host_flush(net->enet.host);
}

/* --raw-attack: keeps the first raw datagram that the library took as a
 * STEPS (its raw_steps counter moved), then lets the library go on. */
static int capture_intercept(ENetHost *host, ENetEvent *event) {
    client *c = raw_capturing;
    uint64_t before = c->net.raw_steps;
    int taken = cradle_link_enet_intercept(host, event);
    if (c->raw_captured_size == 0 && c->net.raw_steps > before && host->receivedDataLength <= sizeof c->raw_captured) {
        memcpy(c->raw_captured, host->receivedData, host->receivedDataLength);
        c->raw_captured_size = host->receivedDataLength;
    }
    return taken;
}

/* One datagram handed to the library's hook as if ENet had just read it from from. */
static void inject_raw(client *c, const uint8_t *data, size_t size, ENetAddress from) {
    ENetHost *h = c->net.enet.host;
    static uint8_t copy[CRADLE_RAW_DATAGRAM_MAX + 64];
    memcpy(copy, data, size);
    h->receivedData = copy;
    h->receivedDataLength = size;
    h->receivedAddress = from;
    ENetEvent event;
    if (cradle_link_enet_intercept(h, &event) != 1) abort(); /* the magic is there: always taken */
}

static void raw_attack(client *c) {
    cradle_netclient *net = &c->net;
    const uint8_t *captured = c->raw_captured;
    size_t n = c->raw_captured_size;
    ENetAddress server = net->enet.peer->address;
    /* from another socket, over loopback, to this client's own */
    struct sockaddr_in mine;
    socklen_t len = sizeof mine;
    int other = socket(AF_INET, SOCK_DGRAM, 0);
    if (other < 0 || getsockname(net->enet.host->socket, (struct sockaddr *)&mine, &len) != 0) abort();
    mine.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    uint8_t buffer[CRADLE_RAW_DATAGRAM_MAX + 64];
    for (uint64_t k = 0; k < c->o.raw_attack; k++) {
        if (sendto(other, captured, n, 0, (struct sockaddr *)&mine, sizeof mine) != (ssize_t)n) abort();
        inject_raw(c, captured, n, server); /* a replay */
        memcpy(buffer, captured, n);
        buffer[n - 1] ^= 0x5a; /* forged: the tag altered */
        inject_raw(c, buffer, n, server);
        inject_raw(c, captured, CRADLE_WIRE_RAW_MAGIC_BYTES + 10u, server); /* cut */
        memset(buffer, 0x33, sizeof buffer);
        memcpy(buffer, CRADLE_WIRE_RAW_MAGIC, CRADLE_WIRE_RAW_MAGIC_BYTES);
        inject_raw(c, buffer, CRADLE_RAW_DATAGRAM_MAX + 1u, server); /* too long */
        if (net->secure) {
            /* unsealed: a STEPS in plaintext, as an insecure server sends it */
            uint8_t snapshot[CRADLE_SNAPSHOT_MAX] = {0};
            cradle_wire_message m = {.type = CRADLE_WIRE_STEPS};
            m.as.steps.first_step = (uint32_t)net->received_next;
            m.as.steps.count = 1;
            m.as.steps.snapshot_size = (uint16_t)net->snapshot_size;
            m.as.steps.snapshots = snapshot;
            size_t plain = 0;
            if (cradle_raw_encode(NULL, &m, buffer, sizeof buffer, &plain) != 0) abort();
            inject_raw(c, buffer, plain, server);
        }
    }
    close(other);
}

/* --save-token: the token for HELLO, minted here with --issuer-key for the
 * pinned server and the library's build (or --token as given), written to
 * the file. Returns false with the reason printed. */
static bool save_token(client *c) {
    const options *o = &c->o;
    if (o->token_text) {
        snprintf(c->token, sizeof c->token, "%s", o->token_text);
    } else {
        char name[CRADLE_GAME_NAME_MAX + 1];
        cradle_token t = {.client_id = o->client_id};
        if (!library_identity(o->game_path, name, t.build_id)) return false;
        randombytes_buf(t.id, sizeof t.id);
        if (cradle_keys_from_hex(t.server_id, o->server_key_hex) != 0) abort(); /* checked in parse_options */
        t.issued_unix = (uint64_t)time(NULL);
        t.expires_unix = t.issued_unix + 600u;
        char message[256];
        cradle_keys issuer;
        int rc = cradle_keys_load(&issuer, o->issuer_key_path, message, sizeof message);
        if (rc != 0) {
            fprintf(stderr, "test-client: --issuer-key: %s\n", message);
            return false;
        }
        uint8_t token[CRADLE_TOKEN_MAX_BYTES];
        size_t token_size = 0;
        rc = cradle_token_issue(token, sizeof token, &token_size, &t, issuer.sign_secret);
        cradle_keys_wipe(&issuer);
        if (rc == 0) rc = cradle_token_to_text(c->token, token, token_size);
        if (rc != 0) {
            fprintf(stderr, "test-client: cannot issue a token: %s\n", cradle_strerror(rc));
            return false;
        }
    }
    FILE *f = fopen(o->save_token, "w");
    if (!f || fprintf(f, "%s\n", c->token) < 0 || fclose(f) != 0) {
        fprintf(stderr, "test-client: cannot write --save-token %s\n", o->save_token);
        return false;
    }
    return true;
}

/* ---- a session through the client library ---------------------------------- */

/* The JSON line and the exit code for a session that ended (or stopped). */
static int report(client *c, bool dropped, bool timed_out) {
    cradle_netclient *net = &c->net;
    int slot = net->welcome.slot == CRADLE_WIRE_SPECTATOR ? -1 : (int)net->welcome.slot;
    if (timed_out) {
        fprintf(stderr, "test-client: timed out at step %" PRIu64 "\n", net->sim.next_step);
        return 5;
    }
    if (net->desync) {
        char a[17], b[17];
        hex(a, net->desync_mine);
        hex(b, net->desync_theirs);
        fprintf(stderr, "test-client: DESYNC at step %" PRIu64 ": mine %s, server %s\n", net->desync_step, a, b);
        return 4;
    }
    if (net->error == CRADLE_ENET_REFUSED) {
        const char *reason = cradle_wire_refusal_name(net->refusal);
        printf("{\"event\":\"refused\",\"reason\":\"%s\",\"text\":\"%s\"}\n", reason, net->refusal_text);
        fprintf(stderr, "test-client: %s\n", net->message);
        return c->o.expect_refusal && strcmp(c->o.expect_refusal, reason) == 0 ? 0 : 3;
    }
    if (net->error) {
        fprintf(stderr, "test-client: %s\n", net->message);
        return net->error == CRADLE_ENET_TIMEOUT ? 5 : 1;
    }
    if (dropped) {
        printf("{\"event\":\"dropped\",\"slot\":%d,\"step\":%" PRIu64 "}\n", slot, net->sim.next_step);
        return 0;
    }
    char last[17], final[17];
    hex(last, net->last_hash);
    hex(final, cradle_netclient_state_hash(net));
    printf("{\"event\":\"done\",\"slot\":%d,\"start_step\":%" PRIu64 ",\"steps\":%" PRIu64
           ",\"hashes_checked\":%" PRIu64 ",\"last_hash_step\":%" PRIu64 ",\"last_hash\":\"%s\","
           "\"final_hash\":\"%s\",\"build\":\"%s\",\"raw_steps\":%" PRIu64 ",\"raw_dropped\":%" PRIu64
           ",\"dropped_unopened\":%" PRIu64 "}\n",
           slot, net->welcome.start_step, net->sim.next_step, net->hashes_checked,
           net->last_hash_step == CRADLE_NETCLIENT_NO_STEP ? 0 : net->last_hash_step, last, final,
           net->sim.contract->build_id, net->raw_steps, net->raw_dropped, net->dropped_unopened);
    return net->hashes_checked > 0 ? 0 : 1;
}

static int run_session(client *c) {
    const options *o = &c->o;
    cradle_netclient *net = &c->net;
    if (o->save_token && !save_token(c)) return 1;
    cradle_netclient_config config = {
        .host = o->host_name,
        .port = o->port,
        .game = o->game_path,
        .spectator = o->spectator,
        .requested_slot = o->slot_request,
        .connect_timeout_ms = c->connect_wait_ms,
        .silence_timeout_ms = (uint32_t)o->peer_timeout_ms,
        .output = o->output,
        .output_until = o->steps_target,
        .insecure = o->insecure,
        .server_key = o->server_key_hex,
        .token = o->save_token ? c->token : o->token_text,
        .issuer_key = o->issuer_key_path,
        .client_id = o->client_id,
        .input = seeded_input,
        .input_context = c,
    };
    uint64_t now = cradle_mono_ns();
    if (cradle_netclient_open(net, &config, now) != 0) {
        fprintf(stderr, "test-client: %s\n", net->message);
        cradle_netclient_close(net);
        return 1;
    }
    if (o->raw_attack) {
        raw_capturing = c;
        net->enet.host->intercept = capture_intercept;
    }
    uint64_t deadline = now + o->timeout_ms * NS_PER_MS;
    uint64_t steps_target = o->run_steps ? UINT64_MAX : o->steps_target;
    uint64_t stop_at = o->drop_at < steps_target ? o->drop_at : steps_target;
    bool run_fixed = false;
    bool garbage_sent = o->garbage == 0, attacked = o->attack == NULL, raw_attacked = o->raw_attack == 0;
    bool dropped = false, timed_out = false, done = false;
    while (!done) {
        now = cradle_mono_ns();
        if (now > deadline) {
            timed_out = true;
            break;
        }
        if (cradle_netclient_service(net, now, 2) != 0) break;
        if (!garbage_sent && net->phase != CRADLE_NETCLIENT_CONNECTING) { /* HELLO is out */
            send_garbage(c);
            garbage_sent = true;
        }
        if (!attacked && (net->phase == CRADLE_NETCLIENT_JOINING || net->phase == CRADLE_NETCLIENT_PLAYING)) {
            attack(c);
            attacked = true;
        }
        if (!raw_attacked && c->raw_captured_size > 0) {
            raw_attack(c);
            raw_attacked = true;
        }
        if (o->run_steps && net->phase == CRADLE_NETCLIENT_PLAYING && !run_fixed) {
            /* --run N: N steps from wherever the session was when we joined. */
            steps_target = net->welcome.start_step + o->run_steps;
            stop_at = o->drop_at < steps_target ? o->drop_at : steps_target;
            run_fixed = true;
        }
        int rc = 0;
        while (net->sim.next_step < stop_at && (rc = cradle_netclient_step(net, now)) == 1) {
        }
        if (rc < 0 || net->desync) break;
        if (!cradle_netclient_playing(net)) continue;
        dropped = net->sim.next_step >= o->drop_at;
        done = dropped || net->sim.next_step >= steps_target;
    }
    int code = report(c, dropped, timed_out);
    /* Done, a desync or our own deadline: BYE (and DESYNC) delivered. A drop
     * or a failure closes at once: no BYE, the server sees a disconnect. */
    if ((done && !dropped) || net->desync || timed_out) cradle_netclient_leave(net, 1000);
    cradle_netclient_close(net);
    return code;
}

/* ---- connections that are not a session -------------------------------------- */

/* One ENet connection to the server, for the probes below. Returns the
 * host (its one peer in *peer) or NULL when no server answered within
 * wait_ms. */
static ENetHost *probe_connect(const options *o, uint32_t wait_ms, ENetPeer **peer) {
    ENetAddress address = {.port = o->port};
    ENetHost *h = enet_host_create(NULL, 1, 1, 0, 0);
    ENetEvent event;
    if (!h || enet_address_set_host_ip(&address, o->host_name) != 0 ||
        !(*peer = enet_host_connect(h, &address, 1, 0)) || enet_host_service(h, &event, wait_ms) <= 0 ||
        event.type != ENET_EVENT_TYPE_CONNECT) {
        fprintf(stderr, "test-client: no server answers on %s:%u\n", o->host_name, (unsigned)o->port);
        if (h) enet_host_destroy(h);
        return NULL;
    }
    return h;
}

/* --silent: no HELLO; a secure server must send nothing and drop us. */
static int run_silent(client *c) {
    ENetPeer *peer = NULL;
    ENetHost *h = probe_connect(&c->o, c->connect_wait_ms, &peer);
    if (!h) return 5;
    uint64_t until = cradle_mono_ms() + c->o.timeout_ms, packets = 0;
    bool gone = false;
    ENetEvent event;
    while (!gone && cradle_mono_ms() < until) {
        int rc = enet_host_service(h, &event, 10);
        if (rc > 0 && event.type == ENET_EVENT_TYPE_RECEIVE) {
            packets++;
            enet_packet_destroy(event.packet);
        }
        if (rc > 0 && event.type == ENET_EVENT_TYPE_DISCONNECT) gone = true;
    }
    printf("{\"event\":\"silent\",\"disconnected\":%s,\"packets\":%" PRIu64 "}\n", gone ? "true" : "false",
           packets);
    enet_host_destroy(h);
    return gone && packets == 0 ? 0 : 1;
}

/* --protocol N: the library's HELLO in protocol version N (its credential is
 * never read: the version comes first); the server answers a plaintext
 * REFUSE. */
static int run_protocol_probe(client *c) {
    const options *o = &c->o;
    char name[CRADLE_GAME_NAME_MAX + 1], build_id[CRADLE_GAME_BUILD_ID_MAX + 1];
    if (!library_identity(o->game_path, name, build_id)) return 1;
    ENetPeer *peer = NULL;
    ENetHost *h = probe_connect(o, c->connect_wait_ms, &peer);
    if (!h) return 5;
    cradle_wire_message hello = {.type = CRADLE_WIRE_HELLO};
    hello.as.hello.spectator = o->spectator;
    hello.as.hello.requested_slot = CRADLE_WIRE_ANY_SLOT;
    /* A credential's size: the server cuts its REFUSE to the HELLO's size. */
    hello.as.hello.credential_size = CRADLE_TOKEN_MIN_BYTES + CRADLE_TOKEN_KEY_BYTES;
    cradle_wire_set_text(hello.as.hello.game, sizeof hello.as.hello.game, name);
    cradle_wire_set_text(hello.as.hello.build_id, sizeof hello.as.hello.build_id, build_id);
    uint8_t buf[CRADLE_WIRE_MESSAGE_MAX];
    size_t n = 0;
    if (cradle_wire_encode(buf, sizeof buf, &n, &hello) != 0) {
        fprintf(stderr, "test-client: cannot encode HELLO\n");
        enet_host_destroy(h);
        return 1;
    }
    buf[1] = (uint8_t)o->protocol; /* the header: type, version (wire.h) */
    send_raw(peer, buf, n);
    int code = 5;
    uint64_t until = cradle_mono_ms() + o->timeout_ms;
    ENetEvent event;
    while (code == 5 && cradle_mono_ms() < until) {
        int rc = enet_host_service(h, &event, 10);
        if (rc > 0 && event.type == ENET_EVENT_TYPE_DISCONNECT) {
            fprintf(stderr, "test-client: the server disconnected without a REFUSE\n");
            code = 1;
        }
        if (rc <= 0 || event.type != ENET_EVENT_TYPE_RECEIVE) continue;
        cradle_wire_message m;
        if (cradle_wire_decode(&m, event.packet->data, event.packet->dataLength) == 0 &&
            m.type == CRADLE_WIRE_REFUSE) {
            const char *reason = cradle_wire_refusal_name(m.as.refuse.reason);
            printf("{\"event\":\"refused\",\"reason\":\"%s\",\"text\":\"%s\"}\n", reason, m.as.refuse.text);
            code = o->expect_refusal && strcmp(o->expect_refusal, reason) == 0 ? 0 : 3;
        }
        enet_packet_destroy(event.packet);
    }
    if (code == 5) fprintf(stderr, "test-client: no REFUSE within %" PRIu64 " ms\n", o->timeout_ms);
    enet_host_destroy(h);
    return code;
}

static volatile sig_atomic_t flood_stop, flood_release;
static void on_flood_stop(int sig) {
    if (sig == SIGUSR1) flood_release = 1;
    else flood_stop = 1;
}

/* --connect-flood: N connection attempts at once, from this address or,
 * with --flood-from K, spread over K loopback addresses (127.0.0.2 and on,
 * N/K each: every host of 127.0.0.0/8 is this machine's), serviced until
 * SIGTERM or 60 s; none ever sends a message. Prints how many ENet
 * completed and how many the server dropped. How soon the server gets to
 * each attempt depends on the machine's speed, so the flood does not end on
 * a timer of its own: the test stops it once the server's counters show
 * what it checks. */
static int run_connect_flood(const options *o) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_flood_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    enum { HOSTS_MAX = 250 };
    ENetHost *hosts[HOSTS_MAX] = {NULL};
    uint64_t count = o->flood_from ? o->flood_from : 1;
    ENetAddress address = {.port = o->port};
    bool ok = enet_address_set_host_ip(&address, o->host_name) == 0;
    for (uint64_t h = 0; ok && h < count; h++) {
        uint64_t share = o->connect_flood / count + (h < o->connect_flood % count ? 1 : 0);
        ENetAddress from = {.port = 0};
        char text[32];
        snprintf(text, sizeof text, "127.0.0.%u", (unsigned)(h + 2));
        if (o->flood_from && enet_address_set_host_ip(&from, text) != 0) ok = false;
        hosts[h] = ok ? enet_host_create(o->flood_from ? &from : NULL, share ? (size_t)share : 1, 1, 0, 0) : NULL;
        if (!hosts[h]) ok = false;
        for (uint64_t i = 0; ok && i < share; i++) (void)enet_host_connect(hosts[h], &address, 1, 0);
    }
    uint64_t connected = 0, disconnected = 0;
    uint64_t until = cradle_mono_ms() + 60000;
    while (ok && !flood_stop && cradle_mono_ms() < until &&
           (disconnected < o->connect_flood || (o->flood_hold && !flood_release))) {
        for (uint64_t h = 0; h < count; h++) {
            ENetEvent fe;
            int rc = enet_host_service(hosts[h], &fe, count > 1 ? 0 : 5);
            if (rc > 0 && fe.type == ENET_EVENT_TYPE_CONNECT) connected++;
            if (rc > 0 && fe.type == ENET_EVENT_TYPE_DISCONNECT) {
                disconnected++;
                if (o->flood_hold && !flood_release) (void)enet_host_connect(hosts[h], &address, 1, 0);
            }
            if (rc > 0 && fe.type == ENET_EVENT_TYPE_RECEIVE) enet_packet_destroy(fe.packet);
        }
        if (count > 1) {
            struct timespec nap = {.tv_sec = 0, .tv_nsec = 1000000L};
            nanosleep(&nap, NULL);
        }
    }
    printf("{\"event\":\"flood\",\"attempts\":%" PRIu64 ",\"from\":%" PRIu64 ",\"connected\":%" PRIu64
           ",\"disconnected\":%" PRIu64 "}\n", o->connect_flood, count, connected, disconnected);
    for (uint64_t h = 0; h < count; h++)
        if (hosts[h]) enet_host_destroy(hosts[h]);
    return ok ? 0 : 1;
}

/* ---- the command line ---------------------------------------------------------- */

static void usage(FILE *to) {
    fprintf(to, "usage: cradle-test-client --port N --game LIBRARY [--host ADDR] [--steps N | --run N] [--seed N]\n"
                "       [--spectator] [--slot N] [--drop-at STEP] [--timeout-ms N] [--peer-timeout-ms N]\n"
                "       [--protocol N] [--expect-refusal REASON]\n"
                "       [--garbage N] [--output FILE]\n"
                "       [--server-key HEX] [--token TEXT | --issuer-key FILE] [--client-id N] [--insecure]\n"
                "       [--save-token FILE] [--attack KINDS] [--attack-count N] [--raw-attack N] [--silent]\n"
                "       [--connect-flood N [--flood-from K] [--flood-hold]]\n");
}

/* Returns -1 to go on, or the exit code (0 for --help, 2 for a usage error). */
static int parse_options(options *o, int argc, char **argv) {
    *o = (options){.host_name = "127.0.0.1",
                   .protocol = -1,
                   .slot_request = -1,
                   .steps_target = 600,
                   .seed = 1,
                   .drop_at = UINT64_MAX,
                   .timeout_ms = 60000};
    static const struct option table[] = {
        {"host", required_argument, NULL, 'H'},
        {"port", required_argument, NULL, 'p'},
        {"game", required_argument, NULL, 'g'},
        {"protocol", required_argument, NULL, 'P'},
        {"spectator", no_argument, NULL, 'S'},
        {"slot", required_argument, NULL, 'l'},
        {"steps", required_argument, NULL, 'n'},
        {"run", required_argument, NULL, 'u'},
        {"seed", required_argument, NULL, 's'},
        {"drop-at", required_argument, NULL, 'd'},
        {"timeout-ms", required_argument, NULL, 't'},
        {"peer-timeout-ms", required_argument, NULL, 'T'},
        {"expect-refusal", required_argument, NULL, 'r'},
        {"garbage", required_argument, NULL, 'G'},
        {"output", required_argument, NULL, 'o'},
        {"insecure", no_argument, NULL, 'I'},
        {"server-key", required_argument, NULL, 'K'},
        {"token", required_argument, NULL, 'k'},
        {"issuer-key", required_argument, NULL, 'i'},
        {"client-id", required_argument, NULL, 'c'},
        {"save-token", required_argument, NULL, 'w'},
        {"attack", required_argument, NULL, 'a'},
        {"attack-count", required_argument, NULL, 'A'},
        {"raw-attack", required_argument, NULL, 'R'},
        {"silent", no_argument, NULL, 'z'},
        {"connect-flood", required_argument, NULL, 'F'},
        {"flood-from", required_argument, NULL, 'Y'},
        {"flood-hold", no_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt;
    uint64_t v = 0;
    while ((opt = getopt_long(argc, argv, "", table, NULL)) != -1) {
        bool ok = true;
        switch (opt) {
        case 'H': o->host_name = optarg; break;
        case 'p':
            ok = cradle_parse_u64(optarg, 1, 65535, &v);
            o->port = (uint16_t)v;
            break;
        case 'g': o->game_path = optarg; break;
        case 'P':
            ok = cradle_parse_u64(optarg, 0, 255, &v);
            o->protocol = (int)v;
            break;
        case 'S': o->spectator = true; break;
        case 'l':
            ok = cradle_parse_u64(optarg, 0, CRADLE_GAME_MAX_PLAYERS - 1, &v);
            o->slot_request = (int)v;
            break;
        case 'n': ok = cradle_parse_u64(optarg, 0, UINT64_MAX, &o->steps_target); break;
        case 'u': ok = cradle_parse_u64(optarg, 1, UINT64_MAX / 2, &o->run_steps); break;
        case 's': ok = cradle_parse_u64(optarg, 0, UINT64_MAX, &o->seed); break;
        case 'd': ok = cradle_parse_u64(optarg, 0, UINT64_MAX, &o->drop_at); break;
        case 't': ok = cradle_parse_u64(optarg, 0, UINT64_MAX, &o->timeout_ms); break;
        case 'T': ok = cradle_parse_u64(optarg, 0, 600000, &o->peer_timeout_ms); break;
        case 'r': o->expect_refusal = optarg; break;
        case 'o':
            if (o->output) fclose(o->output);
            o->output = fopen(optarg, "wb");
            ok = o->output != NULL;
            break;
        case 'G': ok = cradle_parse_u64(optarg, 0, 10000, &o->garbage); break;
        case 'I': o->insecure = true; break;
        case 'K': o->server_key_hex = optarg; break;
        case 'k': o->token_text = optarg; break;
        case 'i': o->issuer_key_path = optarg; break;
        case 'c': ok = cradle_parse_u64(optarg, 0, UINT64_MAX, &o->client_id); break;
        case 'w': o->save_token = optarg; break;
        case 'a': o->attack = optarg; break;
        case 'A': ok = cradle_parse_u64(optarg, 0, 1000, &o->attack_count); break;
        case 'R': ok = cradle_parse_u64(optarg, 1, 1000, &o->raw_attack); break;
        case 'z': o->silent = true; break;
        case 'F': ok = cradle_parse_u64(optarg, 1, 4000, &o->connect_flood); break;
        case 'Y': ok = cradle_parse_u64(optarg, 1, 250, &o->flood_from); break;
        case 'f': o->flood_hold = true; break;
        case 'h': usage(stdout); return 0;
        default: ok = false;
        }
        if (!ok) {
            usage(stderr);
            return 2;
        }
    }
    if (!o->port || !o->game_path) {
        usage(stderr);
        return 2;
    }
    if (!o->insecure) {
        uint8_t key[CRADLE_KEYS_PUBLIC_BYTES];
        if (!o->server_key_hex) o->server_key_hex = getenv("CRADLE_TEST_SERVER_KEY");
        if (!o->token_text && !o->issuer_key_path) o->issuer_key_path = getenv("CRADLE_TEST_ISSUER_KEY");
        if (!o->server_key_hex || cradle_keys_from_hex(key, o->server_key_hex) != 0 ||
            (!o->token_text && !o->issuer_key_path)) {
            fprintf(stderr, "test-client: needs --server-key HEX and --token TEXT or --issuer-key FILE "
                            "(or --insecure)\n");
            return 2;
        }
    }
    if (o->attack_count == 0) o->attack_count = 1;
    return -1;
}

int main(int argc, char **argv) {
    static client c;
    int code = parse_options(&c.o, argc, argv);
    if (code >= 0) return code;
    /* At most 20 s for the handshake even with a long --peer-timeout-ms: under
     * heavy loss ENet's handshake sometimes never completes, and a caller
     * (tools/soak.sh) retries sooner. */
    c.connect_wait_ms = c.o.peer_timeout_ms > 20000 ? 20000
                        : c.o.peer_timeout_ms > 5000 ? (uint32_t)c.o.peer_timeout_ms
                                                     : 5000;
    if (sodium_init() < 0 || enet_initialize() != 0) return 1;
    if (c.o.connect_flood)
        code = run_connect_flood(&c.o);
    else if (c.o.silent)
        code = run_silent(&c);
    else if (c.o.protocol >= 0)
        code = run_protocol_probe(&c);
    else
        code = run_session(&c);
    fflush(stdout);
    enet_deinitialize();
    if (c.o.output && fclose(c.o.output) != 0 && code == 0) code = 1;
    return code;
}
