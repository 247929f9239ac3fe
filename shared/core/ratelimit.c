/*
 * ratelimit: per-address token buckets in a fixed table (see ratelimit.h).
 */
#include "cradle/ratelimit.h"

#include <string.h>

int cradle_ratelimit_init(cradle_ratelimit *rl, cradle_ratelimit_entry *entries,
                          uint32_t capacity, const cradle_ratelimit_config *config) {
    memset(rl, 0, sizeof *rl);
    if (entries == NULL || capacity < CRADLE_RATELIMIT_PROBE || (capacity & (capacity - 1)) != 0)
        return CRADLE_EINVAL;
    rl->entries = entries;
    rl->mask = capacity - 1;
    rl->per_second = config && config->per_second ? config->per_second
                                                  : CRADLE_RATELIMIT_PER_SECOND_DEFAULT;
    rl->burst = config && config->burst ? config->burst : CRADLE_RATELIMIT_BURST_DEFAULT;
    rl->seed = config ? config->seed : 0;
    memset(entries, 0, (size_t)capacity * sizeof *entries);
    return 0;
}

/* Seeded FNV-1a with a splitmix64 finalizer; never 0 (0 marks a free entry). */
static uint64_t address_key(uint64_t seed, const uint8_t *p, size_t size) {
    uint64_t h = 0xcbf29ce484222325ull ^ seed;
    for (size_t i = 0; i < size; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    h ^= seed;
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return h ? h : 1;
}

static bool is_free(const cradle_ratelimit_entry *e) { return e->key == 0; }

/* The bucket's level at now_ms, without touching it. */
static uint64_t level(const cradle_ratelimit *rl, const cradle_ratelimit_entry *e,
                      uint64_t now_ms) {
    uint64_t full = (uint64_t)rl->burst * 1000u;
    if (now_ms <= e->last_ms) return e->millitokens;
    uint64_t elapsed = now_ms - e->last_ms;
    /* Saturate before multiplying: a long absence means a full bucket. */
    uint64_t add = elapsed >= full ? full : elapsed * rl->per_second;
    return e->millitokens + add >= full ? full : e->millitokens + add;
}

bool cradle_ratelimit_allow(cradle_ratelimit *rl, const void *address, size_t size,
                            uint64_t now_ms) {
    uint64_t key = address_key(rl->seed, address, size);
    uint64_t full = (uint64_t)rl->burst * 1000u;
    cradle_ratelimit_entry *found = NULL, *victim = NULL;
    bool victim_full = false;
    for (uint32_t i = 0; i < CRADLE_RATELIMIT_PROBE; i++) {
        cradle_ratelimit_entry *e = &rl->entries[(key + i) & rl->mask];
        if (e->key == key) {
            found = e;
            break;
        }
        if (is_free(e)) {
            if (victim == NULL || !is_free(victim)) victim = e;
            continue;
        }
        if (victim != NULL && is_free(victim)) continue;
        bool e_full = level(rl, e, now_ms) >= full;
        if (victim == NULL || (e_full && !victim_full) ||
            (e_full == victim_full && e->last_ms < victim->last_ms)) {
            victim = e;
            victim_full = e_full;
        }
    }
    if (found == NULL) {
        if (!is_free(victim) && !victim_full) rl->stats.evicted++;
        victim->key = key;
        victim->last_ms = now_ms;
        victim->millitokens = full;
        found = victim;
    } else {
        found->millitokens = level(rl, found, now_ms);
        if (now_ms > found->last_ms) found->last_ms = now_ms;
    }
    if (found->millitokens >= 1000u) {
        found->millitokens -= 1000u;
        rl->stats.allowed++;
        return true;
    }
    rl->stats.limited++;
    return false;
}

void cradle_ratelimit_refund(cradle_ratelimit *rl, const void *address, size_t size, uint64_t now_ms) {
    uint64_t key = address_key(rl->seed, address, size);
    uint64_t full = (uint64_t)rl->burst * 1000u;
    for (uint32_t i = 0; i < CRADLE_RATELIMIT_PROBE; i++) {
        cradle_ratelimit_entry *e = &rl->entries[(key + i) & rl->mask];
        if (e->key != key) continue;
        e->millitokens = level(rl, e, now_ms);
        if (now_ms > e->last_ms) e->last_ms = now_ms;
        e->millitokens = e->millitokens + 1000u >= full ? full : e->millitokens + 1000u;
        rl->stats.refunded++;
        return;
    }
    /* evicted since: its bucket is full again anyway */
}
