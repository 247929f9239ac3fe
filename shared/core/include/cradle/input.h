#ifndef CRADLE_INPUT_H
#define CRADLE_INPUT_H
/*
 * input: the bytes a game receives for one step, and button edges.
 *
 * A snapshot is a fixed-size byte array whose size the game sets (at most
 * CRADLE_SNAPSHOT_MAX bytes). Its contents are written and read only through
 * the explicit little-endian helpers below, so no struct (with its padding,
 * pointers and byte order) is ever copied raw into a recording or a packet.
 *
 * The cursor helpers are bounds-checked: a write or read past the end sets
 * `failed` and does nothing else, so a caller encodes or decodes a whole
 * record and checks the flag once at the end (STYLE habit 7). Reads past the
 * end yield 0.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest snapshot any game may declare, in bytes. */
#define CRADLE_SNAPSHOT_MAX 4096u

/* ---- button edges ---------------------------------------------------- */

typedef struct cradle_button {
    bool down;     /* down on this step */
    bool pressed;  /* up on the previous step, down now */
    bool released; /* down on the previous step, up now */
} cradle_button;

/* Derives a button's edges from its state on the previous and current step. */
cradle_button cradle_button_from(bool was_down, bool is_down);

/* ---- bounds-checked little-endian cursor ------------------------------ */

typedef struct cradle_cursor {
    uint8_t *data; /* NULL for a read-only cursor made by cradle_cursor_reader */
    const uint8_t *rdata;
    size_t size;
    size_t pos;
    bool failed; /* set by the first access past the end; sticky */
} cradle_cursor;

cradle_cursor cradle_cursor_writer(void *data, size_t size);
cradle_cursor cradle_cursor_reader(const void *data, size_t size);

void cradle_put_u8(cradle_cursor *c, uint8_t v);
void cradle_put_u16(cradle_cursor *c, uint16_t v);
void cradle_put_u32(cradle_cursor *c, uint32_t v);
void cradle_put_u64(cradle_cursor *c, uint64_t v);
void cradle_put_i32(cradle_cursor *c, int32_t v);
void cradle_put_bool(cradle_cursor *c, bool v);
void cradle_put_bytes(cradle_cursor *c, const void *bytes, size_t n);

uint8_t cradle_get_u8(cradle_cursor *c);
uint16_t cradle_get_u16(cradle_cursor *c);
uint32_t cradle_get_u32(cradle_cursor *c);
uint64_t cradle_get_u64(cradle_cursor *c);
int32_t cradle_get_i32(cradle_cursor *c);
/* Any nonzero byte reads as true. */
bool cradle_get_bool(cradle_cursor *c);
/* Copies n bytes out; on failure `out` is zero-filled. */
void cradle_get_bytes(cradle_cursor *c, void *out, size_t n);
/* Bytes left to read or write. */
size_t cradle_cursor_remaining(const cradle_cursor *c);

/* ---- fixed-offset helpers --------------------------------------------- */

/* Little-endian loads and stores at a byte offset the caller has checked. */
static inline void cradle_store_u16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void cradle_store_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void cradle_store_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t cradle_load_u16(const uint8_t *p) {
    return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t cradle_load_u32(const uint8_t *p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}
static inline uint64_t cradle_load_u64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* ---- bit fields --------------------------------------------------------- */

/* Writes the low `bits` bits of value (1..32) at bit offset `bit` of buf
 * (bit 0 is the least significant bit of byte 0). Returns false, writing
 * nothing, when the field does not fit in size bytes or bits is 0 or > 32. */
bool cradle_bits_put(uint8_t *buf, size_t size, size_t bit, unsigned bits, uint32_t value);

/* Reads a field written by cradle_bits_put. Returns false, with *value = 0,
 * when the field does not fit. */
bool cradle_bits_get(const uint8_t *buf, size_t size, size_t bit, unsigned bits, uint32_t *value);

#endif
