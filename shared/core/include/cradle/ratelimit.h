#ifndef CRADLE_RATELIMIT_H
#define CRADLE_RATELIMIT_H
/*
 * ratelimit: per-address token buckets for connection attempts.
 *
 * Each address (any bytes: an IPv4/IPv6 address and nothing else, so one
 * host cannot dodge by changing ports) owns a bucket of `burst` tokens that
 * refills at `per_second` tokens a second; an attempt takes one token or is
 * refused. Buckets live in a caller-provided fixed table (no allocation),
 * keyed by a seeded 64-bit hash of the address and probed over
 * CRADLE_RATELIMIT_PROBE neighbouring entries. When all of those are in use,
 * the entry least recently touched is reused (a full bucket first, since
 * forgetting it loses nothing). A flood from very many addresses can thus
 * evict a bucket and give its address a fresh burst: the table bounds
 * memory, not the attackers' total rate; size it above the expected count
 * of distinct addresses per burst/per_second seconds. The hash seed should
 * be random so an attacker cannot aim collisions.
 *
 * Pure: time (milliseconds, any monotonic origin) is a parameter.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"

#define CRADLE_RATELIMIT_PROBE 8u
#define CRADLE_RATELIMIT_PER_SECOND_DEFAULT 2u
#define CRADLE_RATELIMIT_BURST_DEFAULT 5u

typedef struct cradle_ratelimit_entry {
    uint64_t key;        /* hash of the address; 0 with last_ms 0 = free */
    uint64_t last_ms;    /* when the bucket was last refilled */
    uint64_t millitokens; /* tokens * 1000 */
} cradle_ratelimit_entry;

/* Zero means default. */
typedef struct cradle_ratelimit_config {
    uint32_t per_second; /* refill rate; 0 = 2 */
    uint32_t burst;      /* bucket size; 0 = 5 */
    uint64_t seed;       /* hash seed (random, from the caller) */
} cradle_ratelimit_config;

typedef struct cradle_ratelimit_stats {
    uint64_t allowed, limited, evicted, refunded;
} cradle_ratelimit_stats;

typedef struct cradle_ratelimit {
    cradle_ratelimit_entry *entries;
    uint32_t mask; /* capacity - 1 */
    uint32_t per_second, burst;
    uint64_t seed;
    cradle_ratelimit_stats stats;
} cradle_ratelimit;

/* Over entries (capacity a power of two, >= CRADLE_RATELIMIT_PROBE), which
 * outlive rl. config may be NULL. Returns 0 or CRADLE_EINVAL. */
CRADLE_MUST_CHECK int cradle_ratelimit_init(cradle_ratelimit *rl, cradle_ratelimit_entry *entries,
                                            uint32_t capacity,
                                            const cradle_ratelimit_config *config);

/* Whether an attempt from address (size bytes) at now_ms may proceed; takes
 * a token when it may. Time going backwards refills nothing. */
bool cradle_ratelimit_allow(cradle_ratelimit *rl, const void *address, size_t size,
                            uint64_t now_ms);

/* Gives back the token an attempt from address took, once that attempt
 * proved itself (a server: the client presented a valid join token), so
 * that only attempts that fail count against an address: a LAN party
 * behind one address joins at any pace its members authenticate. Capped at
 * burst; nothing when the address's bucket was evicted meanwhile. */
void cradle_ratelimit_refund(cradle_ratelimit *rl, const void *address, size_t size, uint64_t now_ms);

#endif
