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
 *   Left ,                one step back, while paused (a seek: see below)
 *   L PageDown            10 s forward; J PageUp 10 s back
 *   Home End              to the first step, to the last
 *   the seek bar          a click or a drag on the timeline (timeline.h) goes
 *                         to that place in the session
 *   Escape                quit (the window's close button too)
 *
 * State machine: cradle_playback_apply takes an action; once per frame,
 * cradle_playback_steps says how many steps to run for the time elapsed
 * since the previous frame: while playing, steps_per_second x speed steps
 * per second, fractions carried to the next frame and at most
 * CRADLE_PLAYBACK_MAX_OWED owed (a stall does not become a burst of
 * hundreds of steps); while paused, the single steps asked for since the
 * last frame and nothing else. Moves other than forward steps are seeks:
 * cradle_playback_seek folds those asked for since the last frame into one
 * step to seek to (the replay driver restores the keyframe before it). Time
 * comes in as nanoseconds from the caller.
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
#define CRADLE_PLAYBACK_JUMP_SECONDS 10

typedef enum cradle_playback_action {
    CRADLE_PLAYBACK_NONE = 0,
    CRADLE_PLAYBACK_TOGGLE_PAUSE,
    CRADLE_PLAYBACK_FASTER,
    CRADLE_PLAYBACK_SLOWER,
    CRADLE_PLAYBACK_STEP,
    CRADLE_PLAYBACK_QUIT,
    CRADLE_PLAYBACK_STEP_BACK,
    CRADLE_PLAYBACK_JUMP_FORWARD,
    CRADLE_PLAYBACK_JUMP_BACK,
    CRADLE_PLAYBACK_TO_START,
    CRADLE_PLAYBACK_TO_END,
} cradle_playback_action;

typedef struct cradle_playback {
    bool paused, quit;
    double speed;           /* a power of two, SPEED_MIN..SPEED_MAX */
    uint32_t step_requests; /* single steps asked for while paused, not run yet */
    double owed;            /* steps owed while playing, below MAX_OWED */
    /* seeks asked for since the last frame (cradle_playback_seek takes them) */
    uint32_t step_backs;    /* single steps back, at most MAX_STEP_REQUESTS */
    int32_t jumps;          /* JUMP_SECONDS each, forward (> 0) or back */
    int edge;               /* -1 to the start, 1 to the end, 0 none */
    double bar;             /* a place on the seek bar, 0..1; < 0 none */
    bool dragging;          /* the mouse button went down on the seek bar and is held */
} cradle_playback;

/* Playing at x1, nothing owed. */
void cradle_playback_init(cradle_playback *p);

/* The action of a key press (an SDL_Keycode), NONE for other keys;
 * repeat: the press is the keyboard's auto-repeat of a held key. */
cradle_playback_action cradle_playback_key(int32_t keycode, bool repeat);

void cradle_playback_apply(cradle_playback *p, cradle_playback_action action);

/* A click or drag on the seek bar at `fraction` (clamped to 0..1) of the
 * session: it replaces the moves asked for before it in this frame. */
void cradle_playback_bar(cradle_playback *p, double fraction);

/* The step to seek to for the moves asked for since the last frame, from
 * next_step (the step about to run: the screen shows the state before it)
 * in a session of `steps` steps (the state after the last one is
 * next_step = steps): the seek bar's place when one was asked for, else
 * next_step moved by the jumps and steps back, or the start or the end,
 * clamped to 0..steps. Returns true with *target set when a move was asked
 * for (even one that ends where it began), and clears them. */
bool cradle_playback_seek(cradle_playback *p, uint64_t next_step, uint64_t steps, uint32_t steps_per_second,
                          uint64_t *target);

/* Steps to run this frame, elapsed_ns after the previous frame, for a game
 * of steps_per_second (see above). Consumes the step requests. */
uint32_t cradle_playback_steps(cradle_playback *p, uint64_t elapsed_ns, uint32_t steps_per_second);

/* The picture's pace against the game's own: the speed, 0 while paused
 * (the window loop's rate, window.h: it gives the interpolation alpha). */
double cradle_playback_rate(const cradle_playback *p);

/* The HUD's mode line: "PAUSED" or "PLAY X<speed>" ("PLAY X0.25"). */
void cradle_playback_mode(const cradle_playback *p, char *out, size_t size);

#endif
