#ifndef CRADLE_CLOCK_H
#define CRADLE_CLOCK_H
/*
 * clock: turns the time a host measures between draws into fixed simulation
 * steps and numbers each step it hands out (seed 001, seed 002).
 *
 * The caller offers the nanoseconds since its last offer; the clock plans
 * whole steps and carries the leftover exactly, in integer arithmetic (the
 * accumulator holds nanoseconds multiplied by the step rate, so no rounding
 * ever happens). At most max_steps_per_offer steps are planned per offer; the
 * whole steps past the cap are dropped and counted, the fraction is kept.
 * The caller takes every planned step with cradle_clock_next() before it
 * offers time again; breaking that order is a programmer error and asserts.
 *
 * The clock reads no time of its own: time is a parameter.
 */
#include <stdbool.h>
#include <stdint.h>

#include "cradle/errors.h"

#define CRADLE_CLOCK_DEFAULT_MAX_STEPS 4u

typedef struct cradle_clock_config {
    uint32_t steps_per_second;         /* required, >= 1 */
    uint32_t source_frames_per_second; /* required, >= 1 and divides steps_per_second */
    uint32_t max_steps_per_offer;      /* 0 means CRADLE_CLOCK_DEFAULT_MAX_STEPS */
} cradle_clock_config;

/* What one offer planned. */
typedef struct cradle_clock_plan {
    uint32_t steps;   /* steps to run now, one cradle_clock_next() each */
    uint64_t dropped; /* whole steps owed past the cap and discarded */
} cradle_clock_plan;

/* A step's length as a fraction of a second: numerator / denominator. */
typedef struct cradle_fraction {
    uint32_t numerator;
    uint32_t denominator;
} cradle_fraction;

/* One step handed out by the clock. */
typedef struct cradle_step {
    uint64_t index;        /* 0, 1, 2, ... in the order handed out */
    cradle_fraction length; /* 1 / steps_per_second */
    uint64_t source_frame; /* index / (steps per source frame) */
    uint32_t phase;        /* index % (steps per source frame), counted from 0 */
} cradle_step;

typedef struct cradle_clock {
    uint32_t steps_per_second;
    uint32_t steps_per_source_frame;
    uint32_t max_steps;
    uint32_t planned;     /* planned steps not yet taken with next() */
    uint64_t accumulator; /* leftover time, in nanoseconds * steps_per_second, < 1e9 */
    uint64_t next_index;
    uint64_t dropped_total; /* sum of every plan's dropped, saturating at UINT64_MAX */
} cradle_clock;

/* Sets up a clock at step 0. Returns 0, CRADLE_ECLOCK_RATE for a zero step
 * rate, or CRADLE_ECLOCK_SOURCE for a source rate of 0 or one that does not
 * divide the step rate. On error *clock is left untouched. */
CRADLE_MUST_CHECK int cradle_clock_init(cradle_clock *clock, cradle_clock_config config);

/* Offers the nanoseconds since the last offer and returns the plan. Asserts
 * that every step planned by the previous offer was taken. Any value of
 * elapsed_ns is valid, 0 and UINT64_MAX included. */
cradle_clock_plan cradle_clock_offer_elapsed(cradle_clock *clock, uint64_t elapsed_ns);

/* Hands out the next planned step. Asserts that one is planned. */
cradle_step cradle_clock_next(cradle_clock *clock);

/* Advances exactly one step without reading elapsed time (commanded mode).
 * Asserts that no planned step is outstanding. The leftover is untouched. */
cradle_step cradle_clock_command_step(cradle_clock *clock);

/* Steps planned by the last offer and not yet taken. */
uint32_t cradle_clock_pending(const cradle_clock *clock);

/* The leftover fraction of a step, in [0, 1), for interpolating a draw
 * between the last two states (seed 002's alpha). */
double cradle_clock_alpha(const cradle_clock *clock);

/* Nanoseconds in one step, rounded down (for a host's sleep). */
uint64_t cradle_clock_step_ns(const cradle_clock *clock);

/* Nanoseconds until the next step is owed, given the current leftover. */
uint64_t cradle_clock_ns_until_next(const cradle_clock *clock);

#endif
