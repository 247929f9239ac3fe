#ifndef CRADLE_ACKPACE_H
#define CRADLE_ACKPACE_H
/*
 * ackpace: when a client acknowledges the step stream.
 *
 * A client's INPUT carries its ack: the first step it does not hold (it
 * holds every step below). A player sends an INPUT every step anyway, so its
 * ack rides along each time. A spectator's INPUT carries nothing else, and
 * at 60 steps/s most of a server's inbound datagrams would be spectators'
 * acks. So a spectator acks every CRADLE_ACKPACE_SPECTATOR_STEPS steps (4:
 * 15 acks a second, where every other step cost a 1,024-client server a
 * sixth more CPU), or when a step it holds has waited
 * CRADLE_ACKPACE_WAIT_STEPS_X2 / 2 step periods for its ack, half a period
 * past the arrival of the last step the ack waits for (the stream paused,
 * or the session ended between two acks).
 *
 * The server's stream (server/src/stream.h) expects this: for a peer that
 * acks every N steps it counts the last N - 1 steps sent as in flight rather
 * than lost (no redundancy for them), and waits the longest wait on top of
 * a round trip before it repairs. A client that acks more often than this
 * (an older one) costs the server more datagrams; one that acks less often
 * gets repairs it did not need.
 *
 * Pure: time is a parameter (nanoseconds, any monotonic origin).
 */
#include <stdbool.h>
#include <stdint.h>

#define CRADLE_ACKPACE_SPECTATOR_STEPS 4u
#define CRADLE_ACKPACE_WAIT_STEPS_X2 7u /* 3.5 step periods: past the arrival of the steps an ack waits for */

typedef struct cradle_ackpace {
    uint32_t every;            /* steps per ack: 1 for a player */
    uint64_t wait_ns;          /* the longest a held step waits for its ack */
    uint64_t sent;             /* the ack last sent (or the start step) */
    uint64_t waiting_since_ns; /* when the oldest unacked step arrived */
    bool waiting;              /* received_next > sent */
    bool resend;               /* the server resent held steps: its ack was lost */
} cradle_ackpace;

/* The longest a spectator's held step waits for its ack at this step rate
 * (>= 1 step a second). */
uint64_t cradle_ackpace_wait_ns(uint32_t steps_per_second);

/* A client's pacer from its WELCOME: start_step is where its stream starts. */
void cradle_ackpace_init(cradle_ackpace *pace, bool spectator, uint32_t steps_per_second, uint64_t start_step);

/* Whether the client should send its ack now, given received_next (the
 * first step it does not hold). Call it when steps arrive and when it
 * services its connection. */
bool cradle_ackpace_due(cradle_ackpace *pace, uint64_t received_next, uint64_t now_ns);

/* A STEPS brought only steps the client already holds: the server has not
 * seen the ack that covers them (lost), so the next cradle_ackpace_due says
 * yes, even with nothing new since (a spectator's last ack before a pause
 * would otherwise never be sent again). */
void cradle_ackpace_repeated(cradle_ackpace *pace);

/* The client sent an INPUT carrying this ack. */
void cradle_ackpace_sent(cradle_ackpace *pace, uint64_t ack);

#endif
