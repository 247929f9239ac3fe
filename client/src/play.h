#ifndef CRADLE_CLIENT_PLAY_H
#define CRADLE_CLIENT_PLAY_H
/*
 * play: --play LOG shows a recorded session (log.h reader) and checks the
 * recorded hashes as it goes. In the window: Space pauses, + or Up doubles
 * the speed, - or Down halves it, Right or . steps once while paused, Left
 * or , steps back, L and J jump 10 s, Home and End go to the ends, the seek
 * bar along the top goes anywhere; Escape quits (the keys and the
 * speed/step/seek logic: playback.h; the bar: timeline.h). With --headless
 * it replays as fast as possible and exits 0 when every recorded hash
 * matched, 1 otherwise; with --seek STEP it goes to that step (through the
 * keyframe index) and prints the state there.
 */
#include "options.h"
#include "playback.h"

int cradle_client_play(const cradle_client_options *o);

struct cradle_watch;
/* --watch in a window (watch.h): the same window as --play's, on the
 * broadcast's clock. Returns the exit status. */
int cradle_client_watch_window(struct cradle_watch *w);

/* The window loop's event handling: drains SDL's event queue into *pb (key
 * presses through cradle_playback_key, the window's close button as quit,
 * and with a width a click or drag on the timeline of a width x height
 * window: timeline.h). Needs SDL's video (or events) subsystem initialised. */
void cradle_client_play_poll(cradle_playback *pb, int width, int height);

#endif
