/* The client's sounds (client/src/audio.c): the WAV files a game's contract
 * names, beside its library, loaded and converted to 16-bit mono at 44.1
 * kHz; a missing or malformed file is named and stays silent; a reload that
 * brings another contract loads again. No audio device is opened. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audio.h"
#include "cradle/contract.h"

static char dir[64];

static void write_file(const char *name, const void *bytes, size_t n) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/* A PCM WAV of `frames` frames: 8-bit unsigned, stereo, 11025 Hz (so the
 * client must convert rate, channels and format). */
static size_t make_wav(uint8_t *out, uint32_t frames) {
    uint32_t data = frames * 2u;
    memcpy(out, "RIFF", 4);
    put_u32(out + 4, 36u + data);
    memcpy(out + 8, "WAVEfmt ", 8);
    put_u32(out + 16, 16);
    put_u16(out + 20, 1);       /* PCM */
    put_u16(out + 22, 2);       /* channels */
    put_u32(out + 24, 11025);   /* rate */
    put_u32(out + 28, 11025u * 2u);
    put_u16(out + 32, 2);       /* block align */
    put_u16(out + 34, 8);       /* bits */
    memcpy(out + 36, "data", 4);
    put_u32(out + 40, data);
    for (uint32_t i = 0; i < data; i++) out[44 + i] = (uint8_t)(128 + (i % 32) * 3);
    return 44u + data;
}

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/cradle-audio-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char sub[96];
    snprintf(sub, sizeof sub, "%s/game", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char command[160];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    assert_int_equal(system(command), 0);
    return 0;
}

static cradle_game_contract contract_with(const char *const *names, uint32_t count) {
    return (cradle_game_contract){.abi_major = CRADLE_ABI_MAJOR, .abi_minor = CRADLE_ABI_MINOR, .sounds = names,
                                  .sound_count = count};
}

static void test_sounds_load_beside_the_library(void **state) {
    (void)state;
    static uint8_t wav[44 + 2 * 11025];
    write_file("game/ok.wav", wav, make_wav(wav, 11025)); /* one second */
    write_file("game/bad.wav", "RIFF\x10\0\0\0WAVEjunkjunk", 20);
    static const char *const names[] = {"game/ok.wav", "game/bad.wav", "game/missing.wav"};
    cradle_game_contract c = contract_with(names, 3);
    char library[128], message[2048];
    snprintf(library, sizeof library, "%s/game.so", dir);
    static cradle_audio a;
    assert_int_equal(cradle_audio_init(&a, false, message, sizeof message), 0);
    assert_int_equal(cradle_audio_load(&a, &c, library, message, sizeof message), 1);
    /* One second at 44.1 kHz, mono: about 44100 samples after resampling. */
    assert_non_null(a.sound[1]);
    assert_true(a.sound_length[1] > 43000 && a.sound_length[1] < 45200);
    assert_null(a.sound[2]);
    assert_null(a.sound[3]);
    assert_non_null(strstr(message, "sound 2 game/bad.wav: "));
    assert_non_null(strstr(message, "sound 3 game/missing.wav: "));
    assert_null(strstr(message, "sound 1 "));
    /* Playing without a device, or a sound that is not there, does nothing. */
    cradle_audio_play(&a, 1, 1.0f, 1.0f);
    cradle_audio_play(&a, 2, 1.0f, 1.0f);
    cradle_audio_play(&a, 99, 1.0f, 1.0f);
    cradle_audio_play(&a, 0, 1.0f, 1.0f);
    assert_int_equal(a.plays, 0);
    cradle_audio_deinit(&a);
}

static void test_follow_loads_once_per_contract(void **state) {
    (void)state;
    static uint8_t wav[44 + 2 * 100];
    write_file("game/a.wav", wav, make_wav(wav, 100));
    static const char *const one[] = {"game/a.wav"};
    static const char *const two[] = {"game/a.wav", "game/a.wav"};
    cradle_game_contract first = contract_with(one, 1), second = contract_with(two, 2);
    char library[128], message[512];
    snprintf(library, sizeof library, "%s/game.so", dir);
    static cradle_audio a;
    assert_int_equal(cradle_audio_init(&a, false, message, sizeof message), 0);
    assert_true(cradle_audio_follow(&a, &first, library, message, sizeof message));
    assert_string_equal(message, "");
    assert_int_equal(a.sound_count, 1);
    assert_false(cradle_audio_follow(&a, &first, library, message, sizeof message));
    assert_true(cradle_audio_follow(&a, &second, library, message, sizeof message)); /* a reload */
    assert_int_equal(a.sound_count, 2);
    assert_non_null(a.sound[2]);
    /* A game older than minor 2 has no sounds, whatever its bytes say. */
    cradle_game_contract old = contract_with(two, 2);
    old.abi_minor = CRADLE_ABI_MINOR_SOUNDS - 1u;
    assert_true(cradle_audio_follow(&a, &old, library, message, sizeof message));
    assert_int_equal(a.sound_count, 0);
    assert_null(a.sound[1]);
    cradle_audio_deinit(&a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sounds_load_beside_the_library, setup, teardown),
        cmocka_unit_test_setup_teardown(test_follow_loads_once_per_contract, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
