#include "cradle/cursor.h"

#include <string.h>

cradle_cursor cradle_cursor_writer(void *data, size_t size) {
    return (cradle_cursor){.data = data, .rdata = data, .size = size};
}

cradle_cursor cradle_cursor_reader(const void *data, size_t size) {
    return (cradle_cursor){.data = NULL, .rdata = data, .size = size};
}

size_t cradle_cursor_remaining(const cradle_cursor *c) {
    return c->failed ? 0 : c->size - c->pos;
}

/* Reserves n bytes for a write; NULL (and the flag set) when they do not fit. */
static uint8_t *reserve_write(cradle_cursor *c, size_t n) {
    if (c->failed || c->data == NULL || n > c->size - c->pos) {
        c->failed = true;
        return NULL;
    }
    uint8_t *p = c->data + c->pos;
    c->pos += n;
    return p;
}

static const uint8_t *reserve_read(cradle_cursor *c, size_t n) {
    if (c->failed || n > c->size - c->pos) {
        c->failed = true;
        return NULL;
    }
    const uint8_t *p = c->rdata + c->pos;
    c->pos += n;
    return p;
}

void cradle_cursor_put_u8(cradle_cursor *c, uint8_t v) {
    uint8_t *p = reserve_write(c, 1);
    if (p) p[0] = v;
}
void cradle_cursor_put_u16(cradle_cursor *c, uint16_t v) {
    uint8_t *p = reserve_write(c, 2);
    if (p) cradle_cursor_store_u16(p, v);
}
void cradle_cursor_put_u32(cradle_cursor *c, uint32_t v) {
    uint8_t *p = reserve_write(c, 4);
    if (p) cradle_cursor_store_u32(p, v);
}
void cradle_cursor_put_u64(cradle_cursor *c, uint64_t v) {
    uint8_t *p = reserve_write(c, 8);
    if (p) cradle_cursor_store_u64(p, v);
}
void cradle_cursor_put_i32(cradle_cursor *c, int32_t v) { cradle_cursor_put_u32(c, (uint32_t)v); }
void cradle_cursor_put_bool(cradle_cursor *c, bool v) { cradle_cursor_put_u8(c, v ? 1 : 0); }
void cradle_cursor_put_bytes(cradle_cursor *c, const void *bytes, size_t n) {
    uint8_t *p = reserve_write(c, n);
    if (p && n) memcpy(p, bytes, n);
}

uint8_t cradle_cursor_get_u8(cradle_cursor *c) {
    const uint8_t *p = reserve_read(c, 1);
    return p ? p[0] : 0;
}
uint16_t cradle_cursor_get_u16(cradle_cursor *c) {
    const uint8_t *p = reserve_read(c, 2);
    return p ? cradle_cursor_load_u16(p) : 0;
}
uint32_t cradle_cursor_get_u32(cradle_cursor *c) {
    const uint8_t *p = reserve_read(c, 4);
    return p ? cradle_cursor_load_u32(p) : 0;
}
uint64_t cradle_cursor_get_u64(cradle_cursor *c) {
    const uint8_t *p = reserve_read(c, 8);
    return p ? cradle_cursor_load_u64(p) : 0;
}
int32_t cradle_cursor_get_i32(cradle_cursor *c) {
    /* Two's complement conversion without implementation-defined casts. */
    uint32_t u = cradle_cursor_get_u32(c);
    return u <= INT32_MAX ? (int32_t)u : (int32_t)(u - 2147483648u) - INT32_MAX - 1;
}
bool cradle_cursor_get_bool(cradle_cursor *c) { return cradle_cursor_get_u8(c) != 0; }
void cradle_cursor_get_bytes(cradle_cursor *c, void *out, size_t n) {
    const uint8_t *p = reserve_read(c, n);
    if (p) {
        if (n) memcpy(out, p, n);
    } else if (n) {
        memset(out, 0, n);
    }
}
