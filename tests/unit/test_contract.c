/* Tests for contract: every field of a game's contract is checked, with a
 * message naming the field and both values. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/contract.h"

static int fake_init(void *state, uint64_t seed, uint32_t players) {
    (void)state;
    (void)seed;
    (void)players;
    return 0;
}

static void fake_step(void *state, const cradle_game_step *step, const cradle_event_sink *events) {
    (void)state;
    (void)step;
    (void)events;
}

static cradle_game_contract good(void) {
    return (cradle_game_contract){
        .abi_major = CRADLE_ABI_MAJOR,
        .abi_minor = CRADLE_ABI_MINOR,
        .state_size = 2048,
        .state_align = 16,
        .input_bytes = 4,
        .max_players = 8,
        .steps_per_second = 60,
        .source_frames_per_second = 20,
        .name = "game",
        .build_id = "0123456789abcdef",
        .init = fake_init,
        .step = fake_step,
    };
}

static cradle_contract_limits limits(void) {
    cradle_contract_limits l = cradle_contract_host_limits();
    l.state_capacity = 2048;
    return l;
}

/* Checks c, expecting code and a message equal to `expect`. */
static void expect_refusal(const cradle_game_contract *c, int code, const char *expect) {
    cradle_contract_limits l = limits();
    char message[256];
    memset(message, 'x', sizeof message);
    int rc = cradle_contract_check(c, &l, message, sizeof message);
    assert_int_equal(rc, code);
    assert_string_equal(message, expect);
}

static void test_good_contract_passes(void **unused) {
    (void)unused;
    cradle_game_contract c = good();
    cradle_contract_limits l = limits();
    char message[64] = "junk";
    assert_int_equal(cradle_contract_check(&c, &l, message, sizeof message), CRADLE_OK);
    assert_string_equal(message, "");
    /* No message buffer at all. */
    assert_int_equal(cradle_contract_check(&c, &l, NULL, 0), CRADLE_OK);
    /* Boundaries that are allowed. */
    c.state_size = 2048;
    c.state_align = 64;
    c.input_bytes = CRADLE_GAME_MAX_INPUT_BYTES;
    c.max_players = CRADLE_GAME_MAX_PLAYERS;
    c.abi_minor = 0;
    c.source_frames_per_second = 60;
    c.name = "0123456789012345678901234567890"; /* 31 bytes */
    c.build_id = "x";
    assert_int_equal(cradle_contract_check(&c, &l, NULL, 0), CRADLE_OK);
    c.state_align = 1;
    c.input_bytes = 1;
    c.max_players = 1;
    c.source_frames_per_second = 1;
    c.state_size = 1;
    assert_int_equal(cradle_contract_check(&c, &l, NULL, 0), CRADLE_OK);
}

static void test_host_limits(void **unused) {
    (void)unused;
    cradle_contract_limits l = cradle_contract_host_limits();
    assert_int_equal(l.abi_major, CRADLE_ABI_MAJOR);
    assert_int_equal(l.abi_minor, CRADLE_ABI_MINOR);
    assert_int_equal(l.max_state_align, 64);
    assert_int_equal(l.state_capacity, 0);
    /* Capacity 0 is no limit; max_state_align 0 is the default 64. */
    cradle_game_contract c = good();
    c.state_size = UINT32_MAX;
    assert_int_equal(cradle_contract_check(&c, &l, NULL, 0), CRADLE_OK);
    l.max_state_align = 0;
    c.state_align = 128;
    char message[128];
    assert_int_equal(cradle_contract_check(&c, &l, message, sizeof message),
                     CRADLE_ERELOAD_ALIGN);
    assert_string_equal(message, "state alignment 128 > maximum 64");
}

static void test_abi_versions(void **unused) {
    (void)unused;
    char expect[128];
    cradle_game_contract c = good();
    c.abi_major = CRADLE_ABI_MAJOR + 1u;
    snprintf(expect, sizeof expect, "abi major %u != host abi major %u", CRADLE_ABI_MAJOR + 1u,
             CRADLE_ABI_MAJOR);
    expect_refusal(&c, CRADLE_ERELOAD_MAJOR, expect);
    c.abi_major = CRADLE_ABI_MAJOR - 1u;
    snprintf(expect, sizeof expect, "abi major %u != host abi major %u", CRADLE_ABI_MAJOR - 1u,
             CRADLE_ABI_MAJOR);
    expect_refusal(&c, CRADLE_ERELOAD_MAJOR, expect);
    c = good();
    c.abi_minor = CRADLE_ABI_MINOR + 1u;
    snprintf(expect, sizeof expect, "abi minor %u > host abi minor %u", CRADLE_ABI_MINOR + 1u,
             CRADLE_ABI_MINOR);
    expect_refusal(&c, CRADLE_ERELOAD_MINOR, expect);
    /* An older minor is accepted when the host's is newer. */
    cradle_contract_limits l = limits();
    l.abi_minor = 5;
    c.abi_minor = 3;
    assert_int_equal(cradle_contract_check(&c, &l, NULL, 0), CRADLE_OK);
}

static void fake_bot(const void *state, uint64_t step, uint32_t slot, uint64_t random,
                     uint8_t *input, uint32_t input_bytes) {
    (void)state, (void)step, (void)slot, (void)random, (void)input, (void)input_bytes;
}

/* Minor 2 added the game's sound files: each name is checked, and an older
 * contract's (shorter) object is never read for them. */
static void test_minor_2_sounds(void **unused) {
    (void)unused;
    cradle_contract_limits l = limits();
    cradle_game_contract c = good();
    static const char *const ok[] = {"game/coin.wav", "boom.wav", "a/b/c.wav", "..x/y.wav"};
    c.sounds = ok;
    c.sound_count = 4;
    assert_int_equal(cradle_contract_check(&c, &l, NULL, 0), CRADLE_OK);
    uint32_t count = 0;
    assert_ptr_equal(cradle_contract_sounds(&c, &count), ok);
    assert_int_equal(count, 4);
    c.sounds = NULL;
    c.sound_count = 0;
    assert_int_equal(cradle_contract_check(&c, &l, NULL, 0), CRADLE_OK);
    assert_null(cradle_contract_sounds(&c, &count));
    assert_int_equal(count, 0);
    c.sound_count = 2;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "sounds is NULL with sound count 2");
    c.sound_count = CRADLE_GAME_MAX_SOUNDS + 1u;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "sound count 257 > maximum 256");
    const struct {
        const char *name, *message;
    } bad[] = {
        {"/etc/a.wav", "sound 2 name \"/etc/a.wav\" is absolute"},
        {"a.ogg", "sound 2 name \"a.ogg\" does not end in .wav"},
        {".wav", "sound 2 name \".wav\" does not end in .wav"},
        {"../a.wav", "sound 2 name \"../a.wav\" has a .. component"},
        {"g/../../a.wav", "sound 2 name \"g/../../a.wav\" has a .. component"},
        {"g/..", "sound 2 name \"g/..\" does not end in .wav"},
        {"a\x01.wav", "sound 2 name byte 1 is 0x01, not printable ASCII 0x20..0x7e"},
        {"", "sound 2 name length 0 < minimum 1"},
        {NULL, "sound 2 name is NULL"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *names[] = {"fine.wav", bad[i].name};
        c.sounds = names;
        c.sound_count = 2;
        expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, bad[i].message);
    }
    /* A minor-1 object ends before the fields: never read, no sounds. */
    c = good();
    c.abi_minor = CRADLE_ABI_MINOR_BOT;
    size_t v1_size = offsetof(cradle_game_contract, sounds);
    cradle_game_contract *old = malloc(v1_size);
    assert_non_null(old);
    memcpy(old, &c, v1_size);
    assert_int_equal(cradle_contract_check(old, &l, NULL, 0), CRADLE_OK);
    assert_null(cradle_contract_sounds(old, &count));
    assert_int_equal(count, 0);
    free(old);
}

/* Minor 1 added the optional bot entry: present or NULL, a minor-1 contract
 * passes; the accessor answers it only for minor >= 1, and the check never
 * reads past a minor-0 contract's end. */
static void test_minor_1_bot_entry(void **unused) {
    (void)unused;
    cradle_contract_limits l = limits();
    cradle_game_contract c = good();
    c.abi_minor = CRADLE_ABI_MINOR_BOT;
    assert_int_equal(cradle_contract_check(&c, &l, NULL, 0), CRADLE_OK);
    assert_null(cradle_contract_bot(&c));
    c.bot = fake_bot;
    assert_int_equal(cradle_contract_check(&c, &l, NULL, 0), CRADLE_OK);
    assert_ptr_equal(cradle_contract_bot(&c), fake_bot);
    /* A host of minor 0 refuses it. */
    l.abi_minor = 0;
    char message[64] = "junk";
    assert_int_equal(cradle_contract_check(&c, &l, message, sizeof message), CRADLE_ERELOAD_MINOR);
    assert_string_equal(message, "abi minor 1 > host abi minor 0");
    /* Minor 0: whatever the bytes where the field would be, no bot. */
    l = limits();
    c.abi_minor = 0;
    assert_int_equal(cradle_contract_check(&c, &l, NULL, 0), CRADLE_OK);
    assert_null(cradle_contract_bot(&c));
    /* ... and on an object that ends before the field (an older library's),
     * neither reads it: an overread is an ASan finding. */
    size_t v0_size = offsetof(cradle_game_contract, bot);
    cradle_game_contract *old = malloc(v0_size);
    assert_non_null(old);
    memcpy(old, &c, v0_size);
    assert_int_equal(cradle_contract_check(old, &l, message, sizeof message), CRADLE_OK);
    assert_string_equal(message, "");
    assert_null(cradle_contract_bot(old));
    free(old);
}

static void fake_predict(const void *state, uint64_t step, uint32_t slot, const uint8_t *last, uint64_t steps_since,
                         uint8_t *input, uint32_t input_bytes) {
    (void)state, (void)step, (void)slot, (void)last, (void)steps_since, (void)input, (void)input_bytes;
}

static void fake_react(const void *state, const cradle_event *events, uint32_t count, const cradle_fx *fx) {
    (void)state, (void)events, (void)count, (void)fx;
}

/* Minor 5 added predict and react_confirmed: read through their accessors
 * only when abi_minor says they exist, never past an older object's end. */
static void test_minor_5_prediction_entries(void **unused) {
    (void)unused;
    cradle_contract_limits l = limits();
    cradle_game_contract c = good();
    assert_null(cradle_contract_predict(&c));
    assert_null(cradle_contract_react_confirmed(&c));
    c.predict = fake_predict;
    c.react_confirmed = fake_react;
    assert_int_equal(cradle_contract_check(&c, &l, NULL, 0), CRADLE_OK);
    assert_ptr_equal(cradle_contract_predict(&c), fake_predict);
    assert_ptr_equal(cradle_contract_react_confirmed(&c), fake_react);
    /* A host of minor 4 refuses it. */
    l.abi_minor = CRADLE_ABI_MINOR_DATA;
    char message[64];
    assert_int_equal(cradle_contract_check(&c, &l, message, sizeof message), CRADLE_ERELOAD_MINOR);
    assert_string_equal(message, "abi minor 5 > host abi minor 4");
    /* Minor 4: whatever the bytes where the fields would be, none; and an
     * object that ends before them is not read past its end (ASan). */
    l = limits();
    c.abi_minor = CRADLE_ABI_MINOR_DATA;
    assert_null(cradle_contract_predict(&c));
    assert_null(cradle_contract_react_confirmed(&c));
    size_t v4_size = offsetof(cradle_game_contract, predict);
    cradle_game_contract *old = malloc(v4_size);
    assert_non_null(old);
    memcpy(old, &c, v4_size);
    assert_int_equal(cradle_contract_check(old, &l, NULL, 0), CRADLE_OK);
    assert_null(cradle_contract_predict(old));
    assert_null(cradle_contract_react_confirmed(old));
    free(old);
}

static bool fake_data(void *state, uint32_t file, const uint8_t *bytes, uint32_t size, cradle_data_refusal *refusal) {
    (void)state, (void)file, (void)bytes, (void)size, (void)refusal;
    return true;
}

/* Minor 4 added the game's data files: every declaration is checked (count,
 * both pointers, each name as a sound's without the .wav rule, the size
 * limit, distinct names), and an older contract is never read for them. */
static void test_minor_4_data_files(void **unused) {
    (void)unused;
    cradle_contract_limits l = limits();
    cradle_game_contract c = good();
    char long_name[CRADLE_GAME_DATA_NAME_MAX + 2];
    memset(long_name, 'd', sizeof long_name - 1);
    long_name[CRADLE_GAME_DATA_NAME_MAX] = '\0'; /* 127 bytes: the most */
    const cradle_game_data_file ok[] = {
        {"counter/bonus.json", 4096},
        {"waves", CRADLE_GAME_DATA_MAX_BYTES},
        {"a", 1},
        {"..x/y..", 1},
        {".hidden/x", 2},
        {long_name, 3},
    };
    c.data_files = ok;
    c.data_file_count = 6;
    c.data = fake_data;
    char message[128] = "junk";
    assert_int_equal(cradle_contract_check(&c, &l, message, sizeof message), CRADLE_OK);
    assert_string_equal(message, "");
    uint32_t count = 99;
    assert_ptr_equal(cradle_contract_data(&c, &count), ok);
    assert_int_equal(count, 6);

    /* The most files a game may declare. */
    static char names[CRADLE_GAME_MAX_DATA_FILES + 1][8];
    cradle_game_data_file many[CRADLE_GAME_MAX_DATA_FILES + 1];
    for (uint32_t i = 0; i <= CRADLE_GAME_MAX_DATA_FILES; i++) {
        snprintf(names[i], sizeof names[i], "f%u", (unsigned)i);
        many[i] = (cradle_game_data_file){names[i], 16};
    }
    c.data_files = many;
    c.data_file_count = CRADLE_GAME_MAX_DATA_FILES;
    assert_int_equal(cradle_contract_check(&c, &l, NULL, 0), CRADLE_OK);
    assert_ptr_equal(cradle_contract_data(&c, &count), many);
    assert_int_equal(count, CRADLE_GAME_MAX_DATA_FILES);
    c.data_file_count = CRADLE_GAME_MAX_DATA_FILES + 1u;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "data file count 17 > maximum 16");

    /* None: both pointers may be NULL (and are not looked at). */
    c.data_files = NULL;
    c.data = NULL;
    c.data_file_count = 0;
    assert_int_equal(cradle_contract_check(&c, &l, NULL, 0), CRADLE_OK);
    count = 99;
    assert_null(cradle_contract_data(&c, &count));
    assert_int_equal(count, 0);
    c.data_files = ok; /* declarations without a count: none */
    assert_int_equal(cradle_contract_check(&c, &l, NULL, 0), CRADLE_OK);
    assert_null(cradle_contract_data(&c, &count));
    assert_int_equal(count, 0);

    c.data_files = NULL;
    c.data = fake_data;
    c.data_file_count = 2;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "data_files is NULL with data file count 2");
    c.data_files = ok;
    c.data = NULL;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "data is NULL with data file count 2");
    c.data = fake_data;

    char too_long[CRADLE_GAME_DATA_NAME_MAX + 2];
    memset(too_long, 'd', sizeof too_long - 1);
    too_long[CRADLE_GAME_DATA_NAME_MAX + 1] = '\0'; /* 128 bytes */
    const struct {
        const char *name, *message;
    } bad[] = {
        {NULL, "data file 2 name is NULL"},
        {"/etc/passwd", "data file 2 name \"/etc/passwd\" is absolute"},
        {"/", "data file 2 name \"/\" is absolute"},
        {"..", "data file 2 name \"..\" has a .. component"},
        {"../x.json", "data file 2 name \"../x.json\" has a .. component"},
        {"g/../../x.json", "data file 2 name \"g/../../x.json\" has a .. component"},
        {"g/..", "data file 2 name \"g/..\" has a .. component"},
        {"a\x01.json", "data file 2 name byte 1 is 0x01, not printable ASCII 0x20..0x7e"},
        {"tab\there", "data file 2 name byte 3 is 0x09, not printable ASCII 0x20..0x7e"},
        {"caf\xc3\xa9", "data file 2 name byte 3 is 0xc3, not printable ASCII 0x20..0x7e"},
        {"", "data file 2 name length 0 < minimum 1"},
        {too_long, "data file 2 name length > maximum 127 (no NUL within 128 bytes)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const cradle_game_data_file files[] = {{"fine.json", 10}, {bad[i].name, 10}};
        c.data_files = files;
        c.data_file_count = 2;
        expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, bad[i].message);
    }
    const cradle_game_data_file zero[] = {{"fine.json", 10}, {"b.json", 0}};
    c.data_files = zero;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "data file 2 \"b.json\" max bytes 0 is outside 1..1048576");
    const cradle_game_data_file huge[] = {{"fine.json", 10}, {"b.json", CRADLE_GAME_DATA_MAX_BYTES + 1u}};
    c.data_files = huge;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "data file 2 \"b.json\" max bytes 1048577 is outside 1..1048576");
    const cradle_game_data_file twice[] = {{"a.json", 10}, {"b.json", 10}, {"a.json", 20}};
    c.data_files = twice;
    c.data_file_count = 3;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "data files 1 and 3 are both named \"a.json\"");
    const cradle_game_data_file first[] = {{"/abs", 0}, {"x", 0}};
    c.data_files = first; /* the first failure wins: file 1's name */
    c.data_file_count = 2;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "data file 1 name \"/abs\" is absolute");

    /* A host of minor 3 refuses a minor-4 game. */
    c = good();
    c.abi_minor = CRADLE_ABI_MINOR_DATA;
    l.abi_minor = CRADLE_ABI_MINOR_LAYOUT;
    assert_int_equal(cradle_contract_check(&c, &l, message, sizeof message), CRADLE_ERELOAD_MINOR);
    assert_string_equal(message, "abi minor 4 > host abi minor 3");

    /* Minor 3: whatever the bytes where the fields would be, no data files. */
    l = limits();
    c = good();
    c.abi_minor = CRADLE_ABI_MINOR_LAYOUT;
    c.data_files = (const cradle_game_data_file *)(uintptr_t)0x10;
    c.data_file_count = 0xdeadbeefu;
    c.data = NULL;
    assert_int_equal(cradle_contract_check(&c, &l, message, sizeof message), CRADLE_OK);
    assert_string_equal(message, "");
    count = 99;
    assert_null(cradle_contract_data(&c, &count));
    assert_int_equal(count, 0);
    /* ... and on an object that ends before them (a minor-3 library's), neither
     * reads past its end: an overread is an ASan or valgrind finding. */
    size_t v3_size = offsetof(cradle_game_contract, data_files);
    cradle_game_contract *old = malloc(v3_size);
    assert_non_null(old);
    memcpy(old, &c, v3_size);
    assert_int_equal(cradle_contract_check(old, &l, NULL, 0), CRADLE_OK);
    count = 99;
    assert_null(cradle_contract_data(old, &count));
    assert_int_equal(count, 0);
    free(old);
}

static void test_alignment(void **unused) {
    (void)unused;
    cradle_game_contract c = good();
    c.state_align = 3;
    expect_refusal(&c, CRADLE_ERELOAD_ALIGN, "state alignment 3 is not a power of two (maximum 64)");
    c.state_align = 0;
    expect_refusal(&c, CRADLE_ERELOAD_ALIGN, "state alignment 0 is not a power of two (maximum 64)");
    c.state_align = 48;
    expect_refusal(&c, CRADLE_ERELOAD_ALIGN, "state alignment 48 is not a power of two (maximum 64)");
    c.state_align = 128;
    expect_refusal(&c, CRADLE_ERELOAD_ALIGN, "state alignment 128 > maximum 64");
    c.state_align = 0x80000000u;
    expect_refusal(&c, CRADLE_ERELOAD_ALIGN, "state alignment 2147483648 > maximum 64");
    cradle_contract_limits l = limits();
    l.max_state_align = 4096;
    c.state_align = 4096;
    assert_int_equal(cradle_contract_check(&c, &l, NULL, 0), CRADLE_OK);
}

static void test_state_size(void **unused) {
    (void)unused;
    cradle_game_contract c = good();
    c.state_size = 4096;
    expect_refusal(&c, CRADLE_ERELOAD_SIZE, "state size 4096 > capacity 2048");
    c.state_size = 2049;
    expect_refusal(&c, CRADLE_ERELOAD_SIZE, "state size 2049 > capacity 2048");
    c.state_size = 0;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "state size 0 < minimum 1");
}

static void test_input_players_rates(void **unused) {
    (void)unused;
    cradle_game_contract c = good();
    c.input_bytes = 0;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "input bytes 0 not in 1..32");
    c.input_bytes = 33;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "input bytes 33 not in 1..32");
    c = good();
    c.max_players = 0;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "max players 0 not in 1..64");
    c.max_players = 65;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "max players 65 not in 1..64");
    c = good();
    c.steps_per_second = 0;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "steps per second 0 < minimum 1");
    c = good();
    c.source_frames_per_second = 0;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "source frames per second 0 < minimum 1");
    c.source_frames_per_second = 7;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT,
                   "source frames per second 7 does not divide steps per second 60");
    c.source_frames_per_second = 120;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT,
                   "source frames per second 120 does not divide steps per second 60");
}

static void test_strings(void **unused) {
    (void)unused;
    cradle_game_contract c = good();
    c.name = NULL;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "name is NULL");
    c.name = "";
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "name length 0 < minimum 1");
    c.name = "01234567890123456789012345678901"; /* 32 bytes */
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT,
                   "name length > maximum 31 (no NUL within 32 bytes)");
    c.name = "bell\a";
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT,
                   "name byte 4 is 0x07, not printable ASCII 0x20..0x7e");
    c.name = "caf\xc3\xa9";
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT,
                   "name byte 3 is 0xc3, not printable ASCII 0x20..0x7e");
    c = good();
    c.build_id = NULL;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "build id is NULL");
    c.build_id = "";
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "build id length 0 < minimum 1");
    char long_id[65];
    memset(long_id, 'a', 64);
    long_id[64] = '\0';
    c.build_id = long_id;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT,
                   "build id length > maximum 63 (no NUL within 64 bytes)");
    long_id[63] = '\0';
    cradle_contract_limits l = limits();
    assert_int_equal(cradle_contract_check(&c, &l, NULL, 0), CRADLE_OK);
}

static void test_unterminated_name_is_never_overread(void **unused) {
    (void)unused;
    /* Exactly max + 1 bytes without a NUL: the scan must stop there (ASan
     * and valgrind fail this test on any read past the array). */
    char *name = test_malloc(CRADLE_GAME_NAME_MAX + 1u);
    memset(name, 'n', CRADLE_GAME_NAME_MAX + 1u);
    cradle_game_contract c = good();
    c.name = name;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT,
                   "name length > maximum 31 (no NUL within 32 bytes)");
    assert_int_equal(cradle_contract_strnlen(name, CRADLE_GAME_NAME_MAX), 32);
    test_free(name);
    assert_int_equal(cradle_contract_strnlen(NULL, 5), 0);
    assert_int_equal(cradle_contract_strnlen("abc", 5), 3);
    assert_int_equal(cradle_contract_strnlen("abc", 3), 3);
    assert_int_equal(cradle_contract_strnlen("abcd", 3), 4);
}

static void test_entry_points_and_null(void **unused) {
    (void)unused;
    cradle_game_contract c = good();
    c.init = NULL;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "init is NULL");
    c = good();
    c.step = NULL;
    expect_refusal(&c, CRADLE_ERELOAD_CONTRACT, "step is NULL");
    /* Optional entry points may be NULL. */
    c = good();
    c.output = NULL;
    c.render = NULL;
    c.on_reload = NULL;
    c.react = NULL;
    cradle_contract_limits l = limits();
    assert_int_equal(cradle_contract_check(&c, &l, NULL, 0), CRADLE_OK);
    expect_refusal(NULL, CRADLE_ERELOAD_CONTRACT, "contract is NULL");
}

static void test_first_failure_wins_and_message_truncates(void **unused) {
    (void)unused;
    cradle_game_contract c = good();
    c.abi_major = 9;
    c.state_align = 3;
    c.name = NULL;
    cradle_contract_limits l = limits();
    char small[10];
    assert_int_equal(cradle_contract_check(&c, &l, small, sizeof small), CRADLE_ERELOAD_MAJOR);
    assert_string_equal(small, "abi major");
    assert_int_equal(cradle_contract_check(&c, &l, NULL, 0), CRADLE_ERELOAD_MAJOR);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_contract_passes),
        cmocka_unit_test(test_host_limits),
        cmocka_unit_test(test_abi_versions),
        cmocka_unit_test(test_minor_1_bot_entry),
        cmocka_unit_test(test_minor_2_sounds),
        cmocka_unit_test(test_minor_5_prediction_entries),
        cmocka_unit_test(test_minor_4_data_files),
        cmocka_unit_test(test_alignment),
        cmocka_unit_test(test_state_size),
        cmocka_unit_test(test_input_players_rates),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_unterminated_name_is_never_overread),
        cmocka_unit_test(test_entry_points_and_null),
        cmocka_unit_test(test_first_failure_wins_and_message_truncates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
