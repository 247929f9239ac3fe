/* test_broadcast: the documents of a session broadcast (broadcast.h): the
 * sync document's round trip and every refusal by name (its web list too),
 * the browser viewer's manifest, the URLs, keyframes
 * (round trip, any damaged byte, the checks behind the checksum) and the
 * check of a fragment over the blocks of a real session log. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "cradle/broadcast.h"
#include "cradle/cursor.h"
#include "cradle/hash.h"
#include "cradle/keys.h"

static char dir[256];

static int setup_dir(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/cradle-test-broadcast-XXXXXX");
    return mkdtemp(dir) && sodium_init() >= 0 ? 0 : -1;
}

static int teardown_dir(void **state) {
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* rc is a refusal whose message starts with prefix and contains want. */
static void refused_with(int rc, const char *message, const char *prefix, const char *want) {
    if (rc != CRADLE_EBROADCAST) fail_msg("rc %d; wanted a refusal with \"%s\"", rc, want);
    if (strncmp(message, prefix, strlen(prefix)) != 0 || !strstr(message, want))
        fail_msg("\"%s\": wanted \"%s...%s...\"", message, prefix, want);
}

/* ---- the sync document ------------------------------------------------------ */

static void assert_sync_equal(const cradle_broadcast_sync *a, const cradle_broadcast_sync *b) {
    assert_memory_equal(a->session, b->session, sizeof a->session);
    assert_string_equal(a->game, b->game);
    assert_string_equal(a->build, b->build);
    assert_int_equal(a->steps_per_second, b->steps_per_second);
    assert_int_equal(a->fragment_ms, b->fragment_ms);
    assert_int_equal(a->fragments, b->fragments);
    assert_int_equal(a->keyframe_count, b->keyframe_count);
    for (uint32_t i = 0; i < a->keyframe_count; i++) {
        assert_int_equal(a->keyframes[i].key, b->keyframes[i].key);
        assert_int_equal(a->keyframes[i].step, b->keyframes[i].step);
        assert_int_equal(a->keyframes[i].fragment, b->keyframes[i].fragment);
    }
    assert_int_equal(a->gap_count, b->gap_count);
    for (uint32_t i = 0; i < a->gap_count; i++) {
        assert_int_equal(a->gaps[i].first, b->gaps[i].first);
        assert_int_equal(a->gaps[i].last, b->gaps[i].last);
    }
    assert_int_equal(a->web_count, b->web_count);
    for (uint32_t i = 0; i < a->web_count; i++) {
        assert_string_equal(a->web[i].build, b->web[i].build);
        assert_memory_equal(a->web[i].manifest, b->web[i].manifest, sizeof a->web[i].manifest);
    }
    assert_int_equal(a->live_step, b->live_step);
    assert_int_equal(a->live_unix_ms, b->live_unix_ms);
    assert_int_equal(a->ended, b->ended);
}

/* Every field at its largest: both lists full, the numbers at the top of
 * their ranges, the strings at their longest with the bytes JSON escapes. */
static cradle_broadcast_sync full_sync(void) {
    cradle_broadcast_sync s;
    memset(&s, 0, sizeof s);
    for (unsigned i = 0; i < sizeof s.session; i++) s.session[i] = (uint8_t)(i * 17u);
    memset(s.game, 'g', CRADLE_GAME_NAME_MAX);
    s.game[0] = '"';
    s.game[1] = '\\';
    s.game[2] = ' ';
    s.game[3] = '/';
    s.game[CRADLE_GAME_NAME_MAX - 1] = '~';
    memset(s.build, 'b', CRADLE_GAME_BUILD_ID_MAX);
    s.build[0] = '\\';
    s.build[10] = '"';
    s.build[CRADLE_GAME_BUILD_ID_MAX - 1] = '"';
    s.steps_per_second = 1000;
    s.fragment_ms = 60000;
    s.fragments = UINT32_MAX;
    s.keyframe_count = CRADLE_BROADCAST_KEYFRAMES_MAX;
    for (uint32_t i = 0; i < CRADLE_BROADCAST_KEYFRAMES_MAX; i++) {
        s.keyframes[i].key = UINT32_MAX - (CRADLE_BROADCAST_KEYFRAMES_MAX - 1u) + i;
        s.keyframes[i].step = (uint64_t)INT64_MAX - (CRADLE_BROADCAST_KEYFRAMES_MAX - 1u) + i;
        s.keyframes[i].fragment = 10u * i + 5u;
    }
    s.keyframes[CRADLE_BROADCAST_KEYFRAMES_MAX - 1].fragment = UINT32_MAX - 1u;
    s.gap_count = CRADLE_BROADCAST_GAPS_MAX;
    for (uint32_t i = 0; i < CRADLE_BROADCAST_GAPS_MAX; i++) {
        s.gaps[i].first = 10u * i + 1u;
        s.gaps[i].last = 10u * i + 2u;
    }
    s.gaps[CRADLE_BROADCAST_GAPS_MAX - 1].last = UINT32_MAX - 2u; /* below the last keyframe's fragment */
    s.web_count = CRADLE_BROADCAST_WEB_MAX;
    for (uint32_t i = 0; i < CRADLE_BROADCAST_WEB_MAX; i++) {
        memset(s.web[i].build, '"', CRADLE_GAME_BUILD_ID_MAX);
        s.web[i].build[0] = (char)('0' + i); /* distinct */
        s.web[i].build[CRADLE_GAME_BUILD_ID_MAX - 1] = '\\';
        for (unsigned j = 0; j < CRADLE_BROADCAST_WEB_HASH_BYTES; j++) s.web[i].manifest[j] = (uint8_t)(255u - i * 31u - j);
    }
    s.live_step = (uint64_t)INT64_MAX;
    s.live_unix_ms = (uint64_t)INT64_MAX;
    s.ended = true;
    return s;
}

static void test_sync_round_trip(void **state) {
    (void)state;
    char text[CRADLE_BROADCAST_SYNC_MAX + 1], message[CRADLE_BROADCAST_MESSAGE_MAX];
    cradle_broadcast_sync full = full_sync(), back;
    size_t n = cradle_broadcast_sync_encode(&full, text, sizeof text);
    assert_true(n > 0 && n <= CRADLE_BROADCAST_SYNC_MAX);
    assert_int_equal(strlen(text), n);
    assert_int_equal(cradle_broadcast_sync_decode(text, n, &back, message, sizeof message), 0);
    assert_sync_equal(&full, &back);

    /* Everything at its smallest: no keyframe, no gap, nothing published. */
    cradle_broadcast_sync least;
    memset(&least, 0, sizeof least);
    strcpy(least.game, "g");
    strcpy(least.build, "b");
    least.steps_per_second = 1;
    least.fragment_ms = 100;
    n = cradle_broadcast_sync_encode(&least, text, sizeof text);
    assert_true(n > 0);
    assert_int_equal(cradle_broadcast_sync_decode(text, n, &back, message, sizeof message), 0);
    assert_sync_equal(&least, &back);
    assert_string_equal(text, "{\"cradle_broadcast\":2,\"session\":\"00000000000000000000000000000000\","
                              "\"game\":\"g\",\"build\":\"b\",\"steps_per_second\":1,\"fragment_ms\":100,"
                              "\"fragments\":0,\"keyframes\":[],\"gaps\":[],\"web\":[],"
                              "\"live\":{\"step\":0,\"unix_ms\":0},\"ended\":false}");
    /* one web entry, as the server writes it */
    least.web_count = 1;
    strcpy(least.web[0].build, "b");
    for (unsigned j = 0; j < CRADLE_BROADCAST_WEB_HASH_BYTES; j++) least.web[0].manifest[j] = (uint8_t)(j * 8u + 1u);
    n = cradle_broadcast_sync_encode(&least, text, sizeof text);
    assert_true(strstr(text, ",\"web\":[{\"build\":\"b\",\"manifest\":"
                             "\"0109111921293139414951596169717981899199a1a9b1b9c1c9d1d9e1e9f1f9\"}],\"live\":"));
    assert_int_equal(cradle_broadcast_sync_decode(text, n, &back, message, sizeof message), 0);
    assert_sync_equal(&least, &back);

    /* The encoder needs room for the NUL too, and says 0 when it lacks it. */
    n = cradle_broadcast_sync_encode(&full, text, sizeof text);
    char *exact = malloc(n + 1);
    assert_non_null(exact);
    assert_int_equal(cradle_broadcast_sync_encode(&full, exact, n + 1), n);
    assert_string_equal(exact, text);
    assert_int_equal(cradle_broadcast_sync_encode(&full, exact, n), 0);
    free(exact);
}

/* The valid document these cases change, member by member. */
enum { M_VERSION, M_SESSION, M_GAME, M_BUILD, M_RATE, M_FRAGMENT_MS, M_FRAGMENTS, M_KEYFRAMES, M_GAPS, M_WEB,
       M_LIVE, M_ENDED, MEMBERS };

static const char *const member_names[MEMBERS] = {"cradle_broadcast", "session",   "game",      "build",
                                                  "steps_per_second", "fragment_ms", "fragments", "keyframes",
                                                  "gaps",             "web",       "live",      "ended"};

#define HASH_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define HASH_B "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

static const char *const valid_members[MEMBERS] = {
    "\"cradle_broadcast\":2",
    "\"session\":\"00112233445566778899aabbccddeeff\"",
    "\"game\":\"vanguard\"",
    "\"build\":\"vanguard-1.4.2\"",
    "\"steps_per_second\":60",
    "\"fragment_ms\":2000",
    "\"fragments\":10",
    "\"keyframes\":[{\"key\":0,\"step\":0,\"fragment\":0},{\"key\":1,\"step\":600,\"fragment\":5}]",
    "\"gaps\":[{\"first\":2,\"last\":3}]",
    "\"web\":[{\"build\":\"vanguard-1.4.1\",\"manifest\":\"" HASH_A "\"},"
    "{\"build\":\"vanguard-1.4.2\",\"manifest\":\"" HASH_B "\"}]",
    "\"live\":{\"step\":1200,\"unix_ms\":1700000000000}",
    "\"ended\":false",
};

typedef struct change {
    int member;       /* M_...; -1: none */
    const char *with; /* the member's new text; "" drops it */
} change;

/* The valid document with up to four members changed, in a static buffer. */
static const char *document(const change *changes) {
    static char text[2 * CRADLE_BROADCAST_SYNC_MAX];
    size_t n = 0;
    text[n++] = '{';
    bool first = true;
    for (int m = 0; m < MEMBERS; m++) {
        const char *member = valid_members[m];
        for (int c = 0; c < 4 && changes; c++)
            if (changes[c].with && changes[c].member == m) member = changes[c].with;
        if (member[0] == '\0') continue;
        size_t len = strlen(member);
        assert_true(n + len + 3 < sizeof text);
        if (!first) text[n++] = ',';
        memcpy(text + n, member, len);
        n += len;
        first = false;
    }
    text[n++] = '}';
    text[n] = '\0';
    return text;
}

static int decode_text(const char *text, cradle_broadcast_sync *s, char *message, size_t size) {
    return cradle_broadcast_sync_decode(text, strlen(text), s, message, size);
}

static void test_sync_valid_document(void **state) {
    (void)state;
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    cradle_broadcast_sync s;
    const char *text = document(NULL);
    if (decode_text(text, &s, message, sizeof message) != 0) fail_msg("%s: %s", text, message);
    static const uint8_t session[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                        0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
    assert_memory_equal(s.session, session, sizeof session);
    assert_string_equal(s.game, "vanguard");
    assert_string_equal(s.build, "vanguard-1.4.2");
    assert_int_equal(s.steps_per_second, 60);
    assert_int_equal(s.fragment_ms, 2000);
    assert_int_equal(s.fragments, 10);
    assert_int_equal(s.keyframe_count, 2);
    assert_int_equal(s.keyframes[1].key, 1);
    assert_int_equal(s.keyframes[1].step, 600);
    assert_int_equal(s.keyframes[1].fragment, 5);
    assert_int_equal(s.gap_count, 1);
    assert_int_equal(s.gaps[0].first, 2);
    assert_int_equal(s.gaps[0].last, 3);
    assert_int_equal(s.web_count, 2);
    assert_string_equal(s.web[0].build, "vanguard-1.4.1");
    assert_string_equal(s.web[1].build, "vanguard-1.4.2");
    assert_int_equal(s.web[0].manifest[0], 0x01);
    assert_int_equal(s.web[0].manifest[31], 0xef);
    assert_int_equal(s.web[1].manifest[0], 0xfe);
    assert_int_equal(s.web[1].manifest[31], 0x10);
    assert_int_equal(s.live_step, 1200);
    assert_int_equal(s.live_unix_ms, 1700000000000ull);
    assert_false(s.ended);
    /* whitespace and member order are JSON's, not the encoder's */
    text = "{ \"ended\" : true,\n\"live\":{\"unix_ms\":1,\"step\":2},\"web\" : [ ],\"gaps\":[],\"keyframes\":[],\n"
           "\"fragments\":1,\"fragment_ms\":100,\"steps_per_second\":1000,\"build\":\"b\",\"game\":\"g\",\n"
           "\"session\":\"ffffffffffffffffffffffffffffffff\",\"cradle_broadcast\":2}\n";
    assert_int_equal(decode_text(text, &s, message, sizeof message), 0);
    assert_true(s.ended);
    assert_int_equal(s.live_step, 2);
}

static void test_sync_every_missing_field_is_named(void **state) {
    (void)state;
    char message[CRADLE_BROADCAST_MESSAGE_MAX], want[64];
    cradle_broadcast_sync s;
    for (int m = 0; m < MEMBERS; m++) {
        change drop[4] = {{m, ""}};
        snprintf(want, sizeof want, "missing field \"%s\"", member_names[m]);
        refused_with(decode_text(document(drop), &s, message, sizeof message), message, "sync: ", want);
    }
    static const change nested[][4] = {
        {{M_LIVE, "\"live\":{\"unix_ms\":5}"}},
        {{M_LIVE, "\"live\":{\"step\":5}"}},
        {{M_KEYFRAMES, "\"keyframes\":[{\"key\":0,\"step\":0}]"}},
        {{M_KEYFRAMES, "\"keyframes\":[{\"key\":0,\"fragment\":0}]"}},
        {{M_KEYFRAMES, "\"keyframes\":[{\"step\":0,\"fragment\":0}]"}},
        {{M_GAPS, "\"gaps\":[{\"first\":2}]"}},
        {{M_GAPS, "\"gaps\":[{\"last\":2}]"}},
        {{M_WEB, "\"web\":[{\"build\":\"v1\"}]"}},
        {{M_WEB, "\"web\":[{\"manifest\":\"" HASH_A "\"}]"}},
    };
    static const char *const nested_want[] = {"\"step\"", "\"unix_ms\"", "\"fragment\"", "\"step\"", "\"key\"",
                                              "\"last\"", "\"first\"", "\"manifest\"", "\"build\""};
    for (size_t i = 0; i < sizeof nested / sizeof nested[0]; i++)
        refused_with(decode_text(document(nested[i]), &s, message, sizeof message), message, "sync: ",
                     nested_want[i]);
}

typedef struct refusal {
    change changes[4];
    const char *want; /* in the message, after "sync: " */
} refusal;

static void refuses_all(const refusal *cases, size_t count) {
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    cradle_broadcast_sync s;
    for (size_t i = 0; i < count; i++) {
        const char *text = document(cases[i].changes);
        int rc = decode_text(text, &s, message, sizeof message);
        if (rc != CRADLE_EBROADCAST) fail_msg("accepted %s", text);
        if (strncmp(message, "sync: ", 6) != 0 || !strstr(message, cases[i].want))
            fail_msg("%s: \"%s\", wanted \"%s\"", text, message, cases[i].want);
    }
}

static void test_sync_fields_out_of_range(void **state) {
    (void)state;
    static const refusal cases[] = {
        {{{M_ENDED, "\"ended\":false,\"extra\":1"}}, "unknown field \"extra\""},
        {{{M_LIVE, "\"live\":{\"step\":1,\"unix_ms\":2,\"wall\":3}"}}, "unknown field \"wall\""},
        {{{M_KEYFRAMES, "\"keyframes\":[{\"key\":0,\"step\":0,\"fragment\":0,\"hash\":1}]"}}, "unknown field \"hash\""},
        {{{M_GAPS, "\"gaps\":[{\"first\":2,\"last\":3,\"why\":1}]"}}, "unknown field \"why\""},
        {{{M_VERSION, "\"cradle_broadcast\":1"}}, "version 1, this program reads version 2"},
        {{{M_VERSION, "\"cradle_broadcast\":3"}}, "version 3, this program reads version 2"},
        {{{M_VERSION, "\"cradle_broadcast\":0"}}, "version 0"},
        {{{M_VERSION, "\"cradle_broadcast\":\"2\""}}, "\"cradle_broadcast\""},
        {{{M_SESSION, "\"session\":\"00112233445566778899aabbccddeef\""}}, "\"session\" must be 32 lowercase hex"},
        {{{M_SESSION, "\"session\":\"00112233445566778899aabbccddeeff0\""}}, "\"session\""},
        {{{M_SESSION, "\"session\":\"00112233445566778899aabbccddeeff00\""}}, "\"session\""},
        {{{M_SESSION, "\"session\":\"00112233445566778899AABBCCDDEEFF\""}}, "\"session\" must be 32 lowercase hex"},
        {{{M_SESSION, "\"session\":\"0011223344556677889gaabbccddeeff\""}}, "\"session\" must be 32 lowercase hex"},
        {{{M_SESSION, "\"session\":\"0011223344556677\\u0000899aabbccddeeff\""}}, "\"session\""},
        {{{M_SESSION, "\"session\":\"\""}}, "\"session\""},
        {{{M_SESSION, "\"session\":7"}}, "\"session\""},
        {{{M_GAME, "\"game\":\"\""}}, "\"game\" must be 1..31 printable ASCII bytes"},
        {{{M_GAME, "\"game\":\"van\\u0001guard\""}}, "\"game\" must be 1..31 printable ASCII bytes"},
        {{{M_GAME, "\"game\":\"van\\tguard\""}}, "\"game\""},
        {{{M_GAME, "\"game\":\"van\\u007fguard\""}}, "\"game\""},
        {{{M_GAME, "\"game\":\"vanguard\\u00e9\""}}, "\"game\""},
        {{{M_GAME, "\"game\":\"ggggggggggggggggggggggggggggggggg\""}}, "\"game\""}, /* 32 bytes */
        {{{M_GAME, "\"game\":null"}}, "\"game\""},
        {{{M_GAME, "\"game\":\"van\\u0000guard\""}}, "\"game\" must not hold \\u0000"},
        {{{M_BUILD, "\"build\":\"\""}}, "\"build\" must be 1..63 printable ASCII bytes"},
        {{{M_BUILD, "\"build\":\"v1\\n\""}}, "\"build\" must be 1..63 printable ASCII bytes"},
        {{{M_BUILD, "\"build\":\"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\""}}, "\"build\""},
        {{{M_RATE, "\"steps_per_second\":0"}}, "\"steps_per_second\" must be 1..1000"},
        {{{M_RATE, "\"steps_per_second\":1001"}}, "\"steps_per_second\""},
        {{{M_RATE, "\"steps_per_second\":-1"}}, "\"steps_per_second\""},
        {{{M_RATE, "\"steps_per_second\":60.5"}}, "\"steps_per_second\""},
        {{{M_RATE, "\"steps_per_second\":\"60\""}}, "\"steps_per_second\""},
        {{{M_FRAGMENT_MS, "\"fragment_ms\":99"}}, "\"fragment_ms\" must be 100..60000"},
        {{{M_FRAGMENT_MS, "\"fragment_ms\":0"}}, "\"fragment_ms\" must be 100..60000"},
        {{{M_FRAGMENT_MS, "\"fragment_ms\":60001"}}, "\"fragment_ms\""},
        {{{M_FRAGMENTS, "\"fragments\":-1"}}, "\"fragments\""},
        {{{M_FRAGMENTS, "\"fragments\":4294967296"}}, "\"fragments\""},
        {{{M_LIVE, "\"live\":{\"step\":-1,\"unix_ms\":2}"}}, "\"live.step\""},
        {{{M_LIVE, "\"live\":{\"step\":1,\"unix_ms\":9223372036854775808}"}}, "\"live.unix_ms\""},
        {{{M_LIVE, "\"live\":[1,2]"}}, "\"live\""},
        {{{M_ENDED, "\"ended\":0"}}, "\"ended\""},
        {{{M_ENDED, "\"ended\":\"false\""}}, "\"ended\""},
    };
    refuses_all(cases, sizeof cases / sizeof cases[0]);
}

static void test_sync_lists_must_agree(void **state) {
    (void)state;
    static const refusal cases[] = {
        /* keyframes: increasing in key and step, fragments not going back */
        {{{M_KEYFRAMES, "\"keyframes\":[{\"key\":1,\"step\":0,\"fragment\":0},{\"key\":1,\"step\":600,\"fragment\":5}]"}},
         "keyframes[1] does not come after the keyframe before it"},
        {{{M_KEYFRAMES, "\"keyframes\":[{\"key\":2,\"step\":0,\"fragment\":0},{\"key\":1,\"step\":600,\"fragment\":5}]"}},
         "keyframes[1] does not come after"},
        {{{M_KEYFRAMES, "\"keyframes\":[{\"key\":0,\"step\":600,\"fragment\":0},{\"key\":1,\"step\":600,\"fragment\":5}]"}},
         "keyframes[1] does not come after"},
        {{{M_KEYFRAMES, "\"keyframes\":[{\"key\":0,\"step\":0,\"fragment\":5},{\"key\":1,\"step\":600,\"fragment\":4}]"}},
         "keyframes[1] does not come after"},
        {{{M_KEYFRAMES, "\"keyframes\":[{\"key\":0,\"step\":0,\"fragment\":0},{\"key\":1,\"step\":600,\"fragment\":10}]"}},
         "keyframe 1 starts at fragment 10, of 10 published"},
        {{{M_KEYFRAMES, "\"keyframes\":[{\"key\":0,\"step\":0,\"fragment\":0}]"}, {M_FRAGMENTS, "\"fragments\":0"},
          {M_GAPS, "\"gaps\":[]"}},
         "keyframe 0 starts at fragment 0, of 0 published"},
        {{{M_KEYFRAMES, "\"keyframes\":[{\"key\":0,\"step\":0,\"fragment\":0},{\"key\":1,\"step\":600,\"fragment\":3}]"}},
         "keyframe 1 starts at fragment 3, which is in a gap"},
        {{{M_KEYFRAMES, "\"keyframes\":[{\"key\":0,\"step\":0,\"fragment\":2}]"}}, "keyframe 0 starts at fragment 2, which is in a gap"},
        {{{M_KEYFRAMES, "\"keyframes\":[0,1]"}}, "\"keyframes[0]\""},
        {{{M_KEYFRAMES, "\"keyframes\":{}"}}, "\"keyframes\""},
        {{{M_KEYFRAMES, "\"keyframes\":[{\"key\":0,\"step\":0,\"fragment\":0},{\"key\":1,\"step\":1,\"fragment\":0},"
                        "{\"key\":2,\"step\":2,\"fragment\":0},{\"key\":3,\"step\":3,\"fragment\":0},"
                        "{\"key\":4,\"step\":4,\"fragment\":0},{\"key\":5,\"step\":5,\"fragment\":0},"
                        "{\"key\":6,\"step\":6,\"fragment\":0},{\"key\":7,\"step\":7,\"fragment\":0},"
                        "{\"key\":8,\"step\":8,\"fragment\":0}]"}},
         "\"keyframes\""},
        {{{M_KEYFRAMES, "\"keyframes\":[{\"key\":4294967296,\"step\":0,\"fragment\":0}]"}}, "\"key\""},
        /* gaps: each first..last, increasing, apart, within the fragments */
        {{{M_GAPS, "\"gaps\":[{\"first\":2,\"last\":4},{\"first\":3,\"last\":5}]"}}, "gaps[1] is empty or does not come after"},
        {{{M_GAPS, "\"gaps\":[{\"first\":6,\"last\":7},{\"first\":2,\"last\":3}]"}}, "gaps[1] is empty or does not come after"},
        {{{M_GAPS, "\"gaps\":[{\"first\":2,\"last\":3},{\"first\":2,\"last\":3}]"}}, "gaps[1]"},
        {{{M_GAPS, "\"gaps\":[{\"first\":2,\"last\":3},{\"first\":4,\"last\":4}]"}}, "gaps[1]"}, /* adjacent: one gap */
        {{{M_GAPS, "\"gaps\":[{\"first\":3,\"last\":2}]"}}, "gaps[0] is empty"},
        {{{M_GAPS, "\"gaps\":[{\"first\":2,\"last\":3},{\"first\":8,\"last\":10}]"}}, "a gap ends at fragment 10, of 10 published"},
        {{{M_GAPS, "\"gaps\":[{\"first\":10,\"last\":10}]"}}, "a gap ends at fragment 10"},
        {{{M_GAPS, "\"gaps\":[{\"first\":1,\"last\":1},{\"first\":3,\"last\":3},{\"first\":5,\"last\":5},"
                   "{\"first\":7,\"last\":7},{\"first\":9,\"last\":9},{\"first\":11,\"last\":11},"
                   "{\"first\":13,\"last\":13},{\"first\":15,\"last\":15},{\"first\":17,\"last\":17}]"}},
         "\"gaps\""},
        /* an ended broadcast has its trailer's fragment */
        {{{M_ENDED, "\"ended\":true"}, {M_FRAGMENTS, "\"fragments\":0"}, {M_KEYFRAMES, "\"keyframes\":[]"},
          {M_GAPS, "\"gaps\":[]"}},
         "an ended broadcast without a fragment"},
    };
    refuses_all(cases, sizeof cases / sizeof cases[0]);
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    cradle_broadcast_sync s;
    /* while an ended broadcast of one fragment is fine */
    static const change one[4] = {{M_ENDED, "\"ended\":true"}, {M_FRAGMENTS, "\"fragments\":6"}};
    assert_int_equal(decode_text(document(one), &s, message, sizeof message), 0);
    assert_true(s.ended);
}

static void test_sync_malformed_json(void **state) {
    (void)state;
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    cradle_broadcast_sync s;
    static const refusal cases[] = {
        {{{M_ENDED, "\"ended\":false,\"ended\":true"}}, "duplicate key \"ended\""},
        {{{M_ENDED, "\"ended\":false,"}}, "trailing comma"},
        {{{M_GAPS, "\"gaps\":[{\"first\":2,\"last\":3},]"}}, "trailing comma"},
        {{{M_LIVE, "\"live\":{\"step\":1200,\"step\":1,\"unix_ms\":1}"}}, "duplicate key \"step\""},
        {{{M_GAME, "\"game\":'vanguard'"}}, "line 1"},
    };
    refuses_all(cases, sizeof cases / sizeof cases[0]);
    static const char *const texts[] = {
        "", "[]", "null", "{}", "{\"cradle_broadcast\":2", "\xef\xbb\xbf{}",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        int rc = decode_text(texts[i], &s, message, sizeof message);
        refused_with(rc, message, "sync: ", "");
        assert_true(strlen(message) > strlen("sync: "));
    }
    /* text after the document, and a NUL inside it */
    char text[2 * CRADLE_BROADCAST_SYNC_MAX];
    snprintf(text, sizeof text, "%s{}", document(NULL));
    refused_with(decode_text(text, &s, message, sizeof message), message, "sync: ", "line 1");
    snprintf(text, sizeof text, "%s", document(NULL));
    size_t n = strlen(text);
    assert_int_equal(cradle_broadcast_sync_decode(text, n + 1, &s, message, sizeof message), CRADLE_EBROADCAST);
    assert_int_equal(cradle_broadcast_sync_decode(text, n - 1, &s, message, sizeof message), CRADLE_EBROADCAST);
    /* the message is cut to its buffer, and the buffer may be absent */
    char small[12];
    assert_int_equal(cradle_broadcast_sync_decode("[]", 2, &s, small, sizeof small), CRADLE_EBROADCAST);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_int_equal(cradle_broadcast_sync_decode("[]", 2, &s, NULL, 0), CRADLE_EBROADCAST);
}

static void test_sync_size_limit(void **state) {
    (void)state;
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    cradle_broadcast_sync s;
    static char text[CRADLE_BROADCAST_SYNC_MAX + 2];
    size_t n = strlen(document(NULL));
    /* padded with whitespace to exactly the limit: fine */
    memset(text, ' ', sizeof text);
    memcpy(text, document(NULL), n);
    assert_int_equal(cradle_broadcast_sync_decode(text, CRADLE_BROADCAST_SYNC_MAX, &s, message, sizeof message), 0);
    /* one byte more: refused before it is parsed */
    refused_with(cradle_broadcast_sync_decode(text, CRADLE_BROADCAST_SYNC_MAX + 1, &s, message, sizeof message),
                 message, "sync: ", "4097 bytes, more than the 4096");
}

/* A version 1 document as a server before "web" wrote it: refused by its
 * version, not by the field it lacks. */
static void test_sync_version_1_is_refused(void **state) {
    (void)state;
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    cradle_broadcast_sync s;
    static const char v1[] =
        "{\"cradle_broadcast\":1,\"session\":\"00112233445566778899aabbccddeeff\",\"game\":\"vanguard\","
        "\"build\":\"vanguard-1.4.2\",\"steps_per_second\":60,\"fragment_ms\":2000,\"fragments\":10,"
        "\"keyframes\":[],\"gaps\":[],\"live\":{\"step\":1200,\"unix_ms\":1700000000000},\"ended\":false}";
    refused_with(decode_text(v1, &s, message, sizeof message), message, "sync: ",
                 "version 1, this program reads version 2");
    /* and a later version with a field this program does not know */
    static const change v3[4] = {{M_VERSION, "\"cradle_broadcast\":3"}, {M_ENDED, "\"ended\":false,\"clips\":[]"}};
    refused_with(decode_text(document(v3), &s, message, sizeof message), message, "sync: ",
                 "version 3, this program reads version 2");
    /* without a version, the field is missing like any other */
    static const change none[4] = {{M_VERSION, ""}};
    refused_with(decode_text(document(none), &s, message, sizeof message), message, "sync: ",
                 "missing field \"cradle_broadcast\"");
}

static void test_sync_web(void **state) {
    (void)state;
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    cradle_broadcast_sync s;
    /* round trip of a full list is in test_sync_round_trip; here, every
     * count the list may have */
    for (uint32_t count = 0; count <= CRADLE_BROADCAST_WEB_MAX; count++) {
        cradle_broadcast_sync a = full_sync(), b;
        a.web_count = count;
        char text[CRADLE_BROADCAST_SYNC_MAX + 1];
        size_t n = cradle_broadcast_sync_encode(&a, text, sizeof text);
        assert_true(n > 0);
        assert_int_equal(cradle_broadcast_sync_decode(text, n, &b, message, sizeof message), 0);
        assert_sync_equal(&a, &b);
    }
    static const refusal cases[] = {
        /* the manifest's hash: 64 lowercase hex digits */
        {{{M_WEB, "\"web\":[{\"build\":\"v1\",\"manifest\":\"0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef\"}]"}},
         "\"manifest\" must be 64 lowercase hex digits"},
        {{{M_WEB, "\"web\":[{\"build\":\"v1\",\"manifest\":\"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\"}]"}},
         "\"manifest\" must be 64 lowercase hex digits"},
        {{{M_WEB, "\"web\":[{\"build\":\"v1\",\"manifest\":\"" HASH_A "0\"}]"}}, "\"manifest\""},
        {{{M_WEB, "\"web\":[{\"build\":\"v1\",\"manifest\":\"" HASH_A HASH_A "\"}]"}}, "\"manifest\""},
        {{{M_WEB, "\"web\":[{\"build\":\"v1\",\"manifest\":\"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeg\"}]"}},
         "\"manifest\" must be 64 lowercase hex digits"},
        {{{M_WEB, "\"web\":[{\"build\":\"v1\",\"manifest\":\" 123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"}]"}},
         "\"manifest\" must be 64 lowercase hex digits"},
        {{{M_WEB, "\"web\":[{\"build\":\"v1\",\"manifest\":\"\"}]"}}, "\"manifest\""},
        {{{M_WEB, "\"web\":[{\"build\":\"v1\",\"manifest\":null}]"}}, "\"manifest\""},
        {{{M_WEB, "\"web\":[{\"build\":\"v1\",\"manifest\":12}]"}}, "\"manifest\""},
        /* the build: printable, 1..63 bytes */
        {{{M_WEB, "\"web\":[{\"build\":\"\",\"manifest\":\"" HASH_A "\"}]"}}, "\"build\" must be 1..63 printable ASCII bytes"},
        {{{M_WEB, "\"web\":[{\"build\":\"v\\n1\",\"manifest\":\"" HASH_A "\"}]"}}, "\"build\" must be 1..63 printable ASCII bytes"},
        {{{M_WEB, "\"web\":[{\"build\":\"v\\u00e91\",\"manifest\":\"" HASH_A "\"}]"}}, "\"build\""},
        {{{M_WEB, "\"web\":[{\"build\":\"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\",\"manifest\":\"" HASH_A "\"}]"}},
         "\"build\""},
        {{{M_WEB, "\"web\":[{\"build\":7,\"manifest\":\"" HASH_A "\"}]"}}, "\"build\""},
        /* at most 4, each build once */
        {{{M_WEB, "\"web\":[{\"build\":\"a\",\"manifest\":\"" HASH_A "\"},{\"build\":\"b\",\"manifest\":\"" HASH_A "\"},"
                  "{\"build\":\"c\",\"manifest\":\"" HASH_A "\"},{\"build\":\"d\",\"manifest\":\"" HASH_A "\"},"
                  "{\"build\":\"e\",\"manifest\":\"" HASH_A "\"}]"}},
         "\"web\" must be an array of 0..4 elements, got 5"},
        {{{M_WEB, "\"web\":[{\"build\":\"a\",\"manifest\":\"" HASH_A "\"},{\"build\":\"b\",\"manifest\":\"" HASH_B "\"},"
                  "{\"build\":\"a\",\"manifest\":\"" HASH_B "\"}]"}},
         "web[2] names build \"a\" again: each build is listed once"},
        /* the shape: unknown keys refused, objects in an array */
        {{{M_WEB, "\"web\":[{\"build\":\"a\",\"manifest\":\"" HASH_A "\",\"wasm\":\"" HASH_B "\"}]"}},
         "unknown field \"wasm\""},
        {{{M_WEB, "\"web\":[\"" HASH_A "\"]"}}, "\"web[0]\""},
        {{{M_WEB, "\"web\":{}"}}, "\"web\""},
        {{{M_WEB, "\"web\":null"}}, "\"web\""},
        {{{M_WEB, "\"web\":[{\"build\":\"a\",\"manifest\":\"" HASH_A "\",\"build\":\"b\"}]"}}, "duplicate key \"build\""},
    };
    refuses_all(cases, sizeof cases / sizeof cases[0]);
    /* one manifest for two builds is fine (a rebuild of the same sources
     * could give the same twin bytes, never the same build id) */
    static const change same[4] = {
        {M_WEB, "\"web\":[{\"build\":\"a\",\"manifest\":\"" HASH_A "\"},{\"build\":\"b\",\"manifest\":\"" HASH_A "\"}]"}};
    assert_int_equal(decode_text(document(same), &s, message, sizeof message), 0);
    assert_int_equal(s.web_count, 2);
}

/* The longest document the server can write fits the limit, with room:
 * every string at its longest of bytes JSON escapes, every list full,
 * every number at its top. */
static void test_sync_worst_case_fits(void **state) {
    (void)state;
    cradle_broadcast_sync worst = full_sync(), back;
    memset(worst.game, '"', CRADLE_GAME_NAME_MAX);
    memset(worst.build, '\\', CRADLE_GAME_BUILD_ID_MAX);
    worst.fragments = UINT32_MAX;
    for (uint32_t i = 0; i < CRADLE_BROADCAST_GAPS_MAX; i++)
        worst.gaps[i] = (cradle_broadcast_gap){UINT32_MAX - 100u + 10u * i, UINT32_MAX - 100u + 10u * i + 1u};
    for (uint32_t i = 0; i < CRADLE_BROADCAST_KEYFRAMES_MAX; i++) {
        worst.keyframes[i].key = UINT32_MAX - 10u + i;
        worst.keyframes[i].fragment = UINT32_MAX - 200u + i;
    }
    worst.ended = false; /* "false" is a byte longer */
    static char text[2 * CRADLE_BROADCAST_SYNC_MAX];
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    size_t n = cradle_broadcast_sync_encode(&worst, text, sizeof text);
    assert_true(n > 0);
    if (n > CRADLE_BROADCAST_SYNC_MAX * 3u / 4u)
        fail_msg("the worst sync document is %zu bytes: close to the %u limit", n, CRADLE_BROADCAST_SYNC_MAX);
    if (cradle_broadcast_sync_decode(text, n, &back, message, sizeof message) != 0) fail_msg("%s", message);
    assert_sync_equal(&worst, &back);
}

static void test_web_manifest(void **state) {
    (void)state;
    cradle_broadcast_web_file sounds[3] = {{.present = true, .bytes = 44}, {.present = false},
                                           {.present = true, .bytes = CRADLE_BROADCAST_WEB_FILE_MAX}};
    for (unsigned j = 0; j < CRADLE_BROADCAST_WEB_HASH_BYTES; j++) {
        sounds[0].sha256[j] = (uint8_t)j;
        sounds[2].sha256[j] = 0xff;
    }
    static const char *const names[3] = {"gather/coin.wav", "gather/\"quoted\".wav", "z.wav"};
    cradle_broadcast_web_manifest m = {.game = "gather",
                                       .build = "gather-0f1e",
                                       .wasm = {.present = true, .bytes = 1234},
                                       .sound_count = 3,
                                       .sound_names = names,
                                       .sounds = sounds};
    for (unsigned j = 0; j < CRADLE_BROADCAST_WEB_HASH_BYTES; j++) m.wasm.sha256[j] = (uint8_t)(0xa0u + j);
    char text[1024];
    size_t n = cradle_broadcast_web_manifest_encode(&m, text, sizeof text);
    static const char want[] =
        "{\"cradle_web\":1,\"game\":\"gather\",\"build\":\"gather-0f1e\","
        "\"wasm\":{\"sha256\":\"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf\",\"bytes\":1234},"
        "\"sounds\":[{\"name\":\"gather/coin.wav\","
        "\"sha256\":\"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\",\"bytes\":44},"
        "{\"name\":\"gather/\\\"quoted\\\".wav\",\"sha256\":null,\"bytes\":0},"
        "{\"name\":\"z.wav\",\"sha256\":\"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff\","
        "\"bytes\":16777216}]}";
    assert_string_equal(text, want);
    assert_int_equal(n, strlen(want));
    /* room for the NUL too, else 0 */
    assert_int_equal(cradle_broadcast_web_manifest_encode(&m, text, n + 1), n);
    assert_int_equal(cradle_broadcast_web_manifest_encode(&m, text, n), 0);
    /* no sounds: an empty list */
    m.sound_count = 0;
    m.sound_names = NULL;
    m.sounds = NULL;
    n = cradle_broadcast_web_manifest_encode(&m, text, sizeof text);
    assert_true(n > 0);
    assert_non_null(strstr(text, ",\"sounds\":[]}"));

    /* the worst case fits CRADLE_BROADCAST_WEB_MANIFEST_MAX: every sound of
     * the longest name, all bytes JSON escapes */
    static char long_names[CRADLE_GAME_MAX_SOUNDS][CRADLE_GAME_SOUND_NAME_MAX + 1];
    static const char *worst_names[CRADLE_GAME_MAX_SOUNDS];
    static cradle_broadcast_web_file worst_sounds[CRADLE_GAME_MAX_SOUNDS];
    for (unsigned i = 0; i < CRADLE_GAME_MAX_SOUNDS; i++) {
        memset(long_names[i], '"', CRADLE_GAME_SOUND_NAME_MAX);
        worst_names[i] = long_names[i];
        worst_sounds[i] = (cradle_broadcast_web_file){.present = true, .bytes = CRADLE_BROADCAST_WEB_FILE_MAX};
    }
    char game[CRADLE_GAME_NAME_MAX + 1], build[CRADLE_GAME_BUILD_ID_MAX + 1];
    memset(game, '\\', sizeof game - 1);
    game[sizeof game - 1] = '\0';
    memset(build, '"', sizeof build - 1);
    build[sizeof build - 1] = '\0';
    cradle_broadcast_web_manifest worst = {.game = game,
                                           .build = build,
                                           .wasm = {.present = true, .bytes = CRADLE_BROADCAST_WEB_FILE_MAX},
                                           .sound_count = CRADLE_GAME_MAX_SOUNDS,
                                           .sound_names = worst_names,
                                           .sounds = worst_sounds};
    static char big[CRADLE_BROADCAST_WEB_MANIFEST_MAX];
    n = cradle_broadcast_web_manifest_encode(&worst, big, sizeof big);
    assert_true(n > 0 && n < CRADLE_BROADCAST_WEB_MANIFEST_MAX);
}

static void test_sync_in_gap(void **state) {
    (void)state;
    cradle_broadcast_sync s;
    memset(&s, 0, sizeof s);
    for (uint64_t f = 0; f < 10; f++) assert_false(cradle_broadcast_sync_in_gap(&s, f));
    s.gap_count = 3;
    s.gaps[0] = (cradle_broadcast_gap){2, 3};
    s.gaps[1] = (cradle_broadcast_gap){7, 7};
    s.gaps[2] = (cradle_broadcast_gap){10, UINT32_MAX};
    static const bool want[12] = {false, false, true, true, false, false, false, true, false, false, true, true};
    for (uint64_t f = 0; f < 12; f++)
        if (cradle_broadcast_sync_in_gap(&s, f) != want[f]) fail_msg("fragment %llu", (unsigned long long)f);
    assert_true(cradle_broadcast_sync_in_gap(&s, UINT32_MAX));
    assert_false(cradle_broadcast_sync_in_gap(&s, (uint64_t)UINT32_MAX + 1u));
    assert_false(cradle_broadcast_sync_in_gap(&s, UINT64_MAX));
    s.gap_count = 1; /* only the gaps counted */
    assert_false(cradle_broadcast_sync_in_gap(&s, 7));
}

/* ---- URLs -------------------------------------------------------------------- */

static void test_urls(void **state) {
    (void)state;
    uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES];
    for (unsigned i = 0; i < sizeof hash; i++) hash[i] = (uint8_t)(i * 8u + 1u);
    static const char hex[] = "0109111921293139414951596169717981899199a1a9b1b9c1c9d1d9e1e9f1f9";
    const char *base = "https://cdn.example/b/abc/";
    struct {
        cradle_broadcast_doc doc;
        uint64_t number;
        const char *want;
    } cases[] = {
        {CRADLE_BROADCAST_START, 0, "https://cdn.example/b/abc/start"},
        {CRADLE_BROADCAST_SYNC, 0, "https://cdn.example/b/abc/sync"},
        {CRADLE_BROADCAST_FRAGMENT, 0, "https://cdn.example/b/abc/frag/0"},
        {CRADLE_BROADCAST_FRAGMENT, 42, "https://cdn.example/b/abc/frag/42"},
        {CRADLE_BROADCAST_FRAGMENT, UINT64_MAX, "https://cdn.example/b/abc/frag/18446744073709551615"},
        {CRADLE_BROADCAST_KEYFRAME, 7, "https://cdn.example/b/abc/key/7"},
        {CRADLE_BROADCAST_DATA, 0, NULL},
        {CRADLE_BROADCAST_WEB, 0, NULL},
    };
    char data_url[200], web_url[200];
    snprintf(data_url, sizeof data_url, "%sdata/%s", base, hex);
    cases[6].want = data_url;
    snprintf(web_url, sizeof web_url, "%sweb/%s", base, hex);
    cases[7].want = web_url;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char url[CRADLE_BROADCAST_URL_MAX];
        const uint8_t *h = cases[i].doc == CRADLE_BROADCAST_DATA || cases[i].doc == CRADLE_BROADCAST_WEB ? hash : NULL;
        assert_int_equal(cradle_broadcast_url(url, sizeof url, base, cases[i].doc, cases[i].number, h), 0);
        assert_string_equal(url, cases[i].want);
        /* exactly room for it and its NUL; one byte less is CRADLE_ERANGE */
        size_t n = strlen(cases[i].want);
        char *exact = malloc(n + 1);
        assert_non_null(exact);
        assert_int_equal(cradle_broadcast_url(exact, n + 1, base, cases[i].doc, cases[i].number, h), 0);
        assert_string_equal(exact, cases[i].want);
        assert_int_equal(cradle_broadcast_url(exact, n, base, cases[i].doc, cases[i].number, h), CRADLE_ERANGE);
        assert_int_equal(cradle_broadcast_url(exact, 1, base, cases[i].doc, cases[i].number, h), CRADLE_ERANGE);
        free(exact);
        /* relative to the broadcast */
        assert_int_equal(cradle_broadcast_url(url, sizeof url, "", cases[i].doc, cases[i].number, h), 0);
        assert_string_equal(url, cases[i].want + strlen(base));
    }
}

/* ---- keyframes ----------------------------------------------------------------- */

static const uint8_t key_session[CRADLE_BROADCAST_SESSION_BYTES] = {1, 2, 3, 4, 5, 6, 7, 8,
                                                                    9, 10, 11, 12, 13, 14, 15, 16};

static cradle_broadcast_keyframe keyframe_of(const uint8_t *state, uint32_t size) {
    cradle_broadcast_keyframe k;
    memset(&k, 0, sizeof k);
    memcpy(k.session, key_session, sizeof k.session);
    k.step = 123456;
    k.state_hash = cradle_hash64(state, size);
    k.state_size = size;
    k.block_sequence = 77;
    k.block_first_step = 123400;
    strcpy(k.build_id, "vanguard-1.4.2+g1234abc");
    return k;
}

/* A keyframe's checksum recomputed after a change, as broadcast.h says:
 * BLAKE2b-128 of bytes 0..175 and the compressed bytes after the header. */
static void reseal(uint8_t *doc, size_t size) {
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, 16);
    crypto_generichash_update(&st, doc, 176);
    crypto_generichash_update(&st, doc + CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES,
                              size - CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES);
    crypto_generichash_final(&st, doc + 176, 16);
}

static void assert_keyframe_equal(const cradle_broadcast_keyframe *a, const cradle_broadcast_keyframe *b) {
    assert_memory_equal(a->session, b->session, sizeof a->session);
    assert_int_equal(a->step, b->step);
    assert_int_equal(a->state_hash, b->state_hash);
    assert_int_equal(a->state_size, b->state_size);
    assert_int_equal(a->block_sequence, b->block_sequence);
    assert_int_equal(a->block_first_step, b->block_first_step);
    assert_string_equal(a->build_id, b->build_id);
}

static void test_keyframe_round_trip(void **state) {
    (void)state;
    enum { SIZE = 300u << 10 };
    uint8_t *s = calloc(SIZE, 1), *back = malloc(SIZE);
    assert_non_null(s);
    assert_non_null(back);
    for (uint32_t i = 0; i < SIZE; i += 4096) /* a few live entities among zeros */
        for (uint32_t j = 0; j < 24; j++) s[i + j] = (uint8_t)(i / 4096u * 7u + j);
    cradle_state_pack codec;
    assert_int_equal(cradle_state_pack_init(&codec, 0, CRADLE_STATE_PACK_BOTH), 0);
    assert_int_equal(codec.level, 3);
    cradle_broadcast_keyframe k = keyframe_of(s, SIZE), got;
    size_t bound = cradle_broadcast_keyframe_bound(SIZE), length = 0;
    assert_true(bound > SIZE);
    uint8_t *doc = malloc(bound);
    assert_non_null(doc);
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    assert_int_equal(cradle_broadcast_keyframe_encode(&codec, &k, s, NULL, doc, bound, &length, message, sizeof message), 0);
    /* 300 KiB of mostly zeros: the document is a small fraction of the state */
    assert_true(length > CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES);
    assert_true(length < SIZE / 20);

    /* the header is laid out as broadcast.h's table says */
    static const uint8_t magic[8] = {0x89, 'C', 'R', 'D', 'K', 'E', 'Y', 0x0A};
    assert_memory_equal(doc, magic, sizeof magic);
    assert_int_equal(cradle_cursor_load_u32(doc + 8), 1);
    assert_int_equal(cradle_cursor_load_u32(doc + 12), 256);
    assert_memory_equal(doc + 16, key_session, 16);
    assert_int_equal(cradle_cursor_load_u64(doc + 32), k.step);
    assert_int_equal(cradle_cursor_load_u64(doc + 40), k.state_hash);
    assert_int_equal(cradle_cursor_load_u32(doc + 48), SIZE);
    assert_int_equal(cradle_cursor_load_u32(doc + 52), length - 256);
    assert_int_equal(cradle_cursor_load_u32(doc + 56), 77);
    assert_int_equal(cradle_cursor_load_u32(doc + 60), 0);
    assert_int_equal(cradle_cursor_load_u64(doc + 64), 123400);
    assert_string_equal((const char *)doc + 72, k.build_id);
    for (unsigned i = 72 + (unsigned)strlen(k.build_id); i < 176; i++) assert_int_equal(doc[i], 0);
    for (unsigned i = 192; i < 256; i++) assert_int_equal(doc[i], 0); /* unsigned */

    memset(back, 0xAA, SIZE);
    assert_int_equal(cradle_broadcast_keyframe_decode(&codec, doc, length, key_session, NULL, &got, back, SIZE, message,
                                                      sizeof message),
                     0);
    assert_keyframe_equal(&k, &got);
    assert_memory_equal(back, s, SIZE);
    /* a capacity larger than the state is fine */
    uint8_t *roomy = malloc(SIZE + 100);
    assert_non_null(roomy);
    assert_int_equal(cradle_broadcast_keyframe_decode(&codec, doc, length, key_session, NULL, &got, roomy, SIZE + 100,
                                                      message, sizeof message),
                     0);
    assert_memory_equal(roomy, s, SIZE);
    free(roomy);

    /* the codec is reused: the same state encodes to the same bytes */
    uint8_t *again = malloc(bound);
    assert_non_null(again);
    size_t again_length = 0;
    assert_int_equal(
        cradle_broadcast_keyframe_encode(&codec, &k, s, NULL, again, bound, &again_length, message, sizeof message), 0);
    assert_int_equal(again_length, length);
    assert_memory_equal(again, doc, length);
    /* an output smaller than the bound is refused */
    assert_int_equal(
        cradle_broadcast_keyframe_encode(&codec, &k, s, NULL, again, bound - 1, &again_length, message, sizeof message),
        CRADLE_ERANGE);
    assert_non_null(strstr(message, "keyframe: "));
    free(again);

    free(doc);
    free(back);
    free(s);
    cradle_state_pack_free(&codec);
    cradle_state_pack_free(&codec); /* twice is harmless */
}

/* A 200-byte state's keyframe, signed by `keys` (another test key is
 * `other`). */
typedef struct small_keyframe {
    cradle_state_pack codec;
    uint8_t state[200];
    cradle_broadcast_keyframe k;
    uint8_t doc[1024];
    size_t length;
    cradle_keys keys, other;
} small_keyframe;

static void small_keyframe_init(small_keyframe *f) {
    assert_int_equal(cradle_state_pack_init(&f->codec, 1, CRADLE_STATE_PACK_BOTH), 0);
    uint8_t seed[32];
    memset(seed, 5, sizeof seed);
    assert_int_equal(cradle_keys_from_seeds(&f->keys, seed, seed), 0);
    memset(seed, 6, sizeof seed);
    assert_int_equal(cradle_keys_from_seeds(&f->other, seed, seed), 0);
    for (unsigned i = 0; i < sizeof f->state; i++) f->state[i] = (uint8_t)(i < 100 ? i / 10u : i * 37u);
    f->k = keyframe_of(f->state, sizeof f->state);
    assert_true(cradle_broadcast_keyframe_bound(sizeof f->state) <= sizeof f->doc);
    assert_int_equal(cradle_broadcast_keyframe_encode(&f->codec, &f->k, f->state, f->keys.sign_secret, f->doc,
                                                      sizeof f->doc, &f->length, NULL, 0),
                     0);
}

/* Decodes doc as a viewer that pinned `signer` (NULL: none) does. */
static int decode_as(small_keyframe *f, const uint8_t *signer, const uint8_t *doc, size_t size, char *message,
                     size_t message_size) {
    cradle_broadcast_keyframe got;
    uint8_t out[sizeof f->state];
    return cradle_broadcast_keyframe_decode(&f->codec, doc, size, key_session, signer, &got, out, sizeof out, message,
                                            message_size);
}

static int decode_small(small_keyframe *f, const uint8_t *doc, size_t size, char *message, size_t message_size) {
    return decode_as(f, NULL, doc, size, message, message_size);
}

/* Any byte of the document damaged, anywhere: refused by a viewer that
 * pinned the key (one that did not cannot check the signature's bytes). */
static void test_keyframe_every_flipped_byte_is_refused(void **state) {
    (void)state;
    small_keyframe f;
    small_keyframe_init(&f);
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    assert_int_equal(decode_as(&f, f.keys.sign_public, f.doc, f.length, message, sizeof message), 0);
    static const uint8_t masks[] = {0x01, 0x80, 0xff};
    uint8_t *doc = malloc(f.length); /* exact size: ASan sees any read past the end */
    assert_non_null(doc);
    for (size_t i = 0; i < f.length; i++) {
        for (size_t m = 0; m < sizeof masks; m++) {
            memcpy(doc, f.doc, f.length);
            doc[i] ^= masks[m];
            int rc = decode_as(&f, f.keys.sign_public, doc, f.length, message, sizeof message);
            if (rc != CRADLE_EBROADCAST || strncmp(message, "keyframe: ", 10) != 0)
                fail_msg("byte %zu ^ 0x%02x: rc %d, \"%s\"", i, masks[m], rc, message);
        }
    }
    free(doc);
    cradle_state_pack_free(&f.codec);
}

/* A pinned key: an unsigned keyframe, another key's, or one changed and
 * resealed (its checksum passes) is refused; unpinned, a signed keyframe
 * reads like any. */
static void test_keyframe_signature(void **state) {
    (void)state;
    small_keyframe f;
    small_keyframe_init(&f);
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    uint8_t doc[1024];
    size_t length = 0;
    assert_int_equal(decode_small(&f, f.doc, f.length, message, sizeof message), 0);
    assert_int_equal(decode_as(&f, f.keys.sign_public, f.doc, f.length, message, sizeof message), 0);
    refused_with(decode_as(&f, f.other.sign_public, f.doc, f.length, message, sizeof message), message, "keyframe: ",
                 "not signed by the pinned key");
    assert_int_equal(cradle_broadcast_keyframe_encode(&f.codec, &f.k, f.state, NULL, doc, sizeof doc, &length, NULL, 0), 0);
    assert_int_equal(decode_small(&f, doc, length, message, sizeof message), 0);
    refused_with(decode_as(&f, f.keys.sign_public, doc, length, message, sizeof message), message, "keyframe: ",
                 "unsigned, and this viewer pinned a server key");
    /* signed by the other key: the same bytes but for the signature */
    assert_int_equal(
        cradle_broadcast_keyframe_encode(&f.codec, &f.k, f.state, f.other.sign_secret, doc, sizeof doc, &length, NULL, 0), 0);
    assert_int_equal(length, f.length);
    assert_memory_equal(doc, f.doc, 192);
    assert_memory_not_equal(doc + 192, f.doc + 192, 64);
    refused_with(decode_as(&f, f.keys.sign_public, doc, length, message, sizeof message), message, "keyframe: ",
                 "not signed by the pinned key");
    /* a forged state with its hash and checksum redone: only the signature tells */
    memcpy(doc, f.doc, f.length);
    uint8_t forged[sizeof f.state];
    memcpy(forged, f.state, sizeof forged);
    forged[150] ^= 1;
    cradle_broadcast_keyframe k = f.k;
    k.state_hash = cradle_hash64(forged, sizeof forged);
    assert_int_equal(cradle_broadcast_keyframe_encode(&f.codec, &k, forged, NULL, doc, sizeof doc, &length, NULL, 0), 0);
    memcpy(doc + 192, f.doc + 192, 64); /* the genuine keyframe's signature */
    assert_int_equal(decode_small(&f, doc, length, message, sizeof message), 0);
    refused_with(decode_as(&f, f.keys.sign_public, doc, length, message, sizeof message), message, "keyframe: ",
                 "not signed by the pinned key");
    cradle_state_pack_free(&f.codec);
}

static void test_keyframe_refusals(void **state) {
    (void)state;
    small_keyframe f;
    small_keyframe_init(&f);
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    uint8_t doc[1024 + 1];
    cradle_broadcast_keyframe got;
    uint8_t out[sizeof f.state];

    /* one byte short, one byte more, nothing past the header, not even a header */
    refused_with(decode_small(&f, f.doc, f.length - 1, message, sizeof message), message, "keyframe: ",
                 "truncated or padded");
    memcpy(doc, f.doc, f.length);
    doc[f.length] = 0;
    refused_with(decode_small(&f, doc, f.length + 1, message, sizeof message), message, "keyframe: ",
                 "truncated or padded");
    refused_with(decode_small(&f, f.doc, CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES, message, sizeof message), message,
                 "keyframe: ", "truncated or padded");
    refused_with(decode_small(&f, f.doc, CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES - 1, message, sizeof message), message,
                 "keyframe: ", "shorter than its 256-byte header");
    refused_with(decode_small(&f, f.doc, 0, message, sizeof message), message, "keyframe: ", "0 bytes");

    /* another session's keyframe */
    uint8_t other[CRADLE_BROADCAST_SESSION_BYTES];
    memcpy(other, key_session, sizeof other);
    other[15] ^= 1;
    refused_with(cradle_broadcast_keyframe_decode(&f.codec, f.doc, f.length, other, NULL, &got, out, sizeof out, message,
                                                  sizeof message),
                 message, "keyframe: ", "another session");

    /* a viewer without room for the state */
    refused_with(cradle_broadcast_keyframe_decode(&f.codec, f.doc, f.length, key_session, NULL, &got, out, sizeof out - 1,
                                                  message, sizeof message),
                 message, "keyframe: ", "a 200-byte state; this viewer holds at most 199");

    /* version 2 is named, whatever its checksum */
    memcpy(doc, f.doc, f.length);
    cradle_cursor_store_u32(doc + 8, 2);
    refused_with(decode_small(&f, doc, f.length, message, sizeof message), message, "keyframe: ",
                 "version 2, this program reads version 1");
    memcpy(doc, f.doc, f.length);
    doc[0] = 'X';
    refused_with(decode_small(&f, doc, f.length, message, sizeof message), message, "keyframe: ", "bad magic");
    memcpy(doc, f.doc, f.length);
    doc[100] ^= 1;
    refused_with(decode_small(&f, doc, f.length, message, sizeof message), message, "keyframe: ", "checksum mismatch");

    /* Resealed changes: the checksum passes, the check behind it does not. */
    struct {
        size_t at;
        uint8_t value; /* stored at `at` ... */
        int width;     /* ... as 1, 4 or 8 bytes, or 0: xor 1 into the state hash */
        const char *want;
    } cases[] = {
        {40, 0, 0, "the state's hash is not the one it names"},
        {60, 1, 1, "reserved bytes are not zero"},
        {63, 0x80, 1, "reserved bytes are not zero"},
        {136, 1, 1, "reserved bytes are not zero"},
        {175, 1, 1, "reserved bytes are not zero"},
        {72, 0, 1, "the build id is not 1..63 bytes NUL-padded"},          /* empty */
        {72 + 30, 'x', 1, "the build id is not 1..63 bytes NUL-padded"},   /* a byte after its NUL */
        {72 + 3, 0x01, 1, "the build id is not printable ASCII"},
        {72 + 3, 0x7f, 1, "the build id is not printable ASCII"},
        {72 + 3, 0xc3, 1, "the build id is not printable ASCII"},
        {64, 200, 8, "step 123456 is not in its block, which starts at step"}, /* first step past the step */
        {48, 201, 4, "a 201-byte state; this viewer holds at most 200"},
        {48, 199, 4, "the zstd frame does not hold exactly the state's size"},
        {48, 0, 4, "a 0-byte state"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(doc, f.doc, f.length);
        if (cases[i].width == 0) {
            cradle_cursor_store_u64(doc + 40, cradle_cursor_load_u64(doc + 40) ^ 1u);
        } else if (cases[i].width == 1) {
            doc[cases[i].at] = cases[i].value;
        } else if (cases[i].width == 4) {
            cradle_cursor_store_u32(doc + cases[i].at, cases[i].value);
        } else {
            /* the block's first step after the keyframe's step */
            cradle_cursor_store_u64(doc + cases[i].at, f.k.step + cases[i].value);
        }
        reseal(doc, f.length);
        refused_with(decode_small(&f, doc, f.length, message, sizeof message), message, "keyframe: ", cases[i].want);
    }
    /* a 63-byte build id fills its field but for the NUL: fine */
    memcpy(doc, f.doc, f.length);
    memset(doc + 72, 'b', 63);
    reseal(doc, f.length);
    assert_int_equal(decode_small(&f, doc, f.length, message, sizeof message), 0);
    /* 64 bytes leave no NUL */
    doc[72 + 63] = 'b';
    reseal(doc, f.length);
    refused_with(decode_small(&f, doc, f.length, message, sizeof message), message, "keyframe: ",
                 "the build id is not 1..63 bytes NUL-padded");
    /* the last step a log can have is refused: no step comes after it */
    memcpy(doc, f.doc, f.length);
    cradle_cursor_store_u64(doc + 32, UINT64_MAX);
    reseal(doc, f.length);
    refused_with(decode_small(&f, doc, f.length, message, sizeof message), message, "keyframe: ", "is not in its block");
    /* a state size past the broadcast's limit, even for a viewer that has room */
    memcpy(doc, f.doc, f.length);
    cradle_cursor_store_u32(doc + 48, CRADLE_BROADCAST_STATE_MAX + 1u);
    reseal(doc, f.length);
    refused_with(cradle_broadcast_keyframe_decode(&f.codec, doc, f.length, key_session, NULL, &got, out, SIZE_MAX, message,
                                                  sizeof message),
                 message, "keyframe: ", "-byte state");
    /* a compressed payload that is not zstd */
    memcpy(doc, f.doc, f.length);
    memset(doc + CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES, 0x5a, f.length - CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES);
    reseal(doc, f.length);
    refused_with(decode_small(&f, doc, f.length, message, sizeof message), message, "keyframe: ", "zstd");
    cradle_state_pack_free(&f.codec);
}

/* "one zstd frame of exactly state size bytes": bytes after the frame (a
 * skippable frame, a second and empty frame) are not part of a keyframe,
 * even under a checksum that passes. */
static void test_keyframe_holds_one_frame(void **state) {
    (void)state;
    small_keyframe f;
    small_keyframe_init(&f);
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    /* a zstd skippable frame (magic 0x184D2A50, u32 length 4, 4 bytes), and
     * the frame zstd makes of nothing */
    static const uint8_t skippable[12] = {0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 'j', 'u', 'n', 'k'};
    uint8_t empty[32];
    size_t empty_size = ZSTD_compress(empty, sizeof empty, "", 0, 1);
    assert_false(ZSTD_isError(empty_size));
    const struct {
        const uint8_t *bytes;
        size_t size;
    } tails[] = {{skippable, sizeof skippable}, {empty, empty_size}};
    for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
        uint8_t doc[1024 + 32];
        memcpy(doc, f.doc, f.length);
        memcpy(doc + f.length, tails[i].bytes, tails[i].size);
        size_t n = f.length + tails[i].size;
        cradle_cursor_store_u32(doc + 52, (uint32_t)(n - CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES));
        reseal(doc, n);
        refused_with(decode_small(&f, doc, n, message, sizeof message), message, "keyframe: ",
                     "the zstd frame is not all of the packed bytes");
    }
    cradle_state_pack_free(&f.codec);
}

/* ---- fragments ------------------------------------------------------------------- */

enum { PLAYERS = 4, INPUT = 2, SNAP = 1 + PLAYERS * INPUT, STEPS = 200, DATA_STEP = 120, MAX_BLOCKS = 64 };

#define DATA_TEXT "{\"waves\":[1,2,3]}"

typedef struct block_ref {
    size_t offset, size; /* in the file */
    uint32_t sequence;
    uint64_t first_step;
    /* what a reader from block 0 found in it */
    uint64_t hashes, last_hash_step;
    uint32_t data;
    bool trailer;
} block_ref;

typedef struct session_log {
    uint8_t *bytes;
    size_t size;
    block_ref blocks[MAX_BLOCKS];
    unsigned count;
    uint8_t data_hash[CRADLE_LOG_FILE_HASH_BYTES];
} session_log;

static size_t no_output(const void *s, uint64_t step, uint8_t *o, size_t c) {
    (void)s;
    (void)step;
    (void)o;
    (void)c;
    return 0;
}

static uint8_t *read_whole(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n > 0);
    assert_int_equal(fseek(f, 0, SEEK_SET), 0);
    uint8_t *data = malloc((size_t)n);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return data;
}

/* A real session log of STEPS steps in 256-byte blocks, a hash every 10
 * steps and a game data file applied before DATA_STEP, closed (signed when
 * sign_secret is not NULL: every block and the trailer, in blocks of 256
 * bytes of records and the SIGN record); its blocks split by their headers,
 * and what a reader from block 0 finds in each. */
static void write_session(session_log *log, const char *name, const uint8_t *sign_secret) {
    memset(log, 0, sizeof *log);
    cradle_game_contract c = {
        .abi_major = 1, .state_size = 40, .state_align = 8, .input_bytes = INPUT, .max_players = PLAYERS,
        .steps_per_second = 60, .source_frames_per_second = 20, .name = "testgame", .build_id = "build-one",
        .output = no_output,
    };
    cradle_log_header h;
    assert_int_equal(cradle_log_header_from_contract(&h, &c, 42, 3, 1700000000000000000ull, 10), 0);
    assert_int_equal(h.snapshot_size, SNAP);
    char path[300], message[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cradle_log_writer w;
    cradle_log_writer_config config = {.block_size = CRADLE_LOG_BLOCK_MIN, .sync_inline = true, .overwrite = true,
                                       .sign_secret = sign_secret};
    if (sign_secret) config.block_size += CRADLE_LOG_SIGN_RECORD_BYTES;
    assert_int_equal(cradle_log_writer_open(&w, path, &h, &config, NULL, message, sizeof message), 0);
    crypto_generichash(log->data_hash, sizeof log->data_hash, (const uint8_t *)DATA_TEXT, strlen(DATA_TEXT), NULL, 0);
    uint8_t snap[SNAP];
    for (uint64_t s = 0; s < STEPS; s++) {
        if (s == DATA_STEP)
            assert_int_equal(cradle_log_writer_append_data(&w, s, 2, "game/waves.json", (const uint8_t *)DATA_TEXT,
                                                           (uint32_t)strlen(DATA_TEXT), log->data_hash),
                             0);
        for (unsigned i = 0; i < SNAP; i++) snap[i] = (uint8_t)(s * 31u + i);
        assert_int_equal(cradle_log_writer_append_step(&w, s, snap), 0);
        if ((s + 1) % 10 == 0) assert_int_equal(cradle_log_writer_append_hash(&w, s, s * 1000u + 1u), 0);
    }
    if (sign_secret)
        assert_int_equal(cradle_log_writer_close_signed(&w, 777, sign_secret), 0);
    else
        assert_int_equal(cradle_log_writer_close(&w, 777), 0);
    log->bytes = read_whole(path, &log->size);

    /* the blocks, by their 48-byte headers: payload length at offset 20 */
    size_t at = CRADLE_LOG_HEADER_BYTES;
    while (at < log->size) {
        assert_true(log->count < MAX_BLOCKS);
        assert_true(log->size - at >= CRADLE_LOG_BLOCK_HEADER_BYTES);
        block_ref *b = &log->blocks[log->count++];
        b->offset = at;
        b->size = CRADLE_LOG_BLOCK_HEADER_BYTES + cradle_cursor_load_u32(log->bytes + at + 20);
        b->sequence = cradle_cursor_load_u32(log->bytes + at + 4);
        b->first_step = cradle_cursor_load_u64(log->bytes + at + 8);
        b->last_hash_step = UINT64_MAX;
        assert_int_equal(b->sequence, log->count - 1);
        at += b->size;
    }
    assert_int_equal(at, log->size);
    assert_true(log->count >= 8);

    /* each record of a plain read, in the block the reader stands after */
    cradle_log_reader r;
    assert_int_equal(cradle_log_reader_open_memory(&r, log->bytes, log->size, message, sizeof message), 0);
    cradle_log_record rec;
    int rc;
    unsigned current = 0;
    while ((rc = cradle_log_reader_next(&r, &rec)) == 1) {
        uint64_t position = cradle_log_reader_position(&r);
        while (log->blocks[current].offset + log->blocks[current].size != position) {
            current++;
            assert_true(current < log->count);
        }
        block_ref *b = &log->blocks[current];
        if (rec.kind == CRADLE_LOG_RECORD_HASH) {
            b->hashes++;
            b->last_hash_step = rec.step;
        } else if (rec.kind == CRADLE_LOG_RECORD_DATA) {
            b->data++;
        } else if (rec.kind == CRADLE_LOG_RECORD_TRAILER) {
            b->trailer = true;
        }
    }
    assert_int_equal(rc, 0);
    assert_int_equal(r.end, CRADLE_LOG_END_CLOSED);
    assert_int_equal(r.steps, STEPS);
    cradle_log_reader_close(&r);
    assert_true(log->blocks[log->count - 1].trailer);
    assert_int_equal(log->blocks[log->count - 1].first_step, STEPS);
}

/* start (the log's 256-byte header) followed by blocks first..end-1, in a
 * buffer of exactly that size. */
static uint8_t *fragment_of(const session_log *log, unsigned first, unsigned end, size_t *size) {
    assert_true(first <= end && end <= log->count);
    size_t n = CRADLE_LOG_HEADER_BYTES;
    for (unsigned i = first; i < end; i++) n += log->blocks[i].size;
    uint8_t *buffer = malloc(n);
    assert_non_null(buffer);
    memcpy(buffer, log->bytes, CRADLE_LOG_HEADER_BYTES);
    size_t at = CRADLE_LOG_HEADER_BYTES;
    for (unsigned i = first; i < end; i++) {
        memcpy(buffer + at, log->bytes + log->blocks[i].offset, log->blocks[i].size);
        at += log->blocks[i].size;
    }
    *size = n;
    return buffer;
}

/* What a fragment of blocks first..end-1 must report. */
static void assert_info(const session_log *log, unsigned first, unsigned end, const cradle_broadcast_fragment_info *info) {
    assert_int_equal(info->blocks, end - first);
    assert_int_equal(info->first.sequence, first);
    assert_int_equal(info->first.step, log->blocks[first].first_step);
    assert_int_equal(info->end.sequence, end);
    assert_int_equal(info->end.step, end < log->count ? log->blocks[end].first_step : STEPS);
    uint64_t hashes = 0, last = UINT64_MAX;
    uint32_t data = 0;
    for (unsigned i = first; i < end; i++) {
        hashes += log->blocks[i].hashes;
        if (log->blocks[i].hashes) last = log->blocks[i].last_hash_step;
        data += log->blocks[i].data;
    }
    assert_int_equal(info->hashes, hashes);
    assert_int_equal(info->last_hash_step, last);
    assert_int_equal(info->data_count, data);
    assert_int_equal(info->trailer, end == log->count);
    assert_int_equal(info->reloads, 0);
}

/* fragment_check of blocks first..end-1 by a viewer that pinned signer
 * (NULL: none). */
static int check_pinned(const session_log *log, unsigned first, unsigned end, const cradle_broadcast_position *expect,
                        const uint8_t *signer, cradle_broadcast_fragment_info *info, char *message,
                        size_t message_size) {
    size_t size;
    uint8_t *buffer = fragment_of(log, first, end, &size);
    int rc = cradle_broadcast_fragment_check(buffer, size, expect, signer, info, message, message_size);
    free(buffer);
    return rc;
}

static int check(const session_log *log, unsigned first, unsigned end, const cradle_broadcast_position *expect,
                 cradle_broadcast_fragment_info *info, char *message, size_t message_size) {
    return check_pinned(log, first, end, expect, NULL, info, message, message_size);
}

static void test_fragments_in_order(void **state) {
    (void)state;
    session_log log;
    write_session(&log, "order.log", NULL);
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    cradle_broadcast_fragment_info info;

    /* the session's id is its start's checksum */
    uint8_t session[CRADLE_BROADCAST_SESSION_BYTES];
    cradle_broadcast_session_of(log.bytes, session);
    assert_memory_equal(session, log.bytes + 240, sizeof session);

    /* fragment 0: blocks 0..2, where a broadcast starts */
    cradle_broadcast_position expect = {0, 0};
    assert_int_equal(check(&log, 0, 3, &expect, &info, message, sizeof message), 0);
    assert_info(&log, 0, 3, &info);
    assert_true(info.hashes > 0);
    assert_true(info.last_hash_step != UINT64_MAX);
    /* then each next fragment from where the one before ended, three blocks
     * at a time, to the trailer's */
    unsigned at = 3;
    while (at < log.count) {
        unsigned end = at + 3 < log.count ? at + 3 : log.count;
        expect = info.end;
        if (check(&log, at, end, &expect, &info, message, sizeof message) != 0)
            fail_msg("blocks %u..%u: %s", at, end - 1, message);
        assert_info(&log, at, end, &info);
        at = end;
    }
    assert_true(info.trailer);
    assert_int_equal(info.end.step, STEPS);
    assert_int_equal(info.end.sequence, log.count);

    /* the whole log in one fragment */
    assert_int_equal(check(&log, 0, log.count, &(cradle_broadcast_position){0, 0}, &info, message, sizeof message), 0);
    assert_info(&log, 0, log.count, &info);
    assert_int_equal(info.hashes, STEPS / 10);
    assert_int_equal(info.last_hash_step, STEPS - 1);

    /* one block at a time, each against the one before */
    expect = (cradle_broadcast_position){0, 0};
    for (unsigned i = 0; i < log.count; i++) {
        assert_int_equal(check(&log, i, i + 1, &expect, &info, message, sizeof message), 0);
        assert_info(&log, i, i + 1, &info);
        expect = info.end;
    }
    free(log.bytes);
}

static void test_fragment_out_of_order(void **state) {
    (void)state;
    session_log log;
    write_session(&log, "disorder.log", NULL);
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    cradle_broadcast_fragment_info info;
    cradle_broadcast_position after_two;
    assert_int_equal(check(&log, 0, 3, &(cradle_broadcast_position){0, 0}, &info, message, sizeof message), 0);
    after_two = info.end;

    /* fragment 1 checked as if it were fragment 0, or fragment 0 again after it */
    refused_with(check(&log, 3, 6, &(cradle_broadcast_position){0, 0}, &info, message, sizeof message), message,
                 "fragment: ", "out of order");
    assert_non_null(strstr(message, "starts at block 3"));
    refused_with(check(&log, 0, 3, &after_two, &info, message, sizeof message), message, "fragment: ", "out of order");
    /* the right block but another step, the right step but another block */
    cradle_broadcast_position wrong = {after_two.sequence, after_two.step + 1};
    refused_with(check(&log, 3, 6, &wrong, &info, message, sizeof message), message, "fragment: ", "out of order");
    wrong = (cradle_broadcast_position){after_two.sequence + 1, after_two.step};
    refused_with(check(&log, 3, 6, &wrong, &info, message, sizeof message), message, "fragment: ", "out of order");

    /* without an expectation, any block may come first */
    for (unsigned i = 0; i + 2 <= log.count; i++) {
        if (check(&log, i, i + 2, NULL, &info, message, sizeof message) != 0) fail_msg("from block %u: %s", i, message);
        assert_info(&log, i, i + 2, &info);
    }

    /* a missing block inside a fragment: blocks 2, 4 */
    size_t a_size, b_size;
    uint8_t *a = fragment_of(&log, 2, 3, &a_size), *b = fragment_of(&log, 4, 5, &b_size);
    size_t n = a_size + b_size - CRADLE_LOG_HEADER_BYTES;
    uint8_t *gap = malloc(n);
    assert_non_null(gap);
    memcpy(gap, a, a_size);
    memcpy(gap + a_size, b + CRADLE_LOG_HEADER_BYTES, b_size - CRADLE_LOG_HEADER_BYTES);
    refused_with(cradle_broadcast_fragment_check(gap, n, NULL, NULL, &info, message, sizeof message), message, "fragment: ",
                 "sequence 4, expected 3");
    free(gap);
    /* a block twice */
    n = 2 * a_size - CRADLE_LOG_HEADER_BYTES;
    uint8_t *twice = malloc(n);
    assert_non_null(twice);
    memcpy(twice, a, a_size);
    memcpy(twice + a_size, a + CRADLE_LOG_HEADER_BYTES, a_size - CRADLE_LOG_HEADER_BYTES);
    refused_with(cradle_broadcast_fragment_check(twice, n, NULL, NULL, &info, message, sizeof message), message,
                 "fragment: ", "sequence 2, expected 3");
    free(twice);
    free(a);
    free(b);
    free(log.bytes);
}

static void test_fragment_with_the_trailer(void **state) {
    (void)state;
    /* signed: a partial reader passes no signature on */
    uint8_t sign_public[crypto_sign_PUBLICKEYBYTES], sign_secret[crypto_sign_SECRETKEYBYTES];
    crypto_sign_keypair(sign_public, sign_secret);
    session_log log;
    write_session(&log, "trailer.log", sign_secret);
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    cradle_broadcast_fragment_info info;
    unsigned last = log.count - 1;
    /* the trailer's digest covers blocks the check never sees: not refused;
     * the blocks' own signatures are checked from any block on */
    for (unsigned first = 0; first <= last; first++) {
        cradle_broadcast_position expect = {first, log.blocks[first].first_step};
        if (check(&log, first, log.count, &expect, &info, message, sizeof message) != 0)
            fail_msg("blocks %u..%u: %s", first, last, message);
        assert_info(&log, first, log.count, &info);
        assert_true(info.trailer);
        if (check_pinned(&log, first, log.count, &expect, sign_public, &info, message, sizeof message) != 0)
            fail_msg("blocks %u..%u, pinned: %s", first, last, message);
        assert_info(&log, first, log.count, &info);
    }
    /* the trailer's block alone */
    assert_int_equal(check(&log, last, log.count, NULL, &info, message, sizeof message), 0);
    assert_int_equal(info.blocks, 1);
    assert_int_equal(info.first.step, STEPS);
    assert_int_equal(info.end.step, STEPS);
    assert_int_equal(info.hashes, 0);
    assert_int_equal(info.last_hash_step, UINT64_MAX);

    /* a reader from the middle delivers the trailer unsigned */
    size_t size;
    uint8_t *buffer = fragment_of(&log, 3, log.count, &size);
    cradle_log_reader r;
    assert_int_equal(cradle_log_reader_open_memory(&r, buffer, size, message, sizeof message), 0);
    cradle_log_reader_start_anywhere(&r);
    cradle_log_record rec;
    int rc;
    bool trailer = false;
    while ((rc = cradle_log_reader_next(&r, &rec)) == 1)
        if (rec.kind == CRADLE_LOG_RECORD_TRAILER) {
            trailer = true;
            assert_int_equal(rec.step, STEPS);
            assert_int_equal(rec.hash, 777);
            assert_int_equal(rec.signature_length, 0);
            assert_int_equal(cradle_log_verify_signature(&rec, sign_public), CRADLE_ELOG_SIGNATURE);
        }
    assert_int_equal(rc, 0);
    assert_true(trailer);
    assert_int_equal(r.end, CRADLE_LOG_END_CLOSED);
    cradle_log_reader_close(&r);
    free(buffer);
    /* while a reader of the whole log checks the digest and passes the signature */
    assert_int_equal(cradle_log_reader_open_memory(&r, log.bytes, log.size, message, sizeof message), 0);
    trailer = false;
    while ((rc = cradle_log_reader_next(&r, &rec)) == 1)
        if (rec.kind == CRADLE_LOG_RECORD_TRAILER) {
            trailer = true;
            assert_int_equal(rec.signature_length, crypto_sign_BYTES);
            assert_int_equal(cradle_log_verify_signature(&rec, sign_public), 0);
        }
    assert_int_equal(rc, 0);
    assert_true(trailer);
    cradle_log_reader_close(&r);

    /* a trailer is the last block: anything after it is refused */
    size_t a_size, b_size;
    uint8_t *a = fragment_of(&log, last, log.count, &a_size), *b = fragment_of(&log, 0, 1, &b_size);
    size_t n = a_size + b_size - CRADLE_LOG_HEADER_BYTES;
    uint8_t *after = malloc(n);
    assert_non_null(after);
    memcpy(after, a, a_size);
    memcpy(after + a_size, b + CRADLE_LOG_HEADER_BYTES, b_size - CRADLE_LOG_HEADER_BYTES);
    refused_with(cradle_broadcast_fragment_check(after, n, NULL, NULL, &info, message, sizeof message), message,
                 "fragment: ", "after the trailer");
    free(after);
    free(a);
    free(b);
    free(log.bytes);
}

/* A viewer that pinned the server's key: another key's blocks, unsigned
 * blocks, a block changed and resealed, or blocks of another session under
 * this start are refused, naming the block. */
static void test_signed_fragments(void **state) {
    (void)state;
    uint8_t sign_public[crypto_sign_PUBLICKEYBYTES], sign_secret[crypto_sign_SECRETKEYBYTES];
    uint8_t other_public[crypto_sign_PUBLICKEYBYTES], other_secret[crypto_sign_SECRETKEYBYTES];
    crypto_sign_keypair(sign_public, sign_secret);
    crypto_sign_keypair(other_public, other_secret);
    session_log log, plain;
    write_session(&log, "signed.log", sign_secret);
    write_session(&plain, "plain.log", NULL);
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    cradle_broadcast_fragment_info info;
    assert_int_equal(check_pinned(&log, 2, 5, NULL, sign_public, &info, message, sizeof message), 0);
    refused_with(check_pinned(&log, 2, 5, NULL, other_public, &info, message, sizeof message), message, "fragment: ",
                 "block 2 at byte 256 (from step");
    assert_non_null(strstr(message, "not signed by the pinned key for this session"));
    refused_with(check_pinned(&plain, 2, 5, NULL, sign_public, &info, message, sizeof message), message, "fragment: ",
                 "not signed by the pinned key");
    /* a step of the third block changed, its checksum redone */
    size_t size;
    uint8_t *buffer = fragment_of(&log, 2, 5, &size);
    size_t third = CRADLE_LOG_HEADER_BYTES + log.blocks[2].size + log.blocks[3].size;
    buffer[third + CRADLE_LOG_BLOCK_HEADER_BYTES + 1] ^= 0x10; /* a snapshot byte of its first record */
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, 16);
    crypto_generichash_update(&st, buffer + third, 32);
    crypto_generichash_update(&st, buffer + third + CRADLE_LOG_BLOCK_HEADER_BYTES,
                              log.blocks[4].size - CRADLE_LOG_BLOCK_HEADER_BYTES);
    crypto_generichash_final(&st, buffer + third + 32, 16);
    assert_int_equal(cradle_broadcast_fragment_check(buffer, size, NULL, NULL, &info, message, sizeof message), 0);
    refused_with(cradle_broadcast_fragment_check(buffer, size, NULL, sign_public, &info, message, sizeof message),
                 message, "fragment: ", "block 4 at byte");
    /* this session's blocks under another session's start (another seed,
     * the header's checksum redone) */
    free(buffer);
    buffer = fragment_of(&log, 2, 5, &size);
    buffer[144] ^= 1;
    crypto_generichash(buffer + 240, 16, buffer, 240, NULL, 0);
    assert_int_equal(cradle_broadcast_fragment_check(buffer, size, NULL, NULL, &info, message, sizeof message), 0);
    refused_with(cradle_broadcast_fragment_check(buffer, size, NULL, sign_public, &info, message, sizeof message),
                 message, "fragment: ", "for this session");
    free(buffer);
    free(log.bytes);
    free(plain.bytes);
}

static void test_damaged_fragments(void **state) {
    (void)state;
    session_log log;
    write_session(&log, "damage.log", NULL);
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    cradle_broadcast_fragment_info info;
    size_t size;
    uint8_t *whole = fragment_of(&log, 0, 3, &size);
    cradle_broadcast_position start = {0, 0};

    /* cut anywhere inside its last block, or its header: truncated */
    size_t last_block = log.blocks[2].offset; /* in the file = in the fragment: it starts at block 0 */
    for (size_t cut = last_block + 1; cut < size; cut++) {
        uint8_t *copy = malloc(cut);
        assert_non_null(copy);
        memcpy(copy, whole, cut);
        int rc = cradle_broadcast_fragment_check(copy, cut, &start, NULL, &info, message, sizeof message);
        if (rc != CRADLE_EBROADCAST || strncmp(message, "fragment: ", 10) != 0 || !strstr(message, "truncated"))
            fail_msg("cut at %zu of %zu: rc %d, \"%s\"", cut, size, rc, message);
        free(copy);
    }
    /* cut at a block boundary, it is a shorter fragment */
    assert_int_equal(cradle_broadcast_fragment_check(whole, last_block, &start, NULL, &info, message, sizeof message), 0);
    assert_int_equal(info.blocks, 2);

    /* a byte flipped in its middle block, anywhere in the block */
    const block_ref *middle = &log.blocks[1];
    for (size_t at = middle->offset; at < middle->offset + middle->size; at++) {
        whole[at] ^= 0x20;
        int rc = cradle_broadcast_fragment_check(whole, size, &start, NULL, &info, message, sizeof message);
        if (rc != CRADLE_EBROADCAST || strncmp(message, "fragment: ", 10) != 0 || !strstr(message, "damaged block"))
            fail_msg("flip at %zu: rc %d, \"%s\"", at, rc, message);
        whole[at] ^= 0x20;
    }
    /* in its last block it cannot be told from a cut: refused all the same */
    whole[size - 5] ^= 1;
    refused_with(cradle_broadcast_fragment_check(whole, size, &start, NULL, &info, message, sizeof message), message,
                 "fragment: ", "truncated or damaged");
    whole[size - 5] ^= 1;
    /* in the start document */
    whole[20] ^= 1;
    refused_with(cradle_broadcast_fragment_check(whole, size, &start, NULL, &info, message, sizeof message), message,
                 "fragment: ", "the start document");
    whole[20] ^= 1;
    assert_int_equal(cradle_broadcast_fragment_check(whole, size, &start, NULL, &info, message, sizeof message), 0);

    /* nothing after the start; bytes that are no block at all */
    refused_with(cradle_broadcast_fragment_check(whole, CRADLE_LOG_HEADER_BYTES, &start, NULL, &info, message, sizeof message),
                 message, "fragment: ", "empty");
    memset(whole + CRADLE_LOG_HEADER_BYTES, 0, size - CRADLE_LOG_HEADER_BYTES);
    refused_with(cradle_broadcast_fragment_check(whole, size, &start, NULL, &info, message, sizeof message), message,
                 "fragment: ", "truncated");
    free(whole);
    free(log.bytes);
}

static void test_fragment_lists_its_data_files(void **state) {
    (void)state;
    session_log log;
    write_session(&log, "data.log", NULL);
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    cradle_broadcast_fragment_info info;
    unsigned holder = log.count;
    for (unsigned i = 0; i < log.count; i++)
        if (log.blocks[i].data) holder = i;
    assert_true(holder < log.count);
    /* the fragment of that block alone, and one around it */
    assert_int_equal(check(&log, holder, holder + 1, NULL, &info, message, sizeof message), 0);
    assert_int_equal(info.data_count, 1);
    assert_memory_equal(info.data_hash[0], log.data_hash, CRADLE_LOG_FILE_HASH_BYTES);
    assert_int_equal(info.data_size[0], strlen(DATA_TEXT));
    assert_int_equal(check(&log, holder - 1, holder + 2, NULL, &info, message, sizeof message), 0);
    assert_info(&log, holder - 1, holder + 2, &info);
    assert_int_equal(info.data_count, 1);
    assert_memory_equal(info.data_hash[0], log.data_hash, CRADLE_LOG_FILE_HASH_BYTES);
    assert_int_equal(info.data_size[0], strlen(DATA_TEXT));
    /* a fragment without the block lists none */
    assert_int_equal(check(&log, holder + 1, holder + 2, NULL, &info, message, sizeof message), 0);
    assert_int_equal(info.data_count, 0);
    /* and the viewer fetches it by name */
    char url[CRADLE_BROADCAST_URL_MAX];
    assert_int_equal(cradle_broadcast_url(url, sizeof url, "", CRADLE_BROADCAST_DATA, 0, info.data_hash[0]), 0);
    free(log.bytes);
}

/* A block made here, as log_format.c lays it out: `steps` STEP records
 * from first_step, header check and checksum right. */
static size_t forge_block(uint8_t *out, uint32_t sequence, uint64_t first_step, uint32_t steps) {
    uint32_t payload = steps * (1u + SNAP);
    memset(out, 0, CRADLE_LOG_BLOCK_HEADER_BYTES + payload);
    memcpy(out, "CBLK", 4);
    cradle_cursor_store_u32(out + 4, sequence);
    cradle_cursor_store_u64(out + 8, first_step);
    cradle_cursor_store_u32(out + 16, steps);
    cradle_cursor_store_u32(out + 20, payload);
    for (uint32_t i = 0; i < steps; i++) out[CRADLE_LOG_BLOCK_HEADER_BYTES + i * (1u + SNAP)] = 1; /* STEP */
    uint8_t sum[16];
    crypto_generichash(sum, sizeof sum, out, 28, NULL, 0);
    memcpy(out + 28, sum, 4);
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, 16);
    crypto_generichash_update(&st, out, 32);
    crypto_generichash_update(&st, out + CRADLE_LOG_BLOCK_HEADER_BYTES, payload);
    crypto_generichash_final(&st, out + 32, 16);
    return CRADLE_LOG_BLOCK_HEADER_BYTES + payload;
}

/* A fragment's blocks say where they are in the session: a place that is
 * in no log (steps past the largest a sync document or a keyframe names,
 * which would run past UINT64_MAX and wrap to 0) is refused, while a block
 * from the middle that verifies is taken where it says. */
static void test_fragment_from_no_place_in_a_log(void **state) {
    (void)state;
    session_log log;
    write_session(&log, "place.log", NULL);
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    cradle_broadcast_fragment_info info;
    enum { BLOCK = CRADLE_LOG_BLOCK_HEADER_BYTES + 5 * (1 + SNAP) };
    uint8_t fragment[CRADLE_LOG_HEADER_BYTES + BLOCK];
    memcpy(fragment, log.bytes, CRADLE_LOG_HEADER_BYTES);

    assert_int_equal(forge_block(fragment + CRADLE_LOG_HEADER_BYTES, 1000, 5000000, 5), BLOCK);
    assert_int_equal(cradle_broadcast_fragment_check(fragment, sizeof fragment, NULL, NULL, &info, message, sizeof message), 0);
    assert_int_equal(info.first.sequence, 1000);
    assert_int_equal(info.first.step, 5000000);
    assert_int_equal(info.end.sequence, 1001);
    assert_int_equal(info.end.step, 5000005);

    static const uint64_t nowhere[] = {UINT64_MAX - 2, UINT64_MAX, (uint64_t)INT64_MAX + 1u};
    for (size_t i = 0; i < sizeof nowhere / sizeof nowhere[0]; i++) {
        forge_block(fragment + CRADLE_LOG_HEADER_BYTES, 1000, nowhere[i], 5);
        int rc = cradle_broadcast_fragment_check(fragment, sizeof fragment, NULL, NULL, &info, message, sizeof message);
        if (rc == 0)
            fail_msg("accepted a block from step %llu: first step %llu, end step %llu",
                     (unsigned long long)nowhere[i], (unsigned long long)info.first.step,
                     (unsigned long long)info.end.step);
        refused_with(rc, message, "fragment: ", "step");
    }
    free(log.bytes);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sync_round_trip),
        cmocka_unit_test(test_sync_valid_document),
        cmocka_unit_test(test_sync_every_missing_field_is_named),
        cmocka_unit_test(test_sync_fields_out_of_range),
        cmocka_unit_test(test_sync_lists_must_agree),
        cmocka_unit_test(test_sync_malformed_json),
        cmocka_unit_test(test_sync_size_limit),
        cmocka_unit_test(test_sync_version_1_is_refused),
        cmocka_unit_test(test_sync_web),
        cmocka_unit_test(test_sync_worst_case_fits),
        cmocka_unit_test(test_web_manifest),
        cmocka_unit_test(test_sync_in_gap),
        cmocka_unit_test(test_urls),
        cmocka_unit_test(test_keyframe_round_trip),
        cmocka_unit_test(test_keyframe_every_flipped_byte_is_refused),
        cmocka_unit_test(test_keyframe_signature),
        cmocka_unit_test(test_keyframe_refusals),
        cmocka_unit_test(test_keyframe_holds_one_frame),
        cmocka_unit_test(test_fragments_in_order),
        cmocka_unit_test(test_fragment_out_of_order),
        cmocka_unit_test(test_fragment_with_the_trailer),
        cmocka_unit_test(test_signed_fragments),
        cmocka_unit_test(test_damaged_fragments),
        cmocka_unit_test(test_fragment_lists_its_data_files),
        cmocka_unit_test(test_fragment_from_no_place_in_a_log),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
