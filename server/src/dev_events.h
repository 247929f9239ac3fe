#ifndef CRADLE_SERVER_DEV_EVENTS_H
#define CRADLE_SERVER_DEV_EVENTS_H
/*
 * dev_events: the dev protocol's event stream. A dev client sends
 *   {"cmd":"subscribe","events":["join","leave",...],"every":N}
 * and from then on receives event lines between its replies:
 *   {"event":"join","level":"info","step":812,"message":"..."}
 * for what the server logs (cradle_server_say: joins, leaves, refusals,
 * desyncs, timeouts, reloads and refused reloads, pause and resume, kicks,
 * log errors and durability), "fell_behind" when a client's stream or the
 * host's clock fell behind, "garbage" (at most once a second) when
 * datagrams that are no peer's and no connect reached the UDP port
 * (status: dropped_garbage), "prediction" when a predicting player's
 * figures arrive (at most once a second each, however often a client sends
 * them: steps ahead, rollbacks a second,
 * their mean and largest depth; client/net/predict.h), and with "step" in
 * the list one line every N
 * steps (default 60):
 *   {"event":"step","step":1200,"hash":"...","players":3,"step_us":4.2}
 * {"cmd":"unsubscribe"} ends it. Each subscriber has the transport's bounded
 * output queue: one that does not read is dropped with a last
 * {"event":"dropped",...} line (transport.h), never slowing the game thread.
 * Everything here runs on the game thread.
 */
#include <stdbool.h>
#include <stdint.h>

#include "cradle/dev.h"

struct cradle_server_host;

/* The subscribe and unsubscribe commands (the dev table's handlers). */
bool cradle__server_dev_subscribe(void *host, cradle_dev_request *request, cradle_writer *reply);
bool cradle__server_dev_unsubscribe(void *host, cradle_dev_request *request, cradle_writer *reply);

/* A line cradle_server_say logged, to the subscribers of its event. */
void cradle__server_publish_said(struct cradle_server_host *host, const char *level, const char *event,
                                 const char *message);

/* A predicting player's figures arrived (REPORT): a "prediction" line to
 * its subscribers (nothing on stderr: it comes once a second). */
void cradle__server_publish_prediction(struct cradle_server_host *host, uint32_t slot);

/* After a step: the step lines due, with the step's duration (ns). */
void cradle__server_publish_step(struct cradle_server_host *host, uint64_t step_ns);

/* Once a loop, at now_ns (monotonic): "fell_behind" when the counters of
 * clients that fell behind or of steps the clock dropped grew; "garbage"
 * when dropped_garbage did, at most once a second (paused or commanded
 * sessions too: no step needs to run). */
void cradle__server_publish_lag(struct cradle_server_host *host, uint64_t now_ns);

#endif
