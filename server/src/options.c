#include "options.h"

#include <arpa/inet.h>
#include <assert.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/game_abi.h"
#include "cradle/help.h"
#include "cradle/parse.h"
#include "cradle/version.h"
#include "cradle/wire.h"

#define CONFIG_FILE_MAX (1u << 20)

/* The one table of cradle-server's options: it drives the command line
 * (getopt's tables are built from it), the --config keys (the long names)
 * and --help. A row without a name is a heading in --help. In help, '\n'
 * continues the text on the next line, under the first. */
typedef struct option_row {
    const char *name;  /* long name and --config key */
    char flag;         /* short option, and apply()'s key */
    const char *arg;   /* the value's name in --help; NULL: a switch (true/false in --config) */
    const char *help;
    bool not_config;   /* only on the command line */
} option_row;

static const option_row rows[] = {
    {"game", 'g', "PATH", "game library (.so) to host (required)", false},
    {"bind", 'b', "ADDR", "IPv4 address to listen on (default: all)", false},
    {"port", 'p', "N", "UDP port, 1..65535 (default 7777)", false},
    {"dev-socket", 'd', "PATH", "serve the dev protocol on a Unix socket", false},
    {"dev-stdin", 'i', NULL, "serve the dev protocol on stdin/stdout", false},
    {"log", 'l', "PATH", "record the session log to PATH", false},
    {"seed", 's', "N", "session seed, 0..2^64-1 (default 1)", false},
    {"players", 'n', "N", "player slots, 1..the game's maximum (default: its maximum)", false},
    {"input-delay", 'D', "N|auto", "steps of input delay, 0..180, or auto from round-trip time\n(default 3)", false},
    {"mode", 'm', "paced|commanded", "real time (default), or only the dev protocol's step", false},
    {"config", 'c', "FILE", "JSON object of these options (keys: the long names);\ncommand-line flags override it", true},
    {"log-format", 'F', "text|json", "stderr log lines (default text)", false},
    {"hash-interval", 'k', "K", "send the state hash every K steps, 1..65535 (default 30)", false},
    {"spectators", 'S', "N", "spectators at once, 0..64 (default 8)", false},
    {"timeout", 'T', "MS", "drop a silent peer after MS, 100..600000 (default 5000)", false},
    {"agones", 'A', NULL, "report Ready/Health/Shutdown to the Agones SDK sidecar\n(port from AGONES_SDK_HTTP_PORT, default 9358)", false},
    {"resume", 'R', "LOG", "continue the session recorded in LOG (after a crash): its\nseed, players and steps; --log names the new log, which\nholds LOG's recovered steps and continues from them", false},
    {NULL, 0, NULL, "Security (the default is secure: a key and at least one trusted issuer):", false},
    {"key", 'K', "FILE", "server key file; created (0600) if missing, and the\nserver id (its public key, for clients to pin) printed", false},
    {"trust", 't', "HEX", "trust join tokens signed by this issuer public key\n(cradle-keys pub ISSUER.key --sign); repeatable, up to 8", false},
    {"trust-file", 'f', "FILE", "trusted issuer keys, one hex key a line ('#' comments)", false},
    {"insecure", 'I', NULL, "plaintext, no tokens: local development only, refused\nunless --bind is a loopback address (127.x.x.x)", false},
    {"auth-timeout", 'a', "MS", "drop a peer not authenticated after MS, 100..60000\n(default 2000)", false},
    {"connect-rate", 'r', "N", "connects a second per address, 1..100000 (default 2)", false},
    {"connect-burst", 'B', "N", "connects at once per address, 1..100000 (default 5)", false},
    {"dev-group", 'G', "GID", "also admit this group id to --dev-socket (mode 0660;\ndefault: only this user and root)", false},
    {"help", 'h', NULL, "show this help", true},
    {"version", 'V', NULL, "show the version", true},
};
#define ROWS (sizeof rows / sizeof rows[0])
#define HELP_COLUMN 28

static struct option long_options[ROWS + 1];
static char short_options[2 * ROWS + 1];

/* getopt's tables, from the rows (once). */
static void build_getopt_tables(void) {
    if (long_options[0].name) return;
    size_t n = 0, k = 0;
    for (size_t i = 0; i < ROWS; i++) {
        if (!rows[i].name) continue;
        long_options[n++] = (struct option){rows[i].name, rows[i].arg ? required_argument : no_argument, NULL,
                                            rows[i].flag};
        short_options[k++] = rows[i].flag;
        if (rows[i].arg) short_options[k++] = ':';
    }
    long_options[n] = (struct option){NULL, 0, NULL, 0};
    short_options[k] = '\0';
}

static const option_row *row_of_flag(int flag) {
    for (size_t i = 0; i < ROWS; i++)
        if (rows[i].name && rows[i].flag == flag) return &rows[i];
    return NULL;
}

static const option_row *row_of_name(const char *name) {
    for (size_t i = 0; i < ROWS; i++)
        if (rows[i].name && name && strcmp(rows[i].name, name) == 0) return &rows[i];
    return NULL;
}

static void usage(FILE *to) {
    fprintf(to, "usage: cradle-server --game LIBRARY [options]\n"
                "Hosts one session of a Cradle game over ENet (UDP).\n\n");
    for (size_t i = 0; i < ROWS; i++) {
        const option_row *r = &rows[i];
        if (!r->name) {
            fprintf(to, "%s\n", r->help);
            continue;
        }
        int used = fprintf(to, "  -%c, --%s%s%s", r->flag, r->name, r->arg ? " " : "", r->arg ? r->arg : "");
        cradle_help_print(to, used, HELP_COLUMN, r->help);
    }
    fprintf(to, "Exit status: 0 after quit, SIGINT or SIGTERM; 1 failure; 2 usage or configuration\n"
                "error; 3 the UDP port is taken (a script may retry another port).\n");
}

static const char *flag_name(int opt) {
    const option_row *r = row_of_flag(opt);
    return r ? r->name : "?";
}

static bool copy_path(char *field, size_t capacity, const char *text) {
    size_t n = strlen(text);
    if (n == 0 || n >= capacity) return false;
    memcpy(field, text, n + 1);
    return true;
}

/* Applies one setting. `where` is "--flag" or "config key \"flag\"" for the
 * message. Returns false after printing what is allowed. */
static bool apply(cradle_server_options *o, int opt, const char *value, const char *where) {
    uint64_t v = 0;
    switch (opt) {
    case 'g':
        if (copy_path(o->game, sizeof o->game, value)) return true;
        fprintf(stderr, "cradle-server: %s must be a path of 1..4095 bytes\n", where);
        return false;
    case 'b': {
        struct in_addr address;
        if (strlen(value) < sizeof o->bind && (value[0] == '\0' || inet_pton(AF_INET, value, &address) == 1)) {
            memcpy(o->bind, value, strlen(value) + 1);
            return true;
        }
        fprintf(stderr, "cradle-server: %s must be an IPv4 address, got '%s'\n", where, value);
        return false;
    }
    case 'p':
        if (cradle_parse_u64(value, 1, 65535, &v)) {
            o->port = (uint16_t)v;
            return true;
        }
        fprintf(stderr, "cradle-server: %s must be an integer from 1 to 65535, got '%s'\n", where, value);
        return false;
    case 'd':
        if (copy_path(o->dev_socket, 108, value)) return true;
        fprintf(stderr, "cradle-server: %s must be a path of 1..107 bytes\n", where);
        return false;
    case 'i':
        if (strcmp(value, "true") == 0 || strcmp(value, "false") == 0) {
            o->dev_stdin = strcmp(value, "true") == 0;
            return true;
        }
        fprintf(stderr, "cradle-server: %s must be true or false, got '%s'\n", where, value);
        return false;
    case 'A':
        if (strcmp(value, "true") == 0 || strcmp(value, "false") == 0) {
            o->agones = strcmp(value, "true") == 0;
            return true;
        }
        fprintf(stderr, "cradle-server: %s must be true or false, got '%s'\n", where, value);
        return false;
    case 'K':
        if (copy_path(o->key, sizeof o->key, value)) return true;
        fprintf(stderr, "cradle-server: %s must be a path of 1..4095 bytes\n", where);
        return false;
    case 'f':
        if (copy_path(o->trust_file, sizeof o->trust_file, value)) return true;
        fprintf(stderr, "cradle-server: %s must be a path of 1..4095 bytes\n", where);
        return false;
    case 't': {
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
    case 'I':
        if (strcmp(value, "true") == 0 || strcmp(value, "false") == 0) {
            o->insecure = strcmp(value, "true") == 0;
            return true;
        }
        fprintf(stderr, "cradle-server: %s must be true or false, got '%s'\n", where, value);
        return false;
    case 'a':
        if (cradle_parse_u64(value, 100, 60000, &v)) {
            o->auth_timeout_ms = (uint32_t)v;
            return true;
        }
        fprintf(stderr, "cradle-server: %s must be an integer from 100 to 60000, got '%s'\n", where, value);
        return false;
    case 'G':
        if (cradle_parse_u64(value, 0, 4294967294u, &v)) {
            o->dev_group_set = true;
            o->dev_group = (uint32_t)v;
            return true;
        }
        fprintf(stderr, "cradle-server: %s must be a numeric group id, got '%s'\n", where, value);
        return false;
    case 'r':
    case 'B':
        if (cradle_parse_u64(value, 1, 100000, &v)) {
            if (opt == 'r')
                o->connect_rate = (uint32_t)v;
            else
                o->connect_burst = (uint32_t)v;
            return true;
        }
        fprintf(stderr, "cradle-server: %s must be an integer from 1 to 100000, got '%s'\n", where, value);
        return false;
    case 'R':
        if (copy_path(o->resume, sizeof o->resume, value)) return true;
        fprintf(stderr, "cradle-server: %s must be a path of 1..4095 bytes\n", where);
        return false;
    case 'l':
        if (copy_path(o->log, sizeof o->log, value)) return true;
        fprintf(stderr, "cradle-server: %s must be a path of 1..4095 bytes\n", where);
        return false;
    case 's':
        if (cradle_parse_u64(value, 0, UINT64_MAX, &v)) {
            o->seed = v;
            return true;
        }
        fprintf(stderr, "cradle-server: %s must be an integer from 0 to 18446744073709551615, got '%s'\n",
                where, value);
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
    case 'k':
        if (cradle_parse_u64(value, 1, 65535, &v)) {
            o->hash_interval = (uint32_t)v;
            return true;
        }
        fprintf(stderr, "cradle-server: %s must be an integer from 1 to 65535, got '%s'\n", where, value);
        return false;
    case 'S':
        if (cradle_parse_u64(value, 0, 64, &v)) {
            o->spectators = (uint32_t)v;
            return true;
        }
        fprintf(stderr, "cradle-server: %s must be an integer from 0 to 64, got '%s'\n", where, value);
        return false;
    case 'T':
        if (cradle_parse_u64(value, 100, 600000, &v)) {
            o->timeout_ms = (uint32_t)v;
            return true;
        }
        fprintf(stderr, "cradle-server: %s must be an integer from 100 to 600000, got '%s'\n", where, value);
        return false;
    default: return false;
    }
}

cradle_server_parse cradle_server_options_parse_config_text(cradle_server_options *o, const char *text,
                                                            size_t length, const char *origin) {
    assert(text && text[length] == '\0' && "text[length] must be a NUL");
    cJSON *root = cJSON_ParseWithLength(text, length);
    if (!root || !cJSON_IsObject(root)) {
        fprintf(stderr, "cradle-server: --config: '%s' is not a JSON object\n", origin);
        cJSON_Delete(root);
        return CRADLE_SERVER_EXIT_USAGE;
    }
    bool ok = true;
    for (const cJSON *item = root->child; item && ok; item = item->next) {
        const option_row *opt = row_of_name(item->string);
        char where[96];
        snprintf(where, sizeof where, "config key \"%s\"", item->string ? item->string : "");
        if (!opt || opt->not_config) {
            fprintf(stderr, "cradle-server: --config: unknown %s (keys are the long option names)\n", where);
            ok = false;
            break;
        }
        char value[CRADLE_SERVER_PATH_MAX];
        if (cJSON_IsString(item)) {
            if (strlen(item->valuestring) >= sizeof value) {
                /* Never cut it: a cut path would name another file. */
                fprintf(stderr, "cradle-server: --config: %s must be at most %u bytes\n", where,
                        CRADLE_SERVER_PATH_MAX - 1u);
                ok = false;
                break;
            }
            snprintf(value, sizeof value, "%s", item->valuestring);
        } else if (cJSON_IsBool(item)) {
            snprintf(value, sizeof value, "%s", cJSON_IsTrue(item) ? "true" : "false");
        } else if (cJSON_IsNumber(item) && item->valuedouble >= 0 && item->valuedouble < 9007199254740992.0 &&
                   floor(item->valuedouble) == item->valuedouble) {
            snprintf(value, sizeof value, "%llu", (unsigned long long)item->valuedouble);
        } else {
            fprintf(stderr, "cradle-server: --config: %s must be a string, a boolean or a whole number\n",
                    where);
            ok = false;
            break;
        }
        ok = apply(o, opt->flag, value, where);
    }
    cJSON_Delete(root);
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
    o->input_delay = CRADLE_SERVER_DEFAULT_INPUT_DELAY;
    o->hash_interval = CRADLE_SERVER_DEFAULT_HASH_INTERVAL;
    o->spectators = CRADLE_SERVER_DEFAULT_SPECTATORS;
    o->timeout_ms = 5000;
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
        if (!apply(o, opt, row && !row->arg ? "true" : optarg, where)) return CRADLE_SERVER_EXIT_USAGE;
    }
    if (o->game[0] == '\0') {
        fprintf(stderr, "cradle-server: --game is required: the path of a game library (.so)\n");
        usage(stderr);
        return CRADLE_SERVER_EXIT_USAGE;
    }
    return CRADLE_SERVER_RUN;
}
