#include "cradle/layout.h"

#include <stdbool.h>
#include <stdio.h>

#include "cradle/internal.h"

/* Bytes region r spans inside one element of its parent. */
static uint64_t extent(const cradle_state_region *r) {
    return (uint64_t)r->offset + (uint64_t)r->stride * (r->count > 0 ? r->count - 1u : 0u) + r->size;
}

static bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The name's rules; the message names the region by index alone (its name
 * is what is wrong). */
static int check_name(uint32_t i, const char *name, char *message, size_t message_size) {
    if (!name) return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size, "region %u: name is NULL", i);
    size_t n = 0;
    while (n <= CRADLE_GAME_REGION_NAME_MAX && name[n] != '\0') {
        if (!name_char(name[n]))
            return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size,
                               "region %u: name byte %zu is 0x%02x, not a letter, digit or _", i, n,
                               (unsigned)(unsigned char)name[n]);
        n++;
    }
    if (n == 0) return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size, "region %u: name is empty", i);
    if (n > CRADLE_GAME_REGION_NAME_MAX)
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size,
                           "region %u: name longer than %u bytes", i, (unsigned)CRADLE_GAME_REGION_NAME_MAX);
    return CRADLE_OK;
}

/* Region i's own fields, against its parent (or the state). */
static int check_region(const cradle_state_region *regions, uint32_t i, uint32_t state_size, char *message,
                        size_t message_size) {
    const cradle_state_region *r = &regions[i];
    int rc = check_name(i, r->name, message, message_size);
    if (rc != CRADLE_OK) return rc;
    if (r->parent > i)
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size,
                           "region %u (%s): parent %u is not an earlier region (0..%u)", i, r->name,
                           (unsigned)r->parent, i);
    if (r->size == 0 || r->count == 0)
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size, "region %u (%s): size %u, count %u: neither may be 0",
                           i, r->name, (unsigned)r->size, (unsigned)r->count);
    if (r->count > 1 && r->stride < r->size)
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size, "region %u (%s): stride %u < size %u",
                           i, r->name, (unsigned)r->stride, (unsigned)r->size);
    uint64_t room = r->parent ? regions[r->parent - 1u].size : state_size;
    if (extent(r) > room)
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size,
                           "region %u (%s): extent %llu > %s %llu", i, r->name, (unsigned long long)extent(r),
                           r->parent ? "its parent's element size" : "the state size", (unsigned long long)room);
    for (uint32_t j = 0; j < i; j++) {
        const cradle_state_region *o = &regions[j];
        if (o->parent != r->parent) continue;
        if (r->offset < extent(o) && o->offset < extent(r))
            return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size,
                               "region %u (%s) overlaps region %u (%s): bytes %u..%llu and %u..%llu", i, r->name, j,
                               o->name, (unsigned)r->offset, (unsigned long long)extent(r) - 1u, (unsigned)o->offset,
                               (unsigned long long)extent(o) - 1u);
    }
    return CRADLE_OK;
}

int cradle_layout_check(const cradle_state_region *regions, uint32_t count, uint32_t state_size, char *message,
                        size_t message_size) {
    if (message && message_size > 0) message[0] = '\0';
    if (count == 0) return CRADLE_OK;
    if (count > CRADLE_GAME_MAX_REGIONS)
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size, "layout count %u > maximum %u",
                           (unsigned)count, (unsigned)CRADLE_GAME_MAX_REGIONS);
    if (!regions)
        return cradle__say(CRADLE_ERELOAD_CONTRACT, message, message_size, "layout is NULL with layout count %u",
                           (unsigned)count);
    for (uint32_t i = 0; i < count; i++) {
        int rc = check_region(regions, i, state_size, message, message_size);
        if (rc != CRADLE_OK) return rc;
    }
    return CRADLE_OK;
}

/* Appends text to out, cut to out_size, keeping the full length in *length. */
static void put(char *out, size_t out_size, size_t *length, const char *text) {
    for (const char *p = text; *p; p++, (*length)++)
        if (*length + 1 < out_size) out[*length] = *p;
    if (out_size > 0) out[*length < out_size ? *length : out_size - 1] = '\0';
}

size_t cradle_layout_name(const cradle_state_region *regions, uint32_t count, uint64_t offset, char *out,
                          size_t out_size) {
    size_t length = 0;
    char piece[48];
    if (out_size > 0) out[0] = '\0';
    uint32_t parent = 0;      /* the region whose element holds the byte: index + 1, 0 = the state */
    uint64_t within = offset; /* the byte's offset in that element */
    bool found = true;
    while (found) {
        found = false;
        for (uint32_t i = 0; i < count && !found; i++) {
            const cradle_state_region *r = &regions[i];
            if (r->parent != parent || within < r->offset || within >= extent(r)) continue;
            uint64_t stride = r->count > 1 ? r->stride : r->size;
            uint64_t index = (within - r->offset) / stride, into = (within - r->offset) % stride;
            if (into >= r->size) continue; /* a gap between elements */
            if (length) put(out, out_size, &length, ".");
            put(out, out_size, &length, r->name);
            if (r->count > 1) {
                snprintf(piece, sizeof piece, "[%llu]", (unsigned long long)index);
                put(out, out_size, &length, piece);
            }
            parent = i + 1u;
            within = into;
            found = true;
        }
    }
    if (length == 0) {
        snprintf(piece, sizeof piece, "state byte %llu", (unsigned long long)offset);
        put(out, out_size, &length, piece);
        return length;
    }
    if (within > 0) {
        snprintf(piece, sizeof piece, "+%llu", (unsigned long long)within);
        put(out, out_size, &length, piece);
    }
    snprintf(piece, sizeof piece, " (state byte %llu)", (unsigned long long)offset);
    put(out, out_size, &length, piece);
    return length;
}
