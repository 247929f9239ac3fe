#ifndef CRADLE_CLIENT_NETCLIENT_H
#define CRADLE_CLIENT_NETCLIENT_H
/*
 * netclient: one lockstep session with a cradle-server, without SDL, so the
 * window, headless bots and tests all drive the same code. It speaks the
 * wire; the bytes travel over a link (link.h): ENet over UDP unless the
 * caller brings another.
 *
 * Life of a session:
 *   open     loads the game library (reload.h: a numbered copy of --game),
 *            takes the link (link.h) and starts connecting. Nothing blocks.
 *   service  (every frame) sends and receives: HELLO once connected; WELCOME
 *            (start step, input delay, seed, build epoch); STATE chunks for
 *            a join in progress; STEPS, whose snapshots and hashes go into
 *            a bounded reorder queue (they travel unreliable and unordered,
 *            repeated by the server until acknowledged: server/src/stream.h);
 *            RELOAD; PING/PONG (round-trip time, one PING a second); BYE.
 *            After STEPS arrived it sends one INPUT: the ack (the first step
 *            not received) and, for a player, the local input for every
 *            step up to (last step received + input delay, but at least the
 *            next step) not asked for yet, asking the input function for
 *            each; every INPUT repeats the previous steps' inputs
 *            (REDUNDANCY) because it travels unreliable too. A spectator's
 *            INPUT carries only the ack.
 *   step     runs ONE queued snapshot through the game, keeping the state
 *            before it as `previous` (for render interpolation), checks the
 *            hash the server sent for that step, appends the game's output
 *            bytes to config.output. The caller decides how many steps run
 *            per frame (catch-up is bounded there, not here).
 *
 * Failures end the session: the error and a one-line message (net->message)
 * stay, service/step return it from then on. Kinds:
 *   CRADLE_ENET_TIMEOUT  no connection within connect_timeout_ms, or no
 *                        message from the server for silence_timeout_ms
 *   CRADLE_ENET_REFUSED  REFUSE (net->refusal: its reason, text printed)
 *   CRADLE_ENET_MESSAGE  the server sent something invalid
 *   CRADLE_ENET_CLOSED   the server said BYE (net->bye: its reason); for
 *                        "shutdown" the session ended normally
 *                        (cradle_netclient_ended_normally)
 *   CRADLE_ENET_INIT     the connection dropped
 *   CRADLE_ERELOAD_*     the announced build never appeared in time
 *   CRADLE_EIO           --output or the desync report could not be written
 * A desync is not a failure of the session object: net->desync is set, the
 * report is written and DESYNC sent; the caller decides (headless exits 4,
 * the window shows a banner and keeps drawing).
 *
 * Reload: every queued step carries the build epoch it ran under on the
 * server; a step of another epoch than the client's waits until the
 * (reliable) RELOAD for it has arrived. RELOADs queue (up to
 * CRADLE_NETCLIENT_RELOADS). A RELOAD(build X, step S) makes step S wait until the client's own
 * loader has build X: at S, unless the build in charge already is X, the
 * client calls cradle_reload_now() on its --game path (the same library path
 * the server watches when both run on one machine, or a path the operator
 * syncs) and, when the loaded build is not X, tries again every 100 ms until
 * reload_timeout_ms has passed, then fails with both build ids in the
 * message. Then build X takes over the state through cradle_sim_swap(), so
 * on_reload runs exactly as on the server, whether or not the build changed.
 *
 * Data: a DATA (game data file i, epoch E, step S, in chunks) makes the
 * steps of epoch E wait until its bytes are whole; at S the client checks
 * them against the announced BLAKE2b-256 and applies them through
 * cradle_sim_apply_data(), as the server did. Reloads and data files are one
 * sequence of changes: each brings the next epoch, and a step runs only once
 * every change before it (by epoch) is applied. DATAs queue (up to
 * CRADLE_NETCLIENT_DATA); a file larger than its build's limit, bytes that
 * do not match their hash, or bytes the client's build refuses end the
 * session with a message naming the file.
 *
 * Desync report (config.desync_report, written once at the first mismatch):
 *   text header, one "key value" per line:
 *     cradle-desync 1
 *     game <name>
 *     build <build id>
 *     step <S>                   the first step whose hashes differ
 *     client_hash <16 hex>
 *     server_hash <16 hex>
 *     base_step <B>              the state below is the state after step B
 *                                (the last matching hash step), or the
 *                                start state (B = start step - 1, "-1" for 0)
 *     snapshot_size <N>
 *     snapshots <C>              steps B+1 .. S (C = S - B); only the first
 *                                CRADLE_NETCLIENT_HISTORY of them when there
 *                                were more (then truncated 1)
 *     truncated <0|1>
 *     state_size <Z>
 *     end
 *   then binary: Z bytes base state, C * N bytes snapshots in step order,
 *   Z bytes of the client's state after step S.
 *
 * Threads: none. One thread owns a netclient; --bots N runs N of them in one
 * loop.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cradle/ackpace.h"
#include "cradle/errors.h"
#include "cradle/events.h"
#include "cradle/game_abi.h"
#include "cradle/reload.h"
#include "cradle/secure.h"
#include "cradle/session.h"
#include "cradle/sim.h"
#include "cradle/state_pack.h"
#include "cradle/sim_storage.h"
#include "cradle/wire.h"
#include "link.h"
#include "link_enet.h"
#include "predict.h"

#define CRADLE_NETCLIENT_MESSAGE_MAX 512u
#define CRADLE_NETCLIENT_QUEUE_STEPS 4096u   /* snapshots received, not yet run */
#define CRADLE_NETCLIENT_RELOADS 8u          /* RELOADs announced, not yet reached */
#define CRADLE_NETCLIENT_DATA 4u             /* DATA files announced, not yet applied */

/* One data file announced by the server, being received or waiting for its step. */
typedef struct cradle_netclient_data {
    uint64_t at_step;
    uint8_t epoch, file;
    uint32_t total, received;
    uint8_t hash[CRADLE_WIRE_DATA_HASH_BYTES];
    uint8_t *bytes;                          /* data_capacity bytes of data_storage */
} cradle_netclient_data;
#define CRADLE_NETCLIENT_HISTORY 1024u       /* snapshots kept since the last matching hash */
#define CRADLE_NETCLIENT_EVENTS 1024u        /* events one step may report */
#define CRADLE_NETCLIENT_REDUNDANCY 8u       /* steps each INPUT carries */
#define CRADLE_NETCLIENT_INPUTS_KEPT 256u    /* the local inputs sent, kept for prediction */
#define CRADLE_NETCLIENT_EFFECTS 4096u       /* events to present kept between two takes */
#define CRADLE_NETCLIENT_NO_STEP UINT64_MAX

/* Fills out (input_bytes bytes, zeroed by the caller) with the local
 * player's input for `step`. */
typedef void (*cradle_netclient_input_fn)(void *context, uint64_t step, uint8_t *out,
                                          uint32_t input_bytes);

/* Zero means default for every field but port, game and requested_slot. */
typedef struct cradle_netclient_config {
    const char *host;              /* address or name; NULL = 127.0.0.1 */
    uint16_t port;
    const cradle_link *link;       /* the transport (link.h, copied; its raw datagrams go to
                                      cradle_netclient_datagram); NULL = ENet over UDP to
                                      host:port (link_enet.h), the programs' */
    const char *game;              /* game library path */
    const char *copy_dir;          /* where the loader puts its numbered copy; NULL = beside
                                      the library (two netclients in one process need two) */
    bool spectator;
    int requested_slot;            /* -1 = any slot (0 is slot 0: set it explicitly) */
    uint32_t connect_timeout_ms;   /* 0 = 5000 */
    uint32_t silence_timeout_ms;   /* 0 = 5000 */
    uint32_t reload_timeout_ms;    /* 0 = 10000 */
    FILE *output;                  /* the game's output bytes of every step run; may be NULL */
    uint64_t output_until;         /* write output for steps below this; 0 = all */
    const char *desync_report;     /* path; NULL = no report file */
    /* Security (secure.h, token.h). Unless insecure: server_key (64 hex, the
     * pinned server id) and a credential, token (text form) or issuer_key (an
     * issuer key file: a fresh token is minted per connect, a development and
     * bot convenience). Every message after HELLO is sealed; a reply that
     * does not open is dropped; no opened reply within connect_timeout_ms
     * ends with "server identity not proven". */
    bool insecure;
    const char *server_key;
    const char *token;
    const char *issuer_key;
    uint64_t client_id;            /* in minted tokens */
    cradle_netclient_input_fn input;
    void *input_context;
    /* Prediction (predict.h): a player runs up to this many steps ahead of
     * the server's, showing its own input at once; 0 = lockstep (what it
     * shows is what the server confirmed). Spectators never predict. */
    uint32_t predict_window;
    /* Keep the events to present (cradle_netclient_effects): a client that
     * draws sets it; others (bots, tests) need not pay for it. */
    bool effects;
} cradle_netclient_config;

typedef enum cradle_netclient_phase {
    CRADLE_NETCLIENT_CONNECTING, /* the link is connecting */
    CRADLE_NETCLIENT_HELLO,      /* HELLO sent, no WELCOME yet */
    CRADLE_NETCLIENT_JOINING,    /* WELCOME received, state block arriving */
    CRADLE_NETCLIENT_PLAYING,    /* stepping */
    CRADLE_NETCLIENT_CLOSED,     /* failed or left; see error */
} cradle_netclient_phase;

/* The caller owns the struct (large: static or heap). Fields are for
 * reading (the HUD shows them); change none. */
typedef struct cradle_netclient cradle_netclient;
struct cradle_netclient {
    cradle_netclient_config config;
    cradle_netclient_phase phase;
    int error;                          /* 0 or the code that ended the session */
    int refusal;                        /* cradle_wire_refusal when error == CRADLE_ENET_REFUSED */
    char refusal_text[CRADLE_WIRE_TEXT_MAX + 1]; /* ... and the server's text with it */
    int bye;                            /* cradle_wire_bye when error == CRADLE_ENET_CLOSED */
    char message[CRADLE_NETCLIENT_MESSAGE_MAX];

    cradle_reload reload;
    cradle_sim sim;                     /* the build in charge, state and previous, the next
                                           step to run, the last step's events */
    cradle_link link;                   /* the transport (link.h): config.link, or enet */
    cradle_link_enet enet;              /* ENet over UDP to host:port, unless config.link */
    uint32_t turned_away;               /* connects the server turned away: its per-address
                                           limit, or a table full of half-open connections */
    uint32_t turned_busy;               /* ... of them, for a full table */
    uint64_t retry_at_ns;               /* 0, or when to connect again after one */
    uint32_t retry_ms;                  /* the wait before the next: 250 ms doubling to 2 s */
    uint64_t opened_ns, last_heard_ns, last_ping_ns;
    bool secure, proven;                /* proven: a sealed reply opened */
    uint8_t server_key[32];
    uint64_t hello_ns;
    uint64_t dropped_unopened;          /* packets that failed to open */
    uint64_t raw_steps;                 /* STEPS that came as raw datagrams (wire.h) */
    uint64_t raw_dropped;               /* raw datagrams not the server's, not now, or not a message */
    uint64_t service_ns;                /* now, for the raw datagrams the link hands in */
    cradle_secure session;
    uint64_t rtt_ns;                    /* the link's last measured round trip (raw PING); 0 = none yet */
    uint64_t delay_changes;             /* DELAY messages taken: the server adapted the input delay */

    cradle_wire_welcome welcome;
    uint32_t snapshot_size;
    size_t state_bytes;                 /* allocated size of each state block */
    cradle_sim_storage storage;         /* the sim's state, previous state, scratch and events */
    uint8_t *base;                      /* the state at the last matching hash */
    uint32_t state_received;            /* STATE bytes so far */
    uint8_t *packed;                    /* the packed state block as it arrives (state_pack.h) */
    size_t packed_capacity;             /* its bound for the largest state */
    cradle_state_pack unpack;
    uint64_t received_next;             /* the next step expected from the server */

    /* Snapshots received and not yet run, a ring of QUEUE_STEPS slots for
     * steps [queue_first, queue_first + QUEUE_STEPS): all below
     * received_next are there, later ones when they came early. A slot
     * holds step queue_step[i] (UINT64_MAX: none), its epoch and, when the
     * server sent one, its hash. */
    uint8_t *queue;
    uint64_t *queue_step;
    uint64_t *queue_hash;
    uint8_t *queue_epoch;
    uint8_t *queue_has_hash;
    uint64_t queue_first;
    uint8_t epoch;                      /* the build epoch the client runs */
    bool ack_due;                       /* STEPS arrived: an INPUT (ack) goes out */
    cradle_ackpace ackpace;             /* when a spectator's ack goes out */
    uint64_t steps_early, steps_repeated; /* arrived before a gap closed / already had */
    uint64_t inputs_sent;               /* INPUT messages (each carries the ack) */

    /* snapshots since the last matching hash (for the desync report): step
     * base_step_plus1 is the recorder's step 0 */
    cradle_session history;
    uint8_t *history_storage;           /* CRADLE_NETCLIENT_HISTORY snapshots */
    uint64_t base_step_plus1;           /* the state in base is after step base_step_plus1 - 1 */
    uint64_t hashes_checked, last_hash_step, last_hash;

    /* inputs sent: step input_sent_through - 1 is the last, step s's at s % INPUTS_KEPT */
    uint64_t input_sent_through;
    uint8_t inputs[CRADLE_NETCLIENT_INPUTS_KEPT][CRADLE_GAME_MAX_INPUT_BYTES];

    bool reload_pending;                /* reload_at / reload_build: the next RELOAD */
    uint8_t reload_epoch;               /* the epoch it brings */
    uint64_t reload_at, reload_deadline_ns, reload_next_try_ns;
    char reload_build[CRADLE_GAME_BUILD_ID_MAX + 1];
    cradle_wire_reload reload_queue[CRADLE_NETCLIENT_RELOADS]; /* the ones after it */
    uint32_t reload_queued;
    uint64_t reloads;

    /* data files announced: a ring of data_queued entries from data_head */
    cradle_netclient_data data_queue[CRADLE_NETCLIENT_DATA];
    uint32_t data_head, data_queued;
    uint32_t data_capacity;             /* the largest data file of the build loaded at open */
    uint8_t *data_storage;              /* CRADLE_NETCLIENT_DATA * data_capacity */
    uint64_t data_applied;

    bool desync;
    uint64_t desync_step, desync_mine, desync_theirs;

    uint64_t steps_run;
    uint64_t bytes_in, bytes_out;

    cradle_predict predict;             /* the predicted sim, when config.predict_window */
    uint64_t last_report_ns;            /* the last REPORT of its figures to the server */
    cradle_event_queue effects;         /* events to present (config.effects): cradle_netclient_effects */
    cradle_event_queue effects_confirmed; /* every confirmed step's events, for react_confirmed */
    cradle_event *effects_storage;
};

/* enet_initialize()/enet_deinitialize() are the program's (once per process),
 * for the ENet link.
 *
 * Loads config->game and starts connecting. Returns 0, or a negative code
 * with net->message set (the library could not be loaded, bad address, the
 * link cannot connect). Either way the netclient holds the link from the
 * start: cradle_netclient_close closes it (a caller's link too). */
CRADLE_MUST_CHECK int cradle_netclient_open(cradle_netclient *net,
                                            const cradle_netclient_config *config,
                                            uint64_t now_ns);

/* Services the connection without blocking longer than wait_ms: receive,
 * then send. Returns 0, or the session's error once it failed. */
int cradle_netclient_service(cradle_netclient *net, uint64_t now_ns, uint32_t wait_ms);

/* The datagram callback (link.h) of the netclient net: the server's raw
 * datagrams (wire.h "Raw datagrams"): STEPS into the stream as if the
 * connection had delivered them, PONGs with their arrival time (the link's
 * arrived), for rtt_ns; anything else, or from_server false, is dropped and
 * counted (raw_dropped, dropped_unopened). The ENet link is made with it; a
 * link of the caller's (config.link) calls it with the netclient. */
void cradle_netclient_datagram(void *net, const uint8_t *data, size_t size, bool from_server);

/* The two halves of service, for a program that runs many sessions on one
 * thread: it can receive on every session first and send after, so one
 * session's sending does not hold up another's reading (tools/bench's bots).
 * receive reads and handles what arrived within wait_ms (a player's INPUT
 * after WELCOME goes out at once); send sends the INPUT (ack and inputs) that
 * is due and the PING, checks the timeouts and flushes the link. Both return 0
 * or the session's error. */
int cradle_netclient_receive(cradle_netclient *net, uint64_t now_ns, uint32_t wait_ms);
int cradle_netclient_send(cradle_netclient *net, uint64_t now_ns);

/* Runs the next received step. Returns 1 when a step ran, 0 when none is
 * ready (or a reload is waiting for its build), or the session's error. */
int cradle_netclient_step(cradle_netclient *net, uint64_t now_ns);

/* Prediction (predict.h): brings the predicted sim up to the newest input
 * sent, after the frame's confirmed steps ran (cradle_netclient_step),
 * rolling back when a confirmed step differed from its prediction. Never
 * fails the session: a prediction that cannot go on ends (net->predict.on
 * false, net->predict.message says why) and the player sees confirmed
 * steps. Returns 0. A no-op unless config.predict_window. */
int cradle_netclient_predict(cradle_netclient *net);

/* The sim to draw: the predicted one while prediction runs, else the
 * confirmed one (net->sim). */
const cradle_sim *cradle_netclient_shown(const cradle_netclient *net);

/* With config.effects: the queue of events to present (each once, as
 * predict.h's rule has it), for react(), and the queue of every confirmed
 * step's events in step order, for react_confirmed(). Steps append to them;
 * the caller presents them once a frame and then empties both
 * (cradle_events_clear). A queue that fills drops the rest (counted in it). */
void cradle_netclient_effects(cradle_netclient *net, cradle_event_queue **present,
                              cradle_event_queue **confirmed);

/* Received steps not yet run. */
uint64_t cradle_netclient_pending(const cradle_netclient *net);

/* True once the session is stepping (WELCOME and any state block done). */
bool cradle_netclient_playing(const cradle_netclient *net);

/* Whether the session ended as sessions end: the server said BYE because
 * it is stopping (a kick, a timeout or a dropped link is not normal). */
bool cradle_netclient_ended_normally(const cradle_netclient *net);

/* Sends BYE (leaving) and disconnects, waiting at most wait_ms for the link
 * to deliver it. */
void cradle_netclient_leave(cradle_netclient *net, uint32_t wait_ms);

/* Releases everything. Safe on a zeroed or failed struct. */
void cradle_netclient_close(cradle_netclient *net);

/* The snapshot of the last step run (snapshot_size bytes: presence, then
 * each slot's input), or NULL before the first. Valid until the next
 * service or step. */
const uint8_t *cradle_netclient_last_snapshot(const cradle_netclient *net);

/* Players present (presence mask bits) in the last step run; 0 before one ran. */
uint32_t cradle_netclient_players_present(const cradle_netclient *net);

/* The state hash of the current state (0 before playing). */
uint64_t cradle_netclient_state_hash(const cradle_netclient *net);

#endif
