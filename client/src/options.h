#ifndef CRADLE_CLIENT_OPTIONS_H
#define CRADLE_CLIENT_OPTIONS_H
/*
 * options: cradle-client's command line (getopt_long). A bad value is
 * reported naming the flag; the program exits 2.
 */
#include <stdbool.h>
#include <stdint.h>

typedef struct cradle_client_options {
    const char *host;        /* default 127.0.0.1 */
    uint16_t port;           /* default 7777 */
    const char *game;        /* game library path (required to join; --play may use the log's) */
    const char *config;      /* key bindings; NULL = $XDG_CONFIG_HOME/cradle/client.json */
    const char *script;      /* input script */
    const char *output;      /* game output bytes per step */
    const char *desync_report; /* default cradle-desync-<pid>.bin in the current directory */
    const char *play;        /* session log to show */
    uint64_t seek;           /* --seek STEP: --play starts at this step (through LOG.index) */
    bool seek_given;
    const char *watch;       /* --watch URL: a broadcast to show (watch.h) */
    uint32_t delay_s;        /* --delay S: how far behind live a broadcast plays */
    bool verify;             /* --verify-key HEX: a broadcast must be signed by ... */
    uint8_t verify_key[32];  /* ... this Ed25519 public key */
    const char *screenshot;  /* hidden: BMP written after screenshot_after steps, then exit */
    const char *server_key;  /* --server-key HEX: the pinned server id */
    const char *token;       /* --token TOKEN */
    const char *issuer_key;  /* --issuer-key FILE: mint a token per connect (development, bots) */
    uint64_t client_id;      /* --client-id N: the client id in those tokens */
    bool insecure;           /* --insecure: plaintext, no token (a server run with --insecure) */
    uint64_t screenshot_after;
    uint64_t steps;          /* stop after this step count is reached; 0 = run until the server ends */
    uint64_t seed;           /* bot seed */
    uint32_t bots;           /* --bots N: N headless bot connections */
    uint32_t connect_timeout_ms, silence_timeout_ms, reload_timeout_ms;
    uint32_t predict_window; /* --predict-window N: steps a player runs ahead (default 16) */
    bool lockstep;           /* --lockstep: a player shows only confirmed steps */
    int slot;                /* -1 = any */
    bool headless, bot, spectator, mute, fullscreen;
    uint32_t width, height;  /* window size; 0 = from the game's view */
} cradle_client_options;

typedef enum cradle_client_parse {
    CRADLE_CLIENT_RUN = 0,
    CRADLE_CLIENT_EXIT_OK = 1,    /* --help or --version printed */
    CRADLE_CLIENT_EXIT_USAGE = 2, /* a message was printed on stderr */
} cradle_client_parse;

cradle_client_parse cradle_client_options_parse(cradle_client_options *o, int argc, char **argv);

#endif
