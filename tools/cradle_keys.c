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
 * Exit status: 0 success, 1 failure (message on stderr), 2 usage error.
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

#define TTL_MAX (366ull * 86400ull)

static int usage(void) {
    fprintf(stderr,
            "usage: cradle-keys gen --out FILE\n"
            "       cradle-keys pub FILE [--kx | --sign]\n"
            "       cradle-keys token --key ISSUER_FILE --client-id ID --server-id HEX\n"
            "                         --build BUILD --ttl SECONDS [--now UNIX_SECONDS]\n"
            "       cradle-keys show TOKEN\n");
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
        else
            return usage();
    }
    if (out == NULL) return usage();
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
        else return usage();
    }
    if (file == NULL) return usage();
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
        if (v == NULL) return usage();
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
        } else return usage();
    }
    if (key == NULL || server == NULL || build == NULL || !have_client || !have_ttl)
        return usage();

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
    if (now > UINT64_MAX - ttl) return usage();
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
    if (argc != 1) return usage();
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
    if (argc < 2) return usage();
    if (sodium_init() < 0) {
        fprintf(stderr, "cradle-keys: libsodium failed to initialise\n");
        return 1;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "gen") == 0) return cmd_gen(argc - 2, argv + 2);
    if (strcmp(cmd, "pub") == 0) return cmd_pub(argc - 2, argv + 2);
    if (strcmp(cmd, "token") == 0) return cmd_token(argc - 2, argv + 2);
    if (strcmp(cmd, "show") == 0) return cmd_show(argc - 2, argv + 2);
    return usage();
}
