#ifndef CRADLE_INPUT_DELAY_H
#define CRADLE_INPUT_DELAY_H
/*
 * input_delay: a player's input delay that follows its link (the server's
 * --input-delay auto). Pure: it reads no clock; the caller passes step
 * numbers.
 *
 * A client sends its input for (last step received) + delay. When that
 * input reaches the server, the server is a round trip (and whatever the
 * client took to answer) past the step the client had received, so the
 * input is `slack` steps early: slack = its step - the step the server runs
 * next. A slack below 0 is an input too late for its step (the server
 * repeats the player's last input there). The slack is the whole round
 * trip in steps, measured where it matters, on every input.
 *
 * The rules, with hysteresis so that a delay does not flap:
 *   - raise at once when an input is late: delay + (steps late) + 1, so the
 *     next inputs arrive a step early; then hold further raises for the new
 *     delay plus a quarter second (the inputs already in flight were sent
 *     with the old delay and are late too);
 *   - lower only after CRADLE_INPUT_DELAY_CALM_WINDOWS windows of a second
 *     in which every input was at least one step early, by the smallest
 *     slack seen in them (the inputs then arrive just in time), and not
 *     within CRADLE_INPUT_DELAY_LOWER_HOLD_WINDOWS windows of a raise; but
 *     not below the link's round trip (rtt_us, when the caller knows it)
 *     plus a quarter step, in whole steps: a whole slack hides the fraction
 *     of a step the inputs arrive before their step;
 *   - never below 1, never above the configured maximum;
 *   - no raise in the first second: a client that just joined sends its
 *     first inputs while it catches up with the steps run meanwhile.
 * A change is the new delay from now on; the client keeps sending one input
 * for every step in order (netclient.c), so a raise leaves no step without
 * the player's input and a lowering sends none twice: the client just waits
 * until (last step received) + delay passes what it already sent.
 */
#include <stdint.h>

#define CRADLE_INPUT_DELAY_CALM_WINDOWS 5u       /* seconds of early inputs before a lowering */
#define CRADLE_INPUT_DELAY_LOWER_HOLD_WINDOWS 10u /* seconds after a raise before a lowering */

typedef struct cradle_input_delay {
    uint16_t delay;          /* the delay in force, 1..max */
    uint16_t max;
    uint32_t window_steps;   /* a window: a second of steps */
    uint64_t window_end;     /* the step that closes the current window */
    int64_t window_min;      /* the smallest slack in it; INT64_MAX: no input yet */
    uint32_t calm;           /* windows in a row whose inputs were all early */
    int64_t calm_min;        /* the smallest slack over those */
    uint64_t raise_hold;     /* no raise before this step */
    uint64_t lower_hold;     /* no lowering before this step */
    int64_t last_slack;      /* of the newest input seen (status) */
    int64_t last_window_min; /* of the last window closed with inputs (status) */
    uint32_t rtt_us;         /* the link's round trip, set by the caller; 0: not known */
    uint64_t raised, lowered;
} cradle_input_delay;

/* Starts at `initial` (clamped to 1..max) at step now, the player's first. */
void cradle_input_delay_init(cradle_input_delay *d, uint16_t initial, uint16_t max, uint32_t steps_per_second,
                             uint64_t now);

/* An input message arrived and its newest input is for step `newest`; the
 * server runs step `now` next. Returns the new delay when it changed, else
 * 0. */
uint16_t cradle_input_delay_observe(cradle_input_delay *d, uint64_t newest, uint64_t now);

/* Called as step `now` is about to run: closes a window when one ends.
 * Returns the new delay when it changed, else 0. */
uint16_t cradle_input_delay_tick(cradle_input_delay *d, uint64_t now);

#endif
