/*
 * cradle-keys: key files and join tokens.
 *
 *   cradle-keys gen --out FILE
 *       Creates a key file (mode 0600; never replaces one) and prints its
 *       public keys:
 *           kx   <64 hex>   the server id: clients pin it, tokens name it
 *           sign <64 hex>   Ed25519: trusted issuer key / log signature key
 *   cradle-keys pub FILE [--kx | --sign]
 *       Prints the public keys of FILE (one bare hex key with --kx/--sign).
 *   cradle-keys token --key ISSUER_FILE --client-id ID --server-id HEX
 *                     --build BUILD --ttl SECONDS [--now UNIX_SECONDS]
 *       Prints a signed join token (URL-safe base64) for client ID to join
 *       the server whose kx key is HEX running build BUILD, valid for
 *       SECONDS from now (the wall clock, or --now).
 *   cradle-keys show TOKEN
 *       Prints a token's fields (the signature is not checked).
 *
 *   cradle-keys --help | --version
 *
 * Exit status: 0 success, 1 failure (message on stderr), 2 usage error (the
 * message names the flag and what the command takes).
 */
#include <assert.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cradle/errors.h"
#include "cradle/help.h"
#include "cradle/keys.h"
#include "cradle/parse.h"
#include "cradle/token.h"
#include "cradle/version.h"

#define TTL_MAX (366ull * 86400ull)

enum { GEN = 1u, PUB = 2u, TOKEN = 4u }; /* the commands an option belongs to */
enum { O_OUT = 1, O_KX, O_SIGN, O_KEY, O_CLIENT_ID, O_SERVER_ID, O_BUILD, O_TTL, O_NOW };

/* Every option of every command, once: getopt's table for a command is its
 * rows, and --help lists them all under their command's heading. */
typedef struct key_option {
    cradle_option o;
    unsigned commands;
} key_option;

static const key_option rows[] = {
    {{NULL, 0, NULL, "gen --out FILE: make a key file (0600) and print its public keys\n"
                     "  (kx: the server id; sign: the issuer key servers trust, or the log signature key)"}, 0},
    {{"out", O_OUT, "FILE", "the key file to create (never replaces one)"}, GEN},
    {{NULL, 0, NULL, "pub FILE [--kx | --sign]: print a key file's public keys"}, 0},
    {{"kx", O_KX, NULL, "only the kx key, bare hex"}, PUB},
    {{"sign", O_SIGN, NULL, "only the sign key, bare hex"}, PUB},
    {{NULL, 0, NULL, "token ...: print a join token signed with the issuer's key file"}, 0},
    {{"key", O_KEY, "ISSUER_FILE", "the issuer's key file"}, TOKEN},
    {{"client-id", O_CLIENT_ID, "ID", "the client the token admits, 0..2^64-1"}, TOKEN},
    {{"server-id", O_SERVER_ID, "HEX", "the server's kx key (cradle-keys pub server.key --kx)"}, TOKEN},
    {{"build", O_BUILD, "BUILD", "the build the server runs"}, TOKEN},
    {{"ttl", O_TTL, "SECONDS", "valid this long, 1..31622400"}, TOKEN},
    {{"now", O_NOW, "UNIX_SECONDS", "issued at this time (default: the wall clock)"}, TOKEN},
    {{NULL, 0, NULL, "show TOKEN: print a token's fields (the signature is not checked)"}, 0},
};
#define ROWS (sizeof rows / sizeof rows[0])
_Static_assert(TTL_MAX == 31622400ull, "--ttl's help names the limit");

static const struct command_form {
    const char *name, *takes;
    unsigned bit;
} forms[] = {
    {"gen", "gen --out FILE", GEN},
    {"pub", "pub FILE [--kx | --sign]", PUB},
    {"token", "token --key ISSUER_FILE --client-id ID --server-id HEX --build BUILD --ttl SECONDS "
              "[--now UNIX_SECONDS]", TOKEN},
    {"show", "show TOKEN", 0},
};
#define FORMS (sizeof forms / sizeof forms[0])

static void usage(FILE *to) {
    fprintf(to, "usage: cradle-keys COMMAND [OPTIONS]\n"
                "       cradle-keys --help | --version\n"
                "Key files and join tokens. Commands:\n");
    cradle_options_help(to, &rows[0].o, ROWS, sizeof rows[0], 28, 0);
    fprintf(to, "Exit status: 0 ok, 1 failure, 2 usage.\n");
}

/* A usage error of one command: names what was wrong and what the command
 * takes. Returns the exit status 2. */
static int usage_error(const char *cmd, const char *what, const char *arg) {
    const char *takes = cmd;
    for (size_t i = 0; i < FORMS; i++)
        if (strcmp(forms[i].name, cmd) == 0) takes = forms[i].takes;
    fprintf(stderr, "cradle-keys %s: %s%s%s%s; usage: cradle-keys %s\n", cmd, what, arg ? " '" : "",
            arg ? arg : "", arg ? "'" : "", takes);
    return 2;
}

/* One option of a command: its id and value (NULL for a switch). */
typedef struct taken {
    int id;
    const char *value;
} taken;

/* Parses a command's options (argv[0] is the command's name) with getopt,
 * from the rows of that command, into out (at most ROWS, in order) and the
 * positional arguments left at argv[*first..argc). Returns -1 to go on, or
 * the exit status of a usage error. */
static int parse(const struct command_form *c, int argc, char **argv, taken *out, size_t *count, int *first) {
    key_option mine[ROWS];
    size_t n = 0;
    for (size_t i = 0; i < ROWS; i++)
        if (rows[i].commands & c->bit) mine[n++] = rows[i];
    struct option longs[ROWS + 1];
    cradle_options_getopt(&mine[0].o, n, sizeof mine[0], longs, NULL);
    opterr = 0;
    optind = 1;
    *count = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        if (opt == ':') return usage_error(c->name, "a value is missing after", argv[optind - 1]);
        if (opt == '?') return usage_error(c->name, "unknown option", argv[optind - 1]);
        if (*count == ROWS) return usage_error(c->name, "too many options, at", argv[optind - 1]);
        out[(*count)++] = (taken){opt, optarg};
    }
    *first = optind;
    return -1;
}

static void print_public(const cradle_keys *k, int which) {
    char hex[CRADLE_KEYS_HEX_SIZE];
    if (which == 1) {
        cradle_keys_to_hex(hex, k->kx_public);
        printf("%s\n", hex);
    } else if (which == 2) {
        cradle_keys_to_hex(hex, k->sign_public);
        printf("%s\n", hex);
    } else {
        cradle_keys_to_hex(hex, k->kx_public);
        printf("kx   %s\n", hex);
        cradle_keys_to_hex(hex, k->sign_public);
        printf("sign %s\n", hex);
    }
}

static int cmd_gen(const struct command_form *c, int argc, char **argv) {
    taken opts[ROWS];
    size_t count;
    int first, rc = parse(c, argc, argv, opts, &count, &first);
    if (rc >= 0) return rc;
    if (first < argc) return usage_error("gen", "unexpected argument", argv[first]);
    const char *out = NULL;
    for (size_t i = 0; i < count; i++) out = opts[i].value; /* --out is its only option */
    if (out == NULL) return usage_error("gen", "--out FILE is required", NULL);
    cradle_keys k;
    char message[512];
    rc = cradle_keys_generate(&k);
    if (rc == 0) rc = cradle_keys_save(&k, out, message, sizeof message);
    else snprintf(message, sizeof message, "cannot generate keys: %s", cradle_strerror(rc));
    if (rc == 0) print_public(&k, 0);
    cradle_keys_wipe(&k);
    if (rc != 0) {
        fprintf(stderr, "cradle-keys: %s\n", message);
        return 1;
    }
    return 0;
}

static int cmd_pub(const struct command_form *c, int argc, char **argv) {
    taken opts[ROWS];
    size_t count;
    int first, rc = parse(c, argc, argv, opts, &count, &first);
    if (rc >= 0) return rc;
    if (first == argc) return usage_error("pub", "the key FILE is required", NULL);
    if (first + 1 < argc) return usage_error("pub", "unexpected argument", argv[first + 1]);
    int which = 0;
    for (size_t i = 0; i < count; i++) which = opts[i].id == O_KX ? 1 : 2;
    cradle_keys k;
    char message[512];
    rc = cradle_keys_load(&k, argv[first], message, sizeof message);
    if (rc != 0) {
        fprintf(stderr, "cradle-keys: %s\n", message);
        return 1;
    }
    print_public(&k, which);
    cradle_keys_wipe(&k);
    return 0;
}

static int cmd_token(const struct command_form *c, int argc, char **argv) {
    taken opts[ROWS];
    size_t count;
    int first, rc = parse(c, argc, argv, opts, &count, &first);
    if (rc >= 0) return rc;
    if (first < argc) return usage_error("token", "unexpected argument", argv[first]);
    const char *key = NULL, *server = NULL, *build = NULL;
    uint64_t client_id = 0, ttl = 0, now = 0;
    bool have_client = false, have_ttl = false, have_now = false;
    for (size_t i = 0; i < count; i++) {
        const char *v = opts[i].value;
        switch (opts[i].id) {
        case O_KEY: key = v; break;
        case O_SERVER_ID: server = v; break;
        case O_BUILD: build = v; break;
        case O_CLIENT_ID:
            if (!cradle_parse_u64(v, 0, UINT64_MAX, &client_id)) {
                fprintf(stderr, "cradle-keys: --client-id must be an unsigned integer\n");
                return 2;
            }
            have_client = true;
            break;
        case O_TTL:
            if (!cradle_parse_u64(v, 1, TTL_MAX, &ttl)) {
                fprintf(stderr, "cradle-keys: --ttl must be 1..%llu seconds\n", (unsigned long long)TTL_MAX);
                return 2;
            }
            have_ttl = true;
            break;
        case O_NOW:
            if (!cradle_parse_u64(v, 0, UINT64_MAX, &now)) {
                fprintf(stderr, "cradle-keys: --now must be Unix seconds\n");
                return 2;
            }
            have_now = true;
            break;
        default: assert(false); /* getopt gives only the ids of token's rows */
        }
    }
    const char *missing = key == NULL      ? "--key ISSUER_FILE"
                          : !have_client   ? "--client-id ID"
                          : server == NULL ? "--server-id HEX"
                          : build == NULL  ? "--build BUILD"
                          : !have_ttl      ? "--ttl SECONDS"
                                           : NULL;
    if (missing) {
        char what[64];
        snprintf(what, sizeof what, "%s is required", missing);
        return usage_error("token", what, NULL);
    }

    cradle_token t;
    memset(&t, 0, sizeof t);
    if (cradle_keys_from_hex(t.server_id, server) != 0) {
        fprintf(stderr, "cradle-keys: --server-id must be 64 hex digits (cradle-keys pub "
                        "server.key --kx)\n");
        return 2;
    }
    size_t n = strlen(build);
    if (n == 0 || n > CRADLE_GAME_BUILD_ID_MAX) {
        fprintf(stderr, "cradle-keys: --build must be 1..%u characters\n",
                CRADLE_GAME_BUILD_ID_MAX);
        return 2;
    }
    memcpy(t.build_id, build, n);
    if (!have_now) {
        time_t wall = time(NULL);
        if (wall < 0) {
            fprintf(stderr, "cradle-keys: the clock is before 1970\n");
            return 1;
        }
        now = (uint64_t)wall;
    }
    if (now > UINT64_MAX - ttl) return usage_error("token", "--now plus --ttl is past 2^64-1 seconds", NULL);
    t.client_id = client_id;
    t.issued_unix = now;
    t.expires_unix = now + ttl;

    cradle_keys k;
    char message[512];
    rc = cradle_keys_load(&k, key, message, sizeof message);
    if (rc != 0) {
        fprintf(stderr, "cradle-keys: %s\n", message);
        return 1;
    }
    randombytes_buf(t.id, sizeof t.id);
    uint8_t bytes[CRADLE_TOKEN_MAX_BYTES];
    char text[CRADLE_TOKEN_TEXT_SIZE];
    rc = cradle_token_issue(bytes, sizeof bytes, &n, &t, k.sign_secret);
    cradle_keys_wipe(&k);
    if (rc == 0) rc = cradle_token_to_text(text, bytes, n);
    if (rc != 0) {
        fprintf(stderr, "cradle-keys: cannot issue the token: %s (is the build id printable "
                        "ASCII?)\n", cradle_strerror(rc));
        return 1;
    }
    printf("%s\n", text);
    return 0;
}

static int cmd_show(const struct command_form *c, int argc, char **argv) {
    /* No options: a URL-safe base64 token may start with '-'. */
    (void)c;
    if (argc != 2)
        return usage_error("show", argc == 1 ? "the TOKEN is missing" : "expected one TOKEN, got also",
                           argc == 1 ? NULL : argv[2]);
    const char *text_in = argv[1];
    uint8_t bytes[CRADLE_TOKEN_MAX_BYTES];
    size_t n = 0;
    cradle_token t;
    if (cradle_token_from_text(bytes, &n, text_in) != 0 || cradle_token_decode(&t, bytes, n) != 0) {
        fprintf(stderr, "cradle-keys: not a valid token\n");
        return 1;
    }
    char id[2 * CRADLE_TOKEN_ID_BYTES + 1], server[CRADLE_KEYS_HEX_SIZE];
    sodium_bin2hex(id, sizeof id, t.id, sizeof t.id);
    cradle_keys_to_hex(server, t.server_id);
    printf("id        %s\nclient_id %" PRIu64 "\nserver_id %s\nbuild     %s\n"
           "issued    %" PRIu64 "\nexpires   %" PRIu64 "\n(signature not checked)\n",
           id, t.client_id, server, t.build_id, t.issued_unix, t.expires_unix);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        char version[CRADLE_VERSION_TEXT_MAX];
        cradle_version_text(version, sizeof version, "cradle-keys", NULL);
        printf("%s\n", version);
        return 0;
    }
    if (sodium_init() < 0) {
        fprintf(stderr, "cradle-keys: libsodium failed to initialise\n");
        return 1;
    }
    const char *cmd = argv[1];
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        }
    static int (*const run[FORMS])(const struct command_form *, int, char **) = {cmd_gen, cmd_pub, cmd_token,
                                                                                 cmd_show};
    for (size_t i = 0; i < FORMS; i++)
        if (strcmp(cmd, forms[i].name) == 0) return run[i](&forms[i], argc - 1, argv + 1);
    fprintf(stderr, "cradle-keys: unknown %s '%s': expected gen, pub, token or show (cradle-keys --help)\n",
            cmd[0] == '-' ? "option" : "command", cmd);
    return 2;
}
