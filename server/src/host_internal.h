#ifndef CRADLE_SERVER_HOST_INTERNAL_H
#define CRADLE_SERVER_HOST_INTERNAL_H
/*
 * What the game thread's files share (host.c, dev_commands.c): acts on the
 * session that the dev protocol's commands take too. Game thread only.
 */
#include <stdint.h>

#include "cradle/reload.h"
#include "cradle/wire.h"
#include "host.h"

/* Sends the STEPS being packed to every admitted peer. */
void cradle__server_flush_steps(cradle_server_host *host);

/* Encodes m and queues it for peer (flags: CRADLE_SERVER_OUT_*). */
void cradle__server_send_to_peer(cradle_server_host *host, uint16_t peer, const cradle_wire_message *m,
                                 uint8_t flags);

/* Encodes m and queues it for every admitted peer. */
void cradle__server_broadcast(cradle_server_host *host, const cradle_wire_message *m, uint8_t flags);

/* Frees the peer's slot (if it had one), logging why it left. */
void cradle__server_release_peer(cradle_server_host *host, uint16_t p, const char *why);

/* What a reload's result means for the session: a swap puts the build in
 * charge of the state (cradle_sim_swap), records it in the log and announces
 * it to every client; a refusal is logged and counted. */
void cradle__server_after_reload(cradle_server_host *host, const cradle_reload_result *r);
/* The dev protocol's reload: the file now, tried in a child first, waited for. */
cradle_reload_result cradle__server_reload_now(cradle_server_host *host);

/* Game data (game_data.c). At the session's start (fresh or resumed):
 * applies every data file read at init that the state does not hold yet,
 * before the first step runs, recorded and, should anyone be connected,
 * announced. */
void cradle__server_data_start(cradle_server_host *host);
/* One look at the data files: a changed one that settled is applied at this
 * step boundary (recorded, announced: epoch + 1) or refused (the session
 * keeps the old data; status and the "data" event say why). */
void cradle__server_data_poll(cradle_server_host *host, uint64_t now_ns);

#endif
