#ifndef CRADLE_SERVER_RESUME_H
#define CRADLE_SERVER_RESUME_H
/*
 * resume: `cradle-server --resume OLD.log --log NEW.log` continues a session
 * whose server died (a crash, SIGKILL, a power cut).
 *
 * Design: the new log is a complete log of the session on its own. The
 * server takes the seed, player count and hash interval from OLD's header,
 * replays every step OLD recovers (complete, checksummed blocks; a torn tail
 * is ignored) through the game, checking every state hash OLD recorded, and
 * re-records those steps and hashes into NEW, which it then makes durable
 * before serving. It then continues live from the next step; clients rejoin
 * as late joiners (state block + snapshots since). OLD is never modified, so
 * a failed resume loses nothing. The cost is one replay of the recovered
 * steps (cradle-replay runs millions of steps per second).
 *
 * Refused, with a message: a library that is not OLD's game and build, a log
 * damaged in the middle (checksum), a library reload inside OLD, a recorded
 * hash the replay does not reproduce.
 */
#include "host.h"
#include "options.h"

/* Before cradle_server_host_init: reads OLD's header (options->resume) and
 * sets options' seed, players and hash interval from it. Needs --log (a
 * different path). Prints what is wrong; returns 0, or 2 (usage: exit 2) or
 * 1 (the log cannot be read). */
int cradle_server_resume_prepare(cradle_server_options *options);

/* Inside cradle_server_host_init, after the new log is open: replays OLD into
 * the state and the new log as described above and sets next_step. Prints
 * what failed, removes the new log and returns a negative code; 0 on success. */
int cradle_server_resume_replay(cradle_server_host *host);

#endif
