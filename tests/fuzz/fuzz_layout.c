/*
 * fuzz_layout: a game's state layout (game_abi.h minor 3; a library's bytes
 * are outside bytes) through cradle_layout_check and cradle_layout_name.
 *
 * The input: u32 state size, u8 region count, then per region 17 bytes (u8
 * parent, u32 offset, size, count, stride, LE) and a name (u8 length, the
 * bytes). A name is copied into a heap buffer exactly as large as a correct
 * check may read (through its NUL, or CRADLE_GAME_REGION_NAME_MAX + 1 bytes
 * without one), so an overread is an ASan finding. When the check accepts,
 * the regions must keep its promises (each inside its parent's element or
 * the state, siblings apart, parents earlier), and every byte's name must be
 * "state byte N" or end in " (state byte N)", with a cut buffer holding a
 * prefix of it and the full length returned.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/cursor.h"
#include "cradle/layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FUZZ_REGIONS 64u

static uint64_t extent(const cradle_state_region *r) {
    return (uint64_t)r->offset + (uint64_t)r->stride * (r->count - 1u) + r->size;
}

/* The check's promises, from the outside. */
static void promises_hold(const cradle_state_region *r, uint32_t n, uint32_t state_size) {
    for (uint32_t i = 0; i < n; i++) {
        if (r[i].parent > i || r[i].size == 0 || r[i].count == 0) abort();
        if (r[i].count > 1 && r[i].stride < r[i].size) abort();
        uint64_t room = r[i].parent ? r[r[i].parent - 1].size : state_size;
        if (extent(&r[i]) > room) abort();
        for (uint32_t j = 0; j < i; j++)
            if (r[j].parent == r[i].parent && r[i].offset < extent(&r[j]) && r[j].offset < extent(&r[i])) abort();
    }
}

static void names_hold(const cradle_state_region *r, uint32_t n, uint32_t state_size) {
    char full[1024], cut[12], tail[40];
    uint64_t last = (uint64_t)state_size + 4u;
    uint64_t step = last / 2048u + 1u;
    for (uint64_t offset = 0; offset < last; offset += step) {
        size_t length = cradle_layout_name(r, n, offset, full, sizeof full);
        if (length != strlen(full) || length >= sizeof full) abort();
        /* "state byte N" alone, or "PATH (state byte N)". */
        snprintf(tail, sizeof tail, "state byte %llu", (unsigned long long)offset);
        bool bare = strcmp(full, tail) == 0;
        snprintf(tail, sizeof tail, " (state byte %llu)", (unsigned long long)offset);
        size_t t = strlen(tail);
        if (!bare && (length <= t || strcmp(full + length - t, tail) != 0)) abort();
        if (cradle_layout_name(r, n, offset, cut, sizeof cut) != length) abort();
        if (strncmp(cut, full, sizeof cut - 1) != 0 || strlen(cut) > sizeof cut - 1) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 5) return 0;
    uint32_t state_size = cradle_cursor_load_u32(data);
    uint32_t count = data[4] % (MAX_FUZZ_REGIONS + 1u);
    size_t at = 5;
    cradle_state_region regions[MAX_FUZZ_REGIONS];
    char *names[MAX_FUZZ_REGIONS] = {0};
    uint32_t n = 0;
    while (n < count && at + 18 <= size) {
        const uint8_t *p = data + at;
        size_t len = p[17];
        at += 18;
        if (len > size - at) len = size - at;
        size_t cap = CRADLE_GAME_REGION_NAME_MAX + 1u;
        const uint8_t *nul = memchr(data + at, 0, len < cap ? len : cap);
        size_t keep = nul ? (size_t)(nul - (data + at)) + 1 : (len < cap ? len : cap);
        bool terminate = !nul && len < cap;
        names[n] = malloc(keep + (terminate ? 1u : 0u));
        if (!names[n]) abort();
        memcpy(names[n], data + at, keep);
        if (terminate) names[n][keep] = '\0';
        at += len;
        regions[n] = (cradle_state_region){.name = names[n],
                                           .parent = p[0],
                                           .offset = cradle_cursor_load_u32(p + 1),
                                           .size = cradle_cursor_load_u32(p + 5),
                                           .count = cradle_cursor_load_u32(p + 9),
                                           .stride = cradle_cursor_load_u32(p + 13)};
        n++;
    }
    char message[256];
    int rc = cradle_layout_check(regions, n, state_size, message, sizeof message);
    if (!memchr(message, 0, sizeof message)) abort();
    if ((rc == CRADLE_OK) != (message[0] == '\0')) abort();
    if (rc == CRADLE_OK) {
        promises_hold(regions, n, state_size);
        names_hold(regions, n, state_size);
    }
    for (uint32_t i = 0; i < n; i++) free(names[i]);
    return 0;
}
