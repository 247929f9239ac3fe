#ifndef CRADLE_PROXY_SCHED_H
#define CRADLE_PROXY_SCHED_H
/*
 * proxy_sched: the pure part of cradle-proxy, the UDP impairment proxy. It
 * decides, from a seeded PCG32 (rng.h), what happens to each packet (lost,
 * delayed with jitter, held back so later packets overtake it, duplicated)
 * and keeps the packets in flight in a fixed-capacity min-heap ordered by
 * release time. Time is a parameter (microseconds, any monotonic origin); the
 * module touches no socket and no clock, so tests drive it directly.
 *
 * Decisions for one submitted packet, in this order (so one seed and one
 * sequence of submissions always give the same outcome):
 *   1. loss:      lost with probability loss_pct %;
 *   2. delay:     latency + a uniform offset in [-jitter, +jitter] (clamped at
 *                 0), at microsecond resolution;
 *   3. reorder:   with probability reorder_pct %, held an extra 1..100 ms so
 *                 the packets sent after it overtake it;
 *   4. duplicate: with probability duplicate_pct %, a second copy with its
 *                 own delay drawn as in 2.
 * Packets due at the same microsecond leave in submission order, so with no
 * jitter and no reordering the order of a flow is kept.
 *
 * Memory: the caller provides storage for `capacity` packets (entries,
 * packets and a free list); nothing is allocated. A copy that finds the
 * store full is not queued and is counted as overflowed.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/rng.h"

#define CRADLE_PROXY_PACKET_MAX 1500u /* largest UDP payload forwarded (ENet's MTU is 1400) */
#define CRADLE_PROXY_REORDER_MIN_US 1000u
#define CRADLE_PROXY_REORDER_MAX_US 100000u
#define CRADLE_PROXY_DELAY_MAX_MS 60000u /* latency and jitter: at most one minute */

/* The impairment settings. Zero means none (a transparent proxy). */
typedef struct cradle_proxy_impairment {
    uint32_t latency_ms; /* one way, each direction: 0..CRADLE_PROXY_DELAY_MAX_MS */
    uint32_t jitter_ms; /* 0..CRADLE_PROXY_DELAY_MAX_MS */
    uint32_t loss_pct; /* 0..100 */
    uint32_t duplicate_pct; /* 0..100 */
    uint32_t reorder_pct; /* 0..100 */
    uint64_t seed;
} cradle_proxy_impairment;

typedef struct cradle_proxy_counters {
    uint64_t submitted; /* packets offered */
    uint64_t lost; /* dropped by the loss decision */
    uint64_t duplicated; /* extra copies decided */
    uint64_t reordered; /* packets held back */
    uint64_t overflowed; /* copies not queued: the store was full */
    uint64_t released; /* copies handed back by pop_due */
} cradle_proxy_counters;

/* One packet in flight. `tag` is the caller's (which flow, which direction). */
typedef struct cradle_proxy_packet {
    uint64_t tag;
    uint32_t length;
    uint8_t bytes[CRADLE_PROXY_PACKET_MAX];
} cradle_proxy_packet;

typedef struct cradle_proxy_entry {
    uint64_t release_us;
    uint64_t order; /* submission order: ties leave first-in first-out */
    uint32_t packet; /* index into packets */
} cradle_proxy_entry;

/* The caller owns the struct and the three arrays; fields are read-only. */
typedef struct cradle_proxy_sched {
    cradle_proxy_impairment config;
    cradle_rng rng;
    cradle_proxy_entry *heap; /* min-heap by (release_us, order), `count` used */
    cradle_proxy_packet *packets;
    uint32_t *free_list; /* indices of free packets, `free_count` used */
    uint32_t capacity, count, free_count;
    uint64_t next_order;
    cradle_proxy_counters counters;
} cradle_proxy_sched;

/* Whether config holds allowed values (ranges above). */
bool cradle_proxy_impairment_valid(const cradle_proxy_impairment *config);

/* Sets up the scheduler over caller storage of `capacity` (>= 1) elements
 * each. config must be valid (asserted). */
void cradle_proxy_sched_init(cradle_proxy_sched *s, const cradle_proxy_impairment *config,
                             cradle_proxy_entry *entries, cradle_proxy_packet *packets,
                             uint32_t *free_list, uint32_t capacity);

/* Decides the fate of one packet received at now_us and queues its copies.
 * length <= CRADLE_PROXY_PACKET_MAX (asserted: the caller drops larger
 * datagrams). Returns the number of copies queued: 0 (lost or no room), 1
 * or 2 (duplicated). */
uint32_t cradle_proxy_sched_submit(cradle_proxy_sched *s, uint64_t now_us, uint64_t tag,
                                   const uint8_t *bytes, uint32_t length);

/* The release time of the earliest packet; false when none is queued. */
bool cradle_proxy_sched_next_release(const cradle_proxy_sched *s, uint64_t *release_us);

/* Moves the earliest packet due at now_us (release_us <= now_us) into *out
 * and frees its place. Returns false when none is due. */
bool cradle_proxy_sched_pop_due(cradle_proxy_sched *s, uint64_t now_us, cradle_proxy_packet *out);

/* Packets queued now. */
uint32_t cradle_proxy_sched_count(const cradle_proxy_sched *s);

#endif
