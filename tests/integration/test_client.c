/*
 * cradle-test-client: a headless client for cradle-server's integration tests.
 *
 * It connects over ENet, sends HELLO (the game name and build id of the
 * library it loads, unless overridden to provoke a refusal), and after
 * WELCOME runs the game from the server's snapshots: from the seed when it
 * starts at step 0, from the STATE block otherwise (join in progress). It
 * checks every state hash the server sends against its own and reports a
 * mismatch with DESYNC. As a player it sends seeded bot input for step
 * (last received + 1 + input delay), each INPUT repeating the previous
 * three steps for redundancy. STEPS arrive unreliable and may repeat or
 * come out of order: it runs each step as soon as it is the next one, drops
 * the rest (the server repeats what is not acknowledged), and acknowledges
 * with every INPUT (a spectator's carries only the ack). A step of a newer
 * build epoch waits for its RELOAD.
 *
 * With --output FILE it writes the game's output() bytes of every step it
 * runs (from its start step up to --steps - 1), for comparison with
 * cradle-replay --output of the server's log.
 *
 * It prints one JSON line at the end:
 *   {"event":"done","slot":S,"start_step":N,"steps":M,"hashes_checked":H,
 *    "last_hash_step":K,"last_hash":"<hex>","final_hash":"<hex>"}
 * or {"event":"refused","reason":"full","text":"..."} (exit 3), and exits 4 on
 * a hash mismatch, 5 on a timeout, 1 on any other failure.
 *
 * Security (the server's default): --server-key HEX pins the server's public
 * key and --token TEXT or --issuer-key FILE (mint a fresh token per connect:
 * a test and bot convenience) supplies the credential; when neither flag is
 * given the environment's CRADLE_TEST_SERVER_KEY and CRADLE_TEST_ISSUER_KEY
 * are used (tests/integration/server_common.sh sets them). --insecure talks
 * plaintext. Every message after HELLO is sealed; anything that does not
 * open is dropped, and a server whose first reply does not open within 5 s
 * (--peer-timeout-ms when longer, at most 20 s) is reported as "server
 * identity not proven" (exit 1). Attack hooks for
 * the security tests (after WELCOME, then it plays on): --attack KIND[,KIND]
 * with KIND forged, replay, truncated, oversized, wrongkey, plaintext
 * (--attack-count N of each); --save-token FILE writes the token used;
 * --silent connects and never says HELLO (counts packets received).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <enet/enet.h>
#include <sodium.h>

#include "cradle/hash.h"
#include "cradle/keys.h"
#include "cradle/parse.h"
#include "cradle/reload.h"
#include "cradle/secure.h"
#include "cradle/systime.h"
#include "cradle/token.h"
#include "cradle/wire.h"

#define REDUNDANCY 4u
#define INPUT_RING 64u
#define BUFFERED_BYTES (4u << 20)

typedef struct client {
    /* options */
    const char *host_name;
    uint16_t port;
    const char *game_path;
    const char *game_name;
    const char *build_id;
    int protocol;
    bool spectator;
    int slot_request;
    uint64_t steps_target;
    uint64_t seed;
    uint64_t drop_at;
    uint64_t garbage;
    FILE *output; /* --output: the game's output bytes of each step run below --steps */
    uint64_t timeout_ms;
    uint64_t peer_timeout_ms; /* --peer-timeout-ms: ENet's silence timeout; 0 = ENet's default */
    const char *expect_refusal;
    /* security */
    bool insecure;
    const char *server_key_hex;
    const char *token_text;
    const char *issuer_key_path;
    const char *save_token;
    const char *attack;
    uint64_t attack_count;
    uint64_t client_id;
    bool silent;
    uint64_t connect_flood; /* --connect-flood N: N connects at once, then exit */
    bool secure, proven;
    uint8_t server_key[CRADLE_KEYS_PUBLIC_BYTES];
    cradle_secure session;
    uint64_t packets_received, dropped_unopened;

    cradle_reload reload;
    const cradle_game_contract *contract;
    ENetHost *enet;
    ENetPeer *peer;

    bool welcomed, ready;
    cradle_wire_welcome welcome;
    uint8_t *state;
    uint32_t state_received;
    uint64_t next_step;
    uint64_t hashes_checked, last_hash_step, last_hash;
    uint64_t input_sent_through; /* highest step an input was generated for, +1 */
    uint8_t inputs[INPUT_RING][CRADLE_GAME_MAX_INPUT_BYTES];
    bool reload_pending;
    bool ack_due; /* STEPS arrived since the last INPUT */
    uint8_t epoch;
    uint64_t reload_at;
    char reload_build[CRADLE_GAME_BUILD_ID_MAX + 1];
    /* STEPS that arrived before the state block was complete */
    uint8_t *buffered;
    size_t buffered_used;
    bool done;
    int exit_code;
} client;

static uint64_t splitmix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void hex(char out[17], uint64_t v) { snprintf(out, 17, "%016" PRIx64, v); }

static void send_message(client *c, const cradle_wire_message *m, uint32_t flags) {
    uint8_t buf[CRADLE_WIRE_MESSAGE_MAX];
    size_t n = 0;
    if (cradle_wire_encode(buf, sizeof buf, &n, m) != 0) {
        fprintf(stderr, "test-client: cannot encode %s\n", cradle_wire_type_name(m->type));
        return;
    }
    if (m->type == CRADLE_WIRE_HELLO && c->protocol >= 0) buf[1] = (uint8_t)c->protocol;
    const uint8_t *data = buf;
    if (c->secure && m->type != CRADLE_WIRE_HELLO) {
        static uint8_t sealed[CRADLE_SECURE_PACKET_MAX];
        cradle_secure_lane_id lane =
            (flags & ENET_PACKET_FLAG_RELIABLE) ? CRADLE_SECURE_ORDERED : CRADLE_SECURE_UNORDERED;
        if (cradle_secure_seal_lane(&c->session, lane, sealed, sizeof sealed, &n, buf, n) != 0) {
            fprintf(stderr, "test-client: cannot seal %s\n", cradle_wire_type_name(m->type));
            return;
        }
        data = sealed;
    }
    ENetPacket *packet = enet_packet_create(data, n, flags);
    if (packet && enet_peer_send(c->peer, 0, packet) != 0) enet_packet_destroy(packet);
}

static void send_raw(client *c, const void *data, size_t n) {
    ENetPacket *packet = enet_packet_create(data, n, ENET_PACKET_FLAG_RELIABLE);
    if (packet && enet_peer_send(c->peer, 0, packet) != 0) enet_packet_destroy(packet);
}

/* --attack: hostile packets over the authenticated connection; the server
 * must drop and count each without decoding it. */
static void attack(client *c) {
    if (!c->attack || !c->secure) return;
    uint8_t pkt[CRADLE_SECURE_PACKET_MAX];
    uint8_t plain[64];
    size_t n = 0;
    cradle_wire_message ping = {.type = CRADLE_WIRE_PING, .as.ping.echo = 7};
    size_t pn = 0;
    if (cradle_wire_encode(plain, sizeof plain, &pn, &ping) != 0) return;
    for (uint64_t k = 0; k < c->attack_count; k++) {
        if (strstr(c->attack, "forged")) {
            if (cradle_secure_seal(&c->session, pkt, sizeof pkt, &n, plain, pn) == 0) {
                pkt[n - 1] ^= 0x5a; /* tag altered */
                send_raw(c, pkt, n);
            }
        }
        if (strstr(c->attack, "replay") &&
            cradle_secure_seal(&c->session, pkt, sizeof pkt, &n, plain, pn) == 0) {
            send_raw(c, pkt, n); /* authentic once (answered with a PONG) */
            send_raw(c, pkt, n); /* then a replay */
        }
        if (strstr(c->attack, "truncated")) {
            if (cradle_secure_seal(&c->session, pkt, sizeof pkt, &n, plain, pn) == 0) {
                send_raw(c, pkt, 10);      /* shorter than counter + tag */
                send_raw(c, pkt, n - 3);   /* a cut tag */
            }
        }
        if (strstr(c->attack, "oversized")) {
            static uint8_t big[CRADLE_SECURE_PACKET_MAX + 100];
            randombytes_buf(big, sizeof big);
            send_raw(c, big, sizeof big);
        }
        if (strstr(c->attack, "wrongkey")) {
            uint8_t pk[32], sk[32], other_pk[32], other_sk[32];
            cradle_secure other;
            if (cradle_secure_keypair(pk, sk) == 0 && cradle_secure_keypair(other_pk, other_sk) == 0 &&
                cradle_secure_client_init(&other, pk, sk, other_pk,
                                          &(cradle_secure_config){.context = c->peer->connectID}) == 0 &&
                cradle_secure_seal(&other, pkt, sizeof pkt, &n, plain, pn) == 0)
                send_raw(c, pkt, n);
            cradle_secure_wipe(&other);
            sodium_memzero(sk, sizeof sk);
            sodium_memzero(other_sk, sizeof other_sk);
        }
        if (strstr(c->attack, "plaintext")) send_raw(c, plain, pn);
    }
    c->attack = NULL; /* once */
}

/* The credential for HELLO: --token, or a fresh token minted with
 * --issuer-key for the pinned server and this game build. */
static bool make_credential(client *c, cradle_wire_hello *h, const uint8_t client_public[32]) {
    uint8_t token[CRADLE_TOKEN_MAX_BYTES];
    size_t token_size = 0;
    if (c->token_text) {
        if (cradle_token_from_text(token, &token_size, c->token_text) != 0) {
            fprintf(stderr, "test-client: --token is not a join token\n");
            return false;
        }
    } else {
        cradle_keys issuer;
        char message[256];
        if (cradle_keys_load(&issuer, c->issuer_key_path, message, sizeof message) != 0) {
            fprintf(stderr, "test-client: --issuer-key: %s\n", message);
            return false;
        }
        cradle_token t = {.client_id = c->client_id};
        randombytes_buf(t.id, sizeof t.id);
        memcpy(t.server_id, c->server_key, sizeof t.server_id);
        t.issued_unix = (uint64_t)time(NULL);
        t.expires_unix = t.issued_unix + 600u;
        snprintf(t.build_id, sizeof t.build_id, "%s", c->contract->build_id);
        int rc = cradle_token_issue(token, sizeof token, &token_size, &t, issuer.sign_secret);
        cradle_keys_wipe(&issuer);
        if (rc != 0) {
            fprintf(stderr, "test-client: cannot issue a token: %s\n", cradle_strerror(rc));
            return false;
        }
    }
    if (c->save_token) {
        char text[CRADLE_TOKEN_TEXT_SIZE];
        FILE *f = fopen(c->save_token, "w");
        if (!f || cradle_token_to_text(text, token, token_size) != 0) {
            if (f) fclose(f);
            return false;
        }
        fprintf(f, "%s\n", text);
        fclose(f);
    }
    size_t n = 0;
    if (cradle_token_credential(h->credential, sizeof h->credential, &n, token, token_size, client_public) != 0)
        return false;
    h->credential_size = (uint16_t)n;
    return true;
}

static void fail(client *c, int code, const char *what, const char *detail) {
    fprintf(stderr, "test-client: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    c->done = true;
    c->exit_code = code;
}

static bool count_event(void *context, const cradle_event *event) {
    (void)context;
    (void)event;
    return true;
}

/* Runs step c->next_step with its snapshot and checks the hashes the STEPS carried. */
static void run_step(client *c, const uint8_t *snapshot, const cradle_wire_steps *s, uint64_t first) {
    if (c->reload_pending && c->next_step == c->reload_at) {
        c->epoch = s->epoch;
        cradle_reload_result r = cradle_reload_now(&c->reload);
        c->reload_pending = false;
        if (r.kind == CRADLE_RELOAD_REFUSED) {
            fail(c, 1, "reload refused", r.message);
            return;
        }
        c->contract = cradle_reload_contract(&c->reload);
        if (strcmp(c->contract->build_id, c->reload_build) != 0) {
            fail(c, 1, "reloaded library is not the announced build", c->reload_build);
            return;
        }
        if (c->contract->on_reload) c->contract->on_reload(c->state);
    }
    const cradle_game_contract *k = c->contract;
    uint32_t per_frame = k->steps_per_second / k->source_frames_per_second;
    cradle_game_step step = {.index = c->next_step,
                             .source_frame = c->next_step / per_frame,
                             .phase = (uint32_t)(c->next_step % per_frame),
                             .snapshot_size = s->snapshot_size,
                             .snapshot = snapshot};
    cradle_event_sink sink = {.context = c, .emit = count_event};
    k->step(c->state, &step, &sink);
    if (c->output && k->output && c->next_step < c->steps_target) {
        uint8_t out[CRADLE_GAME_OUTPUT_MAX];
        size_t n = k->output(c->state, c->next_step, out, sizeof out);
        if (n > sizeof out || fwrite(out, 1, n, c->output) != n) {
            fail(c, 1, "cannot write --output", NULL);
            return;
        }
    }
    for (uint32_t i = 0; i < s->hash_count; i++) {
        if (first + s->hashes[i].offset != c->next_step) continue;
        uint64_t mine = cradle_hash64(c->state, k->state_size);
        if (mine != s->hashes[i].hash) {
            cradle_wire_message d = {
                .type = CRADLE_WIRE_DESYNC,
                .as.desync = {.step = c->next_step, .hash = mine, .expected = s->hashes[i].hash}};
            send_message(c, &d, ENET_PACKET_FLAG_RELIABLE);
            char a[17], b[17];
            hex(a, mine);
            hex(b, s->hashes[i].hash);
            fprintf(stderr, "test-client: DESYNC at step %" PRIu64 ": mine %s, server %s\n", c->next_step, a,
                    b);
            c->done = true;
            c->exit_code = 4;
            return;
        }
        c->hashes_checked++;
        c->last_hash_step = c->next_step;
        c->last_hash = mine;
    }
    c->next_step++;
}

static void apply_steps(client *c, const cradle_wire_steps *s) {
    if (s->snapshot_size != cradle_snapshot_size(c->welcome.max_players, c->welcome.input_bytes)) {
        fail(c, 1, "STEPS snapshot size differs from the contract's", NULL);
        return;
    }
    uint64_t first = cradle_wire_step_expand(c->next_step, (uint32_t)s->first_step);
    for (uint32_t i = 0; i < s->count && !c->done; i++) {
        uint64_t index = first + i;
        if (index < c->next_step) continue; /* before our start, or a repeat */
        if (index > c->next_step) return;   /* a gap: the server repeats from our ack */
        if (s->epoch != c->epoch && !(c->reload_pending && c->reload_at == index))
            return; /* another build's step: its RELOAD has not arrived yet */
        run_step(c, s->snapshots + (size_t)i * s->snapshot_size, s, first);
    }
}

static void start_game(client *c) {
    const cradle_wire_welcome *w = &c->welcome;
    size_t align = c->reload.max_state_align;
    size_t bytes = ((size_t)c->reload.state_capacity + align - 1u) / align * align;
    if (w->state_size != c->contract->state_size) {
        fail(c, 1, "WELCOME state size differs from the library's", NULL);
        return;
    }
    c->state = aligned_alloc(align, bytes);
    c->buffered = malloc(BUFFERED_BYTES);
    if (!c->state || !c->buffered) {
        fail(c, 1, "out of memory", NULL);
        return;
    }
    memset(c->state, 0, bytes);
    c->next_step = w->start_step;
    c->epoch = w->epoch;
    c->input_sent_through = w->start_step;
    if (!w->state_follows) {
        if (c->contract->init(c->state, w->seed, w->players) != 0) {
            fail(c, 1, "the game refused the player count", NULL);
            return;
        }
        c->ready = true;
    }
}

static void on_state(client *c, const cradle_wire_state *st) {
    if (c->ready || !c->welcomed || !c->welcome.state_follows) return;
    if (st->total != c->contract->state_size || st->offset != c->state_received ||
        st->step != c->welcome.start_step) {
        fail(c, 1, "STATE chunk out of order or of another size", NULL);
        return;
    }
    memcpy(c->state + st->offset, st->bytes, st->length);
    c->state_received += st->length;
    if (c->state_received < st->total) return;
    if (cradle_hash64(c->state, st->total) != st->hash) {
        fail(c, 4, "the state block does not match its hash", NULL);
        return;
    }
    c->ready = true;
    /* Replay what arrived meanwhile. */
    size_t at = 0;
    while (at < c->buffered_used && !c->done) {
        uint32_t n = 0;
        memcpy(&n, c->buffered + at, sizeof n);
        cradle_wire_message m;
        if (cradle_wire_decode(&m, c->buffered + at + sizeof n, n) == 0) apply_steps(c, &m.as.steps);
        at += sizeof n + n;
    }
    c->buffered_used = 0;
}

static void on_packet(client *c, const uint8_t *data, size_t size) {
    static uint8_t opened[CRADLE_SECURE_PACKET_MAX];
    c->packets_received++;
    if (c->secure) {
        size_t plain = 0;
        if (cradle_secure_open(&c->session, opened, sizeof opened, &plain, data, size) == 0) {
            c->proven = true;
            data = opened;
            size = plain;
        } else {
            /* Before keys agree only an unsealed REFUSE for another protocol
             * or a missing credential can come (unproven); anything else is
             * dropped. */
            cradle_wire_message r;
            if (!c->proven && cradle_wire_decode(&r, data, size) == 0 && r.type == CRADLE_WIRE_REFUSE &&
                (r.as.refuse.reason == CRADLE_WIRE_REFUSE_PROTOCOL ||
                 r.as.refuse.reason == CRADLE_WIRE_REFUSE_AUTH)) {
                fprintf(stderr, "test-client: unsealed refusal (the server's identity is not proven)\n");
            } else {
                c->dropped_unopened++;
                return;
            }
        }
    }
    cradle_wire_message m;
    int rc = cradle_wire_decode(&m, data, size);
    if (rc != 0) {
        fail(c, 1, "server sent a bad message", m.problem);
        return;
    }
    switch (m.type) {
    case CRADLE_WIRE_WELCOME:
        if (c->welcomed) return;
        c->welcomed = true;
        c->welcome = m.as.welcome;
        start_game(c);
        attack(c);
        break;
    case CRADLE_WIRE_REFUSE: {
        const char *reason = cradle_wire_refusal_name(m.as.refuse.reason);
        printf("{\"event\":\"refused\",\"reason\":\"%s\",\"text\":\"%s\"}\n", reason, m.as.refuse.text);
        c->done = true;
        c->exit_code = (c->expect_refusal && strcmp(c->expect_refusal, reason) == 0) ? 0 : 3;
        break;
    }
    case CRADLE_WIRE_STATE: on_state(c, &m.as.state); break;
    case CRADLE_WIRE_STEPS:
        if (!c->welcomed) return;
        c->ack_due = true;
        if (c->ready) {
            apply_steps(c, &m.as.steps);
        } else if (c->buffered_used + sizeof(uint32_t) + size <= BUFFERED_BYTES) {
            uint32_t n = (uint32_t)size;
            memcpy(c->buffered + c->buffered_used, &n, sizeof n);
            memcpy(c->buffered + c->buffered_used + sizeof n, data, size);
            c->buffered_used += sizeof n + size;
        } else {
            fail(c, 1, "too many steps arrived before the state block", NULL);
        }
        break;
    case CRADLE_WIRE_RELOAD:
        c->reload_pending = true;
        c->reload_at = m.as.reload.at_step;
        memcpy(c->reload_build, m.as.reload.build_id, sizeof c->reload_build);
        break;
    case CRADLE_WIRE_BYE:
        fprintf(stderr, "test-client: server said bye (%s): %s\n", cradle_wire_bye_name(m.as.bye.reason),
                m.as.bye.text);
        c->done = true;
        c->exit_code = 1;
        break;
    default: break;
    }
}

/* Sends input for every step up to next_step + delay not sent yet, each
 * message carrying the last REDUNDANCY steps. */
static void send_inputs(client *c) {
    if (!c->ready) return;
    uint32_t ib = c->welcome.input_bytes;
    if (c->welcome.slot == CRADLE_WIRE_SPECTATOR) {
        if (!c->ack_due) return;
        c->ack_due = false;
        cradle_wire_message ack = {.type = CRADLE_WIRE_INPUT,
                                   .as.input = {.ack = c->next_step, .first_step = c->next_step,
                                                .input_bytes = (uint8_t)ib}};
        send_message(c, &ack, ENET_PACKET_FLAG_UNSEQUENCED);
        return;
    }
    uint64_t target = c->next_step + c->welcome.input_delay;
    if (c->input_sent_through > target && !c->ack_due) return;
    c->ack_due = false;
    while (c->input_sent_through <= target) {
        uint64_t s = c->input_sent_through++;
        uint8_t *in = c->inputs[s % INPUT_RING];
        uint64_t r = splitmix(c->seed * 1000003u + s * 64u + c->welcome.slot);
        for (uint32_t i = 0; i < ib; i++) in[i] = (uint8_t)(r >> (8u * (i % 8u)));
    }
    uint64_t last = c->input_sent_through - 1;
    uint64_t first = last + 1 >= REDUNDANCY ? last + 1 - REDUNDANCY : 0;
    if (first < c->welcome.start_step) first = c->welcome.start_step;
    uint8_t bytes[REDUNDANCY * CRADLE_GAME_MAX_INPUT_BYTES];
    uint8_t count = (uint8_t)(last - first + 1);
    for (uint32_t i = 0; i < count; i++) memcpy(bytes + i * ib, c->inputs[(first + i) % INPUT_RING], ib);
    cradle_wire_message m = {
        .type = CRADLE_WIRE_INPUT,
        .as.input = {.ack = c->next_step, .first_step = first, .count = count, .input_bytes = (uint8_t)ib,
                     .inputs = bytes}};
    send_message(c, &m, ENET_PACKET_FLAG_UNSEQUENCED);
}

static void usage(FILE *to) {
    fprintf(to, "usage: cradle-test-client --port N --game LIBRARY [--host ADDR] [--steps N] [--seed N]\n"
                "       [--spectator] [--slot N] [--drop-at STEP] [--timeout-ms N] [--peer-timeout-ms N]\n"
                "       [--game-name NAME] [--build-id ID] [--protocol N] [--expect-refusal REASON]\n"
                "       [--garbage N] [--output FILE]\n"
                "       [--server-key HEX] [--token TEXT | --issuer-key FILE] [--client-id N] [--insecure]\n"
                "       [--save-token FILE] [--attack KINDS] [--attack-count N] [--silent]\n"
                "       [--connect-flood N]\n");
}

int main(int argc, char **argv) {
    static client c;
    c.host_name = "127.0.0.1";
    c.protocol = -1;
    c.slot_request = -1;
    c.steps_target = 600;
    c.seed = 1;
    c.drop_at = UINT64_MAX;
    c.timeout_ms = 60000;
    c.exit_code = 1;
    static const struct option options[] = {
        {"host", required_argument, NULL, 'H'},
        {"port", required_argument, NULL, 'p'},
        {"game", required_argument, NULL, 'g'},
        {"game-name", required_argument, NULL, 'N'},
        {"build-id", required_argument, NULL, 'B'},
        {"protocol", required_argument, NULL, 'P'},
        {"spectator", no_argument, NULL, 'S'},
        {"slot", required_argument, NULL, 'l'},
        {"steps", required_argument, NULL, 'n'},
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
        {"silent", no_argument, NULL, 'z'},
        {"connect-flood", required_argument, NULL, 'F'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt;
    uint64_t v = 0;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        bool ok = true;
        switch (opt) {
        case 'H': c.host_name = optarg; break;
        case 'p':
            ok = cradle_parse_u64(optarg, 1, 65535, &v);
            c.port = (uint16_t)v;
            break;
        case 'g': c.game_path = optarg; break;
        case 'N': c.game_name = optarg; break;
        case 'B': c.build_id = optarg; break;
        case 'P':
            ok = cradle_parse_u64(optarg, 0, 255, &v);
            c.protocol = (int)v;
            break;
        case 'S': c.spectator = true; break;
        case 'l':
            ok = cradle_parse_u64(optarg, 0, CRADLE_GAME_MAX_PLAYERS - 1, &v);
            c.slot_request = (int)v;
            break;
        case 'n': ok = cradle_parse_u64(optarg, 0, UINT64_MAX, &c.steps_target); break;
        case 's': ok = cradle_parse_u64(optarg, 0, UINT64_MAX, &c.seed); break;
        case 'd': ok = cradle_parse_u64(optarg, 0, UINT64_MAX, &c.drop_at); break;
        case 't': ok = cradle_parse_u64(optarg, 0, UINT64_MAX, &c.timeout_ms); break;
        case 'T': ok = cradle_parse_u64(optarg, 0, 600000, &c.peer_timeout_ms); break;
        case 'r': c.expect_refusal = optarg; break;
        case 'o':
            c.output = fopen(optarg, "wb");
            ok = c.output != NULL;
            break;
        case 'G': ok = cradle_parse_u64(optarg, 0, 10000, &c.garbage); break;
        case 'I': c.insecure = true; break;
        case 'K': c.server_key_hex = optarg; break;
        case 'k': c.token_text = optarg; break;
        case 'i': c.issuer_key_path = optarg; break;
        case 'c': ok = cradle_parse_u64(optarg, 0, UINT64_MAX, &c.client_id); break;
        case 'w': c.save_token = optarg; break;
        case 'a': c.attack = optarg; break;
        case 'A': ok = cradle_parse_u64(optarg, 0, 1000, &c.attack_count); break;
        case 'z': c.silent = true; break;
        case 'F': ok = cradle_parse_u64(optarg, 1, 4000, &c.connect_flood); break;
        case 'h': usage(stdout); return 0;
        default: ok = false;
        }
        if (!ok) {
            usage(stderr);
            return 2;
        }
    }
    if (!c.port || !c.game_path) {
        usage(stderr);
        return 2;
    }
    if (!c.insecure) {
        if (!c.server_key_hex) c.server_key_hex = getenv("CRADLE_TEST_SERVER_KEY");
        if (!c.token_text && !c.issuer_key_path) c.issuer_key_path = getenv("CRADLE_TEST_ISSUER_KEY");
        if (!c.server_key_hex || cradle_keys_from_hex(c.server_key, c.server_key_hex) != 0 ||
            (!c.token_text && !c.issuer_key_path)) {
            fprintf(stderr, "test-client: needs --server-key HEX and --token TEXT or --issuer-key FILE "
                            "(or --insecure)\n");
            return 2;
        }
        c.secure = true;
    }
    if (c.attack_count == 0) c.attack_count = 1;
    if (sodium_init() < 0) return 1;
    char message[CRADLE_RELOAD_MESSAGE_MAX];
    cradle_reload_config rc_config = {.path = c.game_path};
    if (cradle_reload_open(&c.reload, &rc_config, 0, message, sizeof message) != 0) {
        fprintf(stderr, "test-client: --game: %s\n", message);
        return 1;
    }
    c.contract = cradle_reload_contract(&c.reload);
    if (enet_initialize() != 0) return 1;
    c.enet = enet_host_create(NULL, 1, 1, 0, 0);
    ENetAddress address = {.port = c.port};
    if (!c.enet || enet_address_set_host_ip(&address, c.host_name) != 0) {
        fprintf(stderr, "test-client: cannot create the ENet client\n");
        goto out;
    }
    if (c.connect_flood) {
        /* --connect-flood: N connection attempts at once from this address,
         * serviced for 1.5 s; prints how many ENet completed. */
        ENetHost *flood = enet_host_create(NULL, (size_t)c.connect_flood, 1, 0, 0);
        uint64_t connected = 0;
        if (flood) {
            for (uint64_t i = 0; i < c.connect_flood; i++) (void)enet_host_connect(flood, &address, 1, 0);
            ENetEvent fe;
            uint64_t until = cradle_mono_ms() + 1500;
            while (cradle_mono_ms() < until) {
                int rc = enet_host_service(flood, &fe, 5);
                if (rc > 0 && fe.type == ENET_EVENT_TYPE_CONNECT) connected++;
                if (rc > 0 && fe.type == ENET_EVENT_TYPE_RECEIVE) enet_packet_destroy(fe.packet);
            }
            enet_host_destroy(flood);
        }
        printf("{\"event\":\"flood\",\"attempts\":%" PRIu64 ",\"connected\":%" PRIu64 "}\n", c.connect_flood,
               connected);
        c.exit_code = flood ? 0 : 1;
        goto out;
    }
    c.peer = enet_host_connect(c.enet, &address, 1, 0);
    /* A lossy, slow link (the soak's proxy) needs longer than ENet's defaults. */
    if (c.peer && c.peer_timeout_ms)
        enet_peer_timeout(c.peer, 0, (enet_uint32)c.peer_timeout_ms, (enet_uint32)c.peer_timeout_ms);
    ENetEvent event;
    /* At most 20 s for the handshake even then: under heavy loss ENet's handshake
     * sometimes never completes, and a caller (tools/soak.sh) retries sooner. */
    enet_uint32 connect_wait = c.peer_timeout_ms > 20000 ? 20000 : c.peer_timeout_ms > 5000 ? (enet_uint32)c.peer_timeout_ms : 5000;
    if (!c.peer || enet_host_service(c.enet, &event, connect_wait) <= 0 || event.type != ENET_EVENT_TYPE_CONNECT) {
        fprintf(stderr, "test-client: no server answers on %s:%u\n", c.host_name, (unsigned)c.port);
        c.exit_code = 5;
        goto out;
    }
    if (c.silent) {
        /* --silent: no HELLO; a secure server must send nothing and drop us. */
        uint64_t until = cradle_mono_ms() + c.timeout_ms;
        bool gone = false;
        while (!gone && cradle_mono_ms() < until) {
            int rc = enet_host_service(c.enet, &event, 10);
            if (rc > 0 && event.type == ENET_EVENT_TYPE_RECEIVE) {
                c.packets_received++;
                enet_packet_destroy(event.packet);
            }
            if (rc > 0 && event.type == ENET_EVENT_TYPE_DISCONNECT) gone = true;
        }
        printf("{\"event\":\"silent\",\"disconnected\":%s,\"packets\":%" PRIu64 "}\n", gone ? "true" : "false",
               c.packets_received);
        c.exit_code = gone && c.packets_received == 0 ? 0 : 1;
        goto out;
    }
    cradle_wire_message hello = {.type = CRADLE_WIRE_HELLO};
    if (c.secure) {
        uint8_t pk[CRADLE_SECURE_KEY_BYTES], sk[CRADLE_SECURE_KEY_BYTES];
        bool ok = cradle_secure_keypair(pk, sk) == 0 && make_credential(&c, &hello.as.hello, pk) &&
                  cradle_secure_client_init(&c.session, pk, sk, c.server_key,
                                            &(cradle_secure_config){.context = c.peer->connectID}) == 0;
        sodium_memzero(sk, sizeof sk);
        if (!ok) {
            fprintf(stderr, "test-client: cannot set up the secure channel\n");
            goto out;
        }
    }
    hello.as.hello.spectator = c.spectator;
    hello.as.hello.requested_slot = c.slot_request < 0 ? CRADLE_WIRE_ANY_SLOT : (uint8_t)c.slot_request;
    cradle_wire_set_text(hello.as.hello.game, sizeof hello.as.hello.game,
                         c.game_name ? c.game_name : c.contract->name);
    cradle_wire_set_text(hello.as.hello.build_id, sizeof hello.as.hello.build_id,
                         c.build_id ? c.build_id : c.contract->build_id);
    send_message(&c, &hello, ENET_PACKET_FLAG_RELIABLE);
    uint64_t hello_ms = cradle_mono_ms();
    /* --garbage: malformed messages (sealed after HELLO in secure mode); the
     * server must drop them and carry on. */
    for (uint64_t i = 0; i < c.garbage; i++) {
        uint8_t junk[64];
        uint64_t r = splitmix(i);
        size_t n = 1 + (size_t)(r % sizeof junk);
        for (size_t j = 0; j < n; j++) junk[j] = (uint8_t)splitmix(r + j);
        if (n >= 2 && i % 2 == 0) { /* a valid header with a bad body */
            junk[0] = (uint8_t)(1 + r % CRADLE_WIRE_TYPE_LAST);
            junk[1] = CRADLE_WIRE_VERSION;
        }
        if (c.secure) {
            uint8_t sealed[64 + CRADLE_SECURE_OVERHEAD];
            if (cradle_secure_seal(&c.session, sealed, sizeof sealed, &n, junk, n) == 0) send_raw(&c, sealed, n);
        } else {
            send_raw(&c, junk, n);
        }
    }

    uint64_t deadline = cradle_mono_ms() + c.timeout_ms;
    bool disconnected = false;
    while (!c.done) {
        if (cradle_mono_ms() > deadline) {
            fprintf(stderr, "test-client: timed out at step %" PRIu64 "\n", c.next_step);
            c.exit_code = 5;
            break;
        }
        if (c.secure && !c.proven && cradle_mono_ms() > hello_ms + connect_wait) {
            fprintf(stderr, "test-client: server identity not proven: no reply opened with the pinned key "
                            "within %u ms\n", (unsigned)connect_wait);
            c.exit_code = 1;
            break;
        }
        int rc = enet_host_service(c.enet, &event, 2);
        while (rc > 0 && !c.done) {
            if (event.type == ENET_EVENT_TYPE_RECEIVE) {
                on_packet(&c, event.packet->data, event.packet->dataLength);
                enet_packet_destroy(event.packet);
            } else if (event.type == ENET_EVENT_TYPE_DISCONNECT) {
                if (!c.done && c.secure && !c.proven)
                    fprintf(stderr, "test-client: server identity not proven: disconnected before any reply "
                                    "opened with the pinned key\n");
                else if (!c.done)
                    fprintf(stderr, "test-client: the server disconnected\n");
                disconnected = true;
                c.done = true;
            }
            if (!c.done) rc = enet_host_check_events(c.enet, &event);
        }
        if (c.done) break;
        if (c.ready && c.next_step >= c.drop_at) {
            /* A dropped connection: no BYE, the server sees a disconnect. */
            enet_peer_disconnect_now(c.peer, 0);
            disconnected = true;
            printf("{\"event\":\"dropped\",\"slot\":%u,\"step\":%" PRIu64 "}\n", (unsigned)c.welcome.slot,
                   c.next_step);
            c.exit_code = 0;
            break;
        }
        if (c.ready && c.next_step >= c.steps_target) {
            char last[17], final[17];
            hex(last, c.last_hash);
            hex(final, cradle_hash64(c.state, c.contract->state_size));
            printf("{\"event\":\"done\",\"slot\":%d,\"start_step\":%" PRIu64 ",\"steps\":%" PRIu64
                   ",\"hashes_checked\":%" PRIu64 ",\"last_hash_step\":%" PRIu64 ",\"last_hash\":\"%s\","
                   "\"final_hash\":\"%s\",\"build\":\"%s\"}\n",
                   c.welcome.slot == CRADLE_WIRE_SPECTATOR ? -1 : (int)c.welcome.slot, c.welcome.start_step,
                   c.next_step, c.hashes_checked, c.last_hash_step, last, final, c.contract->build_id);
            c.exit_code = c.hashes_checked > 0 ? 0 : 1;
            cradle_wire_message bye = {.type = CRADLE_WIRE_BYE,
                                       .as.bye = {.reason = CRADLE_WIRE_BYE_LEAVING}};
            send_message(&c, &bye, ENET_PACKET_FLAG_RELIABLE);
            break;
        }
        send_inputs(&c);
    }
    if (!disconnected) {
        enet_peer_disconnect_later(c.peer, 0);
        uint64_t until = cradle_mono_ms() + 1000;
        while (cradle_mono_ms() < until) {
            int rc = enet_host_service(c.enet, &event, 10);
            if (rc < 0) break;
            if (rc == 0) continue;
            if (event.type == ENET_EVENT_TYPE_RECEIVE) enet_packet_destroy(event.packet);
            if (event.type == ENET_EVENT_TYPE_DISCONNECT) break;
        }
    }
    fflush(stdout);
out:
    if (c.enet) enet_host_destroy(c.enet);
    enet_deinitialize();
    cradle_secure_wipe(&c.session);
    cradle_reload_close(&c.reload);
    free(c.state);
    free(c.buffered);
    if (c.output && fclose(c.output) != 0 && c.exit_code == 0) c.exit_code = 1;
    return c.exit_code;
}
