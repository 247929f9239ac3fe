#ifndef CRADLE_WIRE_H
#define CRADLE_WIRE_H
/*
 * wire: the messages cradle-server and its clients exchange, and their codec.
 *
 * The codec is pure: it turns a message struct into plaintext bytes and back,
 * through the bounds-checked little-endian cursor of input.h. It knows nothing
 * of ENet or of encryption. The Security layer later wraps each encoded
 * message in an AEAD envelope (nonce, ciphertext, tag) and unwraps it before
 * cradle_wire_decode(); this layer does not change for it. HELLO carries an
 * opaque credential field for the join token that layer will check.
 *
 * Every message starts with a 2-byte header:
 *
 *   u8 type      CRADLE_WIRE_HELLO .. CRADLE_WIRE_DATA
 *   u8 version   CRADLE_WIRE_VERSION (the protocol version)
 *
 * followed by the type's fields, all little-endian, no padding:
 *
 *   HELLO   c->s  u8 flags (bit 0: spectator; other bits 0), u8 requested_slot
 *                 (CRADLE_WIRE_ANY_SLOT or a slot to rejoin), str8 game name,
 *                 str8 build id, u16 credential length + bytes (<= CREDENTIAL_MAX)
 *   WELCOME s->c  u8 slot (or CRADLE_WIRE_SPECTATOR), u8 players (limit of this
 *                 session), u8 max_players, u8 input_bytes, u32 state_size,
 *                 u32 steps_per_second, u32 source_frames_per_second, u64 seed,
 *                 u16 input_delay, u32 hash_interval, u64 start_step,
 *                 u8 epoch (of start_step, as in STEPS), u8 flags (bit 0: a
 *                 state block follows in STATE messages), str8 game name,
 *                 str8 build id
 *   REFUSE  s->c  u8 reason (cradle_wire_refusal), str8 text
 *   INPUT   c->s  u64 ack (the first step the client has not received; it
 *                 holds every step before it), u64 first_step, u8 count
 *                 (0..INPUT_STEPS_MAX; 0: only the ack, as spectators send),
 *                 u8 input_bytes (1..32), count * input_bytes bytes (step
 *                 first_step + i at i * input_bytes)
 *   STEPS   s->c  u32 first_step (its low 32 bits: cradle_wire_step_expand),
 *                 u8 epoch (changes the server had made when these steps
 *                 ran, mod 256: reloads and data files applied; each is
 *                 announced by a RELOAD or DATA before the step it applies
 *                 to, and a client runs no step of a newer epoch before it
 *                 has applied the announcements), u8 count (1..STEPS_MAX), u8 hash_count (0..count),
 *                 hash_count * (u8 offset, u64 hash) with offsets strictly
 *                 increasing below count (the hash of step first_step + offset),
 *                 then the snapshots: the rest of the message, count equal
 *                 parts of 1..SNAPSHOT_MAX bytes (<= STEPS_BYTES_MAX in all)
 *   STATE   s->c  u64 step, u64 hash, u32 total, u32 offset, u16 length, bytes;
 *                 offset + length <= total, length >= 1, total <= STATE_PACKED_MAX;
 *                 the chunks of the packed state (state_pack.h: one zstd
 *                 frame of the whole state, total bytes), hash its unpacked
 *                 state's
 *   RELOAD  s->c  u64 at_step, u8 epoch (of the steps from at_step on, as in
 *                 STEPS), str8 build id
 *   PING    both  u64 echo, u32 rtt_us (the sender's last measure of the
 *                 round trip to the receiver, microseconds; 0: none yet)
 *   PONG    both  u64 echo (the PING's value, returned unchanged), u32
 *                 hold_us (how long the replier held the PING: from its
 *                 arrival at the replier's socket to the reply, us)
 *   BYE     both  u8 reason (cradle_wire_bye), str8 text
 *   DESYNC  c->s  u64 step, u64 hash (the client's), u64 expected (the server's)
 *   DATA    s->c  u64 at_step (applied before it), u8 epoch (as RELOAD's),
 *                 u8 file (its index in the
 *                 build's data files), u32 total (0..CRADLE_GAME_DATA_MAX_BYTES),
 *                 32 bytes BLAKE2b-256 of the whole file, u32 offset, u16
 *                 length, bytes: one chunk of the file; offset + length <=
 *                 total, length 1..DATA_CHUNK_MAX (0 only for an empty file),
 *                 chunks sent in order from offset 0
 *   DELAY   s->c  u16 input_delay (1..INPUT_DELAY_MAX): a player's input delay
 *                 from now on (the server adapts it to how early its inputs
 *                 arrive); the client keeps sending one input a step, each
 *                 step's once, for (last step received) + the new delay
 *   REPORT  c->s  a player's prediction figures (client/net/predict.h), once
 *                 a second, unreliable: u16 window (0..64; 0: the player is
 *                 in lockstep, and every figure is 0), u16 ahead (<=
 *                 window), u32 steps (confirmed since it joined), u32
 *                 rollbacks, u32 rollback_steps, u16 rollback_max (<=
 *                 window), u32 corrections (<= rollbacks), u32
 *                 own_overridden (<= steps); a count past 2^32 - 1 stays
 *                 there
 *
 * Raw datagrams. Three messages travel outside ENet, as raw datagrams on
 * ENet's own sockets: CRADLE_WIRE_RAW_MAGIC, then the message (sealed, in
 * secure mode, on the unordered lane; cradle/raw_datagram.h), at most 1,232
 * bytes in all. Each side takes them in ENet's intercept hook the moment it
 * reads the datagram, before ENet sees it; only the peer's own are taken
 * (the client checks the server's address, the server looks the source up
 * among its peers; in secure mode the datagram must open with that peer's
 * keys and pass its replay window), and everything else with the magic is
 * dropped and counted.
 *   STEPS  s->c  the step stream (server/src/stream.h), sent to every
 *                admitted peer in batches (one sendmmsg for up to 64 peers'
 *                datagrams) once the peer has sent its first INPUT after
 *                its WELCOME, which proves it reads the stream; before that
 *                and for a STEPS too long to travel raw, through ENet
 *                (unsequenced). A client takes both alike: the stream is
 *                unordered and repaired by acks either way.
 *   PING   c->s  and PONG s->c: the link's round trip. The server answers at
 *                once with the kernel's receive timestamp, its hold_us the
 *                time the PING waited in its socket, and the client
 *                subtracts it, so the round trip it measures is the link's,
 *                not either side's sleep. Its PINGs carry the last measure
 *                (rtt_us) to the server, for status and the input delay. A
 *                PONG is exactly as long as its PING: nothing to amplify.
 * The server sends raw STEPS only to peers admitted through ENet's
 * handshake (and, in secure mode, a verified token), at the address ENet
 * holds for them: a forged source address earns nothing.
 *
 * str8 is a u8 length then that many bytes of printable ASCII (0x20..0x7e),
 * no NUL. A message is exactly as long as its fields: trailing bytes are an
 * error. Hashes are cradle_hash64 of the state block after the step ran, so
 * the hash of step s is the state that step s + 1 starts from. A STATE block
 * is the state at the start of `step` (steps 0..step-1 have run), packed.
 *
 * Decoding validates every field and never asserts: a bad one returns
 * CRADLE_ENET_MESSAGE (CRADLE_ENET_VERSION for a version other than
 * CRADLE_WIRE_VERSION) and sets message->problem to a static sentence naming
 * the field. Encoding checks the same rules and returns CRADLE_EINVAL for a
 * message that would not decode, or CRADLE_EFULL when out is too small, so
 * whatever encodes also decodes.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"
#include "cradle/game_abi.h"
#include "cradle/input.h"

#define CRADLE_WIRE_VERSION 7u
#define CRADLE_WIRE_HEADER_BYTES 2u

#define CRADLE_WIRE_ANY_SLOT 0xFFu      /* HELLO: any free slot */
#define CRADLE_WIRE_SPECTATOR 0xFFu     /* WELCOME: no slot, watching */
#define CRADLE_WIRE_CREDENTIAL_MAX 256u /* bytes of the opaque join credential */
#define CRADLE_WIRE_TEXT_MAX 200u       /* bytes of a REFUSE or BYE text */
#define CRADLE_WIRE_INPUT_STEPS_MAX 16u /* steps of one INPUT (redundancy window) */
#define CRADLE_WIRE_STEPS_MAX 64u       /* snapshots in one STEPS */
#define CRADLE_WIRE_STEPS_BYTES_MAX 16384u /* snapshot bytes in one STEPS */
#define CRADLE_WIRE_STATE_CHUNK_MAX 1024u /* bytes of state per STATE: one UDP datagram */
#define CRADLE_WIRE_STATE_MAX (256u * 1024u * 1024u) /* largest state block accepted */
/* ... packed (state_pack.h): zstd's bound on a frame of STATE_MAX bytes is
 * STATE_MAX + STATE_MAX / 256 and a header */
#define CRADLE_WIRE_STATE_PACKED_MAX (CRADLE_WIRE_STATE_MAX + CRADLE_WIRE_STATE_MAX / 128u)
#define CRADLE_WIRE_DATA_CHUNK_MAX 1024u  /* bytes of a data file per DATA */
#define CRADLE_WIRE_DATA_HASH_BYTES 32u   /* BLAKE2b-256 of a data file */
#define CRADLE_WIRE_INPUT_DELAY_MAX 1000u /* steps of a DELAY */
/* ENet's own peer timeout, at both ends (enet_peer_timeout's minimum and
 * maximum): the longest time ENet's clock compares (a day), so in effect
 * none. ENet's timeout follows its reliable packets (its pings among them),
 * whose retries wait twice as long each time one goes unacknowledged: on a
 * slow lossy link (a second each way, a quarter lost) one ping in sixty
 * outlived a 60 s timeout while the connection carried steps and inputs
 * all along. Each end ends a connection itself, when nothing arrives from
 * the other for its own timeout (the server's --timeout, the client's
 * silence timeout); a client's raw PING a second keeps a quiet session
 * (paused, commanded) alive. */
#define CRADLE_WIRE_ENET_TIMEOUT_MS 86399999u

/* A raw datagram's first bytes. ENet would read the first two as a header
 * naming peer 0xFFF, which only a CONNECT does: no datagram a server sends a
 * client over ENet begins so. */
#define CRADLE_WIRE_RAW_MAGIC "\x0f\xff" "CRDG"
#define CRADLE_WIRE_RAW_MAGIC_BYTES 6u

/* The largest encoded message: a full STEPS with a hash for every step.
 * Receivers drop anything longer before decoding. */
#define CRADLE_WIRE_STEPS_HEADER_BYTES (CRADLE_WIRE_HEADER_BYTES + 4u + 1u + 1u + 1u)
#define CRADLE_WIRE_STEPS_HASH_BYTES 9u /* one (offset, hash) entry */
#define CRADLE_WIRE_MESSAGE_MAX                                                          \
    (CRADLE_WIRE_STEPS_HEADER_BYTES + CRADLE_WIRE_STEPS_MAX * CRADLE_WIRE_STEPS_HASH_BYTES + \
     CRADLE_WIRE_STEPS_BYTES_MAX)

typedef enum cradle_wire_type {
    CRADLE_WIRE_HELLO = 1,
    CRADLE_WIRE_WELCOME = 2,
    CRADLE_WIRE_REFUSE = 3,
    CRADLE_WIRE_INPUT = 4,
    CRADLE_WIRE_STEPS = 5,
    CRADLE_WIRE_STATE = 6,
    CRADLE_WIRE_RELOAD = 7,
    CRADLE_WIRE_PING = 8,
    CRADLE_WIRE_PONG = 9,
    CRADLE_WIRE_BYE = 10,
    CRADLE_WIRE_DESYNC = 11,
    CRADLE_WIRE_DATA = 12,
    CRADLE_WIRE_DELAY = 13,
    CRADLE_WIRE_REPORT = 14,
} cradle_wire_type;

#define CRADLE_WIRE_TYPE_FIRST CRADLE_WIRE_HELLO
#define CRADLE_WIRE_TYPE_LAST CRADLE_WIRE_REPORT

typedef enum cradle_wire_refusal {
    CRADLE_WIRE_REFUSE_FULL = 1,     /* no free slot (or the requested one is taken) */
    CRADLE_WIRE_REFUSE_PROTOCOL = 2, /* protocol version differs */
    CRADLE_WIRE_REFUSE_GAME = 3,     /* another game */
    CRADLE_WIRE_REFUSE_BUILD = 4,    /* another build of the game */
    CRADLE_WIRE_REFUSE_AUTH = 5,     /* credential missing, invalid or expired */
    CRADLE_WIRE_REFUSE_REQUEST = 6,  /* malformed or unexpected message */
    CRADLE_WIRE_REFUSE_BUSY = 7,     /* server cannot take a join now (retry later) */
} cradle_wire_refusal;
#define CRADLE_WIRE_REFUSE_LAST CRADLE_WIRE_REFUSE_BUSY

typedef enum cradle_wire_bye {
    CRADLE_WIRE_BYE_LEAVING = 1,  /* the sender closes normally */
    CRADLE_WIRE_BYE_SHUTDOWN = 2, /* the server is stopping */
    CRADLE_WIRE_BYE_KICKED = 3,   /* an operator removed the client */
    CRADLE_WIRE_BYE_TIMEOUT = 4,  /* the peer went silent */
    CRADLE_WIRE_BYE_PROTOCOL = 5, /* the peer sent something invalid */
} cradle_wire_bye;
#define CRADLE_WIRE_BYE_LAST CRADLE_WIRE_BYE_PROTOCOL

/* The data of the ENet DISCONNECT a server sends, instead of any message,
 * to a connection its per-address connect limit turned away (it is smaller
 * than the CONNECT it answers: nothing to amplify). A client waits and
 * tries again. */
#define CRADLE_WIRE_DISCONNECT_RATE_LIMITED 0x43524c31u /* "CRL1" */
/* ... and to the oldest connection that has not authenticated yet, when the
 * peer table is nearly full (a flood of half-open connections must not keep
 * a client with a valid token out). A client waits and tries again. */
#define CRADLE_WIRE_DISCONNECT_BUSY 0x43425331u /* "CBS1" */

#define CRADLE_WIRE_HELLO_SPECTATOR 0x01u
#define CRADLE_WIRE_WELCOME_STATE_FOLLOWS 0x01u

typedef struct cradle_wire_hello {
    bool spectator;
    uint8_t requested_slot; /* CRADLE_WIRE_ANY_SLOT or < CRADLE_GAME_MAX_PLAYERS */
    char game[CRADLE_GAME_NAME_MAX + 1];
    char build_id[CRADLE_GAME_BUILD_ID_MAX + 1];
    uint16_t credential_size;
    uint8_t credential[CRADLE_WIRE_CREDENTIAL_MAX];
} cradle_wire_hello;

typedef struct cradle_wire_welcome {
    uint8_t slot;        /* < max_players, or CRADLE_WIRE_SPECTATOR */
    uint8_t players;     /* 1..max_players: this session's player limit */
    uint8_t max_players; /* the contract's, 1..CRADLE_GAME_MAX_PLAYERS */
    uint8_t input_bytes; /* the contract's, 1..CRADLE_GAME_MAX_INPUT_BYTES */
    uint32_t state_size; /* 1..CRADLE_WIRE_STATE_MAX */
    uint32_t steps_per_second;
    uint32_t source_frames_per_second; /* >= 1, divides steps_per_second */
    uint64_t seed;
    uint16_t input_delay;   /* steps */
    uint32_t hash_interval; /* K >= 1: a hash every K steps */
    uint64_t start_step;    /* first step the client receives in STEPS */
    uint8_t epoch;          /* the build epoch of start_step */
    bool state_follows;     /* STATE messages for start_step follow */
    char game[CRADLE_GAME_NAME_MAX + 1];
    char build_id[CRADLE_GAME_BUILD_ID_MAX + 1];
} cradle_wire_welcome;

typedef struct cradle_wire_refuse {
    uint8_t reason; /* cradle_wire_refusal */
    char text[CRADLE_WIRE_TEXT_MAX + 1];
} cradle_wire_refuse;

/* Pointers of decoded INPUT, STEPS and STATE point into the decoded buffer
 * and live as long as it. */
typedef struct cradle_wire_input {
    uint64_t ack;        /* every step below it has reached the client */
    uint64_t first_step;
    uint8_t count;       /* 0..CRADLE_WIRE_INPUT_STEPS_MAX */
    uint8_t input_bytes; /* 1..CRADLE_GAME_MAX_INPUT_BYTES */
    const uint8_t *inputs; /* count * input_bytes (NULL when count is 0) */
} cradle_wire_input;

typedef struct cradle_wire_hash {
    uint8_t offset; /* the step is first_step + offset */
    uint64_t hash;
} cradle_wire_hash;

typedef struct cradle_wire_steps {
    uint64_t first_step;    /* encode: its low 32 bits are sent; decode: those 32 bits */
    uint8_t epoch;
    uint8_t count;          /* 1..CRADLE_WIRE_STEPS_MAX */
    uint16_t snapshot_size; /* 1..CRADLE_SNAPSHOT_MAX (decode: derived from the length) */
    const uint8_t *snapshots; /* count * snapshot_size */
    uint8_t hash_count;     /* 0..count */
    cradle_wire_hash hashes[CRADLE_WIRE_STEPS_MAX];
} cradle_wire_steps;

typedef struct cradle_wire_state {
    uint64_t step;
    uint64_t hash;   /* hash of the whole block */
    uint32_t total;  /* bytes of the whole packed block, 1..CRADLE_WIRE_STATE_PACKED_MAX */
    uint32_t offset; /* of this chunk */
    uint16_t length; /* 1..CRADLE_WIRE_STATE_CHUNK_MAX */
    const uint8_t *bytes;
} cradle_wire_state;

typedef struct cradle_wire_reload {
    uint64_t at_step; /* the first step the new build runs */
    uint8_t epoch;    /* the epoch this reload brings: the steps' from at_step on */
    char build_id[CRADLE_GAME_BUILD_ID_MAX + 1];
} cradle_wire_reload;

typedef struct cradle_wire_data {
    uint64_t at_step;  /* the step the data is applied before */
    uint8_t epoch;     /* the epoch this change brings, as RELOAD's */
    uint8_t file;      /* < CRADLE_GAME_MAX_DATA_FILES */
    uint32_t total;    /* bytes of the whole file, 0..CRADLE_GAME_DATA_MAX_BYTES */
    uint8_t hash[CRADLE_WIRE_DATA_HASH_BYTES];
    uint32_t offset;   /* of this chunk */
    uint16_t length;   /* 1..CRADLE_WIRE_DATA_CHUNK_MAX; 0 only when total is 0 */
    const uint8_t *bytes;
} cradle_wire_data;

typedef struct cradle_wire_ping {
    uint64_t echo;
    uint32_t rtt_us;  /* PING */
    uint32_t hold_us; /* PONG */
} cradle_wire_ping;

typedef struct cradle_wire_bye_msg {
    uint8_t reason; /* cradle_wire_bye */
    char text[CRADLE_WIRE_TEXT_MAX + 1];
} cradle_wire_bye_msg;

typedef struct cradle_wire_desync {
    uint64_t step;
    uint64_t hash;
    uint64_t expected;
} cradle_wire_desync;

typedef struct cradle_wire_report {
    uint16_t window, ahead;
    uint32_t steps, rollbacks, rollback_steps;
    uint16_t rollback_max;
    uint32_t corrections, own_overridden;
} cradle_wire_report;

#define CRADLE_WIRE_REPORT_WINDOW_MAX 64u

typedef struct cradle_wire_delay {
    uint16_t input_delay; /* 1..CRADLE_WIRE_INPUT_DELAY_MAX */
} cradle_wire_delay;

typedef struct cradle_wire_message {
    uint8_t type;    /* cradle_wire_type */
    uint8_t version; /* set by decode; encode always writes CRADLE_WIRE_VERSION */
    const char *problem; /* decode: NULL, or why the bytes were refused (static) */
    union {
        cradle_wire_hello hello;
        cradle_wire_welcome welcome;
        cradle_wire_refuse refuse;
        cradle_wire_input input;
        cradle_wire_steps steps;
        cradle_wire_state state;
        cradle_wire_reload reload;
        cradle_wire_ping ping; /* PING and PONG */
        cradle_wire_bye_msg bye;
        cradle_wire_desync desync;
        cradle_wire_data data;
        cradle_wire_delay delay;
        cradle_wire_report report;
    } as;
} cradle_wire_message;

/* Encodes message into out (capacity bytes) and stores the length in
 * *written. Returns 0, CRADLE_EINVAL for a field that breaks the rules above
 * (nothing useful is written), or CRADLE_EFULL when capacity is too small. */
CRADLE_MUST_CHECK int cradle_wire_encode(void *out, size_t capacity, size_t *written,
                                         const cradle_wire_message *message);

/* Decodes size bytes into *message. Returns 0, CRADLE_ENET_VERSION (type and
 * version are set so a server can answer REFUSE protocol), or
 * CRADLE_ENET_MESSAGE with message->problem naming the bad field. Decoded
 * pointers point into data. */
CRADLE_MUST_CHECK int cradle_wire_decode(cradle_wire_message *message, const void *data,
                                         size_t size);

/* A message that owns its bytes, to cross a ring between threads as a typed
 * record: cradle_wire_detach copies the bytes the message's pointer field
 * refers to (INPUT's inputs, STEPS' snapshots, STATE's and DATA's bytes)
 * into payload (capacity bytes) and clears the pointer, so the record holds
 * no address; cradle_wire_attach points that field at the record's payload
 * again on the side that reads it. Detach returns the bytes copied, or
 * SIZE_MAX when they do not fit (the message is unchanged). */
size_t cradle_wire_detach(cradle_wire_message *message, void *payload, size_t capacity);
void cradle_wire_attach(cradle_wire_message *message, const void *payload);

/* The step whose low 32 bits are low nearest to reference (at most 2^31
 * away; never below 0 nor above UINT64_MAX): how a receiver turns STEPS'
 * first_step back into a step number, with its next expected step as the
 * reference. */
uint64_t cradle_wire_step_expand(uint64_t reference, uint32_t low);

/* The name of a message type ("steps"), "unknown" otherwise. */
const char *cradle_wire_type_name(int type);

/* The name of a refusal reason ("full", "protocol", "game", "build", "auth",
 * "request", "busy"), "unknown" otherwise. */
const char *cradle_wire_refusal_name(int reason);

/* The name of a BYE reason ("leaving", "shutdown", ...), "unknown" otherwise. */
const char *cradle_wire_bye_name(int reason);

/* Copies a NUL-terminated string into a wire text field of capacity bytes,
 * truncating, and replacing bytes outside 0x20..0x7e with '?'. */
void cradle_wire_set_text(char *field, size_t capacity, const char *text);

#endif
