#ifndef CRADLE_CLIENT_PLAYBACK_H
#define CRADLE_CLIENT_PLAYBACK_H
/*
 * playback: the controls of --play LOG, apart from SDL and the clock.
 *
 * Keys (cradle_playback_key, SDL keycodes as plain integers):
 *   Space                 pause / resume (a held key's repeats are ignored)
 *   + = keypad+ Up        faster: the speed doubles, up to x64
 *   - keypad- Down        slower: the speed halves, down to x1/16
 *   Right .               one step, while paused (each press or repeat is
 *                         exactly one step; ignored while playing)
 *   Escape                quit (the window's close button too)
 *
 * State machine: cradle_playback_apply takes an action; once per frame,
 * cradle_playback_steps says how many steps to run for the time elapsed
 * since the previous frame: while playing, steps_per_second x speed steps
 * per second, fractions carried to the next frame and at most
 * CRADLE_PLAYBACK_MAX_OWED owed (a stall does not become a burst of
 * hundreds of steps); while paused, the single steps asked for since the
 * last frame and nothing else. Time comes in as nanoseconds from the caller.
 * Pure: no SDL calls, no clock, no allocation.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CRADLE_PLAYBACK_SPEED_MIN (1.0 / 16.0)
#define CRADLE_PLAYBACK_SPEED_MAX 64.0
#define CRADLE_PLAYBACK_MAX_OWED 256u
/* Single steps asked for while paused and not yet run; more are dropped. */
#define CRADLE_PLAYBACK_MAX_STEP_REQUESTS 64u

typedef enum cradle_playback_action {
    CRADLE_PLAYBACK_NONE = 0,
    CRADLE_PLAYBACK_TOGGLE_PAUSE,
    CRADLE_PLAYBACK_FASTER,
    CRADLE_PLAYBACK_SLOWER,
    CRADLE_PLAYBACK_STEP,
    CRADLE_PLAYBACK_QUIT,
} cradle_playback_action;

typedef struct cradle_playback {
    bool paused, quit;
    double speed;           /* a power of two, SPEED_MIN..SPEED_MAX */
    uint32_t step_requests; /* single steps asked for while paused, not run yet */
    double owed;            /* steps owed while playing, below MAX_OWED */
} cradle_playback;

/* Playing at x1, nothing owed. */
void cradle_playback_init(cradle_playback *p);

/* The action of a key press (an SDL_Keycode), NONE for other keys;
 * repeat: the press is the keyboard's auto-repeat of a held key. */
cradle_playback_action cradle_playback_key(int32_t keycode, bool repeat);

void cradle_playback_apply(cradle_playback *p, cradle_playback_action action);

/* Steps to run this frame, elapsed_ns after the previous frame, for a game
 * of steps_per_second (see above). Consumes the step requests. */
uint32_t cradle_playback_steps(cradle_playback *p, uint64_t elapsed_ns, uint32_t steps_per_second);

/* The interpolation alpha since_step_ns after the last step ran, in
 * [0, 0.999]: the fraction of a step at the current speed (0.999 while
 * paused: the last state as it is). */
float cradle_playback_alpha(const cradle_playback *p, uint64_t since_step_ns, uint32_t steps_per_second);

/* The HUD's mode line: "PAUSED" or "PLAY X<speed>" ("PLAY X0.25"). */
void cradle_playback_mode(const cradle_playback *p, char *out, size_t size);

#endif
