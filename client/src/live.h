#ifndef CRADLE_CLIENT_LIVE_H
#define CRADLE_CLIENT_LIVE_H
/*
 * live: the live session in the window: the window loop's source
 * (window.h) over a netclient session (netclient.h), with the key and
 * controller bindings (bindings.h) as the local player's input, --script
 * and --bot as in the headless loop, --output, --steps and --screenshot.
 * Runs at most CRADLE_LIVE_MAX_STEPS_PER_FRAME received steps a frame,
 * each one's events going to the game's react(). The frame rate is the
 * display's; the simulation rate is the server's.
 */
#include "options.h"

/* The catch-up bound: a client behind runs at most this many steps a frame. */
#define CRADLE_LIVE_MAX_STEPS_PER_FRAME 8u

/* The live session in a window; headless (cradle_client_run_headless) when
 * no display exists. Returns the exit status. */
int cradle_client_live_window(const cradle_client_options *o);

#endif
