#ifndef CRADLE_SERVER_OPTIONS_H
#define CRADLE_SERVER_OPTIONS_H
/*
 * options: cradle-server's settings, from a JSON config file (--config) and
 * the command line, the command line winning. A bad value is reported with
 * the flag (or config key) and what is allowed; the program exits 2.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CRADLE_SERVER_PATH_MAX 4096u
#define CRADLE_SERVER_DEFAULT_PORT 7777u
#define CRADLE_SERVER_DEFAULT_HASH_INTERVAL 30u
#define CRADLE_SERVER_DEFAULT_SPECTATORS 8u
#define CRADLE_SERVER_MAX_INPUT_DELAY 180u /* 3 s at 60 steps/s */
#define CRADLE_SERVER_INPUT_DELAY_AUTO 0xFFFFu
#define CRADLE_SERVER_TRUST_MAX 8u /* trusted issuers (CRADLE_TOKEN_ISSUERS_MAX) */

typedef enum cradle_server_mode {
    CRADLE_SERVER_PACED = 0, /* real time: the clock paces the steps */
    CRADLE_SERVER_COMMANDED = 1, /* only the dev protocol's step advances */
} cradle_server_mode;

#define CRADLE_SERVER_DEV_CLIENTS_MAX 1024u /* --dev-clients at most */

typedef struct cradle_server_options {
    char game[CRADLE_SERVER_PATH_MAX]; /* game library path (required) */
    char bind[64]; /* "" = any address */
    uint16_t port;
    char dev_socket[CRADLE_SERVER_PATH_MAX]; /* "" = none */
    bool dev_stdin;
    uint32_t dev_clients; /* --dev-clients: socket connections at once */
    char log[CRADLE_SERVER_PATH_MAX]; /* "" = no session log */
    char data[CRADLE_SERVER_PATH_MAX]; /* --data: "" = the library's folder */
    uint64_t seed;
    uint32_t players; /* 0 = the contract's maximum */
    uint32_t input_delay; /* steps, or CRADLE_SERVER_INPUT_DELAY_AUTO */
    cradle_server_mode mode;
    bool log_json; /* --log-format json */
    uint32_t hash_interval; /* K */
    uint32_t index_interval; /* --index-interval: steps between the log index's keyframes; 0 = none */
    uint32_t spectators; /* most spectators at once */
    uint32_t timeout_ms; /* peer timeout */
    uint32_t stop_timeout_ms; /* --stop-timeout (watchdog.h) */
    uint32_t exit_when_empty_s; /* --exit-when-empty: 0 = never */
    bool agones; /* --agones: report to the Agones SDK sidecar (agones.h) */
    char resume[CRADLE_SERVER_PATH_MAX]; /* --resume: the log of a session to continue (resume.h) */
    /* --broadcast (broadcast.h): the log uploaded to an HTTP origin */
    char broadcast[1024];                /* the base URL, "" = none */
    char broadcast_auth[CRADLE_SERVER_PATH_MAX]; /* the file holding the origin's secret */
    uint32_t broadcast_fragment_ms;
    uint32_t broadcast_keyframe_s;
    uint32_t broadcast_queue;
    /* security (net.h): the default is secure and needs key + a trusted issuer */
    char key[CRADLE_SERVER_PATH_MAX]; /* --key: server key file ("" = none) */
    char trust[CRADLE_SERVER_TRUST_MAX][65]; /* --trust: issuer public keys, hex */
    uint32_t trust_count;
    char trust_file[CRADLE_SERVER_PATH_MAX]; /* --trust-file: one hex key a line */
    bool insecure; /* --insecure: plaintext, no tokens, loopback bind only */
    uint32_t auth_timeout_ms; /* --auth-timeout */
    uint32_t connect_rate, connect_burst; /* per-address connect limit (0 = default) */
    bool dev_group_set; /* --dev-group: also admit this group to the dev socket */
    uint32_t dev_group;
} cradle_server_options;

#define CRADLE_SERVER_DEFAULT_STOP_TIMEOUT_MS 3000u

typedef enum cradle_server_parse {
    CRADLE_SERVER_RUN = 0,
    CRADLE_SERVER_EXIT_OK = 1, /* --help or --version printed */
    CRADLE_SERVER_EXIT_USAGE = 2, /* a message was printed on stderr */
} cradle_server_parse;

/* Parses argv (and the --config file it names) into *options. Prints help,
 * version or the usage error itself. */
cradle_server_parse cradle_server_options_parse(cradle_server_options *options, int argc, char **argv);

/* Zeroes *options and sets every default (what parse starts from). */
void cradle_server_options_defaults(cradle_server_options *options);

/* Applies a config file's text over *options: a JSON object whose keys are
 * the long option names ("port": 7777, "mode": "paced", "dev-stdin": true),
 * values strings, booleans or whole numbers, checked as the flags are, in
 * the file's order. "trust" also takes an array of keys ("trust": ["HEX",
 * "HEX"]): the way to give several, since a key appears once.
 * The text is strict RFC 8259 read by jansson, as the dev protocol is: a
 * duplicate key (named in the message), a NUL in a string (raw or \u0000),
 * invalid UTF-8, a leading zero (07777), a trailing comma or anything after
 * the object is refused with the line, column and byte. A whole number is
 * a JSON integer from 0 to 2^53 - 1, written as digits alone: 7777.0 and
 * 7.777e3 are JSON reals and refused (for a numeric option the message says
 * it needs an integer); a larger number (a seed) is a string of digits.
 * text holds length untrusted bytes followed by a NUL at text[length] (the
 * parser may look one byte past the end). origin names the text in messages
 * (the file's path). Returns CRADLE_SERVER_RUN, or CRADLE_SERVER_EXIT_USAGE
 * after printing the first bad key on stderr; *options is then partly
 * applied and must not be used. Applies no flag and needs no --game. */
cradle_server_parse cradle_server_options_parse_config_text(cradle_server_options *options,
                                                            const char *text, size_t length,
                                                            const char *origin);

#endif
