#ifndef CRADLE_CLIENT_PLAY_H
#define CRADLE_CLIENT_PLAY_H
/*
 * play: --play LOG shows a recorded session (log.h reader) and checks the
 * recorded hashes as it goes. In the window (the window loop's source,
 * window.h): Space pauses, + or Up doubles the speed, - or Down halves it,
 * Right or . steps once while paused, Left or , steps back, L and J jump
 * 10 s, Home and End go to the ends, the seek bar along the top goes
 * anywhere; Escape quits (the keys and the speed/step/seek logic:
 * playback.h; the bar: timeline.h). With --headless it replays as fast as
 * possible and exits 0 when every recorded hash matched, 1 otherwise; with
 * --seek STEP it goes to that step (through the keyframe index) and prints
 * the state there.
 */
#include <stdint.h>

#include "cradle/replay.h"
#include "hud.h"
#include "options.h"
#include "playback.h"

int cradle_client_play(const cradle_client_options *o);

/* The window's event handling for --play and --watch: drains SDL's event
 * queue into *pb (key presses through cradle_playback_key, the window's
 * close button as quit, and with a width a click or drag on the timeline of
 * a width x height window: timeline.h; for an event of a window with a
 * renderer, the timeline is that renderer's output, in whose pixels it is
 * drawn, the event's position scaled to it: a high-DPI display's output
 * is larger than the window). Needs SDL's video (or events) subsystem
 * initialised. */
void cradle_client_play_poll(cradle_playback *pb, int width, int height);


/* Where a replay's game sounds are looked for: beside --game, else beside
 * the build the log archived (which has none: the replay is then silent,
 * and says which files it missed). */
const char *cradle_client_replay_sounds(const cradle_client_options *o, const cradle_replay *r);

#endif
