#include "cradle/contract.h"

#include "cradle/internal.h"
#include "cradle/layout.h"

#include <assert.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>


cradle_contract_limits cradle_contract_host_limits(void) {
    return (cradle_contract_limits){
        .abi_major = CRADLE_ABI_MAJOR,
        .abi_minor = CRADLE_ABI_MINOR,
        .max_state_align = CRADLE_CONTRACT_DEFAULT_MAX_ALIGN,
        .state_capacity = 0,
    };
}

size_t cradle_contract_strnlen(const char *s, size_t max) {
    if (!s) return 0;
    size_t n = 0;
    while (n <= max && s[n] != '\0') n++;
    return n;
}

/* A library string: non-NULL, 1..max printable ASCII bytes, NUL-terminated.
 * Printable because it ends up in messages, logs and file headers. */
static int check_string(const char *field, const char *s, size_t max, char *message,
                        size_t message_size) {
    if (!s) return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size, "%s is NULL", field);
    size_t n = cradle_contract_strnlen(s, max);
    if (n == 0) {
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size,
                      "%s length 0 < minimum 1", field);
    }
    if (n > max) {
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size,
                      "%s length > maximum %zu (no NUL within %zu bytes)", field, max, max + 1);
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20u || ch > 0x7eu) {
            return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size,
                          "%s byte %zu is 0x%02x, not printable ASCII 0x20..0x7e", field, i,
                          (unsigned)ch);
        }
    }
    return CRADLE_OK;
}

/* A file name a game gives the host (a sound, a data file): printable and
 * not absolute... */
static int check_relative_name(const char *field, const char *name, size_t max, char *message,
                               size_t message_size) {
    if (!name) return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size, "%s is NULL", field);
    int rc = check_string(field, name, max, message, message_size);
    if (rc != CRADLE_OK) return rc;
    if (name[0] == '/')
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size, "%s \"%s\" is absolute", field, name);
    return CRADLE_OK;
}

/* ... and relative to the library's folder, never above it: no ".."
 * component. */
static int check_no_parent(const char *field, const char *name, size_t max, char *message, size_t message_size) {
    size_t n = cradle_contract_strnlen(name, max);
    for (size_t i = 0; i + 1 < n; i++) {
        bool starts = i == 0 || name[i - 1] == '/';
        if (starts && name[i] == '.' && name[i + 1] == '.' && (i + 2 == n || name[i + 2] == '/'))
            return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size, "%s \"%s\" has a .. component",
                               field, name);
    }
    return CRADLE_OK;
}

/* One sound file's name (game_abi.h, minor 2): a relative name ending in
 * ".wav". */
static int check_sound_name(uint32_t index, const char *name, char *message, size_t message_size) {
    char field[32];
    snprintf(field, sizeof field, "sound %u name", (unsigned)index + 1u);
    int rc = check_relative_name(field, name, CRADLE_GAME_SOUND_NAME_MAX, message, message_size);
    if (rc != CRADLE_OK) return rc;
    size_t n = cradle_contract_strnlen(name, CRADLE_GAME_SOUND_NAME_MAX);
    if (n < 5 || name[n - 4] != '.' || name[n - 3] != 'w' || name[n - 2] != 'a' || name[n - 1] != 'v')
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size, "%s \"%s\" does not end in .wav", field,
                           name);
    return check_no_parent(field, name, CRADLE_GAME_SOUND_NAME_MAX, message, message_size);
}

/* The fields of minor 2, read only when abi_minor says they exist. */
static int check_sounds(const cradle_game_contract *c, char *message, size_t message_size) {
    if (c->abi_minor < CRADLE_ABI_MINOR_SOUNDS || c->sound_count == 0) return CRADLE_OK;
    if (c->sound_count > CRADLE_GAME_MAX_SOUNDS)
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size, "sound count %u > maximum %u",
                           (unsigned)c->sound_count, (unsigned)CRADLE_GAME_MAX_SOUNDS);
    if (!c->sounds)
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size, "sounds is NULL with sound count %u",
                           (unsigned)c->sound_count);
    for (uint32_t i = 0; i < c->sound_count; i++) {
        int rc = check_sound_name(i, c->sounds[i], message, message_size);
        if (rc != CRADLE_OK) return rc;
    }
    return CRADLE_OK;
}

/* The fields of minor 4: the data files and their entry. */
static int check_data(const cradle_game_contract *c, char *message, size_t message_size) {
    if (c->abi_minor < CRADLE_ABI_MINOR_DATA || c->data_file_count == 0) return CRADLE_OK;
    if (c->data_file_count > CRADLE_GAME_MAX_DATA_FILES)
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size, "data file count %u > maximum %u",
                           (unsigned)c->data_file_count, (unsigned)CRADLE_GAME_MAX_DATA_FILES);
    if (!c->data_files)
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size,
                           "data_files is NULL with data file count %u", (unsigned)c->data_file_count);
    if (!c->data)
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size, "data is NULL with data file count %u",
                           (unsigned)c->data_file_count);
    for (uint32_t i = 0; i < c->data_file_count; i++) {
        const cradle_game_data_file *f = &c->data_files[i];
        char field[32];
        snprintf(field, sizeof field, "data file %u name", (unsigned)i + 1u);
        int rc = check_relative_name(field, f->name, CRADLE_GAME_DATA_NAME_MAX, message, message_size);
        if (rc == CRADLE_OK) rc = check_no_parent(field, f->name, CRADLE_GAME_DATA_NAME_MAX, message, message_size);
        if (rc != CRADLE_OK) return rc;
        if (f->max_bytes < 1 || f->max_bytes > CRADLE_GAME_DATA_MAX_BYTES)
            return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size,
                               "data file %u \"%s\" max bytes %u is outside 1..%u", (unsigned)i + 1u, f->name,
                               (unsigned)f->max_bytes, (unsigned)CRADLE_GAME_DATA_MAX_BYTES);
        for (uint32_t j = 0; j < i; j++) {
            if (strcmp(c->data_files[j].name, f->name) == 0)
                return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size,
                                   "data files %u and %u are both named \"%s\"", (unsigned)j + 1u,
                                   (unsigned)i + 1u, f->name);
        }
    }
    return CRADLE_OK;
}

const cradle_game_data_file *cradle_contract_data(const cradle_game_contract *c, uint32_t *count) {
    assert(c && count && "a checked contract, never NULL");
    *count = 0;
    if (c->abi_minor < CRADLE_ABI_MINOR_DATA || c->data_file_count == 0) return NULL;
    *count = c->data_file_count;
    return c->data_files;
}

const cradle_state_region *cradle_contract_layout(const cradle_game_contract *c, uint32_t *count) {
    assert(c && count && "a checked contract, never NULL");
    *count = 0;
    if (c->abi_minor < CRADLE_ABI_MINOR_LAYOUT || c->layout_count == 0) return NULL;
    *count = c->layout_count;
    return c->layout;
}

const char *const *cradle_contract_sounds(const cradle_game_contract *c, uint32_t *count) {
    assert(c && count && "a checked contract, never NULL");
    *count = 0;
    if (c->abi_minor < CRADLE_ABI_MINOR_SOUNDS || c->sound_count == 0) return NULL;
    *count = c->sound_count;
    return c->sounds;
}

/* The one place a host reads a field past minor 0 (game_abi.h's minor rule):
 * the abi_minor test comes first, so an older library's shorter contract is
 * never read past its end. */
cradle_game_bot_fn *cradle_contract_bot(const cradle_game_contract *c) {
    assert(c && "a checked contract, never NULL");
    if (c->abi_minor < CRADLE_ABI_MINOR_BOT) return NULL;
    return c->bot;
}

cradle_game_predict_fn *cradle_contract_predict(const cradle_game_contract *c) {
    assert(c && "a checked contract, never NULL");
    return c->abi_minor < CRADLE_ABI_MINOR_PREDICT ? NULL : c->predict;
}

cradle_game_react_fn *cradle_contract_react_confirmed(const cradle_game_contract *c) {
    assert(c && "a checked contract, never NULL");
    return c->abi_minor < CRADLE_ABI_MINOR_PREDICT ? NULL : c->react_confirmed;
}

int cradle_contract_check(const cradle_game_contract *c, const cradle_contract_limits *limits,
                          char *message, size_t message_size) {
    assert(limits && "limits are the host's, never NULL");
    assert((message || message_size == 0) && "a message size needs a buffer");
    if (message && message_size > 0) message[0] = '\0';
    if (!c) return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size, "contract is NULL");

    if (c->abi_major != limits->abi_major) {
        return cradle__say(CRADLE_ERELOAD_MAJOR, message, message_size,
                      "abi major %u != host abi major %u", (unsigned)c->abi_major,
                      (unsigned)limits->abi_major);
    }
    if (c->abi_minor > limits->abi_minor) {
        return cradle__say(CRADLE_ERELOAD_MINOR, message, message_size,
                      "abi minor %u > host abi minor %u", (unsigned)c->abi_minor,
                      (unsigned)limits->abi_minor);
    }
    uint32_t max_align =
        limits->max_state_align ? limits->max_state_align : CRADLE_CONTRACT_DEFAULT_MAX_ALIGN;
    if (c->state_align == 0 || (c->state_align & (c->state_align - 1u)) != 0) {
        return cradle__say(CRADLE_ERELOAD_ALIGN, message, message_size,
                      "state alignment %u is not a power of two (maximum %u)",
                      (unsigned)c->state_align, (unsigned)max_align);
    }
    if (c->state_align > max_align) {
        return cradle__say(CRADLE_ERELOAD_ALIGN, message, message_size,
                      "state alignment %u > maximum %u", (unsigned)c->state_align,
                      (unsigned)max_align);
    }
    if (c->state_size == 0) {
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size,
                      "state size 0 < minimum 1");
    }
    if (limits->state_capacity != 0 && c->state_size > limits->state_capacity) {
        return cradle__say(CRADLE_ERELOAD_SIZE, message, message_size, "state size %u > capacity %u",
                      (unsigned)c->state_size, (unsigned)limits->state_capacity);
    }
    if (c->input_bytes < 1 || c->input_bytes > CRADLE_GAME_MAX_INPUT_BYTES) {
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size,
                      "input bytes %u not in 1..%u", (unsigned)c->input_bytes,
                      (unsigned)CRADLE_GAME_MAX_INPUT_BYTES);
    }
    if (c->max_players < 1 || c->max_players > CRADLE_GAME_MAX_PLAYERS) {
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size,
                      "max players %u not in 1..%u", (unsigned)c->max_players,
                      (unsigned)CRADLE_GAME_MAX_PLAYERS);
    }
    if (c->steps_per_second < 1) {
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size,
                      "steps per second %u < minimum 1", (unsigned)c->steps_per_second);
    }
    if (c->source_frames_per_second < 1) {
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size,
                      "source frames per second %u < minimum 1",
                      (unsigned)c->source_frames_per_second);
    }
    if (c->steps_per_second % c->source_frames_per_second != 0) {
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size,
                      "source frames per second %u does not divide steps per second %u",
                      (unsigned)c->source_frames_per_second, (unsigned)c->steps_per_second);
    }
    int rc = check_string("name", c->name, CRADLE_GAME_NAME_MAX, message, message_size);
    if (rc != CRADLE_OK) return rc;
    rc = check_string("build id", c->build_id, CRADLE_GAME_BUILD_ID_MAX, message, message_size);
    if (rc != CRADLE_OK) return rc;
    if (!c->init) return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size, "init is NULL");
    if (!c->step) return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size, "step is NULL");
    rc = check_sounds(c, message, message_size);
    if (rc != CRADLE_OK || c->abi_minor < CRADLE_ABI_MINOR_LAYOUT) return rc;
    rc = cradle_layout_check(c->layout, c->layout_count, c->state_size, message, message_size);
    if (rc != CRADLE_OK) return rc;
    return check_data(c, message, message_size);
}
