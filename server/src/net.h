#ifndef CRADLE_SERVER_NET_H
#define CRADLE_SERVER_NET_H
/*
 * net: cradle-server's network thread. It owns the ENet host: it receives
 * datagrams, validates every message with the wire codec (a malformed one is
 * counted and dropped; PING is answered here), and hands the rest to the game
 * thread through the inbound SPSC ring; it sends whatever the game thread
 * queues on the outbound ring. It keeps servicing peers whatever the game
 * thread does (paused, commanded, busy reloading), so nobody times out.
 *
 * Ring slots are fixed-size (ring.h copies whole elements) and typed (a
 * decoded message, below). Peers are named by
 * their ENet peer index plus a generation that changes on every connect, so
 * a message the game thread queued for a peer that has since left never
 * reaches the next peer at that index.
 *
 * A peer becomes "admitted" when a WELCOME is sent to it; broadcasts go to
 * admitted peers only, in ring order, so a joiner receives exactly the stream
 * that follows its WELCOME. STEPS broadcasts are not sent as they are: their
 * steps enter the stream (stream.h), which sends each peer what it has not
 * acknowledged, unreliable, and repeats what went missing; INPUT's ack moves
 * the peer on (an INPUT with no inputs, a spectator's, stops here). Once a
 * peer has sent an INPUT after its WELCOME its STEPS leave as raw datagrams
 * beside ENet, every peer's in batches (fanout.h, wire.h "Raw datagrams");
 * until then, and for a STEPS too long for one, through ENet. RELOAD,
 * WELCOME, STATE, REFUSE and BYE stay reliable. The shutdown BYE broadcast
 * is held per peer until it has confirmed every step (or stop's linger
 * ends), so clients leave with the whole session.
 *
 * Output leaves as soon as the game thread queues it (a pipe wakes the
 * thread), new steps before the inbound batch is read; input is read in
 * batches at most 4 ms apart. The game thread sleeps until its next step:
 * this thread wakes it (a second pipe) for anything but an input, and when
 * the inbound ring is a quarter full.
 *
 * Security (secure mode, the default): ENet's connect is rate-limited per
 * address (refused at once, no reply); the first message must be a plaintext
 * HELLO whose credential (token.h) verifies, else the peer is refused with a
 * counted reason and takes no slot; from then on every packet both ways is
 * sealed (secure.h) with this peer's session keys and one that fails to open
 * is counted and dropped, never decoded. A peer that has not authenticated
 * within auth_timeout_ms is dropped. No reply is larger than the HELLO that
 * caused it (REFUSE texts are cut to fit).
 *
 * Memory: cradle_server_net_open allocates everything (rings, slots, the
 * ENet pool); the thread allocates nothing: ENet's packets and commands come
 * from the pool it binds (enet_pool.h; the program initialises ENet with
 * cradle_enet_pool_initialize) and only an exhausted class falls back to malloc.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <enet/enet.h>

#include "cradle/enet_pool.h"
#include "cradle/keys.h"
#include "cradle/ratelimit.h"
#include "cradle/ring.h"
#include "cradle/secure.h"
#include "cradle/token.h"
#include "cradle/wire.h"
#include "fanout.h"
#include "stream.h"

#define CRADLE_SERVER_IN_BYTES 1024u /* largest inbound message accepted */
#define CRADLE_SERVER_OUT_BYTES 8192u /* largest outbound message */
#define CRADLE_SERVER_IN_SLOTS 1024u
#define CRADLE_SERVER_OUT_SLOTS 256u
#define CRADLE_SERVER_MAX_PEERS 4095u /* ENet's limit (ENET_PROTOCOL_MAXIMUM_PEER_ID) */
#define CRADLE_SERVER_HALF_OPEN_ROOM 32u /* peer slots beyond players and spectators, for handshakes */
#define CRADLE_SERVER_FREE_SLOTS 4u /* fewer free: the oldest unauthenticated connection makes room */
#define CRADLE_SERVER_SILENT_MS 500u /* a connection that sent nothing is dropped this soon */
#define CRADLE_SERVER_BROADCAST 0xFFFFu
#define CRADLE_SERVER_SEEN_TOKENS 4096u /* token ids remembered (usable once) */
#define CRADLE_SERVER_RATE_ENTRIES 4096u /* addresses the connect limiter tracks */
#define CRADLE_SERVER_AUTH_TIMEOUT_DEFAULT 2000u

_Static_assert(CRADLE_SERVER_OUT_BYTES >= CRADLE_SNAPSHOT_MAX + 64u, "one snapshot per STEPS");
_Static_assert(CRADLE_SERVER_IN_BYTES >= 2u + 10u + CRADLE_WIRE_INPUT_STEPS_MAX * CRADLE_GAME_MAX_INPUT_BYTES,
               "a full INPUT fits an inbound slot");

typedef enum cradle_server_in_kind {
    CRADLE_SERVER_IN_CONNECT = 1,
    CRADLE_SERVER_IN_DISCONNECT = 2,
    CRADLE_SERVER_IN_MESSAGE = 3, /* message holds what the network thread decoded */
} cradle_server_in_kind;

#define CRADLE_SERVER_IN_PAYLOAD (CRADLE_WIRE_INPUT_STEPS_MAX * CRADLE_GAME_MAX_INPUT_BYTES) /* INPUT's inputs */

/* The records on the rings are typed: a decoded message (wire.h) whose
 * bytes travel in the record's payload (cradle_wire_detach; the reader
 * attaches them again), never wire bytes. The network thread decodes what
 * arrives and encodes what leaves, once each. */

/* A client's message as the game thread takes it: the types a client
 * sends the game thread, decoded (PING stays on the network thread; a
 * server's type from a client is dropped there). */
typedef struct cradle_server_in_message {
    uint8_t type;    /* CRADLE_WIRE_HELLO, INPUT, DESYNC, REPORT or BYE */
    uint8_t version; /* the client's protocol version */
    union {
        cradle_wire_hello hello;
        cradle_wire_input input; /* its inputs in the record's payload */
        cradle_wire_desync desync;
        cradle_wire_report report;
        cradle_wire_bye_msg bye;
    } as;
} cradle_server_in_message;

/* net -> game. */
typedef struct cradle_server_in {
    uint16_t peer;
    uint8_t kind;
    bool other_version; /* MESSAGE: a HELLO of another protocol version (only type and version hold) */
    uint32_t generation;
    uint32_t rtt_ms; /* the link's round trip (rtt_us, rounded), or ENet's smoothed one before it */
    uint32_t lowest_rtt_ms; /* the lowest ENet measured */
    uint32_t rtt_us; /* the link's round trip, from the client's raw PINGs (wire.h); 0: none yet */
    uint32_t address; /* IPv4, network order (CONNECT) */
    uint16_t port; /* host order (CONNECT) */
    bool identified;    /* CONNECT: a verified token named the client (secure mode) */
    uint64_t client_id; /* ... its client id */
    cradle_server_in_message message; /* MESSAGE */
    uint8_t payload[CRADLE_SERVER_IN_PAYLOAD];
} cradle_server_in;

/* The record's message of a decoded one (INPUT's inputs copied into
 * in->payload). Returns false for a type the game thread does not take. */
bool cradle_server_in_take(cradle_server_in *in, const cradle_wire_message *m, bool other_version);

/* The game thread's view of in's message: a wire message, INPUT's inputs
 * pointing into in->payload. */
void cradle_server_in_message_of(const cradle_server_in *in, cradle_wire_message *out);

#define CRADLE_SERVER_OUT_RELIABLE 0x01u
#define CRADLE_SERVER_OUT_DISCONNECT 0x02u /* disconnect the peer after this message */
#define CRADLE_SERVER_OUT_CONTROL 0x04u /* no message: only the flags apply */

/* The bytes an outbound message's pointer refers to: a STEPS' snapshots (the
 * host packs no more than fit CRADLE_SERVER_OUT_BYTES encoded, hashes and
 * all), a STATE's or DATA's chunk. */
#define CRADLE_SERVER_OUT_PAYLOAD \
    (CRADLE_SERVER_OUT_BYTES - CRADLE_WIRE_STEPS_HEADER_BYTES - CRADLE_WIRE_STEPS_MAX * CRADLE_WIRE_STEPS_HASH_BYTES)
_Static_assert(CRADLE_SERVER_OUT_PAYLOAD >= CRADLE_WIRE_STATE_CHUNK_MAX &&
                   CRADLE_SERVER_OUT_PAYLOAD >= CRADLE_WIRE_DATA_CHUNK_MAX && CRADLE_SERVER_OUT_PAYLOAD >= CRADLE_SNAPSHOT_MAX,
               "a chunk or a snapshot fits an outbound record");

/* game -> net. A STEPS message's first_step is the whole step number (the
 * wire sends its low 32 bits). */
typedef struct cradle_server_out {
    uint16_t peer; /* or CRADLE_SERVER_BROADCAST */
    uint8_t flags;
    uint8_t reserved;
    uint32_t generation;
    cradle_wire_message message; /* unless CONTROL */
    uint8_t payload[CRADLE_SERVER_OUT_PAYLOAD];
} cradle_server_out;

typedef struct cradle_server_net_config {
    const char *bind_address; /* NULL or "" = any */
    uint16_t port;
    uint32_t max_peers; /* 1..CRADLE_SERVER_MAX_PEERS: cradle_server_peer_table_size */
    uint32_t timeout_ms; /* a peer heard nothing from for this long is dropped; 0 = 5000 */
    /* Security (see "Security" below). keys NULL = insecure: plaintext, no
     * tokens (the caller allows it on loopback only). */
    const cradle_keys *keys;
    const uint8_t (*issuers)[CRADLE_TOKEN_KEY_BYTES]; /* trusted token issuers */
    uint32_t issuer_count;                           /* 1..CRADLE_TOKEN_ISSUERS_MAX with keys */
    const char *build_id;      /* the build tokens must name */
    const char *game;          /* the game hosted (named in a refusal to a client of another) */
    uint32_t auth_timeout_ms;  /* HELLO must authenticate within this; 0 = 2000 */
    uint32_t connect_rate;     /* connects a second per address; 0 = 2 */
    uint32_t connect_burst;    /* connects at once per address; 0 = 5 */
    uint32_t snapshot_size;    /* the game's snapshot bytes (stream.h), required */
} cradle_server_net_config;

typedef struct cradle_server_net_stats {
    atomic_uint_fast64_t bytes_in, bytes_out, packets_in, packets_out;
    atomic_uint_fast64_t dropped_malformed; /* messages that failed to decode */
    atomic_uint_fast64_t dropped_garbage; /* datagrams neither ENet's nor raw: no peer, no CONNECT */
    atomic_uint_fast64_t dropped_in_full; /* the inbound ring was full */
    atomic_uint_fast64_t dropped_stale; /* queued for a peer that had left */
    atomic_uint_fast64_t silent_dropped; /* peers dropped: nothing heard from them for timeout_ms */
    atomic_uint_fast64_t raw_pings;     /* raw PINGs answered (wire.h) */
    atomic_uint_fast64_t raw_dropped;   /* raw datagrams not from a peer, or that did not open */
    atomic_uint_fast64_t raw_steps;     /* STEPS sent as raw datagrams (fanout.h) */
    atomic_uint_fast64_t raw_batches;   /* ... in this many sendmmsg calls */
    atomic_uint_fast64_t raw_refused;   /* ... and refused by the kernel (a full socket buffer) */
    /* the step stream (stream.h) */
    atomic_uint_fast64_t steps_repeated; /* steps sent again: redundancy and repairs */
    atomic_uint_fast64_t repairs;        /* repairs begun because a peer's ack stalled */
    atomic_uint_fast64_t fell_behind;    /* peers dropped: their ack left the history */
    /* security */
    atomic_uint_fast64_t rate_limited; /* connects refused by the per-address limit */
    atomic_uint_fast64_t auth_failed;  /* sealed packets that did not open: short, long, forged */
    atomic_uint_fast64_t replayed;     /* opened but replayed or behind the window */
    atomic_uint_fast64_t unauthenticated; /* packets before a valid HELLO that were not one */
    atomic_uint_fast64_t auth_timeouts;   /* peers dropped for not authenticating in time */
    atomic_uint_fast64_t evicted_unauthenticated; /* the oldest half-open peer, dropped for room */
    atomic_uint_fast64_t rate_refunded; /* connects given back their token: they authenticated */
    atomic_uint_fast64_t rate_evicted;  /* addresses the rate limit's full table forgot for room */
    atomic_uint_fast64_t bad_credential;  /* HELLO credential too short or a degenerate key */
    atomic_uint_fast64_t tokens_accepted;
    atomic_uint_fast64_t token_malformed, token_signature, token_server, token_build, token_future,
        token_lifetime, token_expired, token_reused, token_cache_full;
} cradle_server_net_stats;

/* Per-peer authentication state (net thread). */
typedef enum cradle_server_auth {
    CRADLE_SERVER_AUTH_NONE = 0, /* connected, no valid HELLO yet */
    CRADLE_SERVER_AUTH_OK,       /* token verified: every packet is sealed */
    CRADLE_SERVER_AUTH_CLOSING,  /* refused: packets ignored until it leaves */
} cradle_server_auth;

/* What the net thread keeps of one peer slot (ENet's peer index). */
typedef struct cradle_server_net_peer {
    uint32_t generation;
    bool admitted;
    bool bye_sent;
    uint8_t auth;          /* cradle_server_auth */
    bool announced;        /* the game thread saw its CONNECT */
    bool identified;       /* its token verified: client_id holds */
    bool heard;            /* it sent a packet since its CONNECT */
    bool raw;              /* it sent an INPUT since its WELCOME: its steps go raw (fanout.h) */
    uint16_t hello_bytes;  /* size of its HELLO packet: replies' cap */
    uint64_t client_id;
    uint64_t connected_ms;
    uint64_t heard_ms;     /* the last ENet packet or raw PING from it (expire_silent) */
    uint32_t rtt_us;       /* the link's round trip the client measured and sent in its raw PING */
    cradle_secure session;
} cradle_server_net_peer;

typedef struct cradle_server_net {
    cradle_ring in; /* net produces, game consumes */
    cradle_ring out; /* game produces, net consumes */
    void *in_storage, *out_storage;
    ENetHost *host;
    pthread_t thread;
    bool thread_started;
    atomic_bool stop;
    int wake_fd[2]; /* pipe: the game thread writes a byte after queuing output */
    int game_wake_fd[2]; /* pipe: the net thread writes a byte when the game thread
                            should not wait for its next step to read the inbound ring */
    uint32_t timeout_ms;
    /* net thread only */
    uint64_t now_ns;   /* the turn's time, CLOCK_MONOTONIC (read_clock in net.c) */
    uint64_t now_unix; /* ... and the wall clock's, seconds (tokens' lifetimes) */
    uint32_t linger_ms;        /* cradle_server_net_finish's */
    uint64_t linger_start_ms, linger_limit_ms;
    uint32_t max_peers;
    cradle_server_net_peer *peer; /* max_peers of them, allocated at open */
    cradle_stream stream; /* the step history and each peer's place in it */
    uint8_t stream_message[CRADLE_WIRE_MESSAGE_MAX];
    cradle_fanout fanout; /* the stream's raw datagrams, in batches */
    cradle_fanout_stats fanout_accounted; /* what account() has added to the stats */
    /* The shutdown BYE waits until each peer confirmed the last steps. */
    uint8_t bye[CRADLE_WIRE_TEXT_MAX + 16];
    uint32_t bye_length;
    /* Security. Secure mode: a peer is announced to the game thread (CONNECT
     * then its HELLO) only once its token verified; until then it holds no
     * slot and receives nothing but ENet's own handshake. The verifier and
     * the rate limiter live on the net thread; the game thread only reads
     * the stats and posts a new build through set_build. */
    bool secure;
    cradle_keys keys;
    uint32_t auth_timeout_ms;
    cradle_token_verifier verifier;
    cradle_token_seen *seen;                /* CRADLE_SERVER_SEEN_TOKENS, allocated */
    cradle_ratelimit ratelimit;
    cradle_ratelimit_entry *rate_entries;   /* CRADLE_SERVER_RATE_ENTRIES, allocated */
    pthread_mutex_t build_lock;
    bool build_lock_ready;
    atomic_bool build_changed;
    char build_pending[CRADLE_GAME_BUILD_ID_MAX + 1];
    char game[CRADLE_GAME_NAME_MAX + 1]; /* the game's name: unchanged across reloads */
    uint8_t encoded[CRADLE_SERVER_OUT_BYTES]; /* an outbound message, encoded */
    uint8_t sealed[CRADLE_SERVER_OUT_BYTES + CRADLE_SECURE_OVERHEAD];
    uint8_t opened[CRADLE_SERVER_IN_BYTES];
    cradle_server_in scratch_in;
    cradle_server_out scratch_out;
    cradle_server_net_stats stats;
    cradle_enet_pool pool; /* ENet's memory on the net thread (enet_pool.h), sized for max_peers */
} cradle_server_net;

/* The peer slots a session needs: its players and spectators, room to
 * refuse politely and for handshakes under a flood of half-open
 * connections; at most CRADLE_SERVER_MAX_PEERS. */
uint32_t cradle_server_peer_table_size(uint32_t players, uint32_t spectators);

/* Zeroes net and allocates its two rings, without any socket (a test drives
 * the rings itself). Returns 0 or CRADLE_ENOMEM. */
int cradle_server_net_init_rings(cradle_server_net *net);

/* Allocates the rings and binds the ENet host. Returns 0, CRADLE_ENOMEM,
 * CRADLE_EINVAL (bad address) or CRADLE_ENET_INIT (the port could not be
 * bound). net must be aligned to CRADLE_RING_CACHE_LINE (aligned_alloc). */
int cradle_server_net_open(cradle_server_net *net, const cradle_server_net_config *config);

/* Game thread: wakes the network thread after queuing output, so it leaves
 * at once instead of at the next millisecond tick. */
void cradle_server_net_wake(cradle_server_net *net);

/* Game thread, after a reload: tokens must now name build_id (the net thread
 * applies it before the next token it verifies). */
void cradle_server_net_set_build(cradle_server_net *net, const char *build_id);

/* Starts the thread. Returns 0 or CRADLE_ENET_INIT. */
int cradle_server_net_start(cradle_server_net *net);

/* Asks the thread to end and joins it; then sends what is queued, lets every
 * peer confirm the last steps and disconnects it politely, waiting at most
 * linger_ms plus two of the slowest peer's round trips (5 s at most):
 * cradle_server_net_finish and cradle_server_net_linger on the clock. */
void cradle_server_net_stop(cradle_server_net *net, uint32_t linger_ms);

/* The thread, a turn at a time, for a caller that runs the network without
 * it (the tests' harness, on a test clock): the thread is one read of the
 * clocks and one turn, then a wait. A turn sends what the game thread
 * queued, reads what arrived (up to EVENTS_PER_TURN events), expires the
 * handshakes that took too long and flushes. now_ns is CLOCK_MONOTONIC's
 * (or the caller's clock: every decision the turn takes reads it, none
 * reads another), now_unix the wall clock's seconds (tokens' lifetimes);
 * ENet keeps its own clock (enet_time_get). Binds net's ENet pool to the
 * calling thread (cradle_enet_pool_bind(NULL) undoes it); one thread at a
 * time, never beside a started thread. Returns how long the thread may
 * wait for the next turn, in ms (0: more arrived than one turn takes), and
 * in *watch_socket whether a datagram should end that wait (after a quiet
 * turn) or only the game thread's wake (after a busy one: the batch). */
uint32_t cradle_server_net_turn(cradle_server_net *net, uint64_t now_ns, uint64_t now_unix, bool *watch_socket);

/* The end, a round at a time (what stop does after joining the thread):
 * finish sends what is queued and starts the linger at now_ns; each
 * linger round holds each peer's BYE until it confirmed the last steps
 * and reads the acks, and returns false once every peer has gone or the
 * linger is over (then everything is flushed). */
void cradle_server_net_finish(cradle_server_net *net, uint32_t linger_ms, uint64_t now_ns);
bool cradle_server_net_linger(cradle_server_net *net, uint64_t now_ns);

/* Frees everything (after stop). Safe on a zeroed struct. */
void cradle_server_net_close(cradle_server_net *net);

#endif
