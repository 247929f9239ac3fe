#include "cradle/clock.h"

#include <assert.h>

#define NS_PER_SECOND 1000000000ull

int cradle_clock_init(cradle_clock *clock, cradle_clock_config config) {
    if (config.steps_per_second == 0) return CRADLE_ECLOCK_RATE;
    if (config.source_frames_per_second == 0 ||
        config.steps_per_second % config.source_frames_per_second != 0) {
        return CRADLE_ECLOCK_SOURCE;
    }
    *clock = (cradle_clock){
        .steps_per_second = config.steps_per_second,
        .steps_per_source_frame = config.steps_per_second / config.source_frames_per_second,
        .max_steps = config.max_steps_per_offer ? config.max_steps_per_offer
                                                : CRADLE_CLOCK_DEFAULT_MAX_STEPS,
    };
    return CRADLE_OK;
}

cradle_clock_plan cradle_clock_offer_elapsed(cradle_clock *clock, uint64_t elapsed_ns) {
    assert(clock->planned == 0 && "take every planned step before offering time again");
    /* elapsed * rate can overflow 64 bits, so split the elapsed time into
     * whole seconds (each worth exactly `rate` steps) and a remainder whose
     * product with the rate stays below 1e9 * 2^32. */
    uint64_t rate = clock->steps_per_second;
    uint64_t whole_seconds = elapsed_ns / NS_PER_SECOND;
    uint64_t remainder_ns = elapsed_ns % NS_PER_SECOND;
    uint64_t acc = clock->accumulator + remainder_ns * rate;
    uint64_t owed = acc / NS_PER_SECOND;
    clock->accumulator = acc % NS_PER_SECOND;
    /* whole_seconds * rate saturates rather than wrapping: a pause of more
     * than 2^64 steps is "too many steps" either way. */
    if (whole_seconds > (UINT64_MAX - owed) / rate) {
        owed = UINT64_MAX;
    } else {
        owed += whole_seconds * rate;
    }
    cradle_clock_plan plan = {.steps = 0, .dropped = 0};
    if (owed > clock->max_steps) {
        plan.steps = clock->max_steps;
        plan.dropped = owed - clock->max_steps;
    } else {
        plan.steps = (uint32_t)owed;
    }
    clock->planned = plan.steps;
    /* Saturates like owed: a few huge pauses must not wrap the total to small. */
    clock->dropped_total = plan.dropped > UINT64_MAX - clock->dropped_total
                               ? UINT64_MAX
                               : clock->dropped_total + plan.dropped;
    return plan;
}

static cradle_step take_step(cradle_clock *clock) {
    uint64_t index = clock->next_index++;
    return (cradle_step){
        .index = index,
        .length = {.numerator = 1, .denominator = clock->steps_per_second},
        .source_frame = index / clock->steps_per_source_frame,
        .phase = (uint32_t)(index % clock->steps_per_source_frame),
    };
}

cradle_step cradle_clock_next(cradle_clock *clock) {
    assert(clock->planned > 0 && "cradle_clock_next called with no planned step");
    clock->planned--;
    return take_step(clock);
}

cradle_step cradle_clock_command_step(cradle_clock *clock) {
    assert(clock->planned == 0 && "planned steps are outstanding");
    return take_step(clock);
}

uint32_t cradle_clock_pending(const cradle_clock *clock) { return clock->planned; }

double cradle_clock_alpha(const cradle_clock *clock) {
    return (double)clock->accumulator / (double)NS_PER_SECOND;
}

uint64_t cradle_clock_step_ns(const cradle_clock *clock) {
    return NS_PER_SECOND / clock->steps_per_second;
}

uint64_t cradle_clock_ns_until_next(const cradle_clock *clock) {
    /* accumulator + ns * rate >= 1e9  <=>  ns >= ceil((1e9 - acc) / rate) */
    uint64_t missing = NS_PER_SECOND - clock->accumulator;
    uint64_t rate = clock->steps_per_second;
    return (missing + rate - 1) / rate;
}
