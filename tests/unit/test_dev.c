#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/cradle.h"
#include "../support/utf8.h"

#define MAX_COUNT 1000u


/* Checks that a reply is one line of valid UTF-8 JSON, an object with a
 * boolean "ok", and returns the parsed object (caller deletes it). flags
 * are jansson's (JSON_DECODE_INT_AS_REAL for integers beyond 2^63). */
static json_t *check_reply_flags(const cradle_writer *w, size_t flags) {
    assert_false(w->overflow);
    assert_true(w->length >= 2);
    assert_int_equal(w->data[w->length - 1], '\n');
    assert_null(memchr(w->data, '\n', w->length - 1));
    assert_true(valid_utf8((const unsigned char *)w->data, w->length));
    for (size_t i = 0; i + 1 < w->length; i++) assert_true((unsigned char)w->data[i] >= 0x20);
    json_t *root = json_loadb(w->data, w->length, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL | flags, NULL);
    assert_non_null(root);
    assert_true(json_is_object(root));
    assert_true(json_is_boolean(json_object_get(root, "ok")));
    return root;
}

static json_t *check_reply(const cradle_writer *w) { return check_reply_flags(w, 0); }

/* Parses a line and writes the reply a host would: ok with "kind" for a
 * common command, the parse error otherwise. Returns parse's code. */
static int round_trip(const char *line, size_t length, char *buffer, size_t capacity, json_t **reply) {
    cradle_dev_request request;
    int rc = cradle_dev_parse(&request, line, length, MAX_COUNT);
    cradle_writer w;
    cradle_writer_init(&w, buffer, capacity);
    const cradle_dev_command *common = cradle_dev_common(&request);
    if (common) {
        assert_int_equal(rc, 0);
        cradle_dev_reply_begin(&w, &request);
        cradle_dev_field_u64(&w, "kind", (uint64_t)common->kind);
        cradle_dev_field_u64(&w, "count", common->count);
        cradle_dev_reply_end(&w);
    } else {
        assert_int_not_equal(rc, 0);
        assert_true(request.message[0] != '\0');
        cradle_dev_reply_parse_error(&w, &request);
    }
    *reply = check_reply(&w);
    cradle_dev_request_deinit(&request);
    return rc;
}

static int parse_text(const char *line, json_t **reply) {
    static char buffer[4096];
    return round_trip(line, strlen(line), buffer, sizeof buffer, reply);
}

static const char *field_string(const json_t *reply, const char *name) {
    return json_string_value(json_object_get(reply, name));
}

/* field_string that fails the test when the field is missing. cmocka's
 * failure is not declared noreturn: the abort() tells the compiler that the
 * string is not NULL after this (a Release build's -Wnull-dereference). */
static const char *need_string(const json_t *reply, const char *name) {
    const char *text = field_string(reply, name);
    if (!text) {
        fail_msg("no string field \"%s\" in the reply", name);
        abort();
    }
    return text;
}

static void test_common_commands(void **state) {
    (void)state;
    cradle_dev_request r;
    assert_int_equal(cradle_dev_parse(&r, "{\"cmd\":\"status\"}", 16, MAX_COUNT), 0);
    assert_non_null(cradle_dev_common(&r));
    assert_int_equal(cradle_dev_common(&r)->kind, CRADLE_DEV_STATUS);
    assert_string_equal(r.cmd, "status");
    assert_null(r.id);
    cradle_dev_request_deinit(&r);

    const char *quit = " \t{ \"cmd\" : \"quit\" }\r\n ";
    assert_int_equal(cradle_dev_parse(&r, quit, strlen(quit), MAX_COUNT), 0);
    assert_int_equal(cradle_dev_common(&r)->kind, CRADLE_DEV_QUIT);
    cradle_dev_request_deinit(&r);

    const char *step = "{\"count\":10,\"cmd\":\"step\",\"extra\":[1,2]}";
    assert_int_equal(cradle_dev_parse(&r, step, strlen(step), MAX_COUNT), 0);
    assert_int_equal(cradle_dev_common(&r)->kind, CRADLE_DEV_STEP);
    assert_int_equal(cradle_dev_common(&r)->count, 10);
    cradle_dev_request_deinit(&r);

    /* The bounds. */
    const char *edges[] = {"{\"cmd\":\"step\",\"count\":1}", "{\"cmd\":\"step\",\"count\":1000}"};
    const uint64_t want[] = {1, 1000};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(cradle_dev_parse(&r, edges[i], strlen(edges[i]), MAX_COUNT), 0);
        assert_int_equal(cradle_dev_common(&r)->count, want[i]);
        cradle_dev_request_deinit(&r);
    }
    /* The line need not be NUL-terminated: only length bytes are read. */
    char unterminated[16];
    memcpy(unterminated, "{\"cmd\":\"quit\"}XX", 16);
    assert_int_equal(cradle_dev_parse(&r, unterminated, 14, MAX_COUNT), 0);
    cradle_dev_request_deinit(&r);
}

typedef struct error_case {
    const char *line;
    int code;
    const char *message_part;
} error_case;

static void test_every_error_kind(void **state) {
    (void)state;
    static const error_case cases[] = {
        {"", CRADLE_EDEV_NOT_JSON, "empty"},
        {"   ", CRADLE_EDEV_NOT_JSON, "empty"},
        {"status", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"status\"", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        /* json_reader's words since the parser changed from jansson ("end of file expected"). */
        {"{\"cmd\":\"status\"} {}", CRADLE_EDEV_NOT_JSON, "at byte 17 of 19: expected the end of the document"},
        {"[1,2]", CRADLE_EDEV_NOT_OBJECT, "got an array"},
        {"42", CRADLE_EDEV_NOT_OBJECT, "got 42"},
        {"\"status\"", CRADLE_EDEV_NOT_OBJECT, "got a string"},
        {"null", CRADLE_EDEV_NOT_OBJECT, "got null"},
        {"{}", CRADLE_EDEV_NO_CMD, "no \"cmd\""},
        {"{\"CMD\":\"status\"}", CRADLE_EDEV_NO_CMD, "no \"cmd\""},
        {"{\"cmd\":7}", CRADLE_EDEV_CMD_TYPE, "got 7"},
        {"{\"cmd\":null}", CRADLE_EDEV_CMD_TYPE, "got null"},
        {"{\"cmd\":[\"step\"]}", CRADLE_EDEV_CMD_TYPE, "got an array"},
        {"{\"cmd\":\"fly\"}", CRADLE_EDEV_UNKNOWN, "unknown command \"fly\""},
        {"{\"cmd\":\"STATUS\"}", CRADLE_EDEV_UNKNOWN, "STATUS"},
        {"{\"cmd\":\"step\"}", CRADLE_EDEV_COUNT_MISSING, "from 1 to 1000"},
        {"{\"cmd\":\"step\",\"count\":\"10\"}", CRADLE_EDEV_COUNT_TYPE, "got a string"},
        {"{\"cmd\":\"step\",\"count\":true}", CRADLE_EDEV_COUNT_TYPE, "got true"},
        {"{\"cmd\":\"step\",\"count\":null}", CRADLE_EDEV_COUNT_TYPE, "got null"},
        {"{\"cmd\":\"step\",\"count\":{}}", CRADLE_EDEV_COUNT_TYPE, "got an object"},
        {"{\"cmd\":\"step\",\"count\":1.5}", CRADLE_EDEV_COUNT_FLOAT, "from 1 to 1000, got 1.5"},
        {"{\"cmd\":\"step\",\"count\":-0.5}", CRADLE_EDEV_COUNT_FLOAT, "got -0.5"},
        {"{\"cmd\":\"step\",\"count\":-3}", CRADLE_EDEV_COUNT_NEG, "got -3"},
        {"{\"cmd\":\"step\",\"count\":-1e300}", CRADLE_EDEV_COUNT_TYPE, "got -1e+300 (a fraction or an exponent"},
        {"{\"cmd\":\"step\",\"count\":2.0}", CRADLE_EDEV_COUNT_TYPE, "got 2.0 (a fraction or an exponent"},
        {"{\"cmd\":\"step\",\"count\":1e2}", CRADLE_EDEV_COUNT_TYPE, "got 100.0 (a fraction or an exponent"},
        {"{\"cmd\":\"step\",\"count\":1E2}", CRADLE_EDEV_COUNT_TYPE, "got 100.0"},
        {"{\"cmd\":\"step\",\"count\":0}", CRADLE_EDEV_COUNT_ZERO, "got 0"},
        {"{\"cmd\":\"step\",\"count\":-0}", CRADLE_EDEV_COUNT_ZERO, "got 0"},
        {"{\"cmd\":\"step\",\"count\":1001}", CRADLE_EDEV_COUNT_MAX, "got 1001 (above the maximum)"},
        {"{\"cmd\":\"step\",\"count\":9007199254740991}", CRADLE_EDEV_COUNT_MAX, "above the maximum"},
        {"{\"cmd\":\"step\",\"count\":9007199254740992}", CRADLE_EDEV_COUNT_HUGE, "absurdly large"},
        {"{\"cmd\":\"step\",\"count\":1e300}", CRADLE_EDEV_COUNT_TYPE, "got 1e+300 (a fraction or an exponent"},
        {"{\"cmd\":\"step\",\"count\":1e999}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"status\",\"id\":{}}", CRADLE_EDEV_ARGUMENT,
         "\"id\" must be a string or an integer below 2^53, got an object"},
        {"{\"cmd\":\"status\",\"id\":1.5}", CRADLE_EDEV_ARGUMENT, "got 1.5"},
        {"{\"cmd\":\"status\",\"id\":9007199254740992}", CRADLE_EDEV_ARGUMENT, "below 2^53"},
        /* Not JSON by RFC 8259, each refused before anything runs. */
        {"{\"cmd\":\"step\",\"count\":01}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"step\",\"count\":1.}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"step\",\"count\":.5}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"step\",\"count\":+1}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"step\",\"count\":0x10}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"step\",\"count\":123456789012345678901234567890}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"status\\u0000\"}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"step\\u0000junk\",\"count\":1}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"status\",\"id\":\"a\\u0000b\"}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\\u0000\":\"status\"}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"status\",\"id\":01}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"status\",\"cmd\":\"quit\"}", CRADLE_EDEV_NOT_JSON, "duplicate"},
        {"{\"cmd\":\"step\",\"count\":1,\"count\":1000}", CRADLE_EDEV_NOT_JSON, "duplicate"},
        {"\f{\"cmd\":\"status\"}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"status\"}\f", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"[\f]", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"\\ud800\"}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"\\udc00x\"}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"a\tb\"}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"a\x01\"}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"\\x41\"}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"\xff\"}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"sta", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"status\",}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{'cmd':'status'}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"step\",\"count\":NaN}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"step\",\"count\":Infinity}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"\xef\xbb\xbf{\"cmd\":\"status\"}", CRADLE_EDEV_NOT_JSON, "not valid JSON"},
        {"{\"cmd\":\"status\",\"id\":true}", CRADLE_EDEV_ARGUMENT, "got true"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *reply = NULL;
        int rc = parse_text(cases[i].line, &reply);
        if (rc != cases[i].code || !strstr(field_string(reply, "message"), cases[i].message_part)) {
            print_error("case %zu %s: rc %d, message %s\n", i, cases[i].line, rc, field_string(reply, "message"));
        }
        assert_int_equal(rc, cases[i].code);
        assert_true(json_is_false(json_object_get(reply, "ok")));
        assert_string_equal(field_string(reply, "error"), cradle_error_name(cases[i].code));
        assert_non_null(strstr(field_string(reply, "message"), cases[i].message_part));
        json_decref(reply);
    }
}

static void test_unknown_command_goes_to_host_table(void **state) {
    (void)state;
    cradle_dev_request r;
    const char *line = "{\"cmd\":\"kick\",\"player\":2,\"id\":\"k1\"}";
    assert_int_equal(cradle_dev_parse(&r, line, strlen(line), MAX_COUNT), CRADLE_EDEV_UNKNOWN);
    assert_null(cradle_dev_common(&r));
    assert_string_equal(r.cmd, "kick");
    /* The tokens are the host's to read with json_reader's readers. */
    cradle_json_doc doc;
    cradle_dev_request_doc(&r, &doc);
    assert_int_equal(doc.count, 7);
    assert_int_equal(doc.tokens[0].type, CRADLE_JSON_OBJECT);
    cradle_json_error error;
    int64_t slot = -1;
    assert_true(cradle_json_int(&doc, cradle_json_member(&doc, 0, "player"), "player", 0, 3, &slot, &error));
    assert_int_equal(slot, 2);
    static const cradle_dev_entry table[] = {{"pause", NULL}, {"kick", NULL}};
    assert_ptr_equal(cradle_dev_find(table, 2, r.cmd), &table[1]);
    assert_null(cradle_dev_find(table, 2, "kic"));
    assert_null(cradle_dev_find(table, 2, NULL));

    int64_t player = -1;
    assert_int_equal(cradle_dev_arg_integer(&r, "player", true, 0, 3, 0, &player), 0);
    assert_int_equal(player, 2);
    int64_t reason = -1;
    assert_int_equal(cradle_dev_arg_integer(&r, "reason", false, 0, 9, 7, &reason), 0);
    assert_int_equal(reason, 7);
    assert_int_equal(cradle_dev_arg_integer(&r, "reason", true, 0, 9, 7, &reason), CRADLE_EDEV_ARGUMENT);
    assert_non_null(strstr(r.message, "kick needs \"reason\""));
    assert_int_equal(cradle_dev_arg_integer(&r, "player", true, 3, 5, 0, &player), CRADLE_EDEV_ARGUMENT);
    assert_non_null(strstr(r.message, "\"player\" must be an integer from 3 to 5, got 2 (below the minimum)"));

    char buffer[256];
    cradle_writer w;
    cradle_writer_init(&w, buffer, sizeof buffer);
    cradle_dev_reply_error(&w, &r, CRADLE_EDEV_ARGUMENT, r.message);
    json_t *reply = check_reply(&w);
    assert_string_equal(field_string(reply, "id"), "k1");
    assert_string_equal(field_string(reply, "error"), "bad_argument");
    json_decref(reply);
    cradle_dev_request_deinit(&r);
}

static void test_ids_are_echoed(void **state) {
    (void)state;
    json_t *reply = NULL;
    assert_int_equal(parse_text("{\"id\":\"abc\",\"cmd\":\"status\"}", &reply), 0);
    assert_string_equal(field_string(reply, "id"), "abc");
    json_decref(reply);

    static char buffer[256];
    const char *number_ids[] = {"42", "-7", "0", "9007199254740991", "-9007199254740991"};
    const char *echoed[] = {"\"id\":42,", "\"id\":-7,", "\"id\":0,", "\"id\":9007199254740991,",
                            "\"id\":-9007199254740991,"};
    for (size_t i = 0; i < 5; i++) {
        char line[128];
        snprintf(line, sizeof line, "{\"cmd\":\"status\",\"id\":%s}", number_ids[i]);
        assert_int_equal(round_trip(line, strlen(line), buffer, sizeof buffer, &reply), 0);
        assert_non_null(strstr(buffer, echoed[i]));
        json_decref(reply);
    }
    /* Errors echo the id too, once the line was an object with a valid id. */
    assert_int_equal(parse_text("{\"id\":9,\"cmd\":\"step\",\"count\":0}", &reply), CRADLE_EDEV_COUNT_ZERO);
    assert_int_equal(json_integer_value(json_object_get(reply, "id")), 9);
    json_decref(reply);
    assert_int_equal(parse_text("{\"id\":\"x\",\"cmd\":\"nope\"}", &reply), CRADLE_EDEV_UNKNOWN);
    assert_string_equal(field_string(reply, "id"), "x");
    json_decref(reply);
    /* An id with quotes and escapes comes back equal. */
    assert_int_equal(parse_text("{\"id\":\"a\\\"b\\\\c\\n\\u00e9\",\"cmd\":\"quit\"}", &reply), 0);
    assert_string_equal(field_string(reply, "id"), "a\"b\\c\n\xc3\xa9");
    json_decref(reply);
}

static void test_hostile_bytes_give_valid_replies(void **state) {
    (void)state;
    static char buffer[8192];
    json_t *reply = NULL;
    /* Invalid UTF-8 and raw control characters in cmd and id: not JSON,
     * and the reply stays valid whatever the parser's message quotes. */
    const char line[] = "{\"id\":\"\x01\xff\xc3\x28\xed\xa0\x80\xf4\x90\x80\x80\x7f\",\"cmd\":\"\x1b[31m\xc0\xaf\x80\"}";
    int rc = round_trip(line, sizeof line - 1, buffer, sizeof buffer, &reply);
    assert_int_equal(rc, CRADLE_EDEV_NOT_JSON);
    json_decref(reply);
    /* Escaped control characters are JSON: an unknown command's message
     * quotes the name, escaped on the wire. */
    const char escaped[] = "{\"id\":\"\\u0001x\",\"cmd\":\"\\u001b[31m\"}";
    rc = round_trip(escaped, sizeof escaped - 1, buffer, sizeof buffer, &reply);
    assert_int_equal(rc, CRADLE_EDEV_UNKNOWN);
    const char *id = need_string(reply, "id");
    assert_int_equal(id[0], 1);
    assert_int_equal(id[1], 'x');
    assert_non_null(strstr(need_string(reply, "message"), "\x1b[31m"));
    json_decref(reply);

    /* A long command name is cut in the message, which stays valid. */
    char long_line[600];
    int n = snprintf(long_line, sizeof long_line, "{\"cmd\":\"");
    for (int i = 0; i < 500; i++) long_line[n++] = (char)(i % 2 ? '\xa9' : '\xc3');
    memcpy(long_line + n, "\"}", 3);
    assert_int_equal(round_trip(long_line, strlen(long_line), buffer, sizeof buffer, &reply), CRADLE_EDEV_UNKNOWN);
    json_decref(reply);

    /* NUL bytes inside, before and after the value. */
    const char nul[] = "{\"cmd\":\"st\0atus\"}\0";
    assert_int_equal(round_trip(nul, sizeof nul - 1, buffer, sizeof buffer, &reply), CRADLE_EDEV_NOT_JSON);
    json_decref(reply);
    const char lead[] = "\0{\"cmd\":\"status\"}";
    assert_int_equal(round_trip(lead, sizeof lead - 1, buffer, sizeof buffer, &reply), CRADLE_EDEV_NOT_JSON);
    json_decref(reply);
    const char trail[] = "{\"cmd\":\"status\"}\0";
    assert_int_equal(round_trip(trail, sizeof trail - 1, buffer, sizeof buffer, &reply), CRADLE_EDEV_NOT_JSON);
    json_decref(reply);

    /* Deep nesting is refused, not a stack overflow. */
    static char deep[20002];
    memset(deep, '[', 10000);
    memset(deep + 10000, ']', 10000);
    assert_int_equal(round_trip(deep, 20000, buffer, sizeof buffer, &reply), CRADLE_EDEV_NOT_JSON);
    json_decref(reply);

    /* Random bytes, and random bytes inside a string field. */
    cradle_rng rng;
    cradle_rng_seed(&rng, 4, 4);
    char random_line[256];
    for (int round = 0; round < 3000; round++) {
        size_t length = (size_t)cradle_rng_range(&rng, 0, 200);
        size_t at = 0;
        if (round % 2) at = (size_t)snprintf(random_line, sizeof random_line, "{\"cmd\":\"");
        for (size_t i = 0; i < length; i++) random_line[at + i] = (char)cradle_rng_range(&rng, 0, 255);
        at += length;
        if (round % 2) {
            char fake_id[9];
            memcpy(fake_id, random_line + 8, sizeof fake_id);
            at += (size_t)snprintf(random_line + at, sizeof random_line - at, "\",\"id\":\"%.*s\"}",
                                   (int)(length % 9), fake_id);
        }
        round_trip(random_line, at, buffer, sizeof buffer, &reply);
        json_decref(reply);
    }
}

/* Where a not_json message says the line went wrong: the byte counted from
 * 0 (the line's length when it ended too soon). */
static void test_not_json_names_the_byte(void **state) {
    (void)state;
    static const struct {
        const char *line;
        const char *message;
    } cases[] = {
        {"status", "not valid JSON at byte 0 of 6: expected a value, got 's'"},
        {"{\"cmd\":\"status\"", "not valid JSON at byte 15 of 15: the document ends inside the object"},
        {"{\"cmd\":\"step\",\"count\":01}", "not valid JSON at byte 23 of 25: a number may not have a leading zero"},
        {"{\"cmd\":\"step\",\"count\":1.}", "not valid JSON at byte 24 of 25: expected a digit after the decimal"},
        {"{\"cmd\":\"status\",\"cmd\":\"quit\"}", "not valid JSON at byte 16 of 29: duplicate key \"cmd\""},
        {"{\"cmd\":\"status\\u0000\"}", "not valid JSON at byte 14 of 22: \\u0000 in a string or key"},
        {"{\"cmd\\u0000\":\"status\"}", "not valid JSON at byte 5 of 22: \\u0000 in a string or key"},
        {"{\"cmd\":\"\xff\"}", "not valid JSON at byte 8 of 11: invalid UTF-8: byte 0xff"},
        {"{\"cmd\":\"\xc3(\"}", "not valid JSON at byte 9 of 12: invalid UTF-8: byte 0x28 after 0xc3"},
        {"{\"cmd\":\"a\\x\"}", "not valid JSON at byte 10 of 13: invalid escape: a backslash before 'x'"},
        {"{\"cmd\":tru}", "not valid JSON at byte 10 of 11: expected true, got \"tru\""},
        {"{\"a\":1,}", "not valid JSON at byte 7 of 8: a trailing comma before '}'"},
        {"{\"cmd\":\"step\",\"count\":123456789012345678901234567890}",
         "not valid JSON at byte 22 of 53: an integer beyond 64 bits"},
        {"{\"cmd\":\"step\",\"count\":1e999}", "not valid JSON at byte 22 of 28: a number beyond the range of a double"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cradle_dev_request r;
        assert_int_equal(cradle_dev_parse(&r, cases[i].line, strlen(cases[i].line), MAX_COUNT), CRADLE_EDEV_NOT_JSON);
        if (strncmp(r.message, cases[i].message, strlen(cases[i].message)) != 0)
            fail_msg("case %zu %s: \"%s\", wanted \"%s...\"", i, cases[i].line, r.message, cases[i].message);
        cradle_dev_request_deinit(&r);
    }
}

/* Runs line and checks its code and a part of its message. */
static void expect_line(const char *line, size_t length, int code, const char *message_part) {
    cradle_dev_request r;
    int rc = cradle_dev_parse(&r, line, length, MAX_COUNT);
    if (rc != code || !strstr(r.message, message_part))
        fail_msg("%.60s...: rc %d \"%s\", wanted %d \"%s\"", line, rc, r.message, code, message_part);
    cradle_dev_request_deinit(&r);
}

/* The limits (64 deep, 512 values) and the rules beyond RFC 8259 (no
 * \u0000, integers within 64 bits, reals within a double) hold anywhere in
 * the line, not only in the fields the protocol reads. */
static void test_limits_and_rules_hold_anywhere(void **state) {
    (void)state;
    static char line[16384];
    /* 63 arrays inside the object: 64 deep, accepted; one more is refused. */
    for (int depth = 63; depth <= 64; depth++) {
        int n = snprintf(line, sizeof line, "{\"cmd\":\"status\",\"x\":");
        for (int i = 0; i < depth; i++) line[n++] = '[';
        for (int i = 0; i < depth; i++) line[n++] = ']';
        line[n++] = '}';
        if (depth == 63)
            expect_line(line, (size_t)n, 0, "");
        else
            expect_line(line, (size_t)n, CRADLE_EDEV_NOT_JSON, "at byte 83 of 149: nesting deeper than 64");
    }
    /* 512 values (the object, two keys, "status" and an array of 507), then 513. */
    for (int values = 512; values <= 513; values++) {
        int n = snprintf(line, sizeof line, "{\"cmd\":\"status\",\"x\":[");
        for (int i = 0; i < values - 5; i++) n += snprintf(line + n, sizeof line - (size_t)n, "%s1", i ? "," : "");
        n += snprintf(line + n, sizeof line - (size_t)n, "]}");
        if (values == 512)
            expect_line(line, (size_t)n, 0, "");
        else
            expect_line(line, (size_t)n, CRADLE_EDEV_NOT_JSON, "more than 512 values (keys included)");
    }
    static const struct {
        const char *line;
        int code;
        const char *message_part;
    } cases[] = {
        {"{\"cmd\":\"status\",\"x\":[{\"y\":\"a\\u0000\"}]}", CRADLE_EDEV_NOT_JSON, "\\u0000"},
        {"{\"cmd\":\"status\",\"x\":[{\"\\u0000\":1}]}", CRADLE_EDEV_NOT_JSON, "\\u0000"},
        {"{\"cmd\":\"status\",\"x\":\"\\\\u0000\"}", 0, ""}, /* an escaped backslash, then "u0000" */
        {"{\"cmd\":\"status\",\"x\":\"\\u00000\"}", CRADLE_EDEV_NOT_JSON, "\\u0000"},
        {"{\"cmd\":\"status\",\"x\":[9223372036854775807,-9223372036854775808]}", 0, ""},
        {"{\"cmd\":\"status\",\"x\":[9223372036854775808]}", CRADLE_EDEV_NOT_JSON, "beyond 64 bits"},
        {"{\"cmd\":\"status\",\"x\":[-9223372036854775809]}", CRADLE_EDEV_NOT_JSON, "beyond 64 bits"},
        {"{\"cmd\":\"status\",\"x\":[1.7976931348623157e308,-1e-400,0e99999999999]}", 0, ""},
        {"{\"cmd\":\"status\",\"x\":[1.7976931348623159e308]}", CRADLE_EDEV_NOT_JSON, "range of a double"},
        {"{\"cmd\":\"status\",\"x\":-1e309}", CRADLE_EDEV_NOT_JSON, "range of a double"},
        /* Keys and strings are compared decoded, as jansson did. */
        {"{\"c\\u006dd\":\"st\\u0061tus\"}", 0, ""},
        {"{\"cmd\":\"step\",\"co\\u0075nt\":5}", 0, ""},
        {"{\"cmd\":\"step\",\"count\":1,\"\\u0063ount\":2}", CRADLE_EDEV_NOT_JSON, "duplicate key"},
        /* Numbers read the way jansson read them. */
        {"{\"cmd\":\"step\",\"count\":1.00000000000000000001}", CRADLE_EDEV_COUNT_TYPE, "got 1.0 (a fraction"},
        {"{\"cmd\":\"step\",\"count\":0.1e1}", CRADLE_EDEV_COUNT_TYPE, "got 1.0 (a fraction"},
        {"{\"cmd\":\"step\",\"count\":25e-1}", CRADLE_EDEV_COUNT_FLOAT, "got 2.5"},
        {"{\"cmd\":\"step\",\"count\":-0.0}", CRADLE_EDEV_COUNT_TYPE, "got -0.0"},
        {"{\"cmd\":\"step\",\"count\":0.30000000000000004}", CRADLE_EDEV_COUNT_FLOAT, "got 0.30000000000000004"},
        {"{\"cmd\":\"step\",\"count\":-9223372036854775808}", CRADLE_EDEV_COUNT_NEG, "got -9223372036854775808"},
        {"{\"cmd\":\"status\",\"id\":-9007199254740992}", CRADLE_EDEV_ARGUMENT, "got -9007199254740992"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_line(cases[i].line, strlen(cases[i].line), cases[i].code, cases[i].message_part);
    /* A real of more digits than strtod is given still reads exactly: 1
     * followed by 1000 zeros and a 1, times 10^-1001, is 1.000...1. */
    int n = snprintf(line, sizeof line, "{\"cmd\":\"step\",\"count\":1");
    for (int i = 0; i < 1000; i++) line[n++] = '0';
    n += snprintf(line + n, sizeof line - (size_t)n, "1e-1001}");
    expect_line(line, (size_t)n, CRADLE_EDEV_COUNT_TYPE, "got 1.0 (a fraction");
}

/* Strings with escapes: decoded for cmd, echoed as jansson did for an id,
 * however long. */
static void test_escaped_strings(void **state) {
    (void)state;
    static char line[8192], buffer[16384];
    json_t *reply = NULL;
    /* An id of 1000 escaped characters comes back decoded and re-escaped. */
    int n = snprintf(line, sizeof line, "{\"cmd\":\"status\",\"id\":\"");
    for (int i = 0; i < 1000; i++) n += snprintf(line + n, sizeof line - (size_t)n, "%s", i % 3 ? "\\u00e9" : "\\u0001\x7f");
    n += snprintf(line + n, sizeof line - (size_t)n, "\"}");
    assert_int_equal(round_trip(line, (size_t)n, buffer, sizeof buffer, &reply), 0);
    const char *id = need_string(reply, "id");
    size_t at = 0;
    for (int i = 0; i < 1000; i++) {
        const char *want = i % 3 ? "\xc3\xa9" : "\x01\x7f";
        assert_memory_equal(id + at, want, 2);
        at += 2;
    }
    assert_int_equal(strlen(id), at);
    /* The same bytes as jansson's path gave: \u0001 and DEL escaped, é raw. */
    assert_non_null(strstr(buffer, "\"id\":\"\\u0001\\u007f\xc3\xa9\xc3\xa9\\u0001"));
    json_decref(reply);

    /* A cmd decoded, and one too long to keep whole: unknown, cut to 64 bytes. */
    expect_line("{\"cmd\":\"\\u0073tatus\"}", 21, 0, "");
    n = snprintf(line, sizeof line, "{\"cmd\":\"");
    for (int i = 0; i < 300; i++) n += snprintf(line + n, sizeof line - (size_t)n, "\\u0061");
    n += snprintf(line + n, sizeof line - (size_t)n, "\"}");
    cradle_dev_request r;
    assert_int_equal(cradle_dev_parse(&r, line, (size_t)n, MAX_COUNT), CRADLE_EDEV_UNKNOWN);
    assert_int_equal(strlen(r.cmd), CRADLE_DEV_CMD_BYTES - 1);
    char want[128];
    snprintf(want, sizeof want, "unknown command \"%.64s...\"", r.cmd);
    assert_string_equal(r.message, want);
    cradle_dev_request_deinit(&r);
}

static void test_arg_names(void **state) {
    (void)state;
    static const char *const names[] = {"join", "leave", "step"};
    static const struct {
        const char *line;
        int code;
        uint64_t mask;
        const char *message;
    } cases[] = {
        {"{\"cmd\":\"sub\"}", 0, 7, ""},
        {"{\"cmd\":\"sub\",\"events\":[]}", 0, 0, ""},
        {"{\"cmd\":\"sub\",\"events\":[\"step\",\"join\"]}", 0, 5, ""},
        {"{\"cmd\":\"sub\",\"events\":[\"l\\u0065ave\"]}", 0, 2, ""},
        {"{\"cmd\":\"sub\",\"events\":\"join\"}", CRADLE_EDEV_ARGUMENT, 0,
         "\"events\" must be an array of names, got a string"},
        {"{\"cmd\":\"sub\",\"events\":[\"join\",3]}", CRADLE_EDEV_ARGUMENT, 0,
         "\"events\" must hold names (strings), got 3"},
        {"{\"cmd\":\"sub\",\"events\":[\"join\",\"jo\\u0069ned\"]}", CRADLE_EDEV_ARGUMENT, 0,
         "\"events\": unknown name \"joined\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cradle_dev_request r;
        assert_int_equal(cradle_dev_parse(&r, cases[i].line, strlen(cases[i].line), MAX_COUNT), CRADLE_EDEV_UNKNOWN);
        uint64_t mask = 99;
        assert_int_equal(cradle_dev_arg_names(&r, "events", names, 3, &mask), cases[i].code);
        if (cases[i].code == 0)
            assert_int_equal(mask, cases[i].mask);
        else
            assert_string_equal(r.message, cases[i].message);
        cradle_dev_request_deinit(&r);
    }
}

static void test_writer(void **state) {
    (void)state;
    char buffer[16];
    cradle_writer w;
    cradle_writer_init(&w, buffer, sizeof buffer);
    cradle_writer_text(&w, "0123456789");
    cradle_writer_format(&w, "%d", 12345); /* 15 bytes + NUL fit exactly */
    assert_false(w.overflow);
    assert_int_equal(w.length, 15);
    cradle_writer_format(&w, "%d", 12); /* no room: all or nothing */
    assert_true(w.overflow);
    assert_int_equal(w.length, 15);
    cradle_writer_text(&w, "");
    assert_int_equal(w.length, 15);

    char big[64];
    cradle_writer_init(&w, big, sizeof big);
    cradle_writer_json_string(&w, "a\"\\\t\x01\x7f\xe2\x82\xac", 9);
    assert_false(w.overflow);
    assert_int_equal(w.length, strlen("\"a\\\"\\\\\\t\\u0001\\u007f\xe2\x82\xac\""));
    assert_memory_equal(big, "\"a\\\"\\\\\\t\\u0001\\u007f\xe2\x82\xac\"", w.length);

    /* A string that does not fit leaves nothing behind. */
    cradle_writer_init(&w, big, 10);
    cradle_writer_text(&w, "ab");
    cradle_writer_json_string(&w, "\x01\x02", 2);
    assert_true(w.overflow);
    assert_int_equal(w.length, 2);

    /* An error reply that does not fit overflows instead of being cut. */
    cradle_writer_init(&w, big, sizeof big);
    cradle_dev_reply_error(&w, NULL, CRADLE_EDEV_UNKNOWN, "a message far too long for sixty-four bytes of room");
    assert_true(w.overflow);
}

static void test_reply_fields(void **state) {
    (void)state;
    char buffer[256];
    cradle_writer w;
    cradle_writer_init(&w, buffer, sizeof buffer);
    cradle_dev_reply_begin(&w, NULL);
    cradle_dev_field_u64(&w, "step", UINT64_MAX);
    cradle_dev_field_i64(&w, "delta", -5);
    cradle_dev_field_bool(&w, "paused", false);
    cradle_dev_field_string(&w, "mode", "commanded");
    cradle_dev_field_raw(&w, "positions", "[1,2,3]");
    cradle_dev_reply_end(&w);
    const char *want = "{\"ok\":true,\"step\":18446744073709551615,\"delta\":-5,\"paused\":false,"
                       "\"mode\":\"commanded\",\"positions\":[1,2,3]}\n";
    assert_int_equal(w.length, strlen(want));
    assert_memory_equal(buffer, want, w.length);
    json_decref(check_reply_flags(&w, JSON_DECODE_INT_AS_REAL));

    cradle_writer_init(&w, buffer, sizeof buffer);
    cradle_dev_reply_ok(&w, NULL);
    assert_int_equal(w.length, 12);
    assert_memory_equal(buffer, "{\"ok\":true}\n", 12);

    cradle_writer_init(&w, buffer, sizeof buffer);
    cradle_dev_reply_error(&w, NULL, CRADLE_EDEV_STATE, NULL);
    const char *want_error = "{\"ok\":false,\"error\":\"wrong_state\",\"message\":\"command not allowed in this state\"}\n";
    assert_int_equal(w.length, strlen(want_error));
    assert_memory_equal(buffer, want_error, w.length);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_common_commands),
        cmocka_unit_test(test_every_error_kind),
        cmocka_unit_test(test_unknown_command_goes_to_host_table),
        cmocka_unit_test(test_ids_are_echoed),
        cmocka_unit_test(test_hostile_bytes_give_valid_replies),
        cmocka_unit_test(test_not_json_names_the_byte),
        cmocka_unit_test(test_limits_and_rules_hold_anywhere),
        cmocka_unit_test(test_escaped_strings),
        cmocka_unit_test(test_arg_names),
        cmocka_unit_test(test_writer),
        cmocka_unit_test(test_reply_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
