#include "cradle/rng.h"

#define PCG_MULTIPLIER 6364136223846793005ull

uint32_t cradle_rng_next(cradle_rng *rng) {
    uint64_t old = rng->state;
    rng->state = old * PCG_MULTIPLIER + rng->increment;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
}

void cradle_rng_seed(cradle_rng *rng, uint64_t seed, uint64_t stream) {
    rng->state = 0;
    rng->increment = (stream << 1u) | 1u;
    (void)cradle_rng_next(rng);
    rng->state += seed;
    (void)cradle_rng_next(rng);
}

uint32_t cradle_rng_below(cradle_rng *rng, uint32_t bound) {
    if (bound == 0) return 0;
    /* Reject the low values that would make the modulo uneven. */
    uint32_t threshold = (uint32_t)(-bound) % bound;
    for (;;) {
        uint32_t r = cradle_rng_next(rng);
        if (r >= threshold) return r % bound;
    }
}

int32_t cradle_rng_range(cradle_rng *rng, int32_t lo, int32_t hi) {
    if (hi <= lo) return lo;
    uint64_t span = (uint64_t)((int64_t)hi - (int64_t)lo) + 1u;
    uint32_t offset = span > UINT32_MAX ? cradle_rng_next(rng) : cradle_rng_below(rng, (uint32_t)span);
    return (int32_t)((int64_t)lo + (int64_t)offset);
}
