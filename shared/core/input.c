#include "cradle/input.h"

#include <string.h>

cradle_button cradle_button_from(bool was_down, bool is_down) {
    return (cradle_button){
        .down = is_down,
        .pressed = is_down && !was_down,
        .released = was_down && !is_down,
    };
}

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

void cradle_put_u8(cradle_cursor *c, uint8_t v) {
    uint8_t *p = reserve_write(c, 1);
    if (p) p[0] = v;
}
void cradle_put_u16(cradle_cursor *c, uint16_t v) {
    uint8_t *p = reserve_write(c, 2);
    if (p) cradle_store_u16(p, v);
}
void cradle_put_u32(cradle_cursor *c, uint32_t v) {
    uint8_t *p = reserve_write(c, 4);
    if (p) cradle_store_u32(p, v);
}
void cradle_put_u64(cradle_cursor *c, uint64_t v) {
    uint8_t *p = reserve_write(c, 8);
    if (p) cradle_store_u64(p, v);
}
void cradle_put_i32(cradle_cursor *c, int32_t v) { cradle_put_u32(c, (uint32_t)v); }
void cradle_put_bool(cradle_cursor *c, bool v) { cradle_put_u8(c, v ? 1 : 0); }
void cradle_put_bytes(cradle_cursor *c, const void *bytes, size_t n) {
    uint8_t *p = reserve_write(c, n);
    if (p && n) memcpy(p, bytes, n);
}

uint8_t cradle_get_u8(cradle_cursor *c) {
    const uint8_t *p = reserve_read(c, 1);
    return p ? p[0] : 0;
}
uint16_t cradle_get_u16(cradle_cursor *c) {
    const uint8_t *p = reserve_read(c, 2);
    return p ? cradle_load_u16(p) : 0;
}
uint32_t cradle_get_u32(cradle_cursor *c) {
    const uint8_t *p = reserve_read(c, 4);
    return p ? cradle_load_u32(p) : 0;
}
uint64_t cradle_get_u64(cradle_cursor *c) {
    const uint8_t *p = reserve_read(c, 8);
    return p ? cradle_load_u64(p) : 0;
}
int32_t cradle_get_i32(cradle_cursor *c) {
    /* Two's complement conversion without implementation-defined casts. */
    uint32_t u = cradle_get_u32(c);
    return u <= INT32_MAX ? (int32_t)u : (int32_t)(u - 2147483648u) - INT32_MAX - 1;
}
bool cradle_get_bool(cradle_cursor *c) { return cradle_get_u8(c) != 0; }
void cradle_get_bytes(cradle_cursor *c, void *out, size_t n) {
    const uint8_t *p = reserve_read(c, n);
    if (p) {
        if (n) memcpy(out, p, n);
    } else if (n) {
        memset(out, 0, n);
    }
}

static bool bits_fit(size_t size, size_t bit, unsigned bits) {
    if (bits == 0 || bits > 32) return false;
    /* Compare in bytes so that neither bit + bits nor size * 8 can wrap. */
    if (bit > SIZE_MAX - bits) return false;
    size_t end = bit + bits; /* one past the field's last bit */
    return end / 8 + (end % 8 != 0 ? 1u : 0u) <= size;
}

bool cradle_bits_put(uint8_t *buf, size_t size, size_t bit, unsigned bits, uint32_t value) {
    if (!bits_fit(size, bit, bits)) return false;
    for (unsigned i = 0; i < bits; i++) {
        size_t at = bit + i;
        uint8_t mask = (uint8_t)(1u << (at % 8));
        if ((value >> i) & 1u) {
            buf[at / 8] = (uint8_t)(buf[at / 8] | mask);
        } else {
            buf[at / 8] = (uint8_t)(buf[at / 8] & (uint8_t)~mask);
        }
    }
    return true;
}

bool cradle_bits_get(const uint8_t *buf, size_t size, size_t bit, unsigned bits, uint32_t *value) {
    *value = 0;
    if (!bits_fit(size, bit, bits)) return false;
    uint32_t v = 0;
    for (unsigned i = 0; i < bits; i++) {
        size_t at = bit + i;
        v |= ((uint32_t)buf[at / 8] >> (at % 8u) & 1u) << i;
    }
    *value = v;
    return true;
}
