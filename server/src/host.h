#ifndef CRADLE_SERVER_HOST_H
#define CRADLE_SERVER_HOST_H
/*
 * host: cradle-server's game thread. It owns the game library (reload.h), the
 * state block, the clock, the session log and the dev protocol, and talks to
 * the network thread only through net.h's rings.
 *
 * Every step: build the snapshot (presence mask + each present slot's input
 * for that step; a slot whose input has not arrived repeats its last input
 * and the step is counted late for that player), append it to the log, run
 * the game's step, add the snapshot to the STEPS message being packed (as
 * many steps per message as fit and are ready), and after every K-th step
 * (step s with (s + 1) % K == 0) add the state hash. The server never waits
 * for a client; the only wait on this thread is for ring space from its own
 * network thread, which drains the ring as soon as it is woken.
 *
 * Between steps the thread sleeps (one ppoll) until the next step is due,
 * a dev client sends a line, the network thread has news (a join, a leave:
 * net.h) or the 200 ms reload check; inputs wait in the ring for their step.
 *
 * Join in progress: a player or spectator admitted at step N > 0 is sent
 * WELCOME(start_step N, state follows), then the state block at the start of
 * step N in STATE chunks, then the same STEPS stream as everyone from N on.
 * The block is copied once at admission into a buffer allocated at start-up,
 * so the cost depends on the state size, never on the session's length; one
 * join streams at a time, later joiners wait their turn in order.
 *
 * Memory: cradle_server_host_init allocates everything; the step path
 * allocates nothing.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cradle/clock.h"
#include "cradle/log.h"
#include "cradle/data_files.h"
#include "cradle/input_delay.h"
#include "cradle/reload.h"
#include "cradle/sim.h"
#include "cradle/state_pack.h"
#include "cradle/sim_storage.h"
#include "cradle/transport.h"
#include "cradle/trial.h"

#include "net.h"
#include "options.h"

#define CRADLE_SERVER_INPUT_WINDOW 256u /* steps ahead an input may be for (> the largest delay) */
_Static_assert(CRADLE_SERVER_INPUT_WINDOW > CRADLE_SERVER_MAX_INPUT_DELAY + 16u, "an input for the largest delay fits");
#define CRADLE_SERVER_MAX_STEP_COMMAND 100000u
#define CRADLE_SERVER_EVENTS 256u /* events kept per step; more are counted as dropped */
#define CRADLE_SERVER_KEPT_STATES 4u /* hash steps whose state the server keeps for desync reports */

typedef enum cradle_server_peer_state {
    CRADLE_SERVER_PEER_FREE = 0,
    CRADLE_SERVER_PEER_CONNECTED, /* awaiting HELLO */
    CRADLE_SERVER_PEER_WAITING, /* accepted, waits for the join stream */
    CRADLE_SERVER_PEER_PLAYER,
    CRADLE_SERVER_PEER_SPECTATOR,
    CRADLE_SERVER_PEER_CLOSING, /* refused, kicked or leaving: its messages are ignored */
} cradle_server_peer_state;

typedef struct cradle_server_peer {
    cradle_server_peer_state state;
    uint32_t generation;
    uint32_t rtt_ms, lowest_rtt_ms;
    uint32_t rtt_us; /* the link's round trip the client measured (raw PING); 0: none yet */
    uint32_t address;
    uint16_t port;
    uint8_t slot; /* PLAYER (and WAITING for a player): its slot */
    bool spectator; /* WAITING: joins as a spectator */
    uint64_t desyncs; /* DESYNC reports received */
    uint64_t wait_order; /* WAITING: admission order */
    uint64_t connected_ns; /* when the connect arrived (a HELLO is due within 5 s) */
    bool identified;       /* its verified token named client_id (secure mode) */
    uint64_t client_id;
    bool reported;         /* a player that predicts: its last REPORT */
    cradle_wire_report report;
    uint64_t prediction_lines, prediction_line_ns; /* its "prediction" event lines, and the last one's time */
} cradle_server_peer;

typedef struct cradle_server_slot {
    bool occupied;
    uint16_t peer;
    uint64_t joined_step; /* first step the slot is present in; UINT64_MAX while waiting */
    bool has_input; /* an input arrived since it joined */
    uint8_t last[CRADLE_GAME_MAX_INPUT_BYTES];
    uint64_t late; /* steps run with a repeated input */
    uint64_t on_time; /* steps run with the input sent for them */
    uint16_t input_delay; /* the player's, now */
    bool adaptive;        /* --input-delay auto: it follows how early the inputs arrive */
    cradle_input_delay delay;
    uint64_t window_step[CRADLE_SERVER_INPUT_WINDOW];
    uint8_t window[CRADLE_SERVER_INPUT_WINDOW][CRADLE_GAME_MAX_INPUT_BYTES];
} cradle_server_slot;

typedef struct cradle_server_host {
    const cradle_server_options *options;
    cradle_server_net *net;
    cradle_reload reload;
    cradle_sim sim; /* the build in charge, the state block, the next step's index */
    cradle_sim_storage storage; /* the sim's blocks: state_capacity bytes each, and its events */
    cradle_data_files data; /* the game's data files (data_files.h), watched */
    uint64_t data_applies, data_refusals;
    uint64_t data_apply_last_ns, data_apply_max_ns; /* the step loop's stall for one */
    uint64_t data_delay_last_ns; /* the file's last write to applied */
    char last_data[CRADLE_DATA_MESSAGE_MAX + 64];
    uint32_t state_capacity;
    uint32_t players; /* this session's player limit */
    uint32_t max_players; /* the contract's */
    uint32_t input_bytes;
    uint32_t snapshot_size;
    uint32_t steps_per_message;
    cradle_clock clock;
    bool paused;
    bool quit;
    const _Atomic int *signalled; /* set by the program's signal handler */
    uint64_t now_ns; /* the time the driver passed to this turn (start, turn, poll, advance) */
    uint64_t started_ns, last_offer_ns, last_reload_poll_ns;
    uint8_t snapshot[CRADLE_SNAPSHOT_MAX];

    /* the STEPS message being packed */
    uint8_t pending[CRADLE_SERVER_OUT_BYTES];
    uint64_t pending_first;
    uint32_t pending_count;
    uint32_t pending_hash_count;
    cradle_wire_hash pending_hashes[CRADLE_WIRE_STEPS_MAX];
    uint64_t last_hash_step, last_hash; /* last_hash_step == UINT64_MAX: none yet */

    uint32_t peer_count;       /* cradle_server_peer_table_size(players, spectators) */
    cradle_server_peer *peers; /* peer_count of them, allocated at init: ENet's peer index */
    cradle_server_slot slots[CRADLE_GAME_MAX_PLAYERS];
    uint32_t spectator_count;
    uint64_t wait_counter;

    /* join in progress: one state block streaming at a time, packed
     * (state_pack.h) into join_state (the bound of state_capacity bytes) */
    uint8_t *join_state;
    cradle_state_pack join_pack;
    bool join_active;
    uint16_t join_peer;
    uint32_t join_generation;
    uint32_t join_size, join_offset;
    uint64_t join_step, join_hash;

    /* the state at the last CRADLE_SERVER_KEPT_STATES hash steps, so a
     * client's desync report can be compared with the server's own state
     * (written beside the log: cradle-replay --desync) */
    uint8_t *kept;                                  /* KEPT x state_capacity bytes; NULL without --log */
    uint64_t kept_step[CRADLE_SERVER_KEPT_STATES];  /* UINT64_MAX: empty */
    uint32_t kept_next;

    /* reload trials (trial.h): the last snapshots, which a new build runs
     * twice in a child process before it may take over */
    cradle_trial trial;
    uint8_t *recent;        /* CRADLE_TRIAL_DEFAULT_STEPS snapshots, a ring */
    uint8_t *trial_inputs;  /* the ring in order, handed to the trial */
    uint32_t recent_count, recent_next;
    uint64_t trial_fork_max_ns; /* the longest fork() of a trial: the step loop's stall */

    /* the session's audience: Agones labels, --exit-when-empty */
    struct cradle_agones *agones;  /* NULL without --agones */
    struct cradle_server_broadcast *broadcast; /* NULL without --broadcast (broadcast.h) */
    uint32_t present_reported, spectators_reported; /* UINT32_MAX: not yet */
    int agones_state_seen;
    bool had_player;               /* a player joined once, or Agones allocated the server */
    uint64_t empty_since_ns;       /* 0: someone is here, or not armed yet */

    /* signs of life for the watchdog thread (watchdog.h) */
    _Atomic uint64_t alive_ms;     /* the game loop's last turn, cradle_mono_ms() */
    _Atomic uint64_t in_step;      /* 1 + the step whose game code runs now; 0 outside it */
    cradle_log_mark step_mark;     /* the log before that step: read after in_step's acquire */

    /* session log */
    cradle_log_writer log;
    bool log_open;
    bool log_failed; /* a write failed: reported once, retried by the writer */
    struct cradle_server_log_index *index; /* the keyframe index beside the log (log_index.h); NULL: none */
    cradle_log_block_place index_block;    /* the block of the step that runs, when a keyframe follows it */

    /* dev protocol */
    cradle_transport transport;
    bool transport_open;
    bool transport_failed; /* a poll error was reported (once) */
    /* its event stream (dev_events.h): each client's step-line interval */
    uint32_t step_every[CRADLE_SERVER_DEV_CLIENTS_MAX + 1];
    uint32_t step_watchers; /* clients with a step interval: 0 skips the step's timing */
    uint64_t step_ns_avg;
    uint64_t seen_fell_behind, seen_dropped_steps, seen_garbage; /* counters already reported */
    uint64_t garbage_said_ns; /* when garbage was last said (monotonic); 0 = never */

    /* counters */
    uint64_t dropped_steps; /* steps the clock dropped (the host fell behind) */
    uint64_t dropped_out; /* messages dropped: the outbound ring stayed full */
    uint64_t refusals, joins, leaves, desyncs;
    uint64_t takeovers; /* slots a client took back from its own older connection */
    uint64_t reloads, reload_refusals;
    uint8_t epoch; /* reloads and data files applied, mod 256: STEPS, WELCOME,
                      RELOAD and DATA carry it (wire.h) */
    char last_reload[CRADLE_RELOAD_MESSAGE_MAX + 64];

    cradle_server_in in_scratch;
    cradle_server_out out_scratch;
} cradle_server_host;

/* Opens the game library, allocates and initialises the state block, opens
 * the dev transport. Prints what failed on stderr and returns a negative
 * code (CRADLE_ERANGE: --players exceeds the game's maximum, a usage error);
 * on failure call cradle_server_host_deinit. */
int cradle_server_host_init(cradle_server_host *host, const cradle_server_options *options,
                            cradle_server_net *net, const _Atomic int *signalled);

/* Creates the session log of --log (nothing without it), naming and
 * archiving the build that ran step 0: first and its library file, or NULL
 * for the running build (a resumed session names the old log's first build).
 * Call after init, once every other start-up step that can fail has
 * succeeded: the log is never overwritten, so one left by a failed start
 * would refuse the retry. Prints what failed; returns 0 or a negative code. */
int cradle_server_host_open_log(cradle_server_host *host, const cradle_game_contract *first,
                                const char *first_library);

/* Time is passed in: every decision of the game thread (a HELLO's
 * timeout, the steps the clock owes, a trial's deadline, the log's sync)
 * takes the `now` its driver passed to the call, CLOCK_MONOTONIC
 * nanoseconds; cradle_server_host_run is the one driver that reads the
 * clock, once a turn. What the thread measures rather than decides (how
 * long a step, a data file or a trial's fork took, for status) reads it
 * where it measures.
 *
 * Handles what the network thread delivered (connects, HELLO, INPUT, ...),
 * streams a pending join and sends the steps packed so far. One iteration of
 * the loop's work that does not depend on time. */
void cradle_server_host_poll(cradle_server_host *host, uint64_t now);

/* Runs count steps now (the commanded path: inputs that arrived are taken
 * first) and sends them. Allocates nothing. */
void cradle_server_host_advance(cradle_server_host *host, uint64_t count, uint64_t now);

/* The game loop, time passed in: start once at now, then a turn at each
 * now (CLOCK_MONOTONIC nanoseconds): it takes what the network thread
 * delivered, looks for a new build, data files and a trial, runs the steps
 * the clock owes (paced), streams a join, sends the steps. Returns the
 * nanoseconds until it has something to do again (0: at once); the caller
 * waits that long or until woken (the network thread's wake, a dev line). */
void cradle_server_host_start(cradle_server_host *host, uint64_t now);
uint64_t cradle_server_host_turn(cradle_server_host *host, uint64_t now);

/* Waits up to wait_ns (a turn's answer) for work, running a dev client's
 * lines as they come. Returns whether the loop goes on: false once quit
 * (dev protocol, the end of --dev-stdin) or a signal asked it to end. */
bool cradle_server_host_wait(cradle_server_host *host, uint64_t wait_ns);

/* Runs the game loop on the OS clock until quit or a signal: start, then
 * turn and wait. Returns 0. */
int cradle_server_host_run(cradle_server_host *host);

/* Tells the clients the server stops (BYE shutdown) and closes the log with
 * its trailer. Call after run and before stopping the network thread.
 * Returns 0 or the log's error. */
int cradle_server_host_finish(cradle_server_host *host);

/* Releases everything init acquired. Safe after a failed init. */
void cradle_server_host_deinit(cradle_server_host *host);

/* The stderr line alone, in --log-format (options NULL: text), for a thread
 * other than the game thread: cradle_server_say also publishes to the dev
 * clients, whose transport is the game thread's. */
void cradle_server_print(const cradle_server_options *options, const char *level, const char *event,
                         uint64_t step, const char *message);

/* Logs a line on stderr in the format the options chose, and hands it to
 * the dev event stream's subscribers (dev_events.h). Game thread only. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
void cradle_server_say(cradle_server_host *host, const char *level, const char *event, const char *format,
                       ...);

#endif
