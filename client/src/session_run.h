#ifndef CRADLE_CLIENT_SESSION_RUN_H
#define CRADLE_CLIENT_SESSION_RUN_H
/*
 * session_run: what the headless loop and the window share: the input
 * source of one connection (script, bot, or the window's held keys), the
 * netclient config built from the options, monotonic time, and the summary
 * line.
 */
#include <stdint.h>
#include <stdio.h>

#include "cradle/bot.h"
#include "netclient.h"
#include "options.h"
#include "script.h"

typedef struct cradle_input_source {
    const cradle_script *script; /* or NULL */
    cradle_bot bot;              /* plays the game's bot entry, or the generic one */
    bool use_bot;
    const cradle_netclient *net; /* the bot's connection: contract, state, slot */
    uint32_t held;               /* the window's held bits (bindings) */
} cradle_input_source;

uint64_t cradle_client_now_ns(void);

/* The netclient input function over a cradle_input_source. */
void cradle_input_source_fill(void *context, uint64_t step, uint8_t *out, uint32_t input_bytes);

/* A netclient config from the options (the caller sets input and output). */
cradle_netclient_config cradle_client_net_config(const cradle_client_options *o);

/* Prints the one-line JSON summary of a finished session on stdout:
 *   {"event":"done","slot":S,"start_step":N,"steps":M,"hashes_checked":H,
 *    "last_hash_step":K,"last_hash":"<hex>","final_hash":"<hex>","build":"..",
 *    "rtt_ms":R,"desync":false} */
void cradle_client_print_done(FILE *to, const cradle_netclient *net);

/* The exit status for a session that ended: 0 when the server stopped it
 * (BYE shutdown: a normal end, said on stderr), 1 for any other net->error,
 * 4 for a desync. */
int cradle_client_report_failure(const cradle_netclient *net, const char *who);

/* --headless (and --bots N): runs without SDL. Returns the exit status. */
int cradle_client_run_headless(const cradle_client_options *o);

#endif
