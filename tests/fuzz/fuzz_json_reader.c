/*
 * fuzz_json_reader: a game data file (outside bytes: a designer's edit,
 * handed to a game's data() entry) through cradle_json_parse and every
 * reader. The input and the token array are heap buffers of exactly their
 * size, so any overread or overwrite is an ASan finding.
 *
 * A refusal has a message and no tokens. An accepted document is a tree the
 * header promises: tokens in document order, each `next` past itself and
 * within its parent's, a container's children counted in `count` and
 * inside its brackets, keys as STRING tokens with their value's `next`,
 * strings between quotes. Each reader then runs on every token: it refuses
 * a value of the wrong type with a message at the token's line, and what it
 * accepts agrees with the others (an int is the decimal with 0 decimals; a
 * decimal with one more decimal is ten times larger; a string read out
 * compares equal to its token; a chosen index names a matching choice; an
 * object's values are its members).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/json_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CAPACITY 512u

static void check_message(const cradle_json_error *error, uint32_t line) {
    if (!memchr(error->message, 0, sizeof error->message) || error->message[0] == '\0') abort();
    if (error->line != line) abort();
}

/* The tree's shape, token by token. */
static void check_tree(const cradle_json_doc *doc) {
    const cradle_json_token *tokens = doc->tokens;
    if (doc->count == 0 || doc->count > CAPACITY || tokens[0].next != doc->count) abort();
    for (uint32_t t = 0; t < doc->count; t++) {
        const cradle_json_token *k = &tokens[t];
        if (k->type < CRADLE_JSON_NULL || k->type > CRADLE_JSON_OBJECT) abort();
        if (k->next <= t || k->next > doc->count || k->line < 1) abort();
        if ((uint64_t)k->start + k->length > doc->size) abort();
        if (t > 0 && (k->line < tokens[t - 1].line || k->start <= tokens[t - 1].start)) abort();
        bool container = k->type == CRADLE_JSON_ARRAY || k->type == CRADLE_JSON_OBJECT;
        if (!container && k->count != 0) abort();
        if (k->type == CRADLE_JSON_STRING &&
            (k->start == 0 || doc->text[k->start - 1] != '"' || doc->text[k->start + k->length] != '"'))
            abort();
        if (!container) continue;
        uint8_t open = k->type == CRADLE_JSON_ARRAY ? '[' : '{', close = k->type == CRADLE_JSON_ARRAY ? ']' : '}';
        if (k->length < 2 || doc->text[k->start] != open || doc->text[k->start + k->length - 1] != close) abort();
        uint32_t n = 0, i = t + 1;
        for (; i < k->next; i = tokens[i].next) {
            const cradle_json_token *c = &tokens[i];
            if (c->next > k->next || c->start <= k->start || c->start + c->length >= k->start + k->length) abort();
            if (k->type == CRADLE_JSON_OBJECT) {
                /* A key, then its value, whose subtree is the key's. */
                if (c->type != CRADLE_JSON_STRING || i + 1 >= c->next || tokens[i + 1].next != c->next) abort();
                if (cradle_json_string_is(doc, i, "a") && cradle_json_member(doc, t, "a") != i + 1) abort();
            }
            n++;
        }
        if (i != k->next || n != k->count) abort();
    }
}

static void check_numbers(const cradle_json_doc *doc, uint32_t t) {
    const cradle_json_token *k = &doc->tokens[t];
    cradle_json_error error;
    int64_t whole = 0, v[4] = {0};
    bool is_int = cradle_json_int(doc, t, "n", INT64_MIN, INT64_MAX, &whole, &error);
    if (!is_int) check_message(&error, k->line);
    if (is_int && k->type != CRADLE_JSON_NUMBER) abort();
    int64_t small;
    if (cradle_json_int(doc, t, "n", -1000, 1000, &small, &error)) {
        if (!is_int || small != whole) abort();
    } else {
        check_message(&error, k->line);
        if (is_int && whole >= -1000 && whole <= 1000) abort();
    }
    static const uint32_t decimals[4] = {0, 1, 3, 9};
    bool ok[4];
    for (int d = 0; d < 4; d++) {
        ok[d] = cradle_json_decimal(doc, t, "x", decimals[d], INT64_MIN, INT64_MAX, &v[d], &error);
        if (!ok[d]) check_message(&error, k->line);
        if (ok[d] && k->type != CRADLE_JSON_NUMBER) abort();
    }
    if (is_int && (!ok[0] || v[0] != whole)) abort();
    /* A whole number at d decimals stays whole with more, 10^(d' - d) times larger, until it leaves int64_t. */
    for (int d = 0; d + 1 < 4; d++) {
        if (!ok[d]) continue;
        int64_t scaled = v[d];
        bool fits = true;
        for (uint32_t i = decimals[d]; i < decimals[d + 1] && fits; i++) {
            if (scaled > INT64_MAX / 10 || scaled < INT64_MIN / 10)
                fits = false;
            else
                scaled *= 10;
        }
        if (fits && (!ok[d + 1] || v[d + 1] != scaled)) abort();
    }
    int64_t ranged;
    if (cradle_json_decimal(doc, t, "speed", 1, 5, 80, &ranged, &error)) {
        if (!ok[1] || ranged != v[1]) abort();
    } else {
        check_message(&error, k->line);
    }
}

static void check_strings(const cradle_json_doc *doc, uint32_t t) {
    const cradle_json_token *k = &doc->tokens[t];
    cradle_json_error error;
    char out[16];
    if (cradle_json_string(doc, t, "s", out, sizeof out, &error)) {
        if (k->type != CRADLE_JSON_STRING || !memchr(out, 0, sizeof out) || !cradle_json_string_is(doc, t, out))
            abort();
    } else {
        check_message(&error, k->line);
        if (out[0] != '\0') abort();
    }
    static const char *const choices[] = {"a", "b", "drifter", ""};
    uint32_t chosen = 99;
    if (cradle_json_choice(doc, t, "kind", choices, 4, &chosen, &error)) {
        if (chosen >= 4 || !cradle_json_string_is(doc, t, choices[chosen])) abort();
    } else {
        check_message(&error, k->line);
        for (int i = 0; i < 4; i++)
            if (cradle_json_string_is(doc, t, choices[i])) abort();
    }
    bool b;
    if (cradle_json_bool(doc, t, "on", &b, &error)) {
        if (b != (k->type == CRADLE_JSON_TRUE) || (k->type != CRADLE_JSON_TRUE && k->type != CRADLE_JSON_FALSE))
            abort();
    } else {
        check_message(&error, k->line);
    }
}

static void check_containers(const cradle_json_doc *doc, uint32_t t) {
    const cradle_json_token *k = &doc->tokens[t];
    cradle_json_error error;
    uint32_t count = 0;
    if (cradle_json_array(doc, t, "list", 0, UINT32_MAX, &count, &error)) {
        if (k->type != CRADLE_JSON_ARRAY || count != k->count) abort();
    } else {
        check_message(&error, k->line);
        if (k->type == CRADLE_JSON_ARRAY) abort();
    }
    static const char *const keys[] = {"a", "b", "count"};
    static const bool optional[] = {false, false, false};
    uint32_t values[3];
    if (cradle_json_object(doc, t, "root", keys, optional, 3, values, &error)) {
        if (k->type != CRADLE_JSON_OBJECT) abort();
        for (int i = 0; i < 3; i++) {
            if (values[i] != cradle_json_member(doc, t, keys[i])) abort();
            if (values[i] != CRADLE_JSON_NONE && (values[i] <= t || values[i] >= k->next)) abort();
        }
    } else if (!memchr(error.message, 0, sizeof error.message) || error.message[0] == '\0') {
        abort(); /* the line is the key's for an unknown field: not checked here */
    }
    if (k->type == CRADLE_JSON_OBJECT && cradle_json_object(doc, t, "root", keys, NULL, 3, values, &error)) {
        for (int i = 0; i < 3; i++)
            if (values[i] == CRADLE_JSON_NONE) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *bytes = malloc(size ? size : 1);
    cradle_json_token *tokens = malloc(CAPACITY * sizeof *tokens);
    if (!bytes || !tokens) abort();
    if (size) memcpy(bytes, data, size);
    cradle_json_doc doc;
    cradle_json_error error;
    if (!cradle_json_parse(&doc, bytes, size, tokens, CAPACITY, &error)) {
        if (doc.count != 0 || !memchr(error.message, 0, sizeof error.message) || error.message[0] == '\0') abort();
    } else {
        if (error.line != 0 || error.message[0] != '\0' || doc.size != size) abort();
        check_tree(&doc);
        for (uint32_t t = 0; t < doc.count; t++) {
            check_numbers(&doc, t);
            check_strings(&doc, t);
            check_containers(&doc, t);
        }
    }
    free(tokens);
    free(bytes);
    return 0;
}
