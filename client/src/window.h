#ifndef CRADLE_CLIENT_WINDOW_H
#define CRADLE_CLIENT_WINDOW_H
/*
 * window: the one SDL2 window frame loop, whatever the steps come from: the
 * live session (live.c), a recorded log (play.c, --play), a broadcast
 * (watch.c, --watch). Each of those is a source (cradle_window_source); the
 * loop owns everything else: the window and renderer (accelerated with vsync,
 * else software, drawn through softdraw), render_sdl, audio and the game's
 * sounds, presentation (particles, shake), the frame clock, the world drawn
 * between the last two states, the letterbox, the HUD, --screenshot, and the
 * teardown.
 *
 * One frame: the source drains SDL's event queue (poll), the loop reads the
 * clock once, the source runs the steps due (advance), telling the loop of
 * each new state it shows (cradle_window_stepped, cradle_window_jumped);
 * then the loop draws the source's sim at the interpolation alpha (below),
 * the particles, the letterbox, the HUD the source fills and the source's
 * overlay, and presents (SDL_RenderPresent waits for vsync; without vsync
 * the loop sleeps 4 ms so as not to spin).
 *
 * The interpolation alpha, computed here and nowhere else:
 *   alpha = cradle_present_alpha(now - the time the newest state appeared,
 *                                the game's steps per second, rate)
 * where rate is the source's pace against the game's own (1 for a session or
 * a broadcast, the playback speed for a recording, 0 for a paused one: the
 * newest state as it is). A rate of 0 freezes the particles too.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/game_abi.h"
#include "cradle/sim.h"
#include "hud.h"
#include "options.h"

/* The loop's own state (window.c), handed to a source's advance. */
typedef struct cradle_window cradle_window;

/* What a source fills for the HUD; the loop adds the frame rate. mode and
 * detail are storage for info.mode and info.detail to point at. */
typedef struct cradle_window_hud {
    cradle_hud_info info;
    char mode[64];
    char detail[128];
} cradle_window_hud;

/* A source of steps to show. Every function gets `context`; those marked
 * optional may be NULL. The caller owns the source and its context, opens
 * them before cradle_window_run and closes them after. */
typedef struct cradle_window_source {
    void *context;
    const char *title;                   /* the window's title */
    const cradle_game_contract *view;    /* the game whose view sizes the window */
    /* Drains SDL's event queue (the window is width x height, in the
     * coordinates of mouse events). */
    void (*poll)(void *context, int width, int height);
    /* Runs the steps due at now_ns (cradle_client_now_ns), elapsed_ns after
     * the previous frame. false: end the loop at once, nothing drawn. */
    bool (*advance)(void *context, cradle_window *window, uint64_t now_ns, uint64_t elapsed_ns);
    /* The sim to draw, NULL while there is nothing to show (it may change
     * from frame to frame: a new broadcast segment is a new replay). */
    const cradle_sim *(*sim)(void *context);
    /* The picture's pace against the game's (see above). */
    double (*rate)(void *context);
    /* Fills the HUD: figures, mode line, banner. */
    void (*hud)(void *context, cradle_window_hud *hud);
    /* Optional: drawn over the HUD in screen pixels (--play's seek bar). */
    void (*overlay)(void *context, const cradle_draw *screen, int width, int height);
    /* The library beside which the game's sound files are looked for. */
    const char *(*sound_library)(void *context);
    /* Optional: true once --screenshot is to be saved (then the loop ends). */
    bool (*screenshot_due)(void *context);
    /* true when the loop is to end before the next frame. */
    bool (*done)(void *context);
    /* After the last frame: prints what the source prints at its end and
     * returns its exit status. */
    int (*finish)(void *context);
} cradle_window_source;

/* Shows the source until it is done: opens the window, runs the frames,
 * calls finish, closes the window (SDL itself stays up: the caller, who
 * initialised it with cradle_client_video_init, quits it). Returns finish's
 * status, or 1 when the window cannot be opened (said on stderr; finish is
 * not called), a frame cannot be drawn or the screenshot cannot be saved. */
int cradle_window_run(const cradle_window_source *source, const cradle_client_options *o);

/* For a source's advance: a step ran and sim holds its state. The newest
 * state appeared now (the alpha starts again from 0), the game's sounds
 * follow a reload, and react() and react_confirmed() (game_abi.h, minor 5:
 * every step here is confirmed) get the step's events. A source that runs
 * several steps in a frame calls it after each step whose events are to be
 * seen (at least the last). */
void cradle_window_stepped(cradle_window *w, const cradle_sim *sim);

/* For a source that gathers the events itself (live.c: predicted steps,
 * rollbacks and confirmations, netclient.h's effects): the state shown is
 * sim's and changed this frame; as cradle_window_stepped, but react() gets
 * sim's state and `present`, react_confirmed() the confirmed sim's state
 * and `confirmed_events` (either queue may be empty). */
void cradle_window_shown(cradle_window *w, const cradle_sim *sim, const cradle_event_queue *present,
                         const cradle_sim *confirmed, const cradle_event_queue *confirmed_events);

/* For a source's advance: the state shown was replaced without a step (a
 * seek): the alpha starts again from 0, react() sees nothing. */
void cradle_window_jumped(cradle_window *w);

/* Initialises SDL video and game controllers when a display exists; false
 * (SDL shut down again, a one-line note on stderr) otherwise. */
bool cradle_client_video_init(void);

#endif
