/*
 * fuzz_server_config: cradle-server's --config file parser
 * (cradle_server_options_parse_config_text, server/src/options.c) on
 * arbitrary bytes as the file's text, applied over the defaults.
 *
 * Nothing may crash, leak or read out of bounds. When the text is accepted:
 * every string field is NUL-terminated inside its array, every number is in
 * the range options.h and --help document, and the fields agree with the
 * JSON itself, parsed again here with jansson as strictly (so no key
 * appears twice): a path key's value is the field byte for byte (a boolean
 * or a JSON integer as its text), a JSON integer or numeric string for a
 * number key is the field's value, and "trust" (a string or an array of
 * them) is the trust list in order. A duplicate key, a NUL in a string, a
 * JSON real for a number key or an integer from 2^53 on is never accepted.
 *
 * Seeds in corpus/server_config: deploy/server.json and small valid and
 * invalid configs, written by hand.
 */
#include <errno.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    /* The parser prints each usage error on stderr. Point the stream (not
     * fd 2, which libFuzzer and the sanitizers write to) at /dev/null:
     * glibc's stderr is an assignable FILE pointer read at each call. */
    FILE *null = fopen("/dev/null", "w");
    if (!null) abort();
    stderr = null;
    return 0;
}

static void terminated(const char *field, size_t capacity) {
    if (!memchr(field, '\0', capacity)) abort();
}

static void in_range(uint64_t v, uint64_t min, uint64_t max) {
    if (v < min || v > max) abort();
}

/* A JSON value as the parser reads a number: a JSON integer from 0 to
 * 2^53 - 1 (never a real), or a string of decimal digits. */
static bool number_of(const json_t *item, uint64_t *out) {
    if (json_is_integer(item)) {
        json_int_t v = json_integer_value(item);
        if (v < 0 || v >= ((json_int_t)1 << 53)) return false;
        *out = (uint64_t)v;
        return true;
    }
    if (!json_is_string(item)) return false;
    const char *s = json_string_value(item);
    if (s[0] < '0' || s[0] > '9') return false;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end != '\0') return false;
    *out = v;
    return true;
}

/* "trust" again: a string is one entry, an array its entries in order. */
static void agree_trust(const cradle_server_options *o, const json_t *item) {
    if (json_is_string(item)) {
        if (o->trust_count != 1 || strcmp(o->trust[0], json_string_value(item)) != 0) abort();
        return;
    }
    if (!json_is_array(item) || json_array_size(item) != o->trust_count) abort();
    size_t index;
    const json_t *entry;
    json_array_foreach(item, index, entry) {
        if (!json_is_string(entry) || strcmp(o->trust[index], json_string_value(entry)) != 0) abort();
    }
}

/* The accepted text again, key by key: jansson refuses a repeated key, so
 * each key's one value decides its field. */
static void agree_with_json(const cradle_server_options *o, const char *text, size_t size) {
    json_error_t error;
    json_t *root = json_loadb(text, size, JSON_REJECT_DUPLICATES, &error);
    if (!root || !json_is_object(root)) abort();
    const struct {
        const char *key;
        const char *field;
    } paths[] = {
        {"game", o->game},   {"bind", o->bind},         {"dev-socket", o->dev_socket},
        {"log", o->log},     {"resume", o->resume},     {"key", o->key},
        {"trust-file", o->trust_file},
    };
    const struct {
        const char *key;
        uint64_t value;
    } numbers[] = {
        {"port", o->port},
        {"seed", o->seed},
        {"players", o->players},
        {"hash-interval", o->hash_interval},
        {"spectators", o->spectators},
        {"timeout", o->timeout_ms},
        {"auth-timeout", o->auth_timeout_ms},
        {"connect-rate", o->connect_rate},
        {"connect-burst", o->connect_burst},
        {"dev-group", o->dev_group},
    };
    if (!json_object_get(root, "trust") && o->trust_count != 0) abort();
    const char *key;
    const json_t *item;
    json_object_foreach(root, key, item) {
        /* The parser took a string: jansson refuses any NUL inside one. */
        if (json_is_string(item) && strlen(json_string_value(item)) != json_string_length(item)) abort();
        if (strcmp(key, "trust") == 0) {
            agree_trust(o, item);
            continue;
        }
        for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
            if (strcmp(key, paths[i].key) != 0) continue;
            char value[32];
            const char *expect = json_string_value(item);
            uint64_t v = 0;
            if (json_is_boolean(item)) {
                expect = json_is_true(item) ? "true" : "false";
            } else if (json_is_integer(item) && number_of(item, &v)) {
                snprintf(value, sizeof value, "%llu", (unsigned long long)v);
                expect = value;
            }
            if (!expect || strcmp(paths[i].field, expect) != 0) abort();
        }
        for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
            uint64_t v = 0;
            if (strcmp(key, numbers[i].key) != 0) continue;
            if (!number_of(item, &v) || v != numbers[i].value) abort();
        }
    }
    json_decref(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    static cradle_server_options o;
    cradle_server_options_defaults(&o);
    if (cradle_server_options_parse_config_text(&o, text, size, "fuzz.json") == CRADLE_SERVER_RUN) {
        terminated(o.game, sizeof o.game);
        terminated(o.bind, sizeof o.bind);
        terminated(o.dev_socket, sizeof o.dev_socket);
        if (strlen(o.dev_socket) > 107) abort(); /* sun_path */
        terminated(o.log, sizeof o.log);
        terminated(o.resume, sizeof o.resume);
        terminated(o.key, sizeof o.key);
        terminated(o.trust_file, sizeof o.trust_file);
        if (o.trust_count > CRADLE_SERVER_TRUST_MAX) abort();
        for (uint32_t i = 0; i < o.trust_count; i++) {
            terminated(o.trust[i], sizeof o.trust[i]);
            if (strlen(o.trust[i]) != 64 || strspn(o.trust[i], "0123456789abcdefABCDEF") != 64) abort();
        }
        in_range(o.port, 1, 65535);
        if (o.players != 0) in_range(o.players, 1, 64);
        if (o.input_delay != CRADLE_SERVER_INPUT_DELAY_AUTO)
            in_range(o.input_delay, 0, CRADLE_SERVER_MAX_INPUT_DELAY);
        if (o.mode != CRADLE_SERVER_PACED && o.mode != CRADLE_SERVER_COMMANDED) abort();
        in_range(o.hash_interval, 1, 65535);
        in_range(o.spectators, 0, 4000);
        in_range(o.timeout_ms, 100, 600000);
        if (o.auth_timeout_ms != 0) in_range(o.auth_timeout_ms, 100, 60000);
        if (o.connect_rate != 0) in_range(o.connect_rate, 1, 100000);
        if (o.connect_burst != 0) in_range(o.connect_burst, 1, 100000);
        if (o.dev_group_set) in_range(o.dev_group, 0, 4294967294u);
        else if (o.dev_group != 0) abort();
        agree_with_json(&o, text, size);
    }
    free(text);
    return 0;
}
