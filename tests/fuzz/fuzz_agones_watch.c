/*
 * fuzz_agones_watch: cradle-server's reader of the Agones sidecar's
 * GameServer watch stream, one line at a time
 * (cradle_agones_parse_watch_line, server/src/agones.c), on arbitrary bytes.
 *
 * Nothing may crash, leak or read out of bounds. The verdict must agree with
 * the bytes parsed again here with jansson as strictly: a line is taken
 * exactly when it is one JSON value whose result.status.state is a string,
 * and the state it gives is that string's (Ready, Allocated, Reserved,
 * Shutdown) or "other" for any other string.
 *
 * Seeds in corpus/agones_watch: lines as the sidecar sends them (Agones'
 * sdk.swagger.json: {"result":{GameServer}}), an {"error":...} line, and
 * broken ones, written by hand.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agones.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cradle_agones_state state = CRADLE_AGONES_STATE_UNKNOWN;
    bool taken = cradle_agones_parse_watch_line((const char *)data, size, &state);
    json_error_t error;
    json_t *root = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &error);
    json_t *status = json_object_get(json_object_get(root, "result"), "status");
    const char *text = json_string_value(json_object_get(status, "state"));
    /* jansson without JSON_ALLOW_NUL refuses \u0000, as cradle_json_load does */
    if (taken != (text != NULL)) abort();
    if (taken) {
        const char *want = cradle_agones_state_name(state);
        if (state == CRADLE_AGONES_STATE_OTHER) {
            if (!strcmp(text, "Ready") || !strcmp(text, "Allocated") || !strcmp(text, "Reserved") ||
                !strcmp(text, "Shutdown"))
                abort();
        } else if (strcmp(want, text) != 0) {
            abort();
        }
    }
    json_decref(root);
    return 0;
}
