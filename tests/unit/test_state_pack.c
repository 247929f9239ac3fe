/* Tests for state_pack: a state as one zstd frame, unpacked strictly. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cradle/hash.h"
#include "cradle/state_pack.h"

enum { STATE = 300000 }; /* a game state's shape: mostly zero, some fields set */

typedef struct fixture {
    cradle_state_pack pack;
    uint8_t *state, *out, *frame;
    size_t bound, length;
    uint64_t hash;
} fixture;

static int setup(void **s) {
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(cradle_state_pack_init(&f->pack, 0, CRADLE_STATE_PACK_BOTH), 0);
    f->bound = cradle_state_pack_bound(STATE);
    f->state = calloc(1, STATE);
    f->out = calloc(1, STATE);
    f->frame = calloc(1, f->bound + 64);
    assert_true(f->state && f->out && f->frame);
    for (uint32_t i = 0; i < STATE; i += 977) f->state[i] = (uint8_t)(i * 31u + 7u);
    f->hash = cradle_hash64(f->state, STATE);
    f->length = cradle_state_pack_encode(&f->pack, f->state, STATE, f->frame, f->bound);
    assert_true(f->length > 0);
    *s = f;
    return 0;
}

static int teardown(void **s) {
    fixture *f = *s;
    cradle_state_pack_free(&f->pack);
    free(f->state);
    free(f->out);
    free(f->frame);
    free(f);
    return 0;
}

static void a_state_packs_small_and_unpacks_to_the_same_bytes(void **s) {
    fixture *f = *s;
    assert_true(f->length < STATE / 20u); /* what joins gain: a mostly empty state is small */
    assert_null(cradle_state_pack_decode(&f->pack, f->frame, f->length, f->out, STATE, f->hash));
    assert_memory_equal(f->out, f->state, STATE);
}

static void a_state_of_random_bytes_fits_the_bound(void **s) {
    fixture *f = *s;
    uint64_t x = 88172645463325252ull;
    for (uint32_t i = 0; i < STATE; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        f->state[i] = (uint8_t)x;
    }
    size_t n = cradle_state_pack_encode(&f->pack, f->state, STATE, f->frame, f->bound);
    assert_true(n > STATE && n <= f->bound);
    assert_null(cradle_state_pack_decode(&f->pack, f->frame, n, f->out, STATE, cradle_hash64(f->state, STATE)));
    assert_memory_equal(f->out, f->state, STATE);
}

static void another_hash_or_size_is_refused(void **s) {
    fixture *f = *s;
    assert_string_equal(cradle_state_pack_decode(&f->pack, f->frame, f->length, f->out, STATE, f->hash ^ 1u),
                        "the state's hash is not the one it names");
    assert_string_equal(cradle_state_pack_decode(&f->pack, f->frame, f->length, f->out, STATE - 1u, f->hash),
                        "the zstd frame does not hold exactly the state's size");
}

static void bytes_after_the_frame_or_a_cut_frame_are_refused(void **s) {
    fixture *f = *s;
    /* a second frame after the first (an empty one) */
    size_t extra = cradle_state_pack_encode(&f->pack, f->state, 0, f->frame + f->length, 64);
    assert_true(extra > 0);
    assert_string_equal(cradle_state_pack_decode(&f->pack, f->frame, f->length + extra, f->out, STATE, f->hash),
                        "the zstd frame is not all of the packed bytes");
    for (size_t cut = 0; cut < f->length; cut += 1 + cut / 3)
        assert_non_null(cradle_state_pack_decode(&f->pack, f->frame, cut, f->out, STATE, f->hash));
}

static void a_flipped_byte_never_unpacks_to_a_state_that_passes(void **s) {
    fixture *f = *s;
    for (size_t i = 0; i < f->length; i++) {
        f->frame[i] ^= 0x5Au;
        const char *problem = cradle_state_pack_decode(&f->pack, f->frame, f->length, f->out, STATE, f->hash);
        f->frame[i] ^= 0x5Au;
        /* a flip zstd's own checks miss still changes the state: its hash differs */
        if (!problem) assert_memory_equal(f->out, f->state, STATE);
    }
}

/* A pack made for one way holds only that way's context: the server packs
 * joins and holds no decompression context, a client the other way round. */
static void a_pack_holds_only_the_contexts_it_was_made_for(void **s) {
    fixture *f = *s;
    cradle_state_pack encode_only, decode_only;
    assert_int_equal(cradle_state_pack_init(&encode_only, 1, CRADLE_STATE_PACK_ENCODE), 0);
    assert_int_equal(cradle_state_pack_init(&decode_only, 0, CRADLE_STATE_PACK_DECODE), 0);
    assert_true(encode_only.compress && !encode_only.decompress);
    assert_true(!decode_only.compress && decode_only.decompress);
    size_t n = cradle_state_pack_encode(&encode_only, f->state, STATE, f->frame, f->bound);
    assert_true(n > 0);
    assert_null(cradle_state_pack_decode(&decode_only, f->frame, n, f->out, STATE, f->hash));
    assert_memory_equal(f->out, f->state, STATE);
    cradle_state_pack_free(&encode_only);
    cradle_state_pack_free(&decode_only);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_state_packs_small_and_unpacks_to_the_same_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(a_state_of_random_bytes_fits_the_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(another_hash_or_size_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(bytes_after_the_frame_or_a_cut_frame_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(a_flipped_byte_never_unpacks_to_a_state_that_passes, setup, teardown),
        cmocka_unit_test_setup_teardown(a_pack_holds_only_the_contexts_it_was_made_for, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
