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
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cradle/errors.h"
#include "cradle/keys.h"
#include "cradle/parse.h"
#include "cradle/token.h"
#include "cradle/version.h"

#define TTL_MAX (366ull * 86400ull)

static void usage(FILE *to) {
    fprintf(to,
            "usage: cradle-keys gen --out FILE\n"
            "       cradle-keys pub FILE [--kx | --sign]\n"
            "       cradle-keys token --key ISSUER_FILE --client-id ID --server-id HEX\n"
            "                         --build BUILD --ttl SECONDS [--now UNIX_SECONDS]\n"
            "       cradle-keys show TOKEN\n"
            "       cradle-keys --help | --version\n"
            "Key files (created 0600) and join tokens.\n"
            "  gen     make a key file and print its public keys (kx: the server id; sign: the\n"
            "          issuer key servers trust, or the log signature key)\n"
            "  pub     print a key file's public keys (one bare hex key with --kx or --sign)\n"
            "  token   print a join token signed with ISSUER_FILE, valid for SECONDS\n"
            "  show    print a token's fields (the signature is not checked)\n"
            "Exit status: 0 ok, 1 failure, 2 usage.\n");
}

/* A usage error of one command: names what was wrong and what the command
 * takes. Returns the exit status 2. */
static int usage_error(const char *cmd, const char *what, const char *arg) {
    static const struct {
        const char *cmd, *takes;
    } forms[] = {
        {"gen", "gen --out FILE"},
        {"pub", "pub FILE [--kx | --sign]"},
        {"token", "token --key ISSUER_FILE --client-id ID --server-id HEX --build BUILD --ttl SECONDS "
                  "[--now UNIX_SECONDS]"},
        {"show", "show TOKEN"},
    };
    const char *takes = NULL;
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
        if (strcmp(forms[i].cmd, cmd) == 0) takes = forms[i].takes;
    fprintf(stderr, "cradle-keys %s: %s%s%s%s; usage: cradle-keys %s\n", cmd, what, arg ? " '" : "",
            arg ? arg : "", arg ? "'" : "", takes ? takes : cmd);
    return 2;
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

static int cmd_gen(int argc, char **argv) {
    const char *out = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--out") == 0)
            return usage_error("gen", "--out needs a FILE", NULL);
        else
            return usage_error("gen", argv[i][0] == '-' ? "unknown option" : "unexpected argument", argv[i]);
    }
    if (out == NULL) return usage_error("gen", "--out FILE is required", NULL);
    cradle_keys k;
    char message[512];
    int rc = cradle_keys_generate(&k);
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

static int cmd_pub(int argc, char **argv) {
    const char *file = NULL;
    int which = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--kx") == 0) which = 1;
        else if (strcmp(argv[i], "--sign") == 0) which = 2;
        else if (file == NULL && argv[i][0] != '-') file = argv[i];
        else
            return usage_error("pub", argv[i][0] == '-' ? "unknown option" : "unexpected argument", argv[i]);
    }
    if (file == NULL) return usage_error("pub", "the key FILE is required", NULL);
    cradle_keys k;
    char message[512];
    int rc = cradle_keys_load(&k, file, message, sizeof message);
    if (rc != 0) {
        fprintf(stderr, "cradle-keys: %s\n", message);
        return 1;
    }
    print_public(&k, which);
    cradle_keys_wipe(&k);
    return 0;
}

static int cmd_token(int argc, char **argv) {
    const char *key = NULL, *server = NULL, *build = NULL;
    uint64_t client_id = 0, ttl = 0, now = 0;
    bool have_client = false, have_ttl = false, have_now = false;
    for (int i = 0; i < argc; i += 2) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        static const char *const takes_value[] = {"--key", "--server-id", "--build", "--client-id", "--ttl",
                                                  "--now"};
        bool known = false;
        for (size_t k = 0; k < sizeof takes_value / sizeof takes_value[0]; k++)
            if (strcmp(argv[i], takes_value[k]) == 0) known = true;
        if (!known)
            return usage_error("token", argv[i][0] == '-' ? "unknown option" : "unexpected argument", argv[i]);
        if (v == NULL) return usage_error("token", "a value is missing after", argv[i]);
        if (strcmp(argv[i], "--key") == 0) key = v;
        else if (strcmp(argv[i], "--server-id") == 0) server = v;
        else if (strcmp(argv[i], "--build") == 0) build = v;
        else if (strcmp(argv[i], "--client-id") == 0) {
            if (!cradle_parse_u64(v, 0, UINT64_MAX, &client_id)) {
                fprintf(stderr, "cradle-keys: --client-id must be an unsigned integer\n");
                return 2;
            }
            have_client = true;
        } else if (strcmp(argv[i], "--ttl") == 0) {
            if (!cradle_parse_u64(v, 1, TTL_MAX, &ttl)) {
                fprintf(stderr, "cradle-keys: --ttl must be 1..%llu seconds\n",
                        (unsigned long long)TTL_MAX);
                return 2;
            }
            have_ttl = true;
        } else if (strcmp(argv[i], "--now") == 0) {
            if (!cradle_parse_u64(v, 0, UINT64_MAX, &now)) {
                fprintf(stderr, "cradle-keys: --now must be Unix seconds\n");
                return 2;
            }
            have_now = true;
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
    int rc = cradle_keys_load(&k, key, message, sizeof message);
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

static int cmd_show(int argc, char **argv) {
    /* No option check: a URL-safe base64 token may start with '-'. */
    if (argc != 1)
        return usage_error("show", argc == 0 ? "the TOKEN is missing" : "expected one TOKEN, got also",
                           argc == 0 ? NULL : argv[1]);
    uint8_t bytes[CRADLE_TOKEN_MAX_BYTES];
    size_t n = 0;
    cradle_token t;
    if (cradle_token_from_text(bytes, &n, argv[0]) != 0 || cradle_token_decode(&t, bytes, n) != 0) {
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
    if (strcmp(cmd, "gen") == 0) return cmd_gen(argc - 2, argv + 2);
    if (strcmp(cmd, "pub") == 0) return cmd_pub(argc - 2, argv + 2);
    if (strcmp(cmd, "token") == 0) return cmd_token(argc - 2, argv + 2);
    if (strcmp(cmd, "show") == 0) return cmd_show(argc - 2, argv + 2);
    fprintf(stderr, "cradle-keys: unknown %s '%s': expected gen, pub, token or show (cradle-keys --help)\n",
            cmd[0] == '-' ? "option" : "command", cmd);
    return 2;
}
