#ifndef CRADLE_CLIENT_PREDICT_H
#define CRADLE_CLIENT_PREDICT_H
/*
 * predict: a player's own input on screen at once (netclient.h's
 * prediction). The netclient's sim stays the confirmed one: it runs only
 * the server's steps, checks their hashes, writes --output and the desync
 * report, takes reloads and data files, exactly as without prediction.
 * Beside it the predicted sim runs ahead, from the confirmed state to the
 * step the player's newest input is for:
 *
 *   a step the server has sent (received, not yet run) runs on its snapshot;
 *   a later one on a guess: the player's own input as sent, every other
 *   slot present in the newest received step with the game's predict()
 *   (game_abi.h, minor 5) or else its input there, absent slots absent.
 *
 * Each confirmed step is compared with the snapshot its prediction ran on.
 * While they agree the predicted state is the confirmed one (the game is
 * deterministic) and nothing runs again. At the first that differs the
 * predicted sim takes the confirmed state and runs every predicted step
 * again (a rollback; its depth is the steps run again). The predicted sim
 * runs at most `window` steps past the confirmed one: past that it waits
 * for the server as lockstep does.
 *
 * Changes (a reload, a data file) apply to the confirmed sim only, at their
 * steps, as before. The predicted sim never runs a step at or past an
 * announced change the confirmed sim has not taken; predicted steps that
 * ran past a change before it was announced are run again from the
 * confirmed state once it took it (counted apart from rollbacks). So a
 * reload or a data file costs a player about a round trip of prediction.
 *
 * Effects. react() (game_abi.h) sees each event once, as soon as a step
 * brings it, predicted or confirmed. The client remembers, for every step
 * not yet confirmed, which events it presented (kind and player: a
 * correction moves where a thing happened, not whether). When a step runs
 * again (a rollback) or is confirmed, an event already presented is not
 * presented again, a new one is presented then (late rather than never),
 * and one presented that no longer happens stays presented (counted:
 * unhappened). A game that must never show what did not happen (a kill
 * feed) uses react_confirmed(), which sees every confirmed step's events,
 * once, in step order. Corrections are not smoothed: the next frame shows
 * the corrected state (interpolation then goes on from it); how often a
 * correction changed the state on screen is counted (corrections).
 *
 * Memory: allocated when the session starts (the state, its previous and
 * a copy for the correction check, the window's snapshots, the record of
 * presented events); nothing per step. Pure: no clock, no I/O.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/sim.h"
#include "cradle/sim_storage.h"

#define CRADLE_PREDICT_WINDOW_DEFAULT 16u /* steps ahead of the confirmed one, at most */
#define CRADLE_PREDICT_WINDOW_MAX 64u
#define CRADLE_PREDICT_PRESENTED 32u     /* events remembered as presented, per step */
#define CRADLE_PREDICT_MESSAGE_MAX 256u

/* The figures a person reads (HUD, headless summary, the server's players list). */
typedef struct cradle_predict_figures {
    uint64_t predicted_steps;  /* steps run ahead of the server (first runs and runs again) */
    uint64_t rollbacks;        /* confirmed steps that differed from their prediction */
    uint64_t rollback_steps;   /* steps run again by rollbacks: the depths summed */
    uint32_t rollback_max;     /* the deepest */
    uint32_t ahead;            /* steps the shown state is past the confirmed one, now */
    uint64_t corrections;      /* rollbacks that changed the state on screen */
    uint64_t change_reruns;    /* predicted steps run again because a reload or data file applied */
    uint64_t own_overridden;   /* confirmed steps whose own-slot input is not the one sent (it came
                                  late: the server's word wins) */
    uint64_t window_waits;     /* frames that stopped at the window, waiting for the server */
    uint64_t events_late;      /* events presented when a rollback or the confirmation brought them */
    uint64_t events_unhappened;/* events presented that the confirmed step did not have */
} cradle_predict_figures;

/* What one step's events were presented as (kind and player). */
typedef struct cradle_predict_presented {
    uint64_t step;             /* UINT64_MAX: the entry is free */
    uint32_t count;
    uint16_t kind[CRADLE_PREDICT_PRESENTED];
    uint8_t player[CRADLE_PREDICT_PRESENTED];
    bool matched[CRADLE_PREDICT_PRESENTED];
} cradle_predict_presented;

typedef struct cradle_predict {
    bool on;                   /* predicting (a player with a window, not ended) */
    bool valid;                /* sim follows the confirmed sim (from `first`) */
    bool mispredicted;         /* ... until a confirmed step differed */
    uint32_t window;
    cradle_sim sim;            /* the predicted sim: what a player sees */
    cradle_sim_storage storage;
    uint8_t *snapshots;        /* window snapshots: step s's at s % window */
    uint8_t *newest;           /* the newest step received, for the guesses */
    uint64_t newest_step;      /* its index; UINT64_MAX: none yet */
    uint8_t *shown;            /* the predicted state before a rollback, for the correction check */
    uint64_t first;            /* predicted steps [first, sim.next_step) are unconfirmed */
    uint8_t epoch;             /* the confirmed sim's change epoch when the predicted run began */
    cradle_predict_presented *presented; /* window + 1 entries: step s at s % (window + 1) */
    uint64_t shown_changes;    /* times the shown state changed (a step, a rollback): the window
                                  restarts its interpolation */
    cradle_predict_figures figures;
    char message[CRADLE_PREDICT_MESSAGE_MAX]; /* why prediction ended, when it did */
} cradle_predict;

/* For the netclient (netclient.c), nobody else. */
struct cradle_netclient;
/* Sets up prediction for a player whose config has a window, once the
 * WELCOME said the session's shape. Returns 0, or an error with message. */
int cradle_predict_start(struct cradle_netclient *net, char *message, size_t message_size);
/* Confirmed step s ran on snapshot: compared with its prediction, its
 * events presented by the effects rule. */
void cradle_predict_confirmed(struct cradle_netclient *net, uint64_t s, const uint8_t *snapshot);
void cradle_predict_close(cradle_predict *p);

#endif
