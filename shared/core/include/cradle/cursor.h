#ifndef CRADLE_CURSOR_H
#define CRADLE_CURSOR_H
/*
 * cursor: a bounds-checked little-endian byte cursor over caller memory,
 * for every wire and file format (STYLE habit 7), and fixed-offset loads and
 * stores for offsets the caller has checked.
 *
 * A write or read past the end sets `failed` and does nothing else, so a
 * caller encodes or decodes a whole record and checks the flag once at the
 * end. Reads past the end yield 0. Pure: no allocation, no OS.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cradle_cursor {
    uint8_t *data; /* NULL for a read-only cursor made by cradle_cursor_reader */
    const uint8_t *rdata;
    size_t size;
    size_t pos;
    bool failed; /* set by the first access past the end; sticky */
} cradle_cursor;

cradle_cursor cradle_cursor_writer(void *data, size_t size);
cradle_cursor cradle_cursor_reader(const void *data, size_t size);

void cradle_cursor_put_u8(cradle_cursor *c, uint8_t v);
void cradle_cursor_put_u16(cradle_cursor *c, uint16_t v);
void cradle_cursor_put_u32(cradle_cursor *c, uint32_t v);
void cradle_cursor_put_u64(cradle_cursor *c, uint64_t v);
void cradle_cursor_put_i32(cradle_cursor *c, int32_t v);
void cradle_cursor_put_bool(cradle_cursor *c, bool v);
void cradle_cursor_put_bytes(cradle_cursor *c, const void *bytes, size_t n);

uint8_t cradle_cursor_get_u8(cradle_cursor *c);
uint16_t cradle_cursor_get_u16(cradle_cursor *c);
uint32_t cradle_cursor_get_u32(cradle_cursor *c);
uint64_t cradle_cursor_get_u64(cradle_cursor *c);
int32_t cradle_cursor_get_i32(cradle_cursor *c);
/* Any nonzero byte reads as true. */
bool cradle_cursor_get_bool(cradle_cursor *c);
/* Copies n bytes out; on failure `out` is zero-filled. */
void cradle_cursor_get_bytes(cradle_cursor *c, void *out, size_t n);
/* Bytes left to read or write. */
size_t cradle_cursor_remaining(const cradle_cursor *c);

/* ---- fixed-offset helpers --------------------------------------------- */

/* Little-endian loads and stores at a byte offset the caller has checked. */
static inline void cradle_cursor_store_u16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void cradle_cursor_store_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void cradle_cursor_store_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t cradle_cursor_load_u16(const uint8_t *p) {
    return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t cradle_cursor_load_u32(const uint8_t *p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}
static inline uint64_t cradle_cursor_load_u64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

#endif
