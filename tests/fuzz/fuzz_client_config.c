/*
 * fuzz_client_config: cradle-client's two text parsers of user files, the
 * key bindings config (client/src/bindings.c, strict JSON via jansson, line
 * lookup of bad names) and input scripts (client/src/script.c). Neither may
 * crash, read out of bounds or leak on any input; a script that parses is
 * sorted. An accepted bindings text is strict JSON to jansson too (no
 * repeated name, no \u0000), an object whose "keys" (and "buttons", if
 * there) are objects with at least as many entries as bindings were made,
 * each bit 0..31.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bindings.h"
#include "script.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    static cradle_bindings b;
    char message[CRADLE_BINDINGS_MESSAGE_MAX] = "";
    if (cradle_bindings_parse(&b, text, "fuzz.json", message, sizeof message)) {
        if (b.key_count > CRADLE_BINDINGS_MAX || b.button_count > CRADLE_BINDINGS_MAX) abort();
        for (uint32_t i = 0; i < b.key_count; i++)
            if (b.keys[i].bit > 31) abort();
        for (uint32_t i = 0; i < b.button_count; i++)
            if (b.buttons[i].bit > 31) abort();
        json_error_t error;
        json_t *root = json_loadb(text, strlen(text), JSON_REJECT_DUPLICATES, &error);
        const json_t *keys = json_object_get(root, "keys");
        const json_t *buttons = json_object_get(root, "buttons");
        if (!json_is_object(root) || !json_is_object(keys) || json_object_size(keys) < b.key_count) abort();
        if (buttons ? !json_is_object(buttons) || json_object_size(buttons) < b.button_count : b.button_count != 0)
            abort();
        json_decref(root);
    }
    cradle_script s;
    char why[256] = "";
    if (cradle_script_parse(&s, text, "fuzz.txt", why, sizeof why) == 0) {
        for (size_t i = 1; i < s.count; i++)
            if (s.changes[i].step <= s.changes[i - 1].step) abort();
        (void)cradle_script_bits(&s, 12345);
        cradle_script_free(&s);
    }
    free(text);
    return 0;
}
