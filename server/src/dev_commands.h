#ifndef CRADLE_SERVER_DEV_COMMANDS_H
#define CRADLE_SERVER_DEV_COMMANDS_H
/*
 * dev_commands: cradle-server's dev protocol (one JSON object per line,
 * cradle/dev.h): the common commands (status, step, quit) and the server's
 * own (players, kick, pause, resume, hash, reload, flush). The README's
 * "The dev protocol" section lists every command and reply field.
 */
#include <stdbool.h>
#include <stddef.h>

#include "cradle/arena.h"
#include "cradle/dev.h"

/* The transport's line handler (transport.h): context is the
 * cradle_server_host. Writes one reply line; returns true after quit. */
bool cradle_server_dev_line(void *context, const char *line, size_t length, cradle_writer *reply,
                            cradle_arena *scratch);

struct cradle_server_host;
struct cradle_server_peer;

/* ,"predict":{...} with a player's prediction figures as its last REPORT
 * had them (window, ahead, rollbacks_per_s, mean_depth, max_depth,
 * corrections, own_overridden), or ,"predict":null for a player in
 * lockstep (or none reported yet): the players list and the event
 * stream's "prediction" lines. */
void cradle__server_write_prediction(cradle_writer *w, const struct cradle_server_host *host,
                                     const struct cradle_server_peer *peer);

#endif
