#include "cradle/desync_report.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cradle/input.h"
#include "cradle/internal.h"
#include "cradle/lines.h"
#include "cradle/parse.h"

#define LINE_MAX_BYTES 128u

/* The header's lines, in order, and what each holds. */
typedef enum field_kind { TEXT_NAME, TEXT_BUILD, NUMBER, SIGNED, HEX64, FLAG, END } field_kind;

static const struct {
    const char *key;
    field_kind kind;
} FIELDS[] = {
    {"game", TEXT_NAME},   {"build", TEXT_BUILD},       {"step", NUMBER},      {"client_hash", HEX64},
    {"server_hash", HEX64}, {"base_step", SIGNED},      {"snapshot_size", NUMBER}, {"snapshots", NUMBER},
    {"truncated", FLAG},   {"state_size", NUMBER},      {"end", END},
};
#define FIELD_COUNT (sizeof FIELDS / sizeof FIELDS[0])

typedef struct reader {
    cradle_lines in;
    char text[LINE_MAX_BYTES + 1];
    char *message;
    size_t message_size;
} reader;

#define REFUSE(r, ...) cradle__say(CRADLE_EDESYNC_REPORT, (r)->message, (r)->message_size, __VA_ARGS__)

/* The next header line into r->text (without its newline). */
static int next_line(reader *r) {
    uint8_t bad = 0;
    switch (cradle_lines_next(&r->in, r->text, LINE_MAX_BYTES, &bad)) {
    case CRADLE_LINE_OK: return CRADLE_OK;
    case CRADLE_LINE_LONG: return REFUSE(r, "line %u: longer than %u bytes", r->in.line, LINE_MAX_BYTES);
    case CRADLE_LINE_BYTE: return REFUSE(r, "line %u: byte 0x%02x is not printable ASCII", r->in.line, bad);
    case CRADLE_LINE_END:
    case CRADLE_LINE_UNTERMINATED: break;
    }
    return REFUSE(r, "line %u: the header ends without its \"end\" line", r->in.line);
}

static bool hex64(const char *s, uint64_t *out) {
    if (strlen(s) != 16) return false;
    uint64_t v = 0;
    for (int i = 0; i < 16; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return false;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return true;
}

/* One "key value" line: the value of field f into the report. */
static int read_field(reader *r, cradle_desync_report *rep, size_t f) {
    int rc = next_line(r);
    if (rc != CRADLE_OK) return rc;
    const char *key = FIELDS[f].key;
    size_t k = strlen(key);
    if (FIELDS[f].kind == END) return strcmp(r->text, "end") == 0 ? CRADLE_OK : REFUSE(r, "line %u: expected \"end\", got \"%s\"", r->in.line, r->text);
    if (strncmp(r->text, key, k) != 0 || r->text[k] != ' ')
        return REFUSE(r, "line %u: expected \"%s <value>\", got \"%s\"", r->in.line, key, r->text);
    const char *v = r->text + k + 1;
    uint64_t n = 0;
    switch (FIELDS[f].kind) {
    case TEXT_NAME:
    case TEXT_BUILD: {
        size_t max = FIELDS[f].kind == TEXT_NAME ? CRADLE_GAME_NAME_MAX : CRADLE_GAME_BUILD_ID_MAX;
        if (*v == '\0' || strlen(v) > max) return REFUSE(r, "line %u: %s must be 1..%zu bytes", r->in.line, key, max);
        snprintf(FIELDS[f].kind == TEXT_NAME ? rep->game : rep->build, max + 1, "%s", v);
        return CRADLE_OK;
    }
    case HEX64:
        if (!hex64(v, f == 3 ? &rep->client_hash : &rep->server_hash))
            return REFUSE(r, "line %u: %s '%s' is not 16 lowercase hex digits", r->in.line, key, v);
        return CRADLE_OK;
    case SIGNED:
        if (strcmp(v, "-1") == 0) rep->base_step = -1;
        else if (cradle_parse_u64(v, 0, INT64_MAX, &n)) rep->base_step = (int64_t)n;
        else return REFUSE(r, "line %u: %s '%s' is not -1 or a whole number", r->in.line, key, v);
        return CRADLE_OK;
    case FLAG:
        if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0) return REFUSE(r, "line %u: %s '%s' is not 0 or 1", r->in.line, key, v);
        rep->truncated = v[0] - '0';
        return CRADLE_OK;
    default:
        if (!cradle_parse_u64(v, 0, UINT64_MAX, &n)) return REFUSE(r, "line %u: %s '%s' is not a whole number", r->in.line, key, v);
        if (f == 2) rep->step = n;
        else if (f == 6) rep->snapshot_size = n <= UINT32_MAX ? (uint32_t)n : UINT32_MAX;
        else if (f == 7) rep->snapshots = n;
        else rep->state_size = n <= UINT32_MAX ? (uint32_t)n : UINT32_MAX;
        return CRADLE_OK;
    }
}

/* The header's numbers against each other and the bytes that follow. */
static int check_counts(reader *r, cradle_desync_report *rep) {
    if (rep->base_step >= 0 && (uint64_t)rep->base_step >= rep->step)
        return REFUSE(r, "base_step %lld is not before step %llu", (long long)rep->base_step,
                      (unsigned long long)rep->step);
    uint64_t span = rep->step - (uint64_t)(rep->base_step + 1); /* steps base+1 .. step, less one */
    span += 1;
    if (rep->snapshot_size < 1 || rep->snapshot_size > CRADLE_SNAPSHOT_MAX)
        return REFUSE(r, "snapshot_size %u not in 1..%u", (unsigned)rep->snapshot_size, CRADLE_SNAPSHOT_MAX);
    if (rep->state_size < 1 || rep->state_size > CRADLE_DESYNC_REPORT_STATE_MAX)
        return REFUSE(r, "state_size %u not in 1..%u", (unsigned)rep->state_size, CRADLE_DESYNC_REPORT_STATE_MAX);
    if (rep->snapshots > span || (!rep->truncated && rep->snapshots != span))
        return REFUSE(r, "snapshots %llu does not fit steps %lld..%llu (truncated %d)",
                      (unsigned long long)rep->snapshots, (long long)rep->base_step + 1,
                      (unsigned long long)rep->step, rep->truncated);
    uint64_t left = r->in.size - r->in.at;
    uint64_t want = 2u * (uint64_t)rep->state_size + rep->snapshots * (uint64_t)rep->snapshot_size;
    if (rep->snapshots > (UINT64_MAX / 2) / rep->snapshot_size || left != want)
        return REFUSE(r, "after the header: %llu bytes, the header says %llu (two states and the snapshots)",
                      (unsigned long long)left, (unsigned long long)want);
    return CRADLE_OK;
}

int cradle_desync_report_parse(cradle_desync_report *report, const uint8_t *bytes, size_t size, char *message,
                               size_t message_size) {
    *report = (cradle_desync_report){0};
    if (message && message_size) message[0] = '\0';
    reader r = {.in = {.bytes = bytes, .size = size}, .message = message, .message_size = message_size};
    int rc = next_line(&r);
    if (rc != CRADLE_OK) return rc;
    if (strcmp(r.text, "cradle-desync 1") != 0)
        return REFUSE(&r, "line 1: expected \"cradle-desync 1\", got \"%s\"", r.text);
    for (size_t f = 0; f < FIELD_COUNT; f++) {
        rc = read_field(&r, report, f);
        if (rc != CRADLE_OK) return rc;
    }
    rc = check_counts(&r, report);
    if (rc != CRADLE_OK) return rc;
    report->base = bytes + r.in.at;
    report->snapshot_data = report->base + report->state_size;
    report->client_state = report->snapshot_data + report->snapshots * report->snapshot_size;
    return CRADLE_OK;
}
