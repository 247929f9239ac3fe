/*
 * options: cradle-client's command line.
 */
#include "options.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/help.h"
#include "cradle/keys.h"
#include "cradle/parse.h"
#include "cradle/version.h"
#include "predict.h"

enum { O_HOST = 256, O_PORT, O_GAME, O_SPECTATOR, O_SLOT, O_HEADLESS, O_SCRIPT, O_BOT, O_BOTS,
       O_SEED, O_STEPS, O_OUTPUT, O_DESYNC, O_CONFIG, O_MUTE, O_FULLSCREEN, O_SIZE, O_CONNECT,
       O_SILENCE, O_RELOAD, O_PLAY, O_HELP, O_VERSION, O_SCREENSHOT, O_SERVER_KEY,
       O_TOKEN, O_ISSUER_KEY, O_INSECURE, O_CLIENT_ID, O_WATCH, O_DELAY, O_VERIFY_KEY, O_SEEK,
       O_PREDICT_WINDOW, O_LOCKSTEP };

/* The one table of cradle-client's options (help.h): getopt's table and
 * --help are built from it. In help, '\n' continues the text on the next
 * line; a row without help is not listed (README screenshots). */
static const cradle_option rows[] = {
    {"host", O_HOST, "ADDR", "server address (default 127.0.0.1)"},
    {"port", O_PORT, "N", "server UDP port (default 7777)"},
    {"game", O_GAME, "LIBRARY", "the game library (the same build as the server's)"},
    {"spectator", O_SPECTATOR, NULL, "watch without a player slot"},
    {"slot", O_SLOT, "N", "ask for player slot N (to rejoin it)"},
    {"predict-window", O_PREDICT_WINDOW, "N", "a player shows its own input at once, running up to N steps\nahead of the server's and rolling back a wrong guess, 1..64\n(default 16)"},
    {"lockstep", O_LOCKSTEP, NULL, "no prediction: show only the steps the server confirmed\n(bots, spectators, --play and --watch always do)"},
    {"headless", O_HEADLESS, NULL, "no window, no audio (bots, tests)"},
    {"script", O_SCRIPT, "FILE", "drive the input from a script: lines '<step> <hex bits>'"},
    {"bot", O_BOT, NULL, "seeded play: the game's bot, else random input bits (--seed N)"},
    {"bots", O_BOTS, "N", "N headless bot connections from this process"},
    {"seed", O_SEED, "N", "bot seed (default 1; bot i of --bots uses seed + i)"},
    {"steps", O_STEPS, "N", "stop before step N: the last step run is N-1 (a step of the\nsession, not a count; refused when the client joins at or\npast N); headless: print a summary line"},
    {"output", O_OUTPUT, "FILE", "write the game's output bytes of every step run"},
    {"desync-report", O_DESYNC, "FILE", "where a desync report goes (default cradle-desync-<pid>.bin)"},
    {"config", O_CONFIG, "FILE", "key bindings (default $XDG_CONFIG_HOME/cradle/client.json)"},
    {"mute", O_MUTE, NULL, "no sound"},
    {"fullscreen", O_FULLSCREEN, NULL, "borderless fullscreen window"},
    {"size", O_SIZE, "WxH", "window size (default: the game's view, at least 960 wide)"},
    {"server-key", O_SERVER_KEY, "HEX", "the server id to pin (the server prints it; required unless\n--insecure): a server that cannot prove it is refused"},
    {"token", O_TOKEN, "TOKEN", "a join token from the game's issuer (cradle-keys token)"},
    {"issuer-key", O_ISSUER_KEY, "FILE", "mint a fresh token per connect with this issuer key file\n(development and bots only: whoever holds it admits anyone)"},
    {"client-id", O_CLIENT_ID, "N", "the client id in those tokens (default 0); a new connection\nwith the id of a slot's holder takes the slot back"},
    {"insecure", O_INSECURE, NULL, "plaintext, no token (a server run with --insecure)"},
    {"connect-timeout", O_CONNECT, "MS", "give up connecting after MS (default 5000)"},
    {"silence-timeout", O_SILENCE, "MS", "give up when the server is silent for MS (default 5000)"},
    {"reload-timeout", O_RELOAD, "MS", "give up when an announced build does not appear (default 10000)"},
    {"play", O_PLAY, "LOG", "show a recorded session: Space pause, +/- speed, Right/Left step,\nL/J 10 s on/back, Home/End, the seek bar (a keyframe index,\nLOG.index, is built the first time)"},
    {"seek", O_SEEK, "STEP", "with --play: start at STEP (headless: print the state there\nand exit)"},
    {"watch", O_WATCH, "URL", "watch a broadcast (cradle-server --broadcast) through any HTTP\ncache: needs --game, the build the session runs"},
    {"delay", O_DELAY, "S", "with --watch: play S seconds behind live, 2..600 (default 6)"},
    {"verify-key", O_VERIFY_KEY, "HEX", "with --watch: the server's signing key to pin (cradle-keys pub\nserver.key --sign): a fragment or keyframe it did not sign is\nrefused"},
    {"help", O_HELP, NULL, "show this help"},
    {"version", O_VERSION, NULL, "show the version"},
    {"screenshot", O_SCREENSHOT, "FILE:STEPS", NULL},
};
#define ROWS (sizeof rows / sizeof rows[0])
#define HELP_COLUMN 25

static void usage(FILE *to) {
    fprintf(to, "usage: cradle-client --game LIBRARY [--host ADDR] [--port N] [options]\n"
                "       cradle-client --play LOG [--game LIBRARY] [--seek STEP] [--headless]\n"
                "       cradle-client --watch URL --game LIBRARY [--delay S] [--verify-key HEX] [--headless]\n"
                "Joins a cradle-server session and shows it in a window (SDL2).\n");
    cradle_options_help(to, rows, ROWS, sizeof rows[0], HELP_COLUMN, 0);
    fprintf(to, "Exit status: 0 ok, 1 error (unreachable, refused, connection lost, bad log),\n"
                "2 usage (also a --steps already past), 4 desync (headless).\n");
}

/* The options that take their value as given, and the switches; false for
 * any other option. */
static bool apply_plain(cradle_client_options *o, int opt, const char *value) {
    switch (opt) {
    case O_HOST: o->host = value; return true;
    case O_GAME: o->game = value; return true;
    case O_SPECTATOR: o->spectator = true; return true;
    case O_LOCKSTEP: o->lockstep = true; return true;
    case O_HEADLESS: o->headless = true; return true;
    case O_SCRIPT: o->script = value; return true;
    case O_BOT: o->bot = true; return true;
    case O_OUTPUT: o->output = value; return true;
    case O_DESYNC: o->desync_report = value; return true;
    case O_CONFIG: o->config = value; return true;
    case O_MUTE: o->mute = true; return true;
    case O_FULLSCREEN: o->fullscreen = true; return true;
    case O_PLAY: o->play = value; return true;
    case O_WATCH: o->watch = value; return true;
    case O_SERVER_KEY: o->server_key = value; return true;
    case O_TOKEN: o->token = value; return true;
    case O_ISSUER_KEY: o->issuer_key = value; return true;
    case O_INSECURE: o->insecure = true; return true;
    default: return false;
    }
}

/* --size WxH: false for a bad value. */
static bool apply_size(cradle_client_options *o, const char *value) {
    unsigned w = 0, h = 0;
    char tail = 0;
    bool ok = sscanf(value, "%ux%u%c", &w, &h, &tail) == 2 && w >= 160 && h >= 90 && w <= 16384 && h <= 16384;
    o->width = w;
    o->height = h;
    return ok;
}

/* --screenshot FILE:STEPS: false for a bad value. */
static bool apply_screenshot(cradle_client_options *o, const char *value) {
    const char *colon = strrchr(value, ':');
    if (!colon || !cradle_parse_u64(colon + 1, 0, UINT64_MAX, &o->screenshot_after)) return false;
    static char path[4096];
    size_t n = (size_t)(colon - value);
    if (n >= sizeof path) n = sizeof path - 1;
    memcpy(path, value, n);
    path[n] = '\0';
    o->screenshot = path;
    return true;
}

/* The options whose value is checked: false for any other option; a bad
 * value sets *flag and what is allowed in *allowed. */
static bool apply_checked(cradle_client_options *o, int opt, const char *value, const char **flag,
                          const char **allowed) {
    uint64_t v = 0;
    switch (opt) {
    case O_PORT:
        if (!cradle_parse_u64(value, 1, 65535, &v)) *flag = "--port", *allowed = "1..65535";
        o->port = (uint16_t)v;
        return true;
    case O_SLOT:
        if (!cradle_parse_u64(value, 0, 63, &v)) *flag = "--slot", *allowed = "0..63";
        o->slot = (int)v;
        return true;
    case O_BOTS:
        if (!cradle_parse_u64(value, 1, 256, &v)) *flag = "--bots", *allowed = "1..256";
        o->bots = (uint32_t)v;
        return true;
    case O_SEED:
        if (!cradle_parse_u64(value, 0, UINT64_MAX, &o->seed)) *flag = "--seed", *allowed = "a decimal number";
        return true;
    case O_STEPS:
        if (!cradle_parse_u64(value, 0, UINT64_MAX, &o->steps)) *flag = "--steps", *allowed = "a decimal number";
        return true;
    case O_SIZE:
        if (!apply_size(o, value)) *flag = "--size", *allowed = "WxH, 160x90 .. 16384x16384";
        return true;
    case O_CONNECT:
        if (!cradle_parse_u64(value, 1, 600000, &v)) *flag = "--connect-timeout", *allowed = "1..600000 ms";
        o->connect_timeout_ms = (uint32_t)v;
        return true;
    case O_SILENCE:
        if (!cradle_parse_u64(value, 1, 600000, &v)) *flag = "--silence-timeout", *allowed = "1..600000 ms";
        o->silence_timeout_ms = (uint32_t)v;
        return true;
    case O_RELOAD:
        if (!cradle_parse_u64(value, 1, 600000, &v)) *flag = "--reload-timeout", *allowed = "1..600000 ms";
        o->reload_timeout_ms = (uint32_t)v;
        return true;
    case O_SCREENSHOT:
        if (!apply_screenshot(o, value)) *flag = "--screenshot", *allowed = "FILE.bmp:STEPS";
        return true;
    case O_SEEK:
        if (!cradle_parse_u64(value, 0, UINT64_MAX - 1u, &o->seek)) *flag = "--seek", *allowed = "a step number";
        o->seek_given = true;
        return true;
    case O_DELAY:
        if (!cradle_parse_u64(value, 2, 600, &v)) *flag = "--delay", *allowed = "2..600 seconds";
        o->delay_s = (uint32_t)v;
        return true;
    case O_VERIFY_KEY:
        if (cradle_keys_from_hex(o->verify_key, value) != 0) *flag = "--verify-key", *allowed = "64 hex digits";
        o->verify = true;
        return true;
    case O_PREDICT_WINDOW:
        if (!cradle_parse_u64(value, 1, 64, &v)) *flag = "--predict-window", *allowed = "1..64 steps";
        o->predict_window = (uint32_t)v;
        return true;
    case O_CLIENT_ID:
        if (!cradle_parse_u64(value, 0, UINT64_MAX, &o->client_id)) *flag = "--client-id", *allowed = "0..2^64-1";
        return true;
    default: return false;
    }
}

/* The checks across options, once all are read: a usage error is said on stderr. */
static cradle_client_parse check_combination(cradle_client_options *o) {
    if (!o->play && !o->game) {
        fprintf(stderr, "cradle-client: --game LIBRARY is required (or --play LOG)\n");
        return CRADLE_CLIENT_EXIT_USAGE;
    }
    if (o->watch && o->play) {
        fprintf(stderr, "cradle-client: --watch and --play exclude each other\n");
        return CRADLE_CLIENT_EXIT_USAGE;
    }
    if (o->seek_given && !o->play) {
        fprintf(stderr, "cradle-client: --seek is for --play\n");
        return CRADLE_CLIENT_EXIT_USAGE;
    }
    if ((o->delay_s || o->verify) && !o->watch) {
        fprintf(stderr, "cradle-client: %s is for --watch\n", o->delay_s ? "--delay" : "--verify-key");
        return CRADLE_CLIENT_EXIT_USAGE;
    }
    if (o->watch && strncmp(o->watch, "http://", 7) != 0 && strncmp(o->watch, "https://", 8) != 0) {
        fprintf(stderr, "cradle-client: --watch '%s': a broadcast's URL starts with http:// or https://\n", o->watch);
        return CRADLE_CLIENT_EXIT_USAGE;
    }
    if (o->watch) return CRADLE_CLIENT_RUN; /* no server to join: no key, no token */
    if ((o->script ? 1 : 0) + (o->bot ? 1 : 0) + (o->spectator ? 1 : 0) > 1) {
        fprintf(stderr, "cradle-client: --script, --bot and --spectator exclude each other\n");
        return CRADLE_CLIENT_EXIT_USAGE;
    }
    if (o->bots) o->headless = true;
    if (o->lockstep && o->predict_window) {
        fprintf(stderr, "cradle-client: --lockstep and --predict-window exclude each other\n");
        return CRADLE_CLIENT_EXIT_USAGE;
    }
    if (!o->predict_window) o->predict_window = CRADLE_PREDICT_WINDOW_DEFAULT;
    if (!o->play && !o->insecure && (!o->server_key || (!o->token && !o->issuer_key))) {
        fprintf(stderr, "cradle-client: joining a server needs --server-key HEX (the server id it prints) "
                        "and --token TOKEN (or --issuer-key FILE); --insecure for a server run with "
                        "--insecure\n");
        return CRADLE_CLIENT_EXIT_USAGE;
    }
    if (o->token && o->issuer_key) {
        fprintf(stderr, "cradle-client: --token and --issuer-key exclude each other\n");
        return CRADLE_CLIENT_EXIT_USAGE;
    }
    if (o->token && o->bots > 1) {
        fprintf(stderr, "cradle-client: a --token works once: --bots N needs --issuer-key FILE\n");
        return CRADLE_CLIENT_EXIT_USAGE;
    }
    return CRADLE_CLIENT_RUN;
}

cradle_client_parse cradle_client_options_parse(cradle_client_options *o, int argc, char **argv) {
    memset(o, 0, sizeof *o);
    o->host = "127.0.0.1";
    o->port = 7777;
    o->slot = -1;
    o->seed = 1;
    static struct option options[ROWS + 1];
    cradle_options_getopt(rows, ROWS, sizeof rows[0], options, NULL);
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        if (opt == O_HELP) {
            usage(stdout);
            return CRADLE_CLIENT_EXIT_OK;
        }
        if (opt == O_VERSION) {
            char version[CRADLE_VERSION_TEXT_MAX];
            cradle_version_text(version, sizeof version, "cradle-client", NULL);
            printf("%s\n", version);
            return CRADLE_CLIENT_EXIT_OK;
        }
        const char *flag = NULL; /* set when the value is bad */
        const char *allowed = NULL;
        if (!apply_plain(o, opt, optarg) && !apply_checked(o, opt, optarg, &flag, &allowed)) {
            fprintf(stderr, "cradle-client: unknown option or missing value: %s\n", argv[optind - 1]);
            usage(stderr);
            return CRADLE_CLIENT_EXIT_USAGE;
        }
        if (flag) {
            fprintf(stderr, "cradle-client: %s '%s': expected %s\n", flag, optarg, allowed);
            return CRADLE_CLIENT_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "cradle-client: unexpected argument '%s'\n", argv[optind]);
        return CRADLE_CLIENT_EXIT_USAGE;
    }
    return check_combination(o);
}
