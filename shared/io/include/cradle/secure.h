#ifndef CRADLE_SECURE_H
#define CRADLE_SECURE_H
/*
 * secure: the per-connection encrypted, authenticated channel.
 *
 * Handshake (netcode's model adapted to ENet; HELLO is the first message
 * after ENet's connect and the only plaintext one):
 *   1. The client makes a fresh ephemeral X25519 key pair for this
 *      connection (cradle_secure_keypair) and sends its public key in HELLO
 *      after the join token (token.h, cradle_token_credential).
 *   2. The server verifies the token, then derives its session keys from its
 *      long-term kx key and the client's ephemeral key
 *      (cradle_secure_server_init); the client derives the mirror keys from
 *      its ephemeral key and the server's pinned public key
 *      (cradle_secure_client_init). Every later message, both ways, is
 *      sealed. Only the holder of the server's secret key derives the same
 *      keys, so the server's first sealed message (WELCOME or REFUSE) proves
 *      its identity: the client drops anything that does not open.
 *
 * PACKET: u64 counter (little-endian) || ciphertext || 16-byte Poly1305 tag.
 * The counter's top bit names its lane: 0 unordered (datagrams that may be
 * lost, repeated or reordered: ENet's unsequenced packets), 1 ordered (ENet's
 * reliable packets, which arrive once and in order but can be held back
 * behind a retransmission for as long as many unordered packets pass). Each
 * lane has its own counter and replay window, so a reliable message sealed
 * long before it is delivered is never mistaken for an old one.
 * ChaCha20-Poly1305 (IETF) with a per-direction key and a 12-byte nonce of
 * the counter (8 bytes LE), the sender's role byte ('C' or 'S') and 3 zero
 * bytes. Associated data (11 bytes): the u64 context (e.g. ENet's connectID,
 * or 0), CRADLE_SECURE_FORMAT, CRADLE_WIRE_VERSION, and the sender's role.
 *
 * Receiving: the length is checked, then the tag; only after authentication
 * succeeds is the counter checked against its lane's CRADLE_SECURE_WINDOW-entry
 * sliding replay window (duplicates and counters behind the window are
 * dropped; any counter ahead is accepted and slides it). A packet that fails
 * is dropped, counted, and never reaches the wire decoder.
 *
 * Nonces never repeat under a key: counters only increase, sending refuses
 * past counter_limit in a lane (at most and by default 2^63:
 * CRADLE_ESECURE_EXHAUSTED, reconnect),
 * and keys live for one connection: every connection, including the first
 * after a server restart, derives new keys from a new client ephemeral key,
 * so counters restarting at 0 never meet an old key.
 *
 * Pure apart from libsodium; cradle_secure_keypair reads randomness.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"
#include "cradle/wire.h"

#define CRADLE_SECURE_FORMAT 1u
#define CRADLE_SECURE_KEY_BYTES 32u
#define CRADLE_SECURE_COUNTER_BYTES 8u
#define CRADLE_SECURE_TAG_BYTES 16u
#define CRADLE_SECURE_OVERHEAD (CRADLE_SECURE_COUNTER_BYTES + CRADLE_SECURE_TAG_BYTES)
/* Largest plaintext sealed, and largest packet opened. */
#define CRADLE_SECURE_PLAIN_MAX CRADLE_WIRE_MESSAGE_MAX
#define CRADLE_SECURE_PACKET_MAX (CRADLE_SECURE_PLAIN_MAX + CRADLE_SECURE_OVERHEAD)
#define CRADLE_SECURE_WINDOW 256u /* replay window entries, a multiple of 64 */
#define CRADLE_SECURE_COUNTER_LIMIT (1ull << 63)

typedef enum cradle_secure_role {
    CRADLE_SECURE_CLIENT = 'C',
    CRADLE_SECURE_SERVER = 'S',
} cradle_secure_role;

/* Zero means default. */
typedef struct cradle_secure_config {
    uint64_t context;       /* bound into every packet; both sides pass the same */
    uint64_t counter_limit; /* packets sendable; 0 = CRADLE_SECURE_COUNTER_LIMIT */
} cradle_secure_config;

typedef enum cradle_secure_lane_id {
    CRADLE_SECURE_UNORDERED = 0,
    CRADLE_SECURE_ORDERED = 1,
} cradle_secure_lane_id;

/* One lane's counters (see PACKET above). */
typedef struct cradle_secure_lane {
    uint64_t tx_next;  /* counter of the next sealed packet */
    bool rx_any;       /* a packet has been opened */
    uint64_t rx_top;   /* highest counter opened */
    uint64_t rx_seen[CRADLE_SECURE_WINDOW / 64]; /* bit c % WINDOW: counter c opened */
} cradle_secure_lane;

/* The caller owns the struct (one per connection) and changes nothing in
 * it; what failed to open is the caller's to count (open's return says
 * why: the server's status counts auth_failed and replayed). Holds keys: cradle_secure_wipe() it when the connection ends. */
typedef struct cradle_secure {
    uint8_t tx_key[CRADLE_SECURE_KEY_BYTES];
    uint8_t rx_key[CRADLE_SECURE_KEY_BYTES];
    uint8_t role; /* cradle_secure_role of this side */
    uint64_t context;
    uint64_t counter_limit;
    cradle_secure_lane lanes[2]; /* by cradle_secure_lane_id */
} cradle_secure;

/* A fresh ephemeral X25519 key pair (random). Returns 0 or CRADLE_EIO. */
CRADLE_MUST_CHECK int cradle_secure_keypair(uint8_t public_key[CRADLE_SECURE_KEY_BYTES],
                                            uint8_t secret_key[CRADLE_SECURE_KEY_BYTES]);

/* Client side: session keys from the ephemeral pair and the pinned server
 * public key. config may be NULL. Returns 0, CRADLE_ENET_AUTH (the server key
 * is a degenerate point), CRADLE_EIO. */
CRADLE_MUST_CHECK int cradle_secure_client_init(
    cradle_secure *s, const uint8_t client_public[CRADLE_SECURE_KEY_BYTES],
    const uint8_t client_secret[CRADLE_SECURE_KEY_BYTES],
    const uint8_t server_public[CRADLE_SECURE_KEY_BYTES], const cradle_secure_config *config);

/* Server side: session keys from the long-term kx pair (cradle_keys) and the
 * client's ephemeral public key from HELLO (untrusted). Returns 0,
 * CRADLE_ENET_AUTH (degenerate client key), CRADLE_EIO. */
CRADLE_MUST_CHECK int cradle_secure_server_init(
    cradle_secure *s, const uint8_t server_public[CRADLE_SECURE_KEY_BYTES],
    const uint8_t server_secret[CRADLE_SECURE_KEY_BYTES],
    const uint8_t client_public[CRADLE_SECURE_KEY_BYTES], const cradle_secure_config *config);

/* Seals size plaintext bytes into out (size + CRADLE_SECURE_OVERHEAD bytes)
 * on the unordered lane. Returns 0, CRADLE_EINVAL (size >
 * CRADLE_SECURE_PLAIN_MAX), CRADLE_EFULL (capacity),
 * CRADLE_ESECURE_EXHAUSTED (counter limit reached: close the connection).
 * plain and out must not overlap. */
CRADLE_MUST_CHECK int cradle_secure_seal(cradle_secure *s, void *out, size_t capacity,
                                         size_t *written, const void *plain, size_t size);

/* The same on the given lane: CRADLE_SECURE_ORDERED for what travels
 * reliable, CRADLE_SECURE_UNORDERED for the rest. */
CRADLE_MUST_CHECK int cradle_secure_seal_lane(cradle_secure *s, cradle_secure_lane_id lane, void *out,
                                              size_t capacity, size_t *written, const void *plain,
                                              size_t size);

/* Opens size packet bytes (untrusted) into out and stores the plaintext
 * length. Returns 0 or CRADLE_ESECURE_SHORT,
 * CRADLE_ESECURE_LONG (over CRADLE_SECURE_PACKET_MAX), CRADLE_ESECURE_AUTH
 * (forged, altered, wrong key or direction), CRADLE_ESECURE_REPLAY,
 * CRADLE_ESECURE_OLD; CRADLE_EFULL when capacity is below
 * size - CRADLE_SECURE_OVERHEAD. On failure out holds nothing to use. */
CRADLE_MUST_CHECK int cradle_secure_open(cradle_secure *s, void *out, size_t capacity,
                                         size_t *plain_size, const void *packet, size_t size);

/* Zeroes the keys and state. */
void cradle_secure_wipe(cradle_secure *s);

#endif
