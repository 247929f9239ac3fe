/*
 * fuzz_broadcast_sync: a broadcast's sync document (outside bytes: fetched
 * from any HTTP cache or CDN, broadcast.h) through
 * cradle_broadcast_sync_decode. The input is a heap buffer of exactly its
 * size, so any overread is an ASan finding.
 *
 * A refusal is CRADLE_EBROADCAST with a "sync: " message. An accepted
 * document is one the server could have written: it encodes (without
 * tripping the encoder's asserts) into at most CRADLE_BROADCAST_SYNC_MAX
 * bytes, that encoding decodes to the same fields, and encoding those again
 * gives the same bytes (one spelling per document).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/broadcast.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same(const cradle_broadcast_sync *a, const cradle_broadcast_sync *b) {
    if (memcmp(a->session, b->session, sizeof a->session) != 0 || strcmp(a->game, b->game) != 0 ||
        strcmp(a->build, b->build) != 0 || a->steps_per_second != b->steps_per_second ||
        a->fragment_ms != b->fragment_ms || a->fragments != b->fragments ||
        a->keyframe_count != b->keyframe_count || a->gap_count != b->gap_count || a->web_count != b->web_count ||
        a->live_step != b->live_step || a->live_unix_ms != b->live_unix_ms || a->ended != b->ended)
        return false;
    for (uint32_t i = 0; i < a->keyframe_count; i++)
        if (a->keyframes[i].key != b->keyframes[i].key || a->keyframes[i].step != b->keyframes[i].step ||
            a->keyframes[i].fragment != b->keyframes[i].fragment)
            return false;
    for (uint32_t i = 0; i < a->gap_count; i++)
        if (a->gaps[i].first != b->gaps[i].first || a->gaps[i].last != b->gaps[i].last) return false;
    for (uint32_t i = 0; i < a->web_count; i++)
        if (strcmp(a->web[i].build, b->web[i].build) != 0 ||
            memcmp(a->web[i].manifest, b->web[i].manifest, sizeof a->web[i].manifest) != 0)
            return false;
    return true;
}

/* What decode promises of an accepted document, field by field. */
static void check_ranges(const cradle_broadcast_sync *s) {
    if (s->steps_per_second < 1 || s->steps_per_second > 1000) abort();
    if (s->fragment_ms < 100 || s->fragment_ms > 60000) abort();
    if (s->keyframe_count > CRADLE_BROADCAST_KEYFRAMES_MAX || s->gap_count > CRADLE_BROADCAST_GAPS_MAX) abort();
    for (uint32_t i = 0; i < s->keyframe_count; i++) {
        if (s->keyframes[i].fragment >= s->fragments) abort();
        if (cradle_broadcast_sync_in_gap(s, s->keyframes[i].fragment)) abort();
        if (i > 0 && (s->keyframes[i].key <= s->keyframes[i - 1].key || s->keyframes[i].step <= s->keyframes[i - 1].step))
            abort();
    }
    for (uint32_t i = 0; i < s->gap_count; i++) {
        if (s->gaps[i].last < s->gaps[i].first || s->gaps[i].last >= s->fragments) abort();
        if (i > 0 && s->gaps[i].first <= s->gaps[i - 1].last + 1u) abort();
    }
    if (s->ended && s->fragments == 0) abort();
    if (s->web_count > CRADLE_BROADCAST_WEB_MAX) abort();
    for (uint32_t i = 0; i < s->web_count; i++) {
        const char *end = memchr(s->web[i].build, 0, sizeof s->web[i].build);
        if (!end || end == s->web[i].build) abort();
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(s->web[i].build, s->web[j].build) == 0) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *bytes = malloc(size ? size : 1);
    if (!bytes) abort();
    memcpy(bytes, data, size);
    cradle_broadcast_sync a, b;
    char message[CRADLE_BROADCAST_MESSAGE_MAX];
    int rc = cradle_broadcast_sync_decode(bytes, size, &a, message, sizeof message);
    free(bytes);
    if (rc != 0) {
        if (rc != CRADLE_EBROADCAST || !memchr(message, 0, sizeof message) || strncmp(message, "sync: ", 6) != 0 ||
            message[6] == '\0')
            abort();
        return 0;
    }
    check_ranges(&a);
    /* twice the limit, so that an encoding past it is seen rather than cut */
    static char text[2 * CRADLE_BROADCAST_SYNC_MAX], again[2 * CRADLE_BROADCAST_SYNC_MAX];
    size_t n = cradle_broadcast_sync_encode(&a, text, sizeof text);
    if (n == 0 || n > CRADLE_BROADCAST_SYNC_MAX) abort();
    if (cradle_broadcast_sync_decode(text, n, &b, message, sizeof message) != 0) abort();
    if (!same(&a, &b)) abort();
    if (cradle_broadcast_sync_encode(&b, again, sizeof again) != n || memcmp(text, again, n) != 0) abort();
    return 0;
}
