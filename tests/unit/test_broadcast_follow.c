/* test_broadcast_follow: one viewer's place in a broadcast
 * (broadcast_follow.h), driven with real documents: a session log written
 * by the log writer and cut into fragments, keyframes and sync documents
 * from broadcast.c's encoders. A follow from a keyframe to the end, from
 * fragment 0 when none is listed, a damaged fragment fetched again after
 * the next sync, a gap that starts a new segment at the keyframe after it,
 * and the keyframe each choice (newest, delayed, first) starts from. */
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

#include "cradle/broadcast_follow.h"
#include "cradle/cursor.h"
#include "cradle/hash.h"
#include "cradle/os.h"

enum {
    PLAYERS = 4, INPUT = 4, SNAP = 1 + PLAYERS * INPUT, STEPS = 300, MAX_BLOCKS = 96,
    BLOCKS_PER_FRAGMENT = 2, MAX_FRAGMENTS = MAX_BLOCKS / BLOCKS_PER_FRAGMENT, STATE = 64,
};
#define POLL_NS 500000000ull /* the default period */

/* The session logs the tests write, in a folder of their own. */
static char dir[512];

static int make_dir(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "%s/cradle-test-follow-XXXXXX", cradle_os_tmpdir());
    return mkdtemp(dir) && sodium_init() >= 0 ? 0 : -1;
}

static int remove_dir(void **state) {
    (void)state;
    cradle_os_remove_tree(dir);
    return 0;
}

/* ---- a broadcast of a real session log ---------------------------------------- */

typedef struct broadcast {
    uint8_t *log;                  /* the whole session log */
    size_t log_size;
    size_t block_offset[MAX_BLOCKS + 1]; /* in log; [blocks] = its end */
    uint64_t block_first_step[MAX_BLOCKS];
    unsigned blocks, fragments;    /* fragment f: blocks 2f, 2f+1 (the last may be one) */
    cradle_broadcast_sync sync;
    cradle_state_pack codec;
} broadcast;

static size_t no_output(const void *s, uint64_t step, uint8_t *o, size_t c) {
    (void)s, (void)step, (void)o, (void)c;
    return 0;
}

/* A closed session log of STEPS steps in the smallest blocks, a hash every
 * 10 steps, split into its blocks, and a sync document with nothing
 * published yet. */
static void broadcast_init(broadcast *b, const char *name) {
    memset(b, 0, sizeof *b);
    cradle_game_contract c = {
        .abi_major = 1, .state_size = 40, .state_align = 8, .input_bytes = INPUT, .max_players = PLAYERS,
        .steps_per_second = 60, .source_frames_per_second = 20, .name = "testgame", .build_id = "build-one",
        .output = no_output,
    };
    cradle_log_header h;
    assert_int_equal(cradle_log_header_from_contract(&h, &c, 42, 2, 1700000000000000000ull, 10), 0);
    char path[sizeof dir + 32], message[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cradle_log_writer w;
    cradle_log_writer_config config = {.block_size = CRADLE_LOG_BLOCK_MIN, .sync_inline = true, .overwrite = true};
    assert_int_equal(cradle_log_writer_open(&w, path, &h, &config, NULL, message, sizeof message), 0);
    uint8_t snap[SNAP];
    for (uint64_t s = 0; s < STEPS; s++) {
        for (unsigned i = 0; i < SNAP; i++) snap[i] = (uint8_t)(s * 7u + i);
        assert_int_equal(cradle_log_writer_append_step(&w, s, snap), 0);
        if ((s + 1) % 10 == 0) assert_int_equal(cradle_log_writer_append_hash(&w, s, s * 3u + 1u), 0);
    }
    assert_int_equal(cradle_log_writer_close(&w, 99), 0);

    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    b->log_size = (size_t)ftell(f);
    assert_int_equal(fseek(f, 0, SEEK_SET), 0);
    b->log = malloc(b->log_size);
    assert_non_null(b->log);
    assert_int_equal(fread(b->log, 1, b->log_size, f), b->log_size);
    fclose(f);

    /* the blocks, by their 48-byte headers: payload length at 20, first step at 8 */
    size_t at = CRADLE_LOG_HEADER_BYTES;
    while (at < b->log_size) {
        assert_true(b->blocks < MAX_BLOCKS);
        b->block_offset[b->blocks] = at;
        b->block_first_step[b->blocks++] = cradle_cursor_load_u64(b->log + at + 8);
        at += CRADLE_LOG_BLOCK_HEADER_BYTES + cradle_cursor_load_u32(b->log + at + 20);
    }
    assert_int_equal(at, b->log_size);
    b->block_offset[b->blocks] = at;
    b->fragments = (b->blocks + BLOCKS_PER_FRAGMENT - 1) / BLOCKS_PER_FRAGMENT;
    assert_true(b->fragments >= 10);

    cradle_broadcast_sync *s = &b->sync;
    cradle_broadcast_session_of(b->log, s->session);
    strcpy(s->game, "testgame");
    strcpy(s->build, "build-one");
    s->steps_per_second = 60;
    s->fragment_ms = 1000;
    s->live_unix_ms = 1700000000000u;
    assert_int_equal(cradle_state_pack_init(&b->codec, 0, CRADLE_STATE_PACK_BOTH), 0);
}

static void broadcast_free(broadcast *b) {
    free(b->log);
    cradle_state_pack_free(&b->codec);
}

static unsigned first_block(unsigned fragment) { return fragment * BLOCKS_PER_FRAGMENT; }

/* The step a keyframe at fragment f holds: its first block's first step. */
static uint64_t key_step(const broadcast *b, unsigned fragment) { return b->block_first_step[first_block(fragment)]; }

/* Fragments 0..n-1 published, with a keyframe numbered k at each fragment
 * of at[0..count-1]; the live step is the one after the last published. */
static void publish(broadcast *b, unsigned n, const unsigned *at, unsigned count, bool ended) {
    cradle_broadcast_sync *s = &b->sync;
    s->fragments = n;
    s->keyframe_count = count;
    for (unsigned i = 0; i < count; i++)
        s->keyframes[i] = (cradle_broadcast_keyframe_ref){.key = 100u + at[i], .step = key_step(b, at[i]),
                                                          .fragment = at[i]};
    s->live_step = n < b->fragments ? b->block_first_step[first_block(n)] : STEPS;
    s->ended = ended;
}

/* ---- fetching: what a caller does with what the follower asks for --------------- */

static int give_sync(cradle_broadcast_follow *f, const broadcast *b, char *message) {
    char text[CRADLE_BROADCAST_SYNC_MAX + 1];
    size_t n = cradle_broadcast_sync_encode(&b->sync, text, sizeof text);
    assert_true(n > 0);
    return cradle_broadcast_follow_take_sync(f, text, n, message, CRADLE_BROADCAST_MESSAGE_MAX);
}

/* The keyframe document numbered key: the state after the step of the
 * fragment it names, signed by nobody. */
static int give_keyframe(cradle_broadcast_follow *f, broadcast *b, uint64_t key, cradle_broadcast_keyframe *out,
                         char *message) {
    unsigned fragment = (unsigned)(key - 100u);
    uint8_t state[STATE], back[STATE];
    for (unsigned i = 0; i < STATE; i++) state[i] = (uint8_t)(fragment + i);
    cradle_broadcast_keyframe k = {.step = key_step(b, fragment), .state_hash = cradle_hash64(state, STATE),
                                   .state_size = STATE, .block_sequence = first_block(fragment),
                                   .block_first_step = key_step(b, fragment)};
    cradle_broadcast_session_of(b->log, k.session);
    strcpy(k.build_id, "build-one");
    uint8_t doc[1024];
    size_t length = 0;
    assert_true(cradle_broadcast_keyframe_bound(STATE) <= sizeof doc);
    assert_int_equal(cradle_broadcast_keyframe_encode(&b->codec, &k, state, NULL, doc, sizeof doc, &length, message,
                                                      CRADLE_BROADCAST_MESSAGE_MAX),
                     0);
    int rc = cradle_broadcast_follow_take_keyframe(f, &b->codec, doc, length, back, sizeof back, out, message,
                                                   CRADLE_BROADCAST_MESSAGE_MAX);
    if (rc == 0) assert_memory_equal(back, state, STATE);
    return rc;
}

/* Fragment n behind the follower's start; flip: a byte of it damaged. */
static int give_fragment(cradle_broadcast_follow *f, const broadcast *b, uint64_t n, bool flip,
                         cradle_broadcast_fragment_info *info, char *message) {
    assert_true(n < b->fragments);
    unsigned first = first_block((unsigned)n), end = first + BLOCKS_PER_FRAGMENT;
    if (end > b->blocks) end = b->blocks;
    size_t body = b->block_offset[end] - b->block_offset[first];
    uint8_t *buffer = malloc(CRADLE_LOG_HEADER_BYTES + body);
    assert_non_null(buffer);
    memcpy(buffer, f->start, CRADLE_LOG_HEADER_BYTES);
    memcpy(buffer + CRADLE_LOG_HEADER_BYTES, b->log + b->block_offset[first], body);
    if (flip) buffer[CRADLE_LOG_HEADER_BYTES + body / 2] ^= 0x5a;
    int rc = cradle_broadcast_follow_take_fragment(f, buffer, CRADLE_LOG_HEADER_BYTES + body, info, message,
                                                   CRADLE_BROADCAST_MESSAGE_MAX);
    free(buffer);
    return rc;
}

/* Asks f at now and checks the answer. */
static void expect_ask(cradle_broadcast_follow *f, uint64_t now, cradle_broadcast_follow_want want, uint64_t number) {
    cradle_broadcast_follow_ask a;
    cradle_broadcast_follow_next(f, now, &a);
    if (a.want != want || (number != UINT64_MAX && a.number != number))
        fail_msg("asked for %d %llu, expected %d %llu (%s)", (int)a.want, (unsigned long long)a.number, (int)want,
                 (unsigned long long)number, a.message);
    /* asking again gives the same answer, and notes nothing again */
    cradle_broadcast_follow_ask again;
    cradle_broadcast_follow_next(f, now, &again);
    assert_int_equal(again.want, a.want);
    assert_int_equal(again.number, a.number);
    assert_int_equal(again.note, CRADLE_BROADCAST_FOLLOW_NOTHING);
}

/* The first poll at now: sync, then start. */
static void join(cradle_broadcast_follow *f, const broadcast *b, uint64_t now) {
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    expect_ask(f, now, CRADLE_BROADCAST_FOLLOW_SYNC, 0);
    cradle_broadcast_follow_polled(f, now);
    assert_int_equal(f->next_poll, now + f->poll_ns);
    expect_ask(f, now, CRADLE_BROADCAST_FOLLOW_WAIT, 0); /* nothing before a sync is taken */
    if (give_sync(f, b, message) != 0) fail_msg("%s", message);
    expect_ask(f, now, CRADLE_BROADCAST_FOLLOW_START, 0);
    if (cradle_broadcast_follow_take_start(f, b->log, CRADLE_LOG_HEADER_BYTES, message, sizeof message) != 0)
        fail_msg("%s", message);
}

/* Takes every fragment f asks for until it waits; returns how many. */
static unsigned take_fragments(cradle_broadcast_follow *f, const broadcast *b, uint64_t now) {
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    cradle_broadcast_fragment_info info;
    unsigned taken = 0;
    for (;;) {
        cradle_broadcast_follow_ask a;
        cradle_broadcast_follow_next(f, now, &a);
        if (a.want != CRADLE_BROADCAST_FOLLOW_FRAGMENT) return taken;
        if (give_fragment(f, b, a.number, false, &info, message) != 0) fail_msg("%s", message);
        assert_int_equal(info.trailer, a.number == b->fragments - 1u);
        taken++;
    }
}

/* A poll at now with the broadcast as b says now. */
static void poll_at(cradle_broadcast_follow *f, const broadcast *b, uint64_t now) {
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    expect_ask(f, now, CRADLE_BROADCAST_FOLLOW_SYNC, 0);
    cradle_broadcast_follow_polled(f, now);
    if (give_sync(f, b, message) != 0) fail_msg("%s", message);
}

/* ---- the tests ------------------------------------------------------------------ */

static void test_follow_from_a_keyframe_to_the_end(void **state) {
    (void)state;
    broadcast b;
    broadcast_init(&b, "keyed.log");
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    cradle_broadcast_follow_config config = {0}; /* the newest keyframe, polls of 500 ms */
    cradle_broadcast_follow f;
    cradle_broadcast_follow_init(&f, &config, 1000);
    expect_ask(&f, 999, CRADLE_BROADCAST_FOLLOW_WAIT, 0); /* the first poll is not due yet */

    publish(&b, 6, (const unsigned[]){1, 4}, 2, false);
    join(&f, &b, 1000);
    expect_ask(&f, 1000, CRADLE_BROADCAST_FOLLOW_KEYFRAME, 104);
    cradle_broadcast_keyframe k;
    if (give_keyframe(&f, &b, 104, &k, message) != 0) fail_msg("%s", message);
    assert_int_equal(k.step, key_step(&b, 4));
    assert_int_equal(f.segment, 1);
    assert_true(f.from_keyframe);
    assert_int_equal(take_fragments(&f, &b, 1000), 2); /* 4 and 5 */
    expect_ask(&f, 1000, CRADLE_BROADCAST_FOLLOW_WAIT, 0);

    /* a cache's older copy is taken and ignored */
    publish(&b, 3, (const unsigned[]){1}, 1, false);
    poll_at(&f, &b, 1000 + POLL_NS);
    assert_int_equal(f.sync.fragments, 6);
    expect_ask(&f, 1000 + POLL_NS, CRADLE_BROADCAST_FOLLOW_WAIT, 0);

    /* the rest, and the end */
    publish(&b, b.fragments, (const unsigned[]){1, 4, 8}, 3, true);
    poll_at(&f, &b, 1000 + 2 * POLL_NS);
    assert_int_equal(take_fragments(&f, &b, 1000 + 2 * POLL_NS), b.fragments - 6);
    expect_ask(&f, 1000 + 2 * POLL_NS, CRADLE_BROADCAST_FOLLOW_DONE, 0);
    expect_ask(&f, UINT64_MAX, CRADLE_BROADCAST_FOLLOW_DONE, 0); /* no more polls */
    assert_true(f.done && f.complete && f.trailer);
    assert_int_equal(f.keyframes, 1);
    assert_int_equal(f.fragments, b.fragments - 4);
    assert_int_equal(f.segment, 1);
    assert_int_equal(f.refused, 0);
    assert_int_equal(f.gaps, 0);
    assert_int_equal(f.syncs, 2);
    broadcast_free(&b);
}

static void test_follow_from_fragment_0_without_a_keyframe(void **state) {
    (void)state;
    broadcast b;
    broadcast_init(&b, "unkeyed.log");
    cradle_broadcast_follow_config config = {.poll_ms = 200};
    cradle_broadcast_follow f;
    cradle_broadcast_follow_init(&f, &config, 0);
    publish(&b, 3, NULL, 0, false);
    join(&f, &b, 0);
    expect_ask(&f, 0, CRADLE_BROADCAST_FOLLOW_FRAGMENT, 0);
    assert_int_equal(f.segment, 1);
    assert_false(f.from_keyframe);
    assert_int_equal(take_fragments(&f, &b, 0), 3);
    publish(&b, b.fragments, NULL, 0, true);
    expect_ask(&f, 199999999, CRADLE_BROADCAST_FOLLOW_WAIT, 0);
    poll_at(&f, &b, 200000000);
    assert_int_equal(take_fragments(&f, &b, 200000000), b.fragments - 3);
    expect_ask(&f, 200000000, CRADLE_BROADCAST_FOLLOW_DONE, 0);
    assert_true(f.complete);
    assert_int_equal(f.fragments, b.fragments);
    assert_int_equal(f.keyframes, 0);
    broadcast_free(&b);
}

static void test_refused_fragment_is_fetched_again_after_the_next_sync(void **state) {
    (void)state;
    broadcast b;
    broadcast_init(&b, "refused.log");
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    cradle_broadcast_fragment_info info;
    cradle_broadcast_follow_config config = {0};
    cradle_broadcast_follow f;
    cradle_broadcast_follow_init(&f, &config, 0);
    publish(&b, 4, NULL, 0, false);
    join(&f, &b, 0);
    expect_ask(&f, 0, CRADLE_BROADCAST_FOLLOW_FRAGMENT, 0);
    assert_int_equal(give_fragment(&f, &b, 0, false, &info, message), 0);
    expect_ask(&f, 0, CRADLE_BROADCAST_FOLLOW_FRAGMENT, 1);
    assert_int_equal(give_fragment(&f, &b, 1, true, &info, message), CRADLE_EBROADCAST);
    if (strncmp(message, "fragment 1: ", 12) != 0 || strstr(message, "fragment: ")) fail_msg("%s", message);
    assert_int_equal(f.refused, 1);
    assert_int_equal(f.fragments, 1);
    /* nothing but the sync document until the next poll */
    expect_ask(&f, POLL_NS - 1, CRADLE_BROADCAST_FOLLOW_WAIT, 0);
    poll_at(&f, &b, POLL_NS);
    expect_ask(&f, POLL_NS, CRADLE_BROADCAST_FOLLOW_FRAGMENT, 1);
    assert_int_equal(give_fragment(&f, &b, 1, false, &info, message), 0);

    /* a refused sync document stalls it the same way */
    assert_int_equal(cradle_broadcast_follow_take_sync(&f, "{}", 2, message, sizeof message), CRADLE_EBROADCAST);
    assert_int_equal(strncmp(message, "sync: ", 6), 0);
    expect_ask(&f, POLL_NS, CRADLE_BROADCAST_FOLLOW_WAIT, 0);
    /* and so does a failed fetch */
    poll_at(&f, &b, 2 * POLL_NS);
    expect_ask(&f, 2 * POLL_NS, CRADLE_BROADCAST_FOLLOW_FRAGMENT, 2);
    cradle_broadcast_follow_failed(&f);
    expect_ask(&f, 2 * POLL_NS, CRADLE_BROADCAST_FOLLOW_WAIT, 0);
    poll_at(&f, &b, 3 * POLL_NS);
    assert_int_equal(take_fragments(&f, &b, 3 * POLL_NS), 2);
    assert_int_equal(f.refused, 2);

    /* a sync document of another session, once start is taken, is refused */
    broadcast other = b;
    other.sync.session[0] ^= 1u;
    assert_int_equal(give_sync(&f, &other, message), CRADLE_EBROADCAST);
    assert_string_equal(message, "sync: now names another session than the one this viewer follows");
    broadcast_free(&b);
}

static void test_gap_restarts_at_the_keyframe_after_it(void **state) {
    (void)state;
    broadcast b;
    broadcast_init(&b, "gap.log");
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    cradle_broadcast_keyframe k;
    cradle_broadcast_follow_config config = {0};
    cradle_broadcast_follow f;
    cradle_broadcast_follow_init(&f, &config, 0);
    publish(&b, 2, (const unsigned[]){1}, 1, false);
    join(&f, &b, 0);
    expect_ask(&f, 0, CRADLE_BROADCAST_FOLLOW_KEYFRAME, 101);
    assert_int_equal(give_keyframe(&f, &b, 101, &k, message), 0);
    assert_int_equal(take_fragments(&f, &b, 0), 1);

    /* fragments 2 and 3 never reached the origin; the next keyframe is at 6 */
    publish(&b, 8, (const unsigned[]){1, 6}, 2, false);
    b.sync.gap_count = 1;
    b.sync.gaps[0] = (cradle_broadcast_gap){.first = 2, .last = 3};
    poll_at(&f, &b, POLL_NS);
    cradle_broadcast_follow_ask a;
    cradle_broadcast_follow_next(&f, POLL_NS, &a);
    assert_int_equal(a.note, CRADLE_BROADCAST_FOLLOW_GAP);
    assert_string_equal(a.message, "gap: fragments 2..3 were lost before they reached the origin; "
                                   "starting again at a keyframe after them");
    assert_int_equal(a.want, CRADLE_BROADCAST_FOLLOW_KEYFRAME);
    assert_int_equal(a.number, 106);
    assert_int_equal(f.gaps, 1);
    expect_ask(&f, POLL_NS, CRADLE_BROADCAST_FOLLOW_KEYFRAME, 106);
    assert_int_equal(give_keyframe(&f, &b, 106, &k, message), 0);
    assert_int_equal(f.segment, 2);
    expect_ask(&f, POLL_NS, CRADLE_BROADCAST_FOLLOW_FRAGMENT, 6);
    assert_int_equal(take_fragments(&f, &b, POLL_NS), 2);

    /* a keyframe that does not hold the step the sync names is refused */
    cradle_broadcast_follow g;
    cradle_broadcast_follow_init(&g, &config, 0);
    join(&g, &b, 0);
    expect_ask(&g, 0, CRADLE_BROADCAST_FOLLOW_KEYFRAME, 106);
    g.key.step++; /* as a sync document that lies about it would say */
    assert_int_equal(give_keyframe(&g, &b, 106, &k, message), CRADLE_EBROADCAST);
    if (strncmp(message, "keyframe 106: holds step ", 25) != 0) fail_msg("%s", message);

    /* a follower that meets the gap with no keyframe after it waits, and
     * ends with the broadcast */
    cradle_broadcast_follow h;
    cradle_broadcast_follow_init(&h, &config, 0);
    publish(&b, 2, NULL, 0, false);
    b.sync.gap_count = 0;
    join(&h, &b, 0);
    assert_int_equal(take_fragments(&h, &b, 0), 2);
    publish(&b, 5, NULL, 0, false);
    b.sync.gap_count = 1;
    poll_at(&h, &b, POLL_NS);
    cradle_broadcast_follow_next(&h, POLL_NS, &a);
    assert_int_equal(a.note, CRADLE_BROADCAST_FOLLOW_GAP);
    assert_int_equal(a.want, CRADLE_BROADCAST_FOLLOW_WAIT);
    b.sync.ended = true;
    b.sync.fragments = b.fragments;
    poll_at(&h, &b, 2 * POLL_NS);
    expect_ask(&h, 2 * POLL_NS, CRADLE_BROADCAST_FOLLOW_DONE, 0);
    broadcast_free(&b);
}

/* The keyframe a follower of config starts from in b's broadcast now. */
static uint64_t starts_from(const broadcast *b, const cradle_broadcast_follow_config *config) {
    cradle_broadcast_follow f;
    cradle_broadcast_follow_init(&f, config, 0);
    join(&f, b, 0);
    cradle_broadcast_follow_ask a;
    cradle_broadcast_follow_next(&f, 0, &a);
    if (a.want == CRADLE_BROADCAST_FOLLOW_FRAGMENT) return a.number; /* from fragment 0 */
    assert_int_equal(a.want, CRADLE_BROADCAST_FOLLOW_KEYFRAME);
    return a.number;
}

static void test_keyframe_choice(void **state) {
    (void)state;
    broadcast b;
    broadcast_init(&b, "choice.log");
    publish(&b, 9, (const unsigned[]){2, 5, 8}, 3, false);
    uint64_t live = b.sync.live_step;
    /* steps behind live that each keyframe is */
    uint64_t behind5 = live - key_step(&b, 5), behind2 = live - key_step(&b, 2);
    cradle_broadcast_follow_config newest = {.from = CRADLE_BROADCAST_FOLLOW_NEWEST};
    assert_int_equal(starts_from(&b, &newest), 108);
    /* delayed: the newest at or before the first step shown, live less the delay */
    cradle_broadcast_follow_config delayed = {.from = CRADLE_BROADCAST_FOLLOW_DELAYED};
    assert_int_equal(starts_from(&b, &delayed), 108); /* no delay: live */
    /* a delay of exactly behind5 steps shows keyframe 5's step first; a step more, one before it */
    delayed.delay_ms = (uint32_t)((behind5 * 1000u + 59u) / 60u);
    assert_int_equal(starts_from(&b, &delayed), 105);
    delayed.delay_ms = (uint32_t)(((behind5 + 1u) * 1000u + 59u) / 60u);
    assert_int_equal(starts_from(&b, &delayed), 102);
    delayed.delay_ms = (uint32_t)(behind2 * 1000u / 60u);
    assert_int_equal(starts_from(&b, &delayed), 102);
    delayed.delay_ms = 3600000; /* an hour: before every keyframe, so the oldest */
    assert_int_equal(starts_from(&b, &delayed), 102);
    /* first: never a keyframe */
    cradle_broadcast_follow_config first = {.from = CRADLE_BROADCAST_FOLLOW_FIRST};
    assert_int_equal(starts_from(&b, &first), 0);

    /* after a gap, only the keyframes after it count, with the same choice */
    cradle_broadcast_follow f;
    delayed.delay_ms = 3600000;
    cradle_broadcast_follow_init(&f, &delayed, 0);
    publish(&b, 2, NULL, 0, false);
    join(&f, &b, 0);
    assert_int_equal(take_fragments(&f, &b, 0), 2);
    publish(&b, 9, (const unsigned[]){5, 8}, 2, false);
    b.sync.gap_count = 1;
    b.sync.gaps[0] = (cradle_broadcast_gap){.first = 2, .last = 2};
    poll_at(&f, &b, POLL_NS);
    expect_ask(&f, POLL_NS, CRADLE_BROADCAST_FOLLOW_KEYFRAME, 105); /* the oldest after the gap */

    /* a start of another game than the config's is refused */
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    cradle_broadcast_follow_config game = {.game = "othergame"};
    cradle_broadcast_follow_init(&f, &game, 0);
    expect_ask(&f, 0, CRADLE_BROADCAST_FOLLOW_SYNC, 0);
    assert_int_equal(give_sync(&f, &b, message), 0);
    assert_int_equal(cradle_broadcast_follow_take_start(&f, b.log, CRADLE_LOG_HEADER_BYTES, message, sizeof message),
                     CRADLE_EBROADCAST);
    assert_string_equal(message, "start: a broadcast of game 'testgame', not 'othergame'");
    broadcast_free(&b);
}

static void test_end_without_the_trailer_is_refused(void **state) {
    (void)state;
    broadcast b;
    broadcast_init(&b, "notrailer.log");
    cradle_broadcast_follow_config config = {0};
    cradle_broadcast_follow f;
    cradle_broadcast_follow_init(&f, &config, 0);
    publish(&b, 3, NULL, 0, false);
    join(&f, &b, 0);
    assert_int_equal(take_fragments(&f, &b, 0), 3);
    b.sync.ended = true; /* the sync says it ended with fragment 2, which holds no trailer */
    poll_at(&f, &b, POLL_NS);
    cradle_broadcast_follow_ask a;
    cradle_broadcast_follow_next(&f, POLL_NS, &a);
    assert_int_equal(a.want, CRADLE_BROADCAST_FOLLOW_DONE);
    assert_int_equal(a.note, CRADLE_BROADCAST_FOLLOW_REFUSED);
    assert_string_equal(a.message, "fragment 2: the sync document says the broadcast ended with it, but it holds no "
                                   "trailer");
    assert_true(f.done);
    assert_false(f.complete);
    assert_int_equal(f.refused, 1);
    broadcast_free(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_follow_from_a_keyframe_to_the_end),
        cmocka_unit_test(test_follow_from_fragment_0_without_a_keyframe),
        cmocka_unit_test(test_refused_fragment_is_fetched_again_after_the_next_sync),
        cmocka_unit_test(test_gap_restarts_at_the_keyframe_after_it),
        cmocka_unit_test(test_keyframe_choice),
        cmocka_unit_test(test_end_without_the_trailer_is_refused),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
