#ifndef CRADLE_INPUT_H
#define CRADLE_INPUT_H
/*
 * input: the bytes a game receives for one step, and button edges.
 *
 * A snapshot is a fixed-size byte array whose size the game sets (at most
 * CRADLE_SNAPSHOT_MAX bytes). Its contents are written and read only through
 * explicit little-endian helpers (the byte cursor, cursor.h, and the bit
 * fields below), so no struct (with its padding, pointers and byte order) is
 * ever copied raw into a recording or a packet.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/cursor.h"

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

/* ---- bit fields --------------------------------------------------------- */

/* Writes the low `bits` bits of value (1..32) at bit offset `bit` of buf
 * (bit 0 is the least significant bit of byte 0). Returns false, writing
 * nothing, when the field does not fit in size bytes or bits is 0 or > 32. */
bool cradle_bits_put(uint8_t *buf, size_t size, size_t bit, unsigned bits, uint32_t value);

/* Reads a field written by cradle_bits_put. Returns false, with *value = 0,
 * when the field does not fit. */
bool cradle_bits_get(const uint8_t *buf, size_t size, size_t bit, unsigned bits, uint32_t *value);

#endif
