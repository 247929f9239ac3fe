/* cradle-record's input scripts: text, one change per line, sorted by step.
 *   <step> <slot> <hex>     slot's input bytes from <step> on, exactly
 *                           2 * input_bytes hex digits ("03", "ff", ...)
 *   <step> <slot> leave     the slot disconnects (its input reads as zero)
 *   <step> <slot> join      the slot connects (input zero until set)
 *   # comment               (also after the fields; blank lines are ignored)
 * Slots 0..players-1 are present from step 0; an input holds until the
 * slot's next line. Errors name the file and line. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"

/* A decimal number from 0 to UINT32_MAX (cradle_parse_u64) into a uint32_t. */
static bool parse_u32(const char *text, uint32_t *out) {
    uint64_t v;
    if (!cradle_parse_u64(text, 0, UINT32_MAX, &v)) return false;
    *out = (uint32_t)v;
    return true;
}

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* What a script has said so far, for checking the next line. */
typedef struct script_reader {
    const char *path;
    unsigned line;
    uint32_t max_players, input_bytes;
    bool present[CRADLE_GAME_MAX_PLAYERS];
    uint64_t last_step;
    bool any;
} script_reader;

#define SCRIPT_FAIL(reader, ...)                                      \
    do {                                                              \
        fprintf(stderr, "%s:%u: ", (reader)->path, (reader)->line);   \
        fprintf(stderr, __VA_ARGS__);                                 \
        fputc('\n', stderr);                                          \
        return false;                                                 \
    } while (0)

/* The input field: exactly 2 * input_bytes hex digits, for a present slot. */
static bool parse_input(script_reader *r, const char *text, record_script_entry *e) {
    if (strlen(text) != 2u * r->input_bytes)
        SCRIPT_FAIL(r, "input '%s' must be exactly %" PRIu32 " hex digits (%" PRIu32 " bytes)", text,
                    2u * r->input_bytes, r->input_bytes);
    for (size_t i = 0; i < r->input_bytes; i++) {
        int hi = hexval(text[2 * i]), lo = hexval(text[2 * i + 1]);
        if (hi < 0 || lo < 0) SCRIPT_FAIL(r, "input '%s' is not hex", text);
        e->input[i] = (uint8_t)(hi * 16 + lo);
    }
    if (!r->present[e->slot])
        SCRIPT_FAIL(r, "slot %" PRIu32 " is not present at step %" PRIu64 " (add a join line first)", e->slot,
                    e->step);
    return true;
}

/* The three fields of one line into *e, checked against what came before. */
static bool parse_fields(script_reader *r, char *fields[3], record_script_entry *e) {
    *e = (record_script_entry){.line = r->line};
    if (!cradle_parse_u64(fields[0], 0, UINT64_MAX, &e->step)) SCRIPT_FAIL(r, "bad step '%s'", fields[0]);
    if (!parse_u32(fields[1], &e->slot) || e->slot >= r->max_players)
        SCRIPT_FAIL(r, "bad slot '%s' (the game has slots 0..%" PRIu32 ")", fields[1], r->max_players - 1);
    if (r->any && e->step < r->last_step)
        SCRIPT_FAIL(r, "step %" PRIu64 " comes after step %" PRIu64 " (lines must be sorted by step)", e->step,
                    r->last_step);
    r->last_step = e->step;
    r->any = true;
    if (strcmp(fields[2], "leave") == 0) {
        e->action = RECORD_SCRIPT_LEAVE;
        if (!r->present[e->slot]) SCRIPT_FAIL(r, "slot %" PRIu32 " leaves but is not present", e->slot);
        r->present[e->slot] = false;
        return true;
    }
    if (strcmp(fields[2], "join") == 0) {
        e->action = RECORD_SCRIPT_JOIN;
        if (r->present[e->slot]) SCRIPT_FAIL(r, "slot %" PRIu32 " joins but is already present", e->slot);
        r->present[e->slot] = true;
        return true;
    }
    return parse_input(r, fields[2], e);
}

/* One line (comment cut). Returns 1 with *e filled, 0 for a blank line, -1
 * after saying what is wrong. */
static int parse_line(script_reader *r, char *line, record_script_entry *e) {
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char *fields[4];
    int k = 0;
    for (char *tok = strtok(line, " \t\r\n"); tok && k < 4; tok = strtok(NULL, " \t\r\n")) fields[k++] = tok;
    if (k == 0) return 0;
    if (k != 3) {
        fprintf(stderr, "%s:%u: expected '<step> <slot> <hex>|leave|join', got %d fields\n", r->path, r->line, k);
        return -1;
    }
    return parse_fields(r, fields, e) ? 1 : -1;
}

record_script_entry *record_script_load(const char *path, uint32_t max_players, uint32_t input_bytes,
                                        uint32_t players, size_t *count) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cradle-record: cannot open script %s: %s\n", path, strerror(errno));
        return NULL;
    }
    script_reader reader = {.path = path, .max_players = max_players, .input_bytes = input_bytes};
    for (uint32_t s = 0; s < players; s++) reader.present[s] = true;
    size_t cap = 64, n = 0;
    record_script_entry *entries = malloc(cap * sizeof *entries);
    bool ok = entries != NULL;
    char line[1024];
    while (ok && fgets(line, sizeof line, f)) {
        reader.line++;
        if (!strchr(line, '\n') && !feof(f)) {
            fprintf(stderr, "%s:%u: line longer than %zu bytes\n", path, reader.line, sizeof line - 2);
            ok = false;
            break;
        }
        record_script_entry e;
        int got = parse_line(&reader, line, &e);
        if (got < 0) ok = false;
        if (got <= 0) continue;
        if (n == cap) {
            record_script_entry *bigger = realloc(entries, 2 * cap * sizeof *entries);
            if (!bigger) {
                fprintf(stderr, "cradle-record: out of memory reading %s\n", path);
                ok = false;
                break;
            }
            entries = bigger;
            cap *= 2;
        }
        entries[n++] = e;
    }
    if (!entries) fprintf(stderr, "cradle-record: out of memory reading %s\n", path);
    if (ok && ferror(f)) {
        fprintf(stderr, "cradle-record: cannot read %s\n", path);
        ok = false;
    }
    fclose(f);
    if (!ok) {
        free(entries);
        return NULL;
    }
    *count = n;
    return entries;
}
