#ifndef CRADLE_RNG_H
#define CRADLE_RNG_H
/*
 * rng: PCG32 (PCG-XSH-RR 64/32, M. E. O'Neill), a seeded generator that gives
 * the same sequence on every platform: 64-bit state, 32-bit outputs, integer
 * arithmetic only. cradle_rng_seed(seed, stream) matches the reference
 * pcg32_srandom_r, so published test vectors apply.
 *
 * The state is two integers and holds no pointer, so it can live inside a
 * game's relocatable state block.
 */
#include <stdint.h>

typedef struct cradle_rng {
    uint64_t state;
    uint64_t increment; /* always odd */
} cradle_rng;

void cradle_rng_seed(cradle_rng *rng, uint64_t seed, uint64_t stream);

/* The next 32 uniformly distributed bits. */
uint32_t cradle_rng_next(cradle_rng *rng);

/* Uniform in [0, bound) without modulo bias; 0 when bound is 0. */
uint32_t cradle_rng_below(cradle_rng *rng, uint32_t bound);

/* Uniform in [lo, hi] (inclusive); lo when hi <= lo. */
int32_t cradle_rng_range(cradle_rng *rng, int32_t lo, int32_t hi);

#endif
