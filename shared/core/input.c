#include "cradle/input.h"

#include <string.h>

cradle_button cradle_button_from(bool was_down, bool is_down) {
    return (cradle_button){
        .down = is_down,
        .pressed = is_down && !was_down,
        .released = was_down && !is_down,
    };
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
