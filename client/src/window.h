#ifndef CRADLE_CLIENT_WINDOW_H
#define CRADLE_CLIENT_WINDOW_H
/*
 * window: the SDL2 front end of a live session: the window, the bindings,
 * the frame loop (interpolated rendering at the display rate, catch-up bounded
 * to CRADLE_WINDOW_MAX_STEPS_PER_FRAME steps per frame), presentation (particles,
 * shake, sound) and the HUD. Falls back to headless when no display exists.
 */
#include <stdbool.h>

#include "options.h"

#define CRADLE_WINDOW_MAX_STEPS_PER_FRAME 8u

int cradle_client_run_window(const cradle_client_options *o);

/* Initialises SDL video and game controllers when a display exists; false
 * (SDL shut down again, a one-line note on stderr) otherwise. */
bool cradle_client_video_init(void);

#endif
