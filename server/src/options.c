#include "options.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/game_abi.h"
#include "cradle/help.h"
#include "cradle/json.h"
#include "cradle/parse.h"
#include "cradle/replay_index.h"
#include "cradle/transport.h"
#include "cradle/version.h"
#include "cradle/wire.h"

#define CONFIG_FILE_MAX (1u << 20)

/* How apply() reads an option's value into its field. */
typedef enum value_kind {
    VALUE_OWN,    /* a syntax of its own: apply_own() reads it */
    VALUE_PATH,   /* a path of 1..capacity - 1 bytes into a char array */
    VALUE_SWITCH, /* true or false into a bool */
    VALUE_UINT,   /* an integer from min to max into a uint16_t, uint32_t or uint64_t */
} value_kind;

/* The one table of cradle-server's options: it drives the command line
 * (getopt's tables are built from it), the --config keys (the long names)
 * and --help. A row without a name is a heading in --help. In help, '\n'
 * continues the text on the next line, under the first. */
typedef struct option_row {
    cradle_option option; /* name: the long name and --config key; id: the short option and
                             apply()'s key; arg NULL: a switch (true/false in --config) */
    bool not_config;   /* only on the command line */
    value_kind kind;   /* how apply() reads the value into its field */
    size_t offset;     /* the field in cradle_server_options */
    size_t size;       /* a path's capacity, or the integer's width in bytes */
    uint64_t min, max; /* an integer's range */
} option_row;

/* The value kinds of the rows below, with their fields. */
#define FIELD(f) offsetof(cradle_server_options, f), sizeof(((cradle_server_options *)0)->f)
#define PATH(f) VALUE_PATH, FIELD(f), 0, 0
#define PATH_UP_TO(f, capacity) VALUE_PATH, offsetof(cradle_server_options, f), capacity, 0, 0
#define SWITCH(f) VALUE_SWITCH, FIELD(f), 0, 0
#define UINT(f, lo, hi) VALUE_UINT, FIELD(f), lo, hi
#define OWN VALUE_OWN, 0, 0, 0, 0

static const option_row rows[] = {
    {{"game", 'g', "PATH", "game library (.so) to host (required)"}, false, PATH(game)},
    {{"bind", 'b', "ADDR", "IPv4 address to listen on (default: all)"}, false, OWN},
    {{"port", 'p', "N", "UDP port, 1..65535 (default 7777)"}, false, UINT(port, 1, 65535)},
    {{"dev-socket", 'd', "PATH", "serve the dev protocol on a Unix socket"}, false, PATH_UP_TO(dev_socket, 108)},
    {{"dev-stdin", 'i', NULL, "serve the dev protocol on stdin/stdout"}, false, SWITCH(dev_stdin)},
    {{"dev-clients", 'C', "N", "dev socket connections at once, 1..1024 (default 16); one\nmore is refused with a line naming this option"}, false,
     UINT(dev_clients, 1, CRADLE_SERVER_DEV_CLIENTS_MAX)},
    {{"log", 'l', "PATH", "record the session log to PATH"}, false, PATH(log)},
    {{"index-interval", 'x', "N", "with --log: keep the state every N steps in LOG.index, the\nkeyframe index replays seek through, 0..2^30 (default 1200;\n0: none)"}, false, UINT(index_interval, 0, 1u << 30)},
    {{"data", 'j', "DIR", "the folder the game's data files are under (default: the\ngame library's folder); edits to them apply live"}, false, PATH(data)},
    {{"seed", 's', "N", "session seed, 0..2^64-1 (default 1)"}, false, UINT(seed, 0, UINT64_MAX)},
    {{"players", 'n', "N", "player slots, 1..the game's maximum (default: its maximum)"}, false, OWN},
    {{"input-delay", 'D', "N|auto", "steps of input delay, 0..180, or auto (the default): each\nplayer's follows how early its inputs arrive"}, false, OWN},
    {{"mode", 'm', "paced|commanded", "real time (default), or only the dev protocol's step"}, false, OWN},
    {{"config", 'c', "FILE", "JSON object of these options (keys: the long names);\ncommand-line flags override it"}, true, OWN},
    {{"log-format", 'F', "text|json", "stderr log lines (default text)"}, false, OWN},
    {{"hash-interval", 'k', "K", "send the state hash every K steps, 1..65535 (default 30)"}, false, UINT(hash_interval, 1, 65535)},
    {{"spectators", 'S', "N", "spectators at once, 0..4000 (default 8; ENet allows 4,095 peers\nin all)"}, false, UINT(spectators, 0, 4000)},
    {{"timeout", 'T', "MS", "drop a silent peer after MS, 100..600000 (default 5000)"}, false, UINT(timeout_ms, 100, 600000)},
    {{"stop-timeout", 'W', "MS", "after SIGTERM/SIGINT, the most the session may take to stop,\n100..600000 (default 3000); then the log is kept up to the\nlast complete step and the server exits 1"}, false, UINT(stop_timeout_ms, 100, 600000)},
    {{"exit-when-empty", 'E', "S", "end the session S seconds after its last player left\n(once one joined, or Agones allocated it), 1..86400\n(default: never)"}, false, UINT(exit_when_empty_s, 1, 86400)},
    {{"agones", 'A', NULL, "report to the Agones SDK sidecar: Ready, Health while the game\nthread is alive, player labels, Shutdown; follow the GameServer\n(port from AGONES_SDK_HTTP_PORT, default 9358)"}, false, SWITCH(agones)},
    {{"resume", 'R', "LOG", "continue the session recorded in LOG (after a crash): its\nseed, players and steps; --log names the new log, which\nholds LOG's recovered steps and continues from them"}, false, PATH(resume)},
    {{NULL, 0, NULL, "Broadcast over HTTP (viewers: cradle-client --watch URL):"}, false, OWN},
    {{"broadcast", 'u', "URL", "upload the session (needs --log) to this HTTP origin: fragments,\nkeyframes and a sync document under URL (http:// or https://)"}, false, PATH_UP_TO(broadcast, 1024)},
    {{"broadcast-auth", 'U', "FILE", "send the secret in FILE (mode 0600) as X-Origin-Auth"}, false, PATH(broadcast_auth)},
    {{"broadcast-fragment-ms", 'y', "MS", "a fragment every MS, 1000..3000 (default 2000)"}, false, UINT(broadcast_fragment_ms, 1000, 3000)},
    {{"broadcast-keyframe-s", 'Y', "S", "a keyframe every S seconds, 1..600 (default 10)"}, false, UINT(broadcast_keyframe_s, 1, 600)},
    {{"broadcast-queue", 'Q', "N", "fragments kept while the origin fails, 1..100000 (default\n150: 5 minutes); then the oldest is lost, a gap"}, false, UINT(broadcast_queue, 1, 100000)},
    {{NULL, 0, NULL, "Security (the default is secure: a key and at least one trusted issuer):"}, false, OWN},
    {{"key", 'K', "FILE", "server key file; created (0600) if missing, and the\nserver id (its public key, for clients to pin) printed"}, false, PATH(key)},
    {{"trust", 't', "HEX", "trust join tokens signed by this issuer public key\n(cradle-keys pub ISSUER.key --sign); repeatable, up to 8\n(in --config: one key or an array of keys)"}, false, OWN},
    {{"trust-file", 'f', "FILE", "trusted issuer keys, one hex key a line ('#' comments)"}, false, PATH(trust_file)},
    {{"insecure", 'I', NULL, "plaintext, no tokens: local development only, refused\nunless --bind is a loopback address (127.x.x.x)"}, false, SWITCH(insecure)},
    {{"auth-timeout", 'a', "MS", "drop a peer not authenticated after MS, 100..60000\n(default 2000)"}, false, UINT(auth_timeout_ms, 100, 60000)},
    {{"connect-rate", 'r', "N", "connects a second per address, 1..100000 (default 2)"}, false, UINT(connect_rate, 1, 100000)},
    {{"connect-burst", 'B', "N", "connects at once per address, 1..100000 (default 5)"}, false, UINT(connect_burst, 1, 100000)},
    {{"dev-group", 'G', "GID", "also admit this group id to --dev-socket (mode 0660;\ndefault: only this user and root)"}, false, OWN},
    {{"help", 'h', NULL, "show this help"}, true, OWN},
    {{"version", 'V', NULL, "show the version"}, true, OWN},
};
#define ROWS (sizeof rows / sizeof rows[0])
#define HELP_COLUMN 28

static struct option long_options[ROWS + 1];
static char short_options[2 * ROWS + 1];

/* getopt's tables, from the rows (once). */
static void build_getopt_tables(void) {
    if (!long_options[0].name) cradle_options_getopt(&rows[0].option, ROWS, sizeof rows[0], long_options, short_options);
}

static const option_row *row_of_flag(int flag) {
    for (size_t i = 0; i < ROWS; i++)
        if (rows[i].option.name && rows[i].option.id == flag) return &rows[i];
    return NULL;
}

static const option_row *row_of_name(const char *name) {
    for (size_t i = 0; i < ROWS; i++)
        if (rows[i].option.name && name && strcmp(rows[i].option.name, name) == 0) return &rows[i];
    return NULL;
}

static void usage(FILE *to) {
    fprintf(to, "usage: cradle-server --game LIBRARY [options]\n"
                "Hosts one session of a Cradle game over ENet (UDP).\n\n");
    cradle_options_help(to, &rows[0].option, ROWS, sizeof rows[0], HELP_COLUMN, 1);
    fprintf(to, "Exit status: 0 after quit, SIGINT or SIGTERM; 1 failure; 2 usage or configuration\n"
                "error; 3 the UDP port is taken (a script may retry another port).\n");
}

static const char *flag_name(int opt) {
    const option_row *r = row_of_flag(opt);
    return r ? r->option.name : "?";
}

static bool copy_path(char *field, size_t capacity, const char *text) {
    size_t n = strlen(text);
    if (n == 0 || n >= capacity) return false;
    memcpy(field, text, n + 1);
    return true;
}

/* A path of 1..capacity - 1 bytes into its char array. */
static bool apply_path(char *field, size_t capacity, const char *value, const char *where) {
    if (copy_path(field, capacity, value)) return true;
    fprintf(stderr, "cradle-server: %s must be a path of 1..%zu bytes\n", where, capacity - 1);
    return false;
}

/* "true" or "false" into a bool. */
static bool apply_switch(bool *field, const char *value, const char *where) {
    if (strcmp(value, "true") == 0 || strcmp(value, "false") == 0) {
        *field = strcmp(value, "true") == 0;
        return true;
    }
    fprintf(stderr, "cradle-server: %s must be true or false, got '%s'\n", where, value);
    return false;
}

/* An integer in the row's range into its field of the row's width. */
static bool apply_uint(void *field, const option_row *r, const char *value, const char *where) {
    uint64_t v = 0;
    if (!cradle_parse_u64(value, r->min, r->max, &v)) {
        fprintf(stderr, "cradle-server: %s must be an integer from %" PRIu64 " to %" PRIu64 ", got '%s'\n", where,
                r->min, r->max, value);
        return false;
    }
    if (r->size == sizeof(uint16_t)) {
        uint16_t narrow = (uint16_t)v;
        memcpy(field, &narrow, sizeof narrow);
    } else if (r->size == sizeof(uint32_t)) {
        uint32_t narrow = (uint32_t)v;
        memcpy(field, &narrow, sizeof narrow);
    } else {
        memcpy(field, &v, sizeof v);
    }
    return true;
}

/* --bind: an IPv4 address, or "" for all. */
static bool apply_bind(cradle_server_options *o, const char *value, const char *where) {
    struct in_addr address;
    if (strlen(value) < sizeof o->bind && (value[0] == '\0' || inet_pton(AF_INET, value, &address) == 1)) {
        memcpy(o->bind, value, strlen(value) + 1);
        return true;
    }
    fprintf(stderr, "cradle-server: %s must be an IPv4 address, got '%s'\n", where, value);
    return false;
}

/* --trust: one more issuer public key, 64 hex digits. */
static bool apply_trust(cradle_server_options *o, const char *value, const char *where) {
    size_t n = strlen(value);
    bool hex = n == 64;
    for (size_t i = 0; i < n && hex; i++)
        hex = (value[i] >= '0' && value[i] <= '9') || (value[i] >= 'a' && value[i] <= 'f') ||
              (value[i] >= 'A' && value[i] <= 'F');
    if (!hex) {
        fprintf(stderr, "cradle-server: %s must be 64 hex digits (an issuer's public key: cradle-keys pub "
                        "ISSUER.key --sign), got '%s'\n", where, value);
        return false;
    }
    if (o->trust_count >= CRADLE_SERVER_TRUST_MAX) {
        fprintf(stderr, "cradle-server: %s: at most %u trusted issuers\n", where, CRADLE_SERVER_TRUST_MAX);
        return false;
    }
    memcpy(o->trust[o->trust_count++], value, 65);
    return true;
}

/* The options of VALUE_OWN: each with its own syntax and message. */
static bool apply_own(cradle_server_options *o, int opt, const char *value, const char *where) {
    uint64_t v = 0;
    switch (opt) {
    case 'b': return apply_bind(o, value, where);
    case 't': return apply_trust(o, value, where);
    case 'G':
        if (cradle_parse_u64(value, 0, 4294967294u, &v)) {
            o->dev_group_set = true;
            o->dev_group = (uint32_t)v;
            return true;
        }
        fprintf(stderr, "cradle-server: %s must be a numeric group id, got '%s'\n", where, value);
        return false;
    case 'n':
        if (cradle_parse_u64(value, 1, 64, &v)) {
            o->players = (uint32_t)v;
            return true;
        }
        fprintf(stderr,
                "cradle-server: %s must be an integer from 1 to the game's maximum (at most 64), got '%s'\n",
                where, value);
        return false;
    case 'D':
        if (strcmp(value, "auto") == 0) {
            o->input_delay = CRADLE_SERVER_INPUT_DELAY_AUTO;
            return true;
        }
        if (cradle_parse_u64(value, 0, CRADLE_SERVER_MAX_INPUT_DELAY, &v)) {
            o->input_delay = (uint32_t)v;
            return true;
        }
        fprintf(stderr, "cradle-server: %s must be an integer from 0 to 180 or 'auto', got '%s'\n", where,
                value);
        return false;
    case 'm':
        if (strcmp(value, "paced") == 0 || strcmp(value, "commanded") == 0) {
            o->mode = value[0] == 'p' ? CRADLE_SERVER_PACED : CRADLE_SERVER_COMMANDED;
            return true;
        }
        fprintf(stderr, "cradle-server: %s must be 'paced' or 'commanded', got '%s'\n", where, value);
        return false;
    case 'F':
        if (strcmp(value, "text") == 0 || strcmp(value, "json") == 0) {
            o->log_json = value[0] == 'j';
            return true;
        }
        fprintf(stderr, "cradle-server: %s must be 'text' or 'json', got '%s'\n", where, value);
        return false;
    default: return false;
    }
}

/* Applies one setting by its row's value kind. `where` is "--flag" or
 * "config key \"flag\"" for the message. Returns false after printing what
 * is allowed. */
static bool apply(cradle_server_options *o, int opt, const char *value, const char *where) {
    const option_row *r = row_of_flag(opt);
    if (!r) return false;
    char *field = (char *)o + r->offset;
    switch (r->kind) {
    case VALUE_PATH: return apply_path(field, r->size, value, where);
    case VALUE_SWITCH: return apply_switch((bool *)(void *)field, value, where);
    case VALUE_UINT: return apply_uint(field, r, value, where);
    case VALUE_OWN: return apply_own(o, opt, value, where);
    }
    return false;
}


/* Whether the option's value is a number (not a path, a name or a switch). */
static bool takes_integer(const option_row *r) {
    return r->kind == VALUE_UINT || r->option.id == 'n' || r->option.id == 'D' || r->option.id == 'G';
}

/* A JSON number is exact in every JSON tool below 2^53 (a double's
 * integers); a larger one must be written as a string of digits. */
#define CONFIG_EXACT_INTEGER ((json_int_t)1 << 53)

/* One config value as the text a flag would give: a string as it is, a
 * boolean as "true" or "false", a JSON integer from 0 to 2^53 - 1 as its
 * digits. Returns false after printing what the key takes. */
static bool config_text(const json_t *item, const option_row *r, const char *where, char *value, size_t size) {
    char got[CRADLE_JSON_DESCRIBE_MAX];
    cradle_json_describe(item, got);
    switch (json_typeof(item)) {
    case JSON_STRING:
        if (json_string_length(item) >= size) {
            /* Never cut it: a cut path would name another file. */
            fprintf(stderr, "cradle-server: --config: %s must be at most %zu bytes\n", where, size - 1);
            return false;
        }
        memcpy(value, json_string_value(item), json_string_length(item) + 1);
        return true;
    case JSON_TRUE:
    case JSON_FALSE: snprintf(value, size, "%s", json_is_true(item) ? "true" : "false"); return true;
    case JSON_INTEGER: {
        json_int_t v = json_integer_value(item);
        if (v >= 0 && v < CONFIG_EXACT_INTEGER) {
            snprintf(value, size, "%" JSON_INTEGER_FORMAT, v);
            return true;
        }
        if (v >= CONFIG_EXACT_INTEGER) {
            fprintf(stderr, "cradle-server: --config: %s: %s is 2^53 or more, which many JSON tools cannot hold "
                            "exactly; write it as a string of digits (\"%s\")\n", where, got, got);
            return false;
        }
        break;
    }
    case JSON_REAL:
        if (takes_integer(r)) {
            fprintf(stderr, "cradle-server: --config: %s needs an integer, got %s (a fraction or an exponent "
                            "makes a JSON real: write the digits alone)\n", where, got);
            return false;
        }
        break;
    default: break;
    }
    fprintf(stderr, "cradle-server: --config: %s must be a string, a boolean or a whole number, got %s\n", where,
            got);
    return false;
}

/* "trust": one issuer key, or an array of them (a key appears once in a
 * JSON object, so several issuers are one array). */
static bool config_trust(cradle_server_options *o, const json_t *item, const option_row *r, const char *where) {
    char value[CRADLE_SERVER_PATH_MAX];
    if (!json_is_array(item)) return config_text(item, r, where, value, sizeof value) && apply_trust(o, value, where);
    size_t index;
    const json_t *entry;
    json_array_foreach(item, index, entry) {
        if (!json_is_string(entry)) {
            char got[CRADLE_JSON_DESCRIBE_MAX];
            cradle_json_describe(entry, got);
            fprintf(stderr, "cradle-server: --config: %s: entry %zu must be a string of 64 hex digits, got %s\n",
                    where, index, got);
            return false;
        }
        if (!config_text(entry, r, where, value, sizeof value) || !apply_trust(o, value, where)) return false;
    }
    return true;
}

/* Strict RFC 8259 through jansson, as the dev protocol (shared/io/dev.c):
 * no duplicate keys, no NUL (raw or \u0000), valid UTF-8, no leading zeros,
 * no trailing commas, nothing after the object. Prints where it failed. */
static json_t *load_config_json(const char *text, size_t length, const char *origin) {
    cradle_json_load_error error;
    json_t *root = cradle_json_load(text, length, 0, &error);
    if (root) return root;
    const char *hint = error.hint;
    if (error.code == json_error_duplicate_key)
        hint = strstr(error.text, "\"trust\"") ? " (several issuers: \"trust\": [\"HEX\", \"HEX\"])" : " (each option once)";
    else if (error.code == json_error_null_character || error.code == json_error_null_byte_in_key)
        hint = " (a string holds no NUL: a path would be cut there)";
    else if (error.code == json_error_numeric_overflow)
        hint = " (write a number from 2^53 on as a string of digits)";
    fprintf(stderr, "cradle-server: --config: '%s' is not valid JSON at line %d, column %d (byte %zu): %s%s\n",
            origin, error.line, error.column, error.position, error.text, hint);
    return NULL;
}

cradle_server_parse cradle_server_options_parse_config_text(cradle_server_options *o, const char *text,
                                                            size_t length, const char *origin) {
    assert(text && text[length] == '\0' && "text[length] must be a NUL");
    json_t *root = load_config_json(text, length, origin);
    if (!root) return CRADLE_SERVER_EXIT_USAGE;
    if (!json_is_object(root)) {
        char got[CRADLE_JSON_DESCRIBE_MAX];
        cradle_json_describe(root, got);
        fprintf(stderr, "cradle-server: --config: '%s' is not a JSON object, got %s\n", origin, got);
        json_decref(root);
        return CRADLE_SERVER_EXIT_USAGE;
    }
    bool ok = true;
    const char *key;
    json_t *item;
    /* jansson keeps a file's keys in their order: they apply in it. */
    json_object_foreach(root, key, item) {
        const option_row *opt = row_of_name(key);
        char where[96];
        snprintf(where, sizeof where, "config key \"%s\"", key);
        if (!opt || opt->not_config) {
            fprintf(stderr, "cradle-server: --config: unknown %s (keys are the long option names)\n", where);
            ok = false;
            break;
        }
        if (opt->option.id == 't') {
            ok = config_trust(o, item, opt, where);
        } else {
            char value[CRADLE_SERVER_PATH_MAX];
            ok = config_text(item, opt, where, value, sizeof value) && apply(o, opt->option.id, value, where);
        }
        if (!ok) break;
    }
    json_decref(root);
    return ok ? CRADLE_SERVER_RUN : CRADLE_SERVER_EXIT_USAGE;
}

/* Reads the config file and applies every key. Returns false after printing. */
static bool load_config(cradle_server_options *o, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cradle-server: --config: cannot open '%s': %s\n", path, strerror(errno));
        return false;
    }
    static char text[CONFIG_FILE_MAX + 1];
    size_t n = fread(text, 1, CONFIG_FILE_MAX + 1, f);
    bool read_error = ferror(f) != 0;
    fclose(f);
    if (read_error || n > CONFIG_FILE_MAX) {
        fprintf(stderr, "cradle-server: --config: '%s' is unreadable or larger than 1 MiB\n", path);
        return false;
    }
    text[n] = '\0';
    return cradle_server_options_parse_config_text(o, text, n, path) == CRADLE_SERVER_RUN;
}

void cradle_server_options_defaults(cradle_server_options *o) {
    memset(o, 0, sizeof *o);
    o->port = CRADLE_SERVER_DEFAULT_PORT;
    o->seed = 1;
    o->input_delay = CRADLE_SERVER_INPUT_DELAY_AUTO;
    o->hash_interval = CRADLE_SERVER_DEFAULT_HASH_INTERVAL;
    o->spectators = CRADLE_SERVER_DEFAULT_SPECTATORS;
    o->timeout_ms = 5000;
    o->stop_timeout_ms = CRADLE_SERVER_DEFAULT_STOP_TIMEOUT_MS;
    o->dev_clients = CRADLE_TRANSPORT_DEFAULT_CLIENTS;
    o->broadcast_fragment_ms = 2000;
    o->broadcast_keyframe_s = 10;
    o->index_interval = CRADLE_REPLAY_INDEX_INTERVAL_DEFAULT;
    o->broadcast_queue = 150;
}

cradle_server_parse cradle_server_options_parse(cradle_server_options *o, int argc, char **argv) {
    cradle_server_options_defaults(o);

    build_getopt_tables();
    /* Pass 1: help, version, unknown flags and --config. */
    const char *config = NULL;
    int opt;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
        if (opt == 'h') {
            usage(stdout);
            return CRADLE_SERVER_EXIT_OK;
        }
        if (opt == 'V') {
            char version[CRADLE_VERSION_TEXT_MAX];
            cradle_version_text(version, sizeof version, "cradle-server", NULL);
            printf("%s\n", version);
            return CRADLE_SERVER_EXIT_OK;
        }
        if (opt == '?' || opt == ':') {
            if (optopt && optopt != '?')
                fprintf(stderr, "cradle-server: option -%c is unknown or needs a value\n", optopt);
            else
                fprintf(stderr, "cradle-server: unknown option or missing value in '%s'\n", argv[optind - 1]);
            usage(stderr);
            return CRADLE_SERVER_EXIT_USAGE;
        }
        if (opt == 'c') config = optarg;
    }
    if (optind != argc) {
        fprintf(stderr, "cradle-server: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return CRADLE_SERVER_EXIT_USAGE;
    }
    if (config && !load_config(o, config)) return CRADLE_SERVER_EXIT_USAGE;

    /* Pass 2: the flags, over the config file's values. */
    optind = 1;
    while ((opt = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
        if (opt == 'c') continue;
        char where[48];
        snprintf(where, sizeof where, "--%s", flag_name(opt));
        const option_row *row = row_of_flag(opt);
        if (!apply(o, opt, row && !row->option.arg ? "true" : optarg, where)) return CRADLE_SERVER_EXIT_USAGE;
    }
    if (o->game[0] == '\0') {
        fprintf(stderr, "cradle-server: --game is required: the path of a game library (.so)\n");
        usage(stderr);
        return CRADLE_SERVER_EXIT_USAGE;
    }
    if (o->broadcast[0] && strncmp(o->broadcast, "http://", 7) != 0 && strncmp(o->broadcast, "https://", 8) != 0) {
        fprintf(stderr, "cradle-server: --broadcast '%s': the origin's URL must start with http:// or https://\n",
                o->broadcast);
        return CRADLE_SERVER_EXIT_USAGE;
    }
    if (o->broadcast[0] && !o->log[0]) {
        fprintf(stderr, "cradle-server: --broadcast needs --log: the broadcast is the session log's blocks\n");
        return CRADLE_SERVER_EXIT_USAGE;
    }
    if (o->broadcast_auth[0] && !o->broadcast[0]) {
        fprintf(stderr, "cradle-server: --broadcast-auth without --broadcast\n");
        return CRADLE_SERVER_EXIT_USAGE;
    }
    return CRADLE_SERVER_RUN;
}
