/*
 * Tests for cradle-client's bindings (client/src/bindings.c): the config
 * file is regenerated when missing or invalid (strict JSON: what the old,
 * lenient parser took, a repeated name, 04, \u0000, a trailing comma, is
 * invalid now), unknown names and non-integer bits are reported with their
 * line and skipped, held keys become input bits, repeat is ignored, focus
 * loss releases everything.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <SDL.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bindings.h"
#include "script.h"

static char dir[64];

static int make_dir(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/cradle-bindings-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static char *read_all(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static void write_all(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_defaults_suit_vanguard(void **state) {
    (void)state;
    cradle_bindings b;
    cradle_bindings_defaults(&b);
    assert_int_equal(b.key_count, 10);
    assert_int_equal(b.button_count, 6);
    cradle_bindings_key(&b, SDLK_UP, true, false);
    assert_int_equal(cradle_bindings_bits(&b), 1u << 0);
    cradle_bindings_key(&b, SDLK_d, true, false);
    cradle_bindings_key(&b, SDLK_SPACE, true, false);
    assert_int_equal(cradle_bindings_bits(&b), (1u << 0) | (1u << 3) | (1u << 4));
    cradle_bindings_key(&b, SDLK_UP, false, false);
    assert_int_equal(cradle_bindings_bits(&b), (1u << 3) | (1u << 4));
    cradle_bindings_key(&b, SDLK_r, true, false);
    assert_true(cradle_bindings_bits(&b) & (1u << 5));
    cradle_bindings_release_all(&b);
    cradle_bindings_button(&b, SDL_CONTROLLER_BUTTON_DPAD_LEFT, true);
    cradle_bindings_button(&b, SDL_CONTROLLER_BUTTON_A, true);
    assert_int_equal(cradle_bindings_bits(&b), (1u << 2) | (1u << 4));
    cradle_bindings_button(&b, SDL_CONTROLLER_BUTTON_A, false);
    assert_int_equal(cradle_bindings_bits(&b), 1u << 2);
}

static void test_repeat_ignored_and_focus_loss(void **state) {
    (void)state;
    cradle_bindings b;
    cradle_bindings_defaults(&b);
    /* A repeat "down" for a key that is up does not press it... */
    cradle_bindings_key(&b, SDLK_LEFT, true, true);
    assert_int_equal(cradle_bindings_bits(&b), 0);
    cradle_bindings_key(&b, SDLK_LEFT, true, false);
    cradle_bindings_key(&b, SDLK_LEFT, true, true);
    assert_int_equal(cradle_bindings_bits(&b), 1u << 2);
    /* ...and two keys on one bit: releasing one keeps the bit. */
    cradle_bindings_key(&b, SDLK_a, true, false);
    cradle_bindings_key(&b, SDLK_LEFT, false, false);
    assert_int_equal(cradle_bindings_bits(&b), 1u << 2);
    cradle_bindings_key(&b, SDLK_SPACE, true, false);
    cradle_bindings_button(&b, SDL_CONTROLLER_BUTTON_START, true);
    cradle_bindings_release_all(&b);
    assert_int_equal(cradle_bindings_bits(&b), 0);
}

static void test_missing_file_written_with_defaults(void **state) {
    (void)state;
    char path[128], message[CRADLE_BINDINGS_MESSAGE_MAX];
    snprintf(path, sizeof path, "%s/sub/dir/client.json", dir);
    cradle_bindings b;
    assert_int_equal(cradle_bindings_load(&b, path, message, sizeof message), CRADLE_BINDINGS_REGENERATED);
    assert_non_null(strstr(message, "No such file"));
    assert_non_null(strstr(message, "wrote a new one"));
    assert_null(strchr(message, '\n')); /* one line */
    assert_string_equal(read_all(path), cradle_bindings_default_text);
    assert_int_equal(b.key_count, 10);
    /* Loading it again uses it quietly. */
    assert_int_equal(cradle_bindings_load(&b, path, message, sizeof message), CRADLE_BINDINGS_LOADED);
    assert_string_equal(message, "");
    /* No temp file is left behind. */
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
    assert_int_not_equal(access(tmp, F_OK), 0);
}

static void test_invalid_file_kept(void **state) {
    (void)state;
    static const char *const bad[] = {
        "{ \"keys\": { \"Up\": 0,\n \"Down\": }\n",  /* not JSON */
        "[1, 2, 3]\n",                               /* not an object */
        "{ \"buttons\": {} }\n",                     /* no keys */
        "{ \"keys\": {}, \"buttons\": 3 }\n",        /* buttons not an object */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[128], message[CRADLE_BINDINGS_MESSAGE_MAX];
        snprintf(path, sizeof path, "%s/bad%zu.json", dir, i);
        write_all(path, bad[i]);
        cradle_bindings b;
        assert_int_equal(cradle_bindings_load(&b, path, message, sizeof message), CRADLE_BINDINGS_DEFAULTS);
        assert_non_null(strstr(message, path));
        assert_non_null(strstr(message, "default bindings"));
        assert_non_null(strstr(message, "left as it is"));
        assert_null(strchr(message, '\n'));
        assert_string_equal(read_all(path), bad[i]); /* the user's file, untouched */
        assert_int_equal(b.key_count, 10);
    }
    char path[128], message[CRADLE_BINDINGS_MESSAGE_MAX];
    snprintf(path, sizeof path, "%s/bad0.json", dir);
    write_all(path, bad[0]);
    cradle_bindings b;
    (void)cradle_bindings_load(&b, path, message, sizeof message);
    assert_non_null(strstr(message, "not valid JSON (line 2, column 10): unexpected token near '}'"));
}

/* What the old, lenient parser took and jansson refuses: the whole file is
 * not JSON, and the message says why. */
static void test_strict_json_refused(void **state) {
    (void)state;
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"{ \"keys\": { \"Up\": 0,\n  \"Up\": 4 } }",
         "(line 2, column 6): duplicate object key near '\"Up\"' (each name once"},
        {"{ \"keys\": { \"Up\": 0 }, \"keys\": {} }", "duplicate object key near '\"keys\"'"},
        {"{ \"keys\": { \"Up\": 04 } }", "invalid token near '0' (a JSON number has no leading zero"},
        {"{ \"about\": \"a\\u0000b\", \"keys\": {} }", "\\u0000 is not allowed"},
        {"{ \"keys\": { \"U\\u0000p\": 0 } }", "NUL byte in object key"},
        {"{ \"keys\": { \"Up\": 0, } }", "string or '}' expected near '}'"},
        {"{ \"keys\": { \"Up\": 0 } } x", "end of file expected near 'x'"},
        {"{ \"keys\": { \"Up\": 0 }, \"about\": \"\xff\" }",
         "unable to decode byte 0xff near '\"' (the file must be UTF-8)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char message[CRADLE_BINDINGS_MESSAGE_MAX] = "";
        cradle_bindings b;
        if (cradle_bindings_parse(&b, bad[i].text, "c.json", message, sizeof message))
            fail_msg("accepted: %s", bad[i].text);
        if (!strstr(message, "c.json: not valid JSON (line ") || !strstr(message, bad[i].why))
            fail_msg("%s: message \"%s\" lacks \"%s\"", bad[i].text, message, bad[i].why);
        assert_int_equal(b.key_count, 10); /* the defaults */
    }
    /* A NUL byte in the file is refused, not read as the file's end. */
    char path[128], message[CRADLE_BINDINGS_MESSAGE_MAX];
    snprintf(path, sizeof path, "%s/nul.json", dir);
    static const char raw[] = "{ \"keys\": { \"Up\": 0 } }\n\0{ \"keys\": 1 }";
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(raw, 1, sizeof raw - 1, f), sizeof raw - 1);
    fclose(f);
    cradle_bindings b;
    assert_int_equal(cradle_bindings_load(&b, path, message, sizeof message), CRADLE_BINDINGS_DEFAULTS);
    assert_non_null(strstr(message, "not valid JSON (line 2"));
}

/* A bit number is a JSON integer: 3.0 is a real, reported and skipped. */
static void test_real_bit_skipped(void **state) {
    (void)state;
    const char *text = "{\n"
                       "  \"keys\": {\n"
                       "    \"Up\": 3.0,\n"
                       "    \"Down\": 1e0,\n"
                       "    \"Left\": \"2\",\n"
                       "    \"Right\": 3\n"
                       "  }\n"
                       "}\n";
    char message[CRADLE_BINDINGS_MESSAGE_MAX] = "";
    cradle_bindings b;
    assert_true(cradle_bindings_parse(&b, text, "c.json", message, sizeof message));
    assert_non_null(strstr(message, "c.json line 3: \"Up\" must map to an input bit number 0..31, got 3.0 (a "
                                    "fraction or an exponent makes a JSON real: the bit needs an integer) (ignored)"));
    assert_non_null(strstr(message, "c.json line 4: \"Down\" must map to an input bit number 0..31, got 1.0"));
    assert_non_null(strstr(message, "c.json line 5: \"Left\" must map to an input bit number 0..31, got a string"));
    assert_int_equal(b.key_count, 1);
    cradle_bindings_key(&b, SDLK_RIGHT, true, false);
    assert_int_equal(cradle_bindings_bits(&b), 1u << 3);
}

static void test_unknown_names_reported_with_line(void **state) {
    (void)state;
    const char *text = "{\n"
                       "  \"keys\": {\n"
                       "    \"Up\": 0,\n"
                       "    \"Wiggle\": 1,\n"
                       "    \"Space\": 4,\n"
                       "    \"X\": 40,\n"
                       "    \"Left Shift\": 7\n"
                       "  },\n"
                       "  \"buttons\": {\n"
                       "    \"a\": 4,\n"
                       "    \"banana\": 2\n"
                       "  }\n"
                       "}\n";
    char path[128], message[CRADLE_BINDINGS_MESSAGE_MAX];
    snprintf(path, sizeof path, "%s/user.json", dir);
    write_all(path, text);
    cradle_bindings b;
    assert_int_equal(cradle_bindings_load(&b, path, message, sizeof message), CRADLE_BINDINGS_LOADED);
    char expect[256];
    snprintf(expect, sizeof expect, "%s line 4: unknown key name \"Wiggle\"", path);
    assert_non_null(strstr(message, expect));
    snprintf(expect, sizeof expect, "%s line 6: \"X\" must map to an input bit number 0..31", path);
    assert_non_null(strstr(message, expect));
    snprintf(expect, sizeof expect, "%s line 11: unknown gamepad button name \"banana\"", path);
    assert_non_null(strstr(message, expect));
    /* The user's file is kept, and the good entries hold. */
    assert_string_equal(read_all(path), text);
    assert_int_equal(b.key_count, 3);
    assert_int_equal(b.button_count, 1);
    cradle_bindings_key(&b, SDLK_LSHIFT, true, false);
    assert_int_equal(cradle_bindings_bits(&b), 1u << 7);
}

static void test_default_path(void **state) {
    (void)state;
    char out[256];
    setenv("XDG_CONFIG_HOME", "/x/cfg", 1);
    assert_true(cradle_bindings_default_path(out, sizeof out));
    assert_string_equal(out, "/x/cfg/cradle/client.json");
    unsetenv("XDG_CONFIG_HOME");
    setenv("HOME", "/home/p", 1);
    assert_true(cradle_bindings_default_path(out, sizeof out));
    assert_string_equal(out, "/home/p/.config/cradle/client.json");
}

static void test_pack_bits(void **state) {
    (void)state;
    uint8_t out[2] = {0, 0};
    cradle_pack_bits(out, 1, (1u << 0) | (1u << 4) | (1u << 9));
    assert_int_equal(out[0], 0x11);
    assert_int_equal(out[1], 0); /* bit 9 is outside a 1-byte input */
    memset(out, 0, sizeof out);
    cradle_pack_bits(out, 2, (1u << 9) | (1u << 15));
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 0x82);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_suit_vanguard),
        cmocka_unit_test(test_repeat_ignored_and_focus_loss),
        cmocka_unit_test(test_missing_file_written_with_defaults),
        cmocka_unit_test(test_invalid_file_kept),
        cmocka_unit_test(test_strict_json_refused),
        cmocka_unit_test(test_real_bit_skipped),
        cmocka_unit_test(test_unknown_names_reported_with_line),
        cmocka_unit_test(test_default_path),
        cmocka_unit_test(test_pack_bits),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
