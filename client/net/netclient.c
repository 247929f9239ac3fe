/*
 * netclient: the lockstep session (see netclient.h for the contract, the
 * reload rule and the desync report format).
 */
#include "netclient.h"
#include <assert.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>
#include <time.h>

#include "cradle/ackpace.h"
#include "cradle/contract.h"
#include "cradle/hash.h"
#include "cradle/keys.h"
#include "cradle/raw_datagram.h"
#include "cradle/systime.h"
#include "cradle/token.h"

#define NS_PER_MS 1000000ull
#define PING_INTERVAL_NS 500000000ull /* the link's round trip is measured twice a second */
#define RELOAD_RETRY_NS (100ull * NS_PER_MS)
#define REPORT_INTERVAL_NS 1000000000ull /* a predicting player's figures go to the server once a second */

static int fail(cradle_netclient *net, int error, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(cradle_netclient *net, int error, const char *format, ...) {
    if (net->error != 0) return net->error; /* the first failure is the one to report */
    va_list args;
    va_start(args, format);
    vsnprintf(net->message, sizeof net->message, format, args);
    va_end(args);
    net->error = error;
    net->phase = CRADLE_NETCLIENT_CLOSED;
    return error;
}

static void send_message(cradle_netclient *net, const cradle_wire_message *m, bool reliable) {
    uint8_t buf[CRADLE_WIRE_MESSAGE_MAX];
    size_t n = 0;
    if (!net->link.ops || cradle_wire_encode(buf, sizeof buf, &n, m) != 0) return;
    const uint8_t *data = buf;
    static _Thread_local uint8_t sealed[CRADLE_SECURE_PACKET_MAX];
    if (net->secure && m->type != CRADLE_WIRE_HELLO) {
        cradle_secure_lane_id lane = reliable ? CRADLE_SECURE_ORDERED : CRADLE_SECURE_UNORDERED;
        int rc = cradle_secure_seal_lane(&net->session, lane, sealed, sizeof sealed, &n, buf, n);
        if (rc != 0) {
            (void)fail(net, rc, "cannot seal a message: %s", cradle_strerror(rc));
            return;
        }
        data = sealed;
    }
    if (net->link.ops->send(net->link.self, data, n, reliable)) net->bytes_out += n;
}

static int start_connect(cradle_netclient *net);

int cradle_netclient_open(cradle_netclient *net, const cradle_netclient_config *config,
                          uint64_t now_ns) {
    memset(net, 0, sizeof *net);
    net->config = *config;
    net->phase = CRADLE_NETCLIENT_CONNECTING;
    if (!net->config.host) net->config.host = "127.0.0.1";
    if (!net->config.connect_timeout_ms) net->config.connect_timeout_ms = 5000;
    if (!net->config.silence_timeout_ms) net->config.silence_timeout_ms = 5000;
    if (!net->config.reload_timeout_ms) net->config.reload_timeout_ms = 10000;
    net->opened_ns = now_ns;
    net->last_heard_ns = now_ns;
    net->last_hash_step = CRADLE_NETCLIENT_NO_STEP;
    /* The link is the netclient's from here on: close closes it, whatever
     * open returns. */
    net->link = config->link ? *config->link
                             : cradle_link_enet_make(&net->enet, net->config.host, config->port,
                                                     cradle_netclient_datagram, net);

    char why[CRADLE_RELOAD_MESSAGE_MAX];
    cradle_reload_config rc = {.path = config->game, .copy_dir = config->copy_dir};
    int rc_open = cradle_reload_open(&net->reload, &rc, now_ns, why, sizeof why);
    if (rc_open != 0) return fail(net, rc_open, "cannot load the game library %s: %s", config->game, why);
    const cradle_game_contract *k = cradle_reload_contract(&net->reload);
    size_t align = net->reload.max_state_align;
    net->state_bytes = ((size_t)net->reload.state_capacity + align - 1u) / align * align;
    net->base = aligned_alloc(align, net->state_bytes);
    net->packed_capacity = cradle_state_pack_bound(net->reload.state_capacity);
    net->packed = malloc(net->packed_capacity);
    if (!net->base || !net->packed || cradle_state_pack_init(&net->unpack, 0, CRADLE_STATE_PACK_DECODE) != 0)
        return fail(net, CRADLE_ENOMEM, "out of memory for the game state");
    uint32_t data_count = 0;
    const cradle_game_data_file *data_files = cradle_contract_data(k, &data_count);
    for (uint32_t i = 0; i < data_count; i++)
        if (data_files[i].max_bytes > net->data_capacity) net->data_capacity = data_files[i].max_bytes;
    if (net->data_capacity) {
        net->data_storage = malloc((size_t)CRADLE_NETCLIENT_DATA * net->data_capacity);
        if (!net->data_storage) return fail(net, CRADLE_ENOMEM, "out of memory for the game's data files");
        for (uint32_t i = 0; i < CRADLE_NETCLIENT_DATA; i++)
            net->data_queue[i].bytes = net->data_storage + (size_t)i * net->data_capacity;
    }
    /* Room for every later build: the reload's capacity and alignment. */
    rc_open = cradle_sim_storage_open(&net->storage, &net->sim, k,
                                      &(cradle_sim_storage_config){.capacity = (uint32_t)net->state_bytes,
                                                                   .align = (uint32_t)align,
                                                                   .previous = true,
                                                                   .scratch = true,
                                                                   .event_capacity = CRADLE_NETCLIENT_EVENTS},
                                      why, sizeof why);
    if (rc_open != 0) return fail(net, rc_open, "the game library %s: %s", config->game, why);
    if (config->effects) {
        net->effects_storage = malloc(2u * CRADLE_NETCLIENT_EFFECTS * sizeof *net->effects_storage);
        if (!net->effects_storage) return fail(net, CRADLE_ENOMEM, "out of memory for the game's events");
        (void)cradle_events_init(&net->effects, net->effects_storage, CRADLE_NETCLIENT_EFFECTS);
        (void)cradle_events_init(&net->effects_confirmed, net->effects_storage + CRADLE_NETCLIENT_EFFECTS,
                                 CRADLE_NETCLIENT_EFFECTS);
    }
    if (!config->insecure) {
        if (!config->server_key || cradle_keys_from_hex(net->server_key, config->server_key) != 0)
            return fail(net, CRADLE_EINVAL, "the server key (--server-key) must be the server id, 64 hex digits");
        if (!config->token && !config->issuer_key)
            return fail(net, CRADLE_EINVAL, "a join token is needed (--token TOKEN, or --issuer-key FILE)");
        if (sodium_init() < 0) return fail(net, CRADLE_EIO, "libsodium failed to initialise");
        net->secure = true;
    }

    return start_connect(net);
}

/* A connect to the server (again, after its per-address limit turned one away). */
static int start_connect(cradle_netclient *net) {
    char why[CRADLE_NETCLIENT_MESSAGE_MAX - 64] = "";
    int rc = net->link.ops->connect(net->link.self, why, sizeof why);
    if (rc != 0) return fail(net, rc, "%s", why[0] ? why : "the link cannot connect");
    return 0;
}

/* The HELLO credential (token || a fresh ephemeral public key) and this
 * connection's session keys. Returns 0 or the failure (reported). */
static int secure_hello(cradle_netclient *net, cradle_wire_hello *h) {
    uint8_t token[CRADLE_TOKEN_MAX_BYTES];
    size_t token_size = 0;
    if (net->config.token) {
        if (cradle_token_from_text(token, &token_size, net->config.token) != 0)
            return fail(net, CRADLE_ETOKEN_MALFORMED, "--token is not a join token");
    } else {
        cradle_keys issuer;
        char why[256];
        int rc = cradle_keys_load(&issuer, net->config.issuer_key, why, sizeof why);
        if (rc != 0) return fail(net, rc, "--issuer-key: %s", why);
        cradle_token t = {.client_id = net->config.client_id};
        randombytes_buf(t.id, sizeof t.id);
        memcpy(t.server_id, net->server_key, sizeof t.server_id);
        t.issued_unix = (uint64_t)time(NULL);
        t.expires_unix = t.issued_unix + 3600u;
        snprintf(t.build_id, sizeof t.build_id, "%s", net->sim.contract->build_id);
        rc = cradle_token_issue(token, sizeof token, &token_size, &t, issuer.sign_secret);
        cradle_keys_wipe(&issuer);
        if (rc != 0) return fail(net, rc, "cannot issue a join token: %s", cradle_strerror(rc));
    }
    uint8_t pk[CRADLE_SECURE_KEY_BYTES], sk[CRADLE_SECURE_KEY_BYTES];
    size_t n = 0;
    int rc = cradle_secure_keypair(pk, sk);
    if (rc == 0) rc = cradle_token_credential(h->credential, sizeof h->credential, &n, token, token_size, pk);
    if (rc == 0)
        rc = cradle_secure_client_init(&net->session, pk, sk, net->server_key,
                                       &(cradle_secure_config){.context = net->link.ops->connection_id(net->link.self)});
    sodium_memzero(sk, sizeof sk);
    if (rc != 0) return fail(net, rc, "cannot set up the secure channel: %s", cradle_strerror(rc));
    h->credential_size = (uint16_t)n;
    return 0;
}

static void send_hello(cradle_netclient *net) {
    cradle_wire_message m = {.type = CRADLE_WIRE_HELLO};
    if (net->secure && secure_hello(net, &m.as.hello) != 0) return;
    m.as.hello.spectator = net->config.spectator;
    m.as.hello.requested_slot = net->config.requested_slot < 0 ? CRADLE_WIRE_ANY_SLOT
                                                               : (uint8_t)net->config.requested_slot;
    cradle_wire_set_text(m.as.hello.game, sizeof m.as.hello.game, net->sim.contract->name);
    cradle_wire_set_text(m.as.hello.build_id, sizeof m.as.hello.build_id, net->sim.contract->build_id);
    send_message(net, &m, true);
    net->phase = CRADLE_NETCLIENT_HELLO;
}

/* Allocates the state blocks and the queues once the WELCOME says how big. */
static int on_welcome(cradle_netclient *net, const cradle_wire_welcome *w) {
    const cradle_game_contract *k = net->sim.contract;
    if (w->state_size != k->state_size || w->input_bytes != k->input_bytes ||
        w->max_players != k->max_players)
        return fail(net, CRADLE_ENET_MESSAGE,
                    "the server's game differs from the library: state %u/%u bytes, input %u/%u, "
                    "players %u/%u (server/client)",
                    (unsigned)w->state_size, (unsigned)k->state_size, (unsigned)w->input_bytes,
                    (unsigned)k->input_bytes, (unsigned)w->max_players, (unsigned)k->max_players);
    net->welcome = *w;
    net->snapshot_size = cradle_snapshot_size(w->max_players, w->input_bytes);
    net->queue = malloc((size_t)CRADLE_NETCLIENT_QUEUE_STEPS * net->snapshot_size);
    net->queue_step = malloc((size_t)CRADLE_NETCLIENT_QUEUE_STEPS * sizeof *net->queue_step);
    net->queue_hash = malloc((size_t)CRADLE_NETCLIENT_QUEUE_STEPS * sizeof *net->queue_hash);
    net->queue_epoch = malloc(CRADLE_NETCLIENT_QUEUE_STEPS);
    net->queue_has_hash = malloc(CRADLE_NETCLIENT_QUEUE_STEPS);
    net->history_storage = malloc((size_t)CRADLE_NETCLIENT_HISTORY * net->snapshot_size);
    if (!net->queue || !net->queue_step || !net->queue_hash ||
        !net->queue_epoch || !net->queue_has_hash || !net->history_storage)
        return fail(net, CRADLE_ENOMEM, "out of memory for the game state");
    int rc = cradle_session_init(&net->history, net->history_storage,
                                 (size_t)CRADLE_NETCLIENT_HISTORY * net->snapshot_size, net->snapshot_size);
    assert(rc == 0); /* a snapshot is never 0 bytes */
    (void)rc;
    for (uint32_t i = 0; i < CRADLE_NETCLIENT_QUEUE_STEPS; i++) net->queue_step[i] = UINT64_MAX;
    net->epoch = w->epoch;
    net->received_next = w->start_step;
    net->queue_first = w->start_step;
    net->input_sent_through = w->start_step;
    net->base_step_plus1 = w->start_step;
    cradle_ackpace_init(&net->ackpace, w->slot == CRADLE_WIRE_SPECTATOR, w->steps_per_second, w->start_step);
    char why[CRADLE_PREDICT_MESSAGE_MAX];
    rc = cradle_predict_start(net, why, sizeof why);
    if (rc != 0) return fail(net, rc, "prediction: %s", why);
    if (w->state_follows) {
        net->phase = CRADLE_NETCLIENT_JOINING;
        return 0;
    }
    if (cradle_sim_start(&net->sim, w->seed, w->players) != 0)
        return fail(net, CRADLE_ENET_MESSAGE, "the game refused the server's player count %u",
                    (unsigned)w->players);
    memcpy(net->base, net->sim.state, k->state_size);
    net->phase = CRADLE_NETCLIENT_PLAYING;
    return 0;
}

static int on_state(cradle_netclient *net, const cradle_wire_state *st) {
    if (net->phase != CRADLE_NETCLIENT_JOINING) return 0;
    uint32_t state_size = net->sim.contract->state_size;
    if (st->total > cradle_state_pack_bound(state_size) || st->offset != net->state_received ||
        st->step != net->welcome.start_step)
        return fail(net, CRADLE_ENET_MESSAGE, "STATE chunk out of order or larger than the game's state packs");
    /* Chunks gather in packed; unpacked into base, the sim takes the whole
     * block once it is proven. */
    memcpy(net->packed + st->offset, st->bytes, st->length);
    net->state_received += st->length;
    if (net->state_received < st->total) return 0;
    const char *problem =
        cradle_state_pack_decode(&net->unpack, net->packed, st->total, net->base, state_size, st->hash);
    if (problem)
        return fail(net, CRADLE_ENET_MESSAGE, "the state block for step %" PRIu64 ": %s", st->step, problem);
    int rc = cradle_sim_restore(&net->sim, net->base, state_size, st->step);
    if (rc != 0) return fail(net, rc, "the state block for step %" PRIu64 " has the wrong size", st->step);
    net->phase = CRADLE_NETCLIENT_PLAYING;
    return 0;
}

/* One INPUT: the ack, and a player's inputs (new ones asked for first). */
static void send_inputs(cradle_netclient *net) {
    if (net->phase == CRADLE_NETCLIENT_CONNECTING || net->phase == CRADLE_NETCLIENT_HELLO ||
        net->phase == CRADLE_NETCLIENT_CLOSED)
        return;
    uint32_t ib = net->welcome.input_bytes;
    uint8_t bytes[CRADLE_NETCLIENT_REDUNDANCY * CRADLE_GAME_MAX_INPUT_BYTES];
    cradle_wire_message m = {
        .type = CRADLE_WIRE_INPUT,
        .as.input = {.ack = net->received_next, .first_step = net->received_next, .input_bytes = (uint8_t)ib}};
    if (net->welcome.slot != CRADLE_WIRE_SPECTATOR) {
        /* (last step received) + delay, and never a step the server already
         * built: received_next - 1 + delay, at least received_next. */
        uint64_t target = net->received_next + net->welcome.input_delay;
        if (net->welcome.input_delay > 0) target--;
        while (net->input_sent_through <= target) {
            uint64_t s = net->input_sent_through++;
            uint8_t *in = net->inputs[s % CRADLE_NETCLIENT_INPUTS_KEPT];
            memset(in, 0, ib);
            if (net->config.input) net->config.input(net->config.input_context, s, in, ib);
        }
        if (net->input_sent_through > net->welcome.start_step) {
            uint64_t last = net->input_sent_through - 1;
            uint64_t first =
                last + 1 >= CRADLE_NETCLIENT_REDUNDANCY ? last + 1 - CRADLE_NETCLIENT_REDUNDANCY : 0;
            if (first < net->welcome.start_step) first = net->welcome.start_step;
            uint8_t count = (uint8_t)(last - first + 1);
            for (uint32_t i = 0; i < count; i++) memcpy(bytes + i * ib, net->inputs[(first + i) % CRADLE_NETCLIENT_INPUTS_KEPT], ib);
            m.as.input.first_step = first;
            m.as.input.count = count;
            m.as.input.inputs = bytes;
        }
    }
    send_message(net, &m, false);
    net->inputs_sent++;
    cradle_ackpace_sent(&net->ackpace, net->received_next);
    net->ack_due = false;
}

static int on_steps(cradle_netclient *net, const cradle_wire_steps *s, uint64_t now_ns) {
    if (net->phase != CRADLE_NETCLIENT_JOINING && net->phase != CRADLE_NETCLIENT_PLAYING) return 0;
    if (s->snapshot_size != net->snapshot_size)
        return fail(net, CRADLE_ENET_MESSAGE, "STEPS snapshot size %u, the game's is %u",
                    (unsigned)s->snapshot_size, (unsigned)net->snapshot_size);
    uint64_t first = cradle_wire_step_expand(net->received_next, (uint32_t)s->first_step);
    uint32_t h = 0;
    bool fresh = false; /* a step not held yet */
    for (uint32_t i = 0; i < s->count; i++) {
        uint64_t index = first + i;
        bool has_hash = h < s->hash_count && s->hashes[h].offset == i;
        uint64_t hash = has_hash ? s->hashes[h++].hash : 0;
        /* Before our start or run already; or beyond the queue (sent again
         * until acknowledged, so nothing is lost by dropping it here). */
        if (index < net->received_next || index >= net->queue_first + CRADLE_NETCLIENT_QUEUE_STEPS) {
            net->steps_repeated++;
            continue;
        }
        uint32_t q = (uint32_t)(index % CRADLE_NETCLIENT_QUEUE_STEPS);
        if (net->queue_step[q] == index) {
            net->steps_repeated++;
            continue;
        }
        memcpy(net->queue + (size_t)q * net->snapshot_size, s->snapshots + (size_t)i * s->snapshot_size,
               s->snapshot_size);
        net->queue_step[q] = index;
        net->queue_epoch[q] = s->epoch;
        net->queue_has_hash[q] = has_hash;
        net->queue_hash[q] = hash;
        fresh = true;
        if (index > net->received_next) net->steps_early++;
    }
    if (!fresh) cradle_ackpace_repeated(&net->ackpace); /* our ack did not arrive */
    while (net->received_next < net->queue_first + CRADLE_NETCLIENT_QUEUE_STEPS &&
           net->queue_step[net->received_next % CRADLE_NETCLIENT_QUEUE_STEPS] == net->received_next)
        net->received_next++;
    /* A player's INPUT goes out with each STEPS (its inputs ride along); a
     * spectator's carries only the ack, paced (cradle/ackpace.h). */
    if (net->welcome.slot != CRADLE_WIRE_SPECTATOR || cradle_ackpace_due(&net->ackpace, net->received_next, now_ns))
        net->ack_due = true;
    return 0;
}

/* A DATA chunk: the first of a file opens an entry in the queue, the rest
 * must follow it in order. */
static int on_data(cradle_netclient *net, const cradle_wire_data *d) {
    if (net->phase != CRADLE_NETCLIENT_JOINING && net->phase != CRADLE_NETCLIENT_PLAYING) return 0;
    /* Which build declares the file is checked when it applies (a reload
     * announced before it may bring another build); here, what fits. */
    if (d->total > net->data_capacity)
        return fail(net, CRADLE_EDATA,
                    "the server sent data file %u of %u bytes, more than the %u bytes this client's build "
                    "(%s) allows a data file", (unsigned)d->file + 1u, (unsigned)d->total,
                    (unsigned)net->data_capacity, cradle_reload_contract(&net->reload)->build_id);
    if (d->offset == 0) {
        if (net->data_queued == CRADLE_NETCLIENT_DATA)
            return fail(net, CRADLE_EFULL, "more than %u data files announced ahead of the steps",
                        CRADLE_NETCLIENT_DATA);
        cradle_netclient_data *e = &net->data_queue[(net->data_head + net->data_queued++) % CRADLE_NETCLIENT_DATA];
        e->at_step = d->at_step;
        e->epoch = d->epoch;
        e->file = d->file;
        e->total = d->total;
        e->received = 0;
        memcpy(e->hash, d->hash, sizeof e->hash);
    }
    cradle_netclient_data *e =
        net->data_queued ? &net->data_queue[(net->data_head + net->data_queued - 1) % CRADLE_NETCLIENT_DATA] : NULL;
    if (!e || e->at_step != d->at_step || e->epoch != d->epoch || e->file != d->file || e->total != d->total ||
        memcmp(e->hash, d->hash, sizeof e->hash) != 0 || d->offset != e->received)
        return fail(net, CRADLE_ENET_MESSAGE, "the server sent a DATA chunk out of order (file %u, offset %u)",
                    (unsigned)d->file + 1u, (unsigned)d->offset);
    if (d->length) memcpy(e->bytes + d->offset, d->bytes, d->length);
    e->received += d->length;
    return 0;
}

static int on_packet(cradle_netclient *net, const uint8_t *data, size_t size, uint64_t now_ns) {
    cradle_wire_message m;
    net->bytes_in += size;
    static _Thread_local uint8_t opened[CRADLE_SECURE_PACKET_MAX];
    if (net->secure) {
        size_t plain = 0;
        if (cradle_secure_open(&net->session, opened, sizeof opened, &plain, data, size) == 0) {
            net->proven = true;
            data = opened;
            size = plain;
        } else {
            /* Before keys agree the server can only refuse unsealed (another
             * protocol, no usable credential): shown, marked unproven. */
            if (!net->proven && cradle_wire_decode(&m, data, size) == 0 && m.type == CRADLE_WIRE_REFUSE &&
                (m.as.refuse.reason == CRADLE_WIRE_REFUSE_PROTOCOL || m.as.refuse.reason == CRADLE_WIRE_REFUSE_AUTH)) {
                net->refusal = m.as.refuse.reason;
                memcpy(net->refusal_text, m.as.refuse.text, sizeof net->refusal_text);
                return fail(net, CRADLE_ENET_REFUSED,
                            "the server refused the connection (%s, unsealed: its identity is not proven): %s",
                            cradle_wire_refusal_name(m.as.refuse.reason), m.as.refuse.text);
            }
            net->dropped_unopened++;
            return 0;
        }
    }
    int rc = cradle_wire_decode(&m, data, size);
    if (rc == CRADLE_ENET_VERSION)
        return fail(net, rc, "the server speaks protocol version %u, this client %u", (unsigned)m.version,
                    CRADLE_WIRE_VERSION);
    if (rc != 0) return fail(net, rc, "the server sent a bad message: %s", m.problem ? m.problem : "?");
    switch (m.type) {
    case CRADLE_WIRE_WELCOME:
        if (net->phase != CRADLE_NETCLIENT_HELLO) return 0;
        rc = on_welcome(net, &m.as.welcome);
        if (rc == 0) send_inputs(net);
        return rc;
    case CRADLE_WIRE_REFUSE:
        net->refusal = m.as.refuse.reason;
        memcpy(net->refusal_text, m.as.refuse.text, sizeof net->refusal_text);
        return fail(net, CRADLE_ENET_REFUSED, "the server refused the connection (%s): %s",
                    cradle_wire_refusal_name(m.as.refuse.reason), m.as.refuse.text);
    case CRADLE_WIRE_STATE: return on_state(net, &m.as.state);
    case CRADLE_WIRE_STEPS: return on_steps(net, &m.as.steps, now_ns);
    case CRADLE_WIRE_DATA: return on_data(net, &m.as.data);
    case CRADLE_WIRE_RELOAD:
        if (!net->reload_pending) {
            net->reload_pending = true;
            net->reload_at = m.as.reload.at_step;
            net->reload_epoch = m.as.reload.epoch;
            memcpy(net->reload_build, m.as.reload.build_id, sizeof net->reload_build);
            net->reload_deadline_ns = 0; /* set when step reload_at is reached */
            return 0;
        }
        if (net->reload_queued == CRADLE_NETCLIENT_RELOADS)
            return fail(net, CRADLE_EFULL, "more than %u reloads announced ahead of the steps",
                        CRADLE_NETCLIENT_RELOADS);
        net->reload_queue[net->reload_queued++] = m.as.reload;
        return 0;
    case CRADLE_WIRE_PING: {
        cradle_wire_message pong = {.type = CRADLE_WIRE_PONG, .as.ping.echo = m.as.ping.echo};
        send_message(net, &pong, false);
        return 0;
    }
    case CRADLE_WIRE_PONG: return 0; /* the link's round trip is measured outside ENet */
    case CRADLE_WIRE_DELAY:
        /* the server adapts a player's delay (its input_delay.h); inputs go on
           one a step, in order, up to (last step received) + the new delay */
        if (net->welcome.slot == CRADLE_WIRE_SPECTATOR ||
            (net->phase != CRADLE_NETCLIENT_JOINING && net->phase != CRADLE_NETCLIENT_PLAYING))
            return 0;
        net->welcome.input_delay = m.as.delay.input_delay;
        net->delay_changes++;
        return 0;
    case CRADLE_WIRE_BYE:
        net->bye = m.as.bye.reason;
        return fail(net, CRADLE_ENET_CLOSED, "the server closed the session (%s)%s%s",
                    cradle_wire_bye_name(m.as.bye.reason), m.as.bye.text[0] ? ": " : "", m.as.bye.text);
    default: return 0; /* HELLO, INPUT, DESYNC are client-to-server: ignore */
    }
}

static uint32_t saturate32(uint64_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

/* A player's prediction figures for the server (wire.h REPORT; window 0 in
 * lockstep: every player sends the same messages, predicting or not),
 * unreliable: the next one says it all again. */
static void send_report(cradle_netclient *net) {
    const cradle_predict_figures *f = &net->predict.figures;
    if (!net->predict.on) {
        send_message(net, &(cradle_wire_message){.type = CRADLE_WIRE_REPORT}, false);
        return;
    }
    cradle_wire_report r = {.window = (uint16_t)net->predict.window,
                            .ahead = (uint16_t)f->ahead,
                            .steps = saturate32(net->steps_run),
                            .rollbacks = saturate32(f->rollbacks),
                            .rollback_steps = saturate32(f->rollback_steps),
                            .rollback_max = (uint16_t)f->rollback_max,
                            .corrections = saturate32(f->corrections),
                            .own_overridden = saturate32(f->own_overridden)};
    if (r.own_overridden > r.steps) r.own_overridden = r.steps; /* counted from the join, as steps */
    send_message(net, &(cradle_wire_message){.type = CRADLE_WIRE_REPORT, .as.report = r}, false);
}

/* ---- raw datagrams: the step stream, PING and PONG (wire.h, raw_datagram.h) -- */

/* A PING beside the connection: sent now, not at the next flush, and its
 * PONG is taken the moment the link reads it (cradle_netclient_datagram). */
static void send_raw_ping(cradle_netclient *net) {
    cradle_wire_message m = {.type = CRADLE_WIRE_PING};
    m.as.ping.rtt_us = (uint32_t)(net->rtt_ns / 1000u > UINT32_MAX ? UINT32_MAX : net->rtt_ns / 1000u);
    m.as.ping.echo = cradle_wall_ns(); /* the clock of the kernel's receive timestamps */
    uint8_t datagram[CRADLE_RAW_DATAGRAM_MAX];
    size_t n = 0;
    if (cradle_raw_encode(net->secure ? &net->session : NULL, &m, datagram, sizeof datagram, &n) != 0) return;
    if (net->link.ops->send_datagram(net->link.self, datagram, n)) net->bytes_out += n;
}

/* The link's datagram callback (netclient.h): the server's raw datagrams (wire.h "Raw
 * datagrams"): STEPS into the stream as if the connection had delivered
 * them, PONGs with their arrival time, for rtt_ns. Anything else is
 * dropped and counted. */
void cradle_netclient_datagram(void *context, const uint8_t *data, size_t size, bool from_server) {
    cradle_netclient *net = context;
    if (!from_server || net->error ||
        (net->phase != CRADLE_NETCLIENT_JOINING && net->phase != CRADLE_NETCLIENT_PLAYING)) {
        net->raw_dropped++;
        return; /* not the server's, or not now */
    }
    static _Thread_local uint8_t scratch[CRADLE_RAW_MESSAGE_MAX];
    cradle_wire_message m;
    int rc = cradle_raw_decode(net->secure ? &net->session : NULL, data, size, scratch, &m);
    if (rc != 0) {
        /* forged, replayed or not one of ours: dropped, never an error (anyone can send a datagram) */
        if (rc == CRADLE_ENET_MESSAGE || rc == CRADLE_ENET_VERSION)
            net->raw_dropped++;
        else
            net->dropped_unopened++;
        return;
    }
    if (m.type == CRADLE_WIRE_STEPS) {
        /* authentic (sealed with the session's keys) or, insecure, from the server's address */
        net->bytes_in += size;
        net->raw_steps++;
        net->last_heard_ns = net->service_ns;
        (void)on_steps(net, &m.as.steps, net->service_ns);
        return;
    }
    uint64_t arrived = m.type == CRADLE_WIRE_PONG ? net->link.ops->arrived(net->link.self) : 0;
    if (m.type != CRADLE_WIRE_PONG || net->phase != CRADLE_NETCLIENT_PLAYING || !arrived) {
        net->raw_dropped++;
        return;
    }
    uint64_t hold = (uint64_t)m.as.ping.hold_us * 1000u;
    if (m.as.ping.echo < arrived && arrived - m.as.ping.echo > hold) net->rtt_ns = arrived - m.as.ping.echo - hold;
}

int cradle_netclient_service(cradle_netclient *net, uint64_t now_ns, uint32_t wait_ms) {
    int rc = cradle_netclient_receive(net, now_ns, wait_ms);
    return rc != 0 ? rc : cradle_netclient_send(net, now_ns);
}

int cradle_netclient_receive(cradle_netclient *net, uint64_t now_ns, uint32_t wait_ms) {
    if (net->error) return net->error;
    net->service_ns = now_ns; /* raw STEPS arrive within (cradle_netclient_datagram) */
    cradle_link_event event;
    int rc = net->link.ops->receive(net->link.self, wait_ms, &event);
    while (rc > 0 && !net->error) {
        switch (event.kind) {
        case CRADLE_LINK_CONNECTED:
            if (net->phase != CRADLE_NETCLIENT_CONNECTING) break; /* once a connect: a second says nothing */
            net->last_heard_ns = now_ns;
            net->hello_ns = now_ns;
            send_hello(net);
            break;
        case CRADLE_LINK_MESSAGE:
            net->last_heard_ns = now_ns;
            (void)on_packet(net, event.data, event.size, now_ns);
            break;
        case CRADLE_LINK_LOST:
            if ((event.reason == CRADLE_WIRE_DISCONNECT_RATE_LIMITED || event.reason == CRADLE_WIRE_DISCONNECT_BUSY) &&
                (net->phase == CRADLE_NETCLIENT_CONNECTING || net->phase == CRADLE_NETCLIENT_HELLO)) {
                /* the server's per-address connect limit, or a full table: wait, then again */
                net->turned_away++;
                if (event.reason == CRADLE_WIRE_DISCONNECT_BUSY) net->turned_busy++;
                net->retry_ms = net->retry_ms ? (net->retry_ms * 2 > 2000 ? 2000 : net->retry_ms * 2) : 250;
                net->retry_at_ns = now_ns + (uint64_t)net->retry_ms * NS_PER_MS;
                net->phase = CRADLE_NETCLIENT_CONNECTING;
            } else if (net->phase == CRADLE_NETCLIENT_CONNECTING)
                (void)fail(net, CRADLE_ENET_TIMEOUT, "no server answers on %s:%u", net->config.host,
                           (unsigned)net->config.port);
            else if (net->secure && !net->proven)
                (void)fail(net, CRADLE_ENET_AUTH,
                           "server identity not proven: disconnected before any reply opened with the "
                           "pinned key (--server-key)");
            else
                (void)fail(net, CRADLE_ENET_INIT, "connection to the server lost at step %" PRIu64,
                           net->sim.next_step);
            break;
        case CRADLE_LINK_NONE: break;
        }
        if (!net->error) rc = net->link.ops->receive(net->link.self, 0, &event);
    }
    if (rc < 0 && !net->error) (void)fail(net, rc, "the link to the server failed: %s", cradle_strerror(rc));
    return net->error;
}

int cradle_netclient_send(cradle_netclient *net, uint64_t now_ns) {
    if (net->error) return net->error;
    if (net->phase == CRADLE_NETCLIENT_PLAYING && cradle_ackpace_due(&net->ackpace, net->received_next, now_ns))
        net->ack_due = true; /* a spectator's held ack waited long enough */
    if (net->ack_due) send_inputs(net);
    if (net->phase == CRADLE_NETCLIENT_CONNECTING && net->turned_away &&
        now_ns - net->opened_ns > (uint64_t)net->config.connect_timeout_ms * NS_PER_MS)
        return fail(net, CRADLE_ENET_TIMEOUT, "%s:%u turned this client away %u times in %u ms: %s",
                    net->config.host, (unsigned)net->config.port, (unsigned)net->turned_away,
                    (unsigned)net->config.connect_timeout_ms,
                    net->turned_busy ? "its peer table was full of connections that had not authenticated "
                                       "(a flood?)"
                                     : "too many connection attempts from this address (the server's "
                                       "--connect-rate and --connect-burst; many clients behind one "
                                       "address, or failed joins from it)");
    if (net->phase == CRADLE_NETCLIENT_CONNECTING &&
        now_ns - net->opened_ns > (uint64_t)net->config.connect_timeout_ms * NS_PER_MS)
        return fail(net, CRADLE_ENET_TIMEOUT, "no server answers on %s:%u within %u ms", net->config.host,
                    (unsigned)net->config.port, (unsigned)net->config.connect_timeout_ms);
    if (net->phase == CRADLE_NETCLIENT_CONNECTING && net->retry_at_ns && now_ns >= net->retry_at_ns) {
        net->retry_at_ns = 0;
        if (start_connect(net) != 0) return net->error;
    }
    if (net->secure && !net->proven && net->phase == CRADLE_NETCLIENT_HELLO &&
        now_ns - net->hello_ns > (uint64_t)net->config.connect_timeout_ms * NS_PER_MS)
        return fail(net, CRADLE_ENET_AUTH,
                    "server identity not proven: no reply opened with the pinned key (--server-key) within %u ms",
                    (unsigned)net->config.connect_timeout_ms);
    if (net->phase != CRADLE_NETCLIENT_CONNECTING &&
        now_ns - net->last_heard_ns > (uint64_t)net->config.silence_timeout_ms * NS_PER_MS)
        return fail(net, CRADLE_ENET_TIMEOUT, "connection lost: the server sent nothing for %u ms (step %" PRIu64 ")",
                    (unsigned)net->config.silence_timeout_ms, net->sim.next_step);
    if (net->phase == CRADLE_NETCLIENT_PLAYING && now_ns - net->last_ping_ns >= PING_INTERVAL_NS) {
        net->last_ping_ns = now_ns;
        send_raw_ping(net);
    }
    if (net->phase == CRADLE_NETCLIENT_PLAYING && net->welcome.slot != CRADLE_WIRE_SPECTATOR &&
        now_ns - net->last_report_ns >= REPORT_INTERVAL_NS) {
        net->last_report_ns = now_ns;
        send_report(net);
    }
    net->link.ops->flush(net->link.self);
    return 0;
}

/* At step reload_at: loads the library until it is the announced build. Returns 1 when the step
 * may run, 0 to wait, or the error. */
/* The announced reload is done (or was not needed): the next one, if any,
 * becomes current. */
static void reload_done(cradle_netclient *net) {
    net->epoch = net->reload_epoch;
    net->reload_pending = false;
    if (net->reload_queued == 0) return;
    net->reload_pending = true;
    net->reload_at = net->reload_queue[0].at_step;
    net->reload_epoch = net->reload_queue[0].epoch;
    memcpy(net->reload_build, net->reload_queue[0].build_id, sizeof net->reload_build);
    net->reload_deadline_ns = 0;
    net->reload_queued--;
    memmove(net->reload_queue, net->reload_queue + 1, net->reload_queued * sizeof net->reload_queue[0]);
}

/* The announced build takes over the state: the same act as on the server
 * (cradle_sim_swap runs on_reload), whether or not the build changed. */
static int reload_take(cradle_netclient *net) {
    char why[CRADLE_RELOAD_MESSAGE_MAX];
    int rc = cradle_sim_swap(&net->sim, cradle_reload_contract(&net->reload), why, sizeof why);
    if (rc != 0) return fail(net, rc, "reload at step %" PRIu64 ": %s", net->reload_at, why);
    reload_done(net);
    net->reloads++;
    return 1;
}

/* The reload due at this step: 1 when it took place, 0 to wait, or the error. */
static int reload_step(cradle_netclient *net, uint64_t now_ns) {
    if (strcmp(cradle_reload_contract(&net->reload)->build_id, net->reload_build) == 0)
        return reload_take(net); /* the build re-announced: it reloads all the same */
    if (net->reload_deadline_ns == 0)
        net->reload_deadline_ns = now_ns + (uint64_t)net->config.reload_timeout_ms * NS_PER_MS;
    if (now_ns < net->reload_next_try_ns) return 0;
    net->reload_next_try_ns = now_ns + RELOAD_RETRY_NS;
    cradle_reload_result r = cradle_reload_now(&net->reload);
    const cradle_game_contract *loaded = cradle_reload_contract(&net->reload);
    if (r.kind == CRADLE_RELOAD_SWAPPED && strcmp(loaded->build_id, net->reload_build) == 0)
        return reload_take(net);
    if (r.kind == CRADLE_RELOAD_SWAPPED) {
        /* Another build than announced: it runs nothing until the right one
         * arrives, but the sim must not keep the closed library's contract. */
        char why[CRADLE_RELOAD_MESSAGE_MAX];
        if (cradle_sim_rebind(&net->sim, loaded, why, sizeof why) != 0)
            return fail(net, CRADLE_ERELOAD_MISMATCH, "reload: %s", why);
    }
    if (now_ns >= net->reload_deadline_ns)
        return fail(net, r.kind == CRADLE_RELOAD_REFUSED ? r.error : CRADLE_ERELOAD_MISMATCH,
                    "reload: the server runs build '%s' from step %" PRIu64 ", but %s is build '%s'%s%s "
                    "after %u ms",
                    net->reload_build, net->reload_at, net->config.game, loaded->build_id,
                    r.kind == CRADLE_RELOAD_REFUSED ? "; the new file was refused: " : "",
                    r.kind == CRADLE_RELOAD_REFUSED ? r.message : "", (unsigned)net->config.reload_timeout_ms);
    return 0;
}

/* The data file due at this step, once whole: checked against its hash and
 * applied as on the server. 1 when applied, 0 while chunks are missing, or
 * the error. */
static int data_step(cradle_netclient *net) {
    cradle_netclient_data *e = &net->data_queue[net->data_head];
    if (e->received < e->total) return 0;
    uint32_t count = 0;
    const cradle_game_data_file *files = cradle_contract_data(net->sim.contract, &count);
    const char *name = e->file < count ? files[e->file].name : "?";
    uint8_t hash[CRADLE_WIRE_DATA_HASH_BYTES];
    crypto_generichash(hash, sizeof hash, e->bytes, e->total, NULL, 0);
    if (sodium_memcmp(hash, e->hash, sizeof hash) != 0)
        return fail(net, CRADLE_EDATA, "data file %s from the server does not match its announced BLAKE2b-256",
                    name);
    cradle_data_refusal refusal;
    int rc = cradle_sim_apply_data(&net->sim, e->file, e->bytes, e->total, &refusal);
    if (rc != 0)
        return fail(net, rc, "the server applied data file %s at step %" PRIu64 ", build '%s' here refuses it: %s:%u: %s",
                    name, e->at_step, net->sim.contract->build_id, name, (unsigned)refusal.line, refusal.message);
    net->epoch = e->epoch;
    net->data_head = (net->data_head + 1) % CRADLE_NETCLIENT_DATA;
    net->data_queued--;
    net->data_applied++;
    return 1;
}

/* Whether step next_step may run: every change (reload, data file) the
 * server made before it, by epoch, is applied first. 1: run it; 0: wait
 * (an announcement or its bytes are on their way, or a build is loading);
 * or the error. */
static int change_gate(cradle_netclient *net, uint64_t now_ns) {
    uint64_t s = net->sim.next_step;
    for (;;) {
        uint8_t epoch = net->queue_epoch[s % CRADLE_NETCLIENT_QUEUE_STEPS];
        if (epoch == net->epoch) return 1;
        uint8_t next = (uint8_t)(net->epoch + 1u);
        const cradle_netclient_data *d = net->data_queued ? &net->data_queue[net->data_head] : NULL;
        if (d && d->at_step < s)
            return fail(net, CRADLE_ENET_MESSAGE, "the server announced data file %u for step %" PRIu64
                        ", which this client has already run", (unsigned)d->file + 1u, d->at_step);
        int rc = 0;
        if (d && d->at_step == s && d->epoch == next)
            rc = data_step(net);
        else if (net->reload_pending && net->reload_at == s && net->reload_epoch == next)
            rc = reload_step(net, now_ns);
        if (rc <= 0) return rc;
    }
}

static void hex16(char out[17], uint64_t v) { snprintf(out, 17, "%016" PRIx64, v); }

/* cradle_session_replay's update: one recorded snapshot into the report. */
static void write_snapshot(void *context, uint64_t step, const uint8_t *snapshot, uint32_t snapshot_size) {
    (void)step;
    fwrite(snapshot, 1, snapshot_size, context);
}

static int write_desync_report(cradle_netclient *net, uint64_t step) {
    const char *path = net->config.desync_report;
    if (!path) return 0;
    FILE *f = fopen(path, "wb");
    if (!f) return fail(net, CRADLE_EIO, "cannot write the desync report %s", path);
    uint64_t available = step + 1 - net->base_step_plus1; /* steps base+1 .. step */
    uint64_t count = net->history.count; /* the first ones, when the history filled up */
    bool truncated = count < available;
    char mine[17], theirs[17];
    hex16(mine, net->desync_mine);
    hex16(theirs, net->desync_theirs);
    fprintf(f,
            "cradle-desync 1\ngame %s\nbuild %s\nstep %" PRIu64 "\nclient_hash %s\nserver_hash %s\n"
            "base_step %" PRId64 "\nsnapshot_size %u\nsnapshots %" PRIu64 "\ntruncated %d\n"
            "state_size %u\nend\n",
            net->sim.contract->name, net->sim.contract->build_id, step, mine, theirs,
            (int64_t)net->base_step_plus1 - 1, (unsigned)net->snapshot_size, count, truncated ? 1 : 0,
            (unsigned)net->sim.contract->state_size);
    fwrite(net->base, 1, net->sim.contract->state_size, f);
    cradle_session_replay(&net->history, write_snapshot, f);
    fwrite(net->sim.state, 1, net->sim.contract->state_size, f);
    if (ferror(f) | (fclose(f) != 0)) return fail(net, CRADLE_EIO, "cannot write the desync report %s", path);
    return 0;
}

/* Checks the server's hash for the step just run, if it sent one. */
static int check_hash(cradle_netclient *net, uint64_t step) {
    uint32_t q = (uint32_t)(step % CRADLE_NETCLIENT_QUEUE_STEPS);
    if (!net->queue_has_hash[q]) return 0;
    uint64_t theirs = net->queue_hash[q];
    uint64_t mine = cradle_sim_hash(&net->sim);
    if (mine == theirs) {
        net->hashes_checked++;
        net->last_hash_step = step;
        net->last_hash = mine;
        if (!net->desync) {
            memcpy(net->base, net->sim.state, net->state_bytes);
            net->base_step_plus1 = step + 1;
            cradle_session_clear(&net->history);
        }
        return 0;
    }
    if (net->desync) return 0; /* only the first differing step is reported */
    net->desync = true;
    net->desync_step = step;
    net->desync_mine = mine;
    net->desync_theirs = theirs;
    cradle_wire_message d = {.type = CRADLE_WIRE_DESYNC,
                             .as.desync = {.step = step, .hash = mine, .expected = theirs}};
    send_message(net, &d, true);
    return write_desync_report(net, step);
}

int cradle_netclient_step(cradle_netclient *net, uint64_t now_ns) {
    if (net->error) return net->error;
    if (net->phase != CRADLE_NETCLIENT_PLAYING || net->sim.next_step >= net->received_next) return 0;
    int gate = change_gate(net, now_ns);
    if (gate <= 0) return gate;
    uint64_t s = net->sim.next_step;
    const uint8_t *snapshot = net->queue + (s % CRADLE_NETCLIENT_QUEUE_STEPS) * net->snapshot_size;
    /* Recorded since the base state (step base_step_plus1 is the session's
     * step 0); a full history keeps its first steps and the report says
     * it is truncated. */
    int recorded = cradle_session_append(&net->history, s - net->base_step_plus1, snapshot);
    assert(recorded == 0 || recorded == CRADLE_ESESSION_CAPACITY);
    (void)recorded;
    cradle_sim_step(&net->sim, snapshot);
    net->queue_first = s + 1;
    net->steps_run++;
    if (net->config.output && (net->config.output_until == 0 || s < net->config.output_until)) {
        int rc = cradle_sim_output(&net->sim);
        if (rc != 0) return fail(net, rc, "the game's output() at step %" PRIu64 ": %s", s, cradle_strerror(rc));
        if (fwrite(net->sim.output, 1, net->sim.output_size, net->config.output) != net->sim.output_size)
            return fail(net, CRADLE_EIO, "cannot write --output");
    }
    int rc = check_hash(net, s);
    cradle_predict_confirmed(net, s, snapshot);
    net->queue_step[s % CRADLE_NETCLIENT_QUEUE_STEPS] = UINT64_MAX;
    return rc == 0 ? 1 : rc;
}

void cradle_netclient_effects(cradle_netclient *net, cradle_event_queue **present,
                              cradle_event_queue **confirmed) {
    assert(net->config.effects && "effects are kept only when the config asks");
    *present = &net->effects;
    *confirmed = &net->effects_confirmed;
}

uint64_t cradle_netclient_pending(const cradle_netclient *net) {
    return net->phase == CRADLE_NETCLIENT_PLAYING ? net->received_next - net->sim.next_step : 0;
}

bool cradle_netclient_playing(const cradle_netclient *net) { return net->phase == CRADLE_NETCLIENT_PLAYING; }

bool cradle_netclient_ended_normally(const cradle_netclient *net) {
    return net->error == CRADLE_ENET_CLOSED && net->bye == CRADLE_WIRE_BYE_SHUTDOWN;
}

const uint8_t *cradle_netclient_last_snapshot(const cradle_netclient *net) {
    if (net->phase != CRADLE_NETCLIENT_PLAYING || net->sim.next_step == net->welcome.start_step) return NULL;
    /* its queue slot is free, but no later step has reused it: the queue
     * takes steps below queue_first + CRADLE_NETCLIENT_QUEUE_STEPS only */
    return net->queue + ((net->sim.next_step - 1) % CRADLE_NETCLIENT_QUEUE_STEPS) * net->snapshot_size;
}

uint32_t cradle_netclient_players_present(const cradle_netclient *net) {
    const uint8_t *snapshot = cradle_netclient_last_snapshot(net);
    if (!snapshot) return 0;
    uint32_t count = 0;
    for (uint32_t s = 0; s < net->welcome.max_players; s++) count += cradle_snapshot_present(snapshot, s);
    return count;
}

uint64_t cradle_netclient_state_hash(const cradle_netclient *net) {
    return net->sim.contract ? cradle_sim_hash(&net->sim) : 0;
}

void cradle_netclient_leave(cradle_netclient *net, uint32_t wait_ms) {
    if (!net->link.ops) return;
    cradle_wire_message bye = {.type = CRADLE_WIRE_BYE, .as.bye = {.reason = CRADLE_WIRE_BYE_LEAVING}};
    send_message(net, &bye, true);
    net->link.ops->leave(net->link.self, wait_ms);
}

void cradle_netclient_close(cradle_netclient *net) {
    cradle_secure_wipe(&net->session);
    /* A client that gives up (a timeout, an error) without leave() still
     * tells the server, when the link can, so its slot is free at once
     * rather than after the server's peer timeout. */
    if (net->link.ops) net->link.ops->close(net->link.self);
    cradle_reload_close(&net->reload);
    cradle_sim_storage_close(&net->storage);
    cradle_predict_close(&net->predict);
    free(net->effects_storage);
    net->effects_storage = NULL;
    free(net->base);
    free(net->packed);
    cradle_state_pack_free(&net->unpack);
    free(net->data_storage);
    free(net->queue);
    free(net->queue_step);
    free(net->queue_hash);
    free(net->queue_epoch);
    free(net->queue_has_hash);
    free(net->history_storage);
    /* closing twice is harmless */
    net->base = net->queue = net->history_storage = net->data_storage = net->packed = NULL;
    net->sim.contract = NULL;
    net->queue_step = net->queue_hash = NULL;
    net->queue_epoch = net->queue_has_hash = NULL;
}
