/*
 * Tests for cradle-server's --config parser
 * (cradle_server_options_parse_config_text, server/src/options.c): strict
 * RFC 8259 through jansson, like the dev protocol. What a config took
 * before still applies; what only a lenient parser took (a repeated key, a
 * leading zero, \u0000 in a string, a trailing comma, 7777.0, text after
 * the object) is refused with a message that says what was wrong.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

static char message[4096];
static cradle_server_options o;

/* Parses length bytes of text over the defaults; the parser's stderr lines
 * land in message. */
static cradle_server_parse parse_bytes(const char *text, size_t length) {
    char *copy = malloc(length + 1);
    assert_non_null(copy);
    memcpy(copy, text, length);
    copy[length] = '\0';
    char *out = NULL;
    size_t out_size = 0;
    FILE *memory = open_memstream(&out, &out_size);
    assert_non_null(memory);
    FILE *saved = stderr;
    stderr = memory;
    cradle_server_options_defaults(&o);
    cradle_server_parse rc = cradle_server_options_parse_config_text(&o, copy, length, "cfg.json");
    stderr = saved;
    fclose(memory);
    snprintf(message, sizeof message, "%s", out ? out : "");
    free(out);
    free(copy);
    return rc;
}

static cradle_server_parse parse(const char *text) { return parse_bytes(text, strlen(text)); }

/* Refused with a message holding every one of the NULL-ended fragments. */
static void refused(const char *text, ...) {
    assert_int_equal(parse(text), CRADLE_SERVER_EXIT_USAGE);
    va_list args;
    va_start(args, text);
    for (const char *want = va_arg(args, const char *); want; want = va_arg(args, const char *)) {
        if (!strstr(message, want)) fail_msg("config %s: message \"%s\" lacks \"%s\"", text, message, want);
    }
    va_end(args);
    assert_memory_equal(message, "cradle-server: ", strlen("cradle-server: "));
    size_t n = strlen(message); /* one line */
    assert_true(n > 0 && message[n - 1] == '\n');
    assert_ptr_equal(strchr(message, '\n'), message + n - 1);
}

#define HEX_A "0123456789abcdefABCDEF0123456789abcdef0123456789abcdef0123456789"
#define HEX_F "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"

static void test_deploy_config_applies(void **state) {
    (void)state;
    const char *text = "{\n"
                       "  \"game\": \"/var/lib/cradle/games/vanguard.so\",\n"
                       "  \"bind\": \"0.0.0.0\",\n"
                       "  \"port\": 7777,\n"
                       "  \"key\": \"/var/lib/cradle/keys/server.key\",\n"
                       "  \"trust-file\": \"/etc/cradle/trusted-issuers.txt\",\n"
                       "  \"players\": 4,\n"
                       "  \"spectators\": 8,\n"
                       "  \"seed\": 1,\n"
                       "  \"input-delay\": \"auto\",\n"
                       "  \"mode\": \"paced\",\n"
                       "  \"hash-interval\": 30,\n"
                       "  \"timeout\": 10000,\n"
                       "  \"log-format\": \"json\",\n"
                       "  \"dev-stdin\": false,\n"
                       "  \"agones\": false\n"
                       "}\n";
    assert_int_equal(parse(text), CRADLE_SERVER_RUN);
    assert_string_equal(message, "");
    assert_string_equal(o.game, "/var/lib/cradle/games/vanguard.so");
    assert_string_equal(o.bind, "0.0.0.0");
    assert_int_equal(o.port, 7777);
    assert_int_equal(o.players, 4);
    assert_int_equal(o.input_delay, CRADLE_SERVER_INPUT_DELAY_AUTO);
    assert_int_equal(o.timeout_ms, 10000);
    assert_true(o.log_json);
    assert_false(o.dev_stdin);
}

static void test_values_as_before(void **state) {
    (void)state;
    /* Numbers as digit strings (a seed beyond 2^53), booleans, 0, an empty object. */
    assert_int_equal(parse("{\"seed\":\"18446744073709551615\",\"mode\":\"commanded\",\"dev-group\":\"4294967294\","
                           "\"insecure\":true,\"dev-stdin\":true,\"spectators\":0,\"port\":\"8000\"}"),
                     CRADLE_SERVER_RUN);
    assert_true(o.seed == UINT64_MAX);
    assert_int_equal(o.mode, CRADLE_SERVER_COMMANDED);
    assert_true(o.dev_group_set);
    assert_int_equal(o.dev_group, 4294967294u);
    assert_true(o.insecure && o.dev_stdin);
    assert_int_equal(o.spectators, 0);
    assert_int_equal(o.port, 8000);
    assert_int_equal(parse("  {}  \n"), CRADLE_SERVER_RUN);
    /* The largest integer a JSON number holds exactly everywhere. */
    assert_int_equal(parse("{\"seed\":9007199254740991}"), CRADLE_SERVER_RUN);
    assert_true(o.seed == 9007199254740991u);
    /* A whole number for a path is its digits, as before. */
    assert_int_equal(parse("{\"log\":12}"), CRADLE_SERVER_RUN);
    assert_string_equal(o.log, "12");
    /* A JSON escape is its character. */
    assert_int_equal(parse("{\"game\":\"g\\u00e9.so\"}"), CRADLE_SERVER_RUN);
    assert_string_equal(o.game, "g\xc3\xa9.so");
}

static void test_trust_one_or_an_array(void **state) {
    (void)state;
    assert_int_equal(parse("{\"trust\":\"" HEX_A "\"}"), CRADLE_SERVER_RUN);
    assert_int_equal(o.trust_count, 1);
    assert_string_equal(o.trust[0], HEX_A);
    assert_int_equal(parse("{\"trust\":[\"" HEX_A "\",\"" HEX_F "\"],\"key\":\"k.key\"}"), CRADLE_SERVER_RUN);
    assert_int_equal(o.trust_count, 2);
    assert_string_equal(o.trust[0], HEX_A);
    assert_string_equal(o.trust[1], HEX_F);
    /* Two "trust" keys were two issuers to the old, lenient parser: now a duplicate, with the way to write it. */
    refused("{\"trust\":\"" HEX_A "\",\"trust\":\"" HEX_F "\"}", "duplicate object key", "\"trust\"",
            "\"trust\": [\"HEX\", \"HEX\"]", NULL);
    refused("{\"trust\":[\"" HEX_A "\", 5]}", "config key \"trust\": entry 1 must be a string of 64 hex digits, got 5",
            NULL);
    refused("{\"trust\":[\"abc\"]}", "config key \"trust\" must be 64 hex digits", "got 'abc'", NULL);
}

/* What the old, lenient parser took and jansson refuses. */
static void test_duplicate_key_refused(void **state) {
    (void)state;
    refused("{\"input-delay\":\"auto\",\"port\":7777,\"port\":8000}", "'cfg.json' is not valid JSON",
            "duplicate object key", "\"port\"", "line 1", NULL);
    refused("{\n  \"mode\": \"paced\",\n  \"mode\": \"commanded\"\n}", "duplicate object key", "\"mode\"", "line 3",
            NULL);
}

static void test_leading_zero_refused(void **state) {
    (void)state;
    refused("{\"port\": 07777}", "'cfg.json' is not valid JSON at line 1, column 10 (byte 10)",
            "leading zero", NULL);
    refused("{\"seed\": -01}", "not valid JSON", "leading zero", NULL);
}

static void test_nul_in_string_refused(void **state) {
    (void)state;
    /* The old parser cut the string at the NUL: "/var/lib/g" would have been loaded. */
    refused("{\"game\":\"/var/lib/g\\u0000.so\"}", "not valid JSON", "\\u0000 is not allowed", NULL);
    refused("{\"ga\\u0000me\":\"g.so\"}", "not valid JSON", "NUL byte in object key", NULL);
    /* A raw NUL byte inside the file is refused too, not read as its end. */
    static const char raw[] = "{\"game\":\"g\0.so\"}";
    assert_int_equal(parse_bytes(raw, sizeof raw - 1), CRADLE_SERVER_EXIT_USAGE);
    assert_non_null(strstr(message, "control character 0x0"));
    static const char after[] = "{\"game\":\"g.so\"}\0{\"port\":0}";
    assert_int_equal(parse_bytes(after, sizeof after - 1), CRADLE_SERVER_EXIT_USAGE);
    assert_non_null(strstr(message, "not valid JSON"));
}

static void test_trailing_comma_and_garbage_refused(void **state) {
    (void)state;
    refused("{\"port\":7777,}", "not valid JSON at line 1, column 14", "string or '}' expected", NULL);
    refused("{\"trust\":[\"" HEX_A "\",]}", "not valid JSON", NULL);
    refused("{\"port\":7777} {\"port\":1}", "not valid JSON", "end of file expected", NULL);
    refused("{\"port\":7777", "not valid JSON", NULL);
    refused("", "not valid JSON", NULL);
    refused("{\"game\":\"g\xff.so\"}", "not valid JSON", "unable to decode byte 0xff", "the file must be UTF-8",
            NULL);
}

/* 7777.0 is a JSON real: refused, saying the option needs an integer. */
static void test_reals_refused(void **state) {
    (void)state;
    refused("{\"port\":7777.0}", "config key \"port\" needs an integer, got 7777.0", "write the digits alone",
            NULL);
    refused("{\"timeout\":1e4}", "config key \"timeout\" needs an integer, got 10000.0", NULL);
    refused("{\"players\":1.5}", "config key \"players\" needs an integer, got 1.5", NULL);
    refused("{\"input-delay\":2.0}", "config key \"input-delay\" needs an integer", NULL);
    refused("{\"log\":1.5}", "config key \"log\" must be a string, a boolean or a whole number, got 1.5", NULL);
    refused("{\"seed\":9007199254740992}", "config key \"seed\": 9007199254740992 is 2^53 or more",
            "\"9007199254740992\"", NULL);
    refused("{\"seed\":-1}", "config key \"seed\" must be a string, a boolean or a whole number, got -1", NULL);
    refused("{\"seed\":99999999999999999999}", "not valid JSON", "too big integer", NULL);
}

static void test_other_refusals_name_the_key(void **state) {
    (void)state;
    refused("[1,2,3]", "'cfg.json' is not a JSON object, got an array", NULL);
    refused("{\"colour\":\"red\"}", "unknown config key \"colour\"", NULL);
    refused("{\"config\":\"x.json\"}", "unknown config key \"config\"", NULL);
    refused("{\"port\":0}", "config key \"port\" must be an integer from 1 to 65535, got '0'", NULL);
    refused("{\"port\":\"7777x\"}", "config key \"port\" must be an integer from 1 to 65535, got '7777x'", NULL);
    refused("{\"dev-stdin\":null}", "config key \"dev-stdin\" must be a string, a boolean or a whole number, got null",
            NULL);
    refused("{\"mode\":\"fast\"}", "config key \"mode\" must be 'paced' or 'commanded'", NULL);
    refused("{\"game\":{}}", "got an object", NULL);
    char big[4200] = "{\"key\":\"";
    memset(big + strlen(big), 'k', 4096);
    strcat(big, "\"}");
    refused(big, "config key \"key\" must be at most 4095 bytes", NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deploy_config_applies),
        cmocka_unit_test(test_values_as_before),
        cmocka_unit_test(test_trust_one_or_an_array),
        cmocka_unit_test(test_duplicate_key_refused),
        cmocka_unit_test(test_leading_zero_refused),
        cmocka_unit_test(test_nul_in_string_refused),
        cmocka_unit_test(test_trailing_comma_and_garbage_refused),
        cmocka_unit_test(test_reals_refused),
        cmocka_unit_test(test_other_refusals_name_the_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
