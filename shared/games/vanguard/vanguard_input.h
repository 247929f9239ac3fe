#ifndef VANGUARD_INPUT_H
#define VANGUARD_INPUT_H
/*
 * vanguard_input: how one player's actions travel in a step snapshot.
 *
 * vanguard reads VANGUARD_INPUT_BYTES (1) byte per player slot. The byte is
 * written and read with cradle_bits_put/get (bit 0 = least significant bit):
 *
 *   bit 0  up       held: the ship moves up while set
 *   bit 1  down     held
 *   bit 2  left     held
 *   bit 3  right    held
 *   bit 4  fire     held: the ship fires whenever its cannon has cooled down
 *   bit 5  restart  pulse: acts on the step where it goes from 0 to 1, and
 *                   only while the game is over (see vanguard.c)
 *   bits 6-7        reserved, must be 0 (the game ignores them)
 *
 * Up and down together cancel, and so do left and right; diagonals are as
 * fast as straight moves on each axis. A client binds keys to these actions
 * (proposal: arrows or WASD move, space fires, R restarts) and calls
 * vanguard_input_pack(); bots do the same.
 *
 * Header-only on purpose: a host that never links the game library (it
 * loads it with dlopen) can still pack input for it with libcradle_core.
 */
#include <stddef.h>
#include <stdint.h>

#include "cradle/input.h"

#define VANGUARD_INPUT_BYTES 1u

enum {
    VANGUARD_UP = 1u << 0,
    VANGUARD_DOWN = 1u << 1,
    VANGUARD_LEFT = 1u << 2,
    VANGUARD_RIGHT = 1u << 3,
    VANGUARD_FIRE = 1u << 4,
    VANGUARD_RESTART = 1u << 5,
    VANGUARD_ACTIONS_MASK = 0x3Fu
};

/* Writes the actions (VANGUARD_* bits; others are dropped) into out, which
 * holds at least VANGUARD_INPUT_BYTES bytes. Returns false, writing nothing,
 * when size is too small. */
static inline bool vanguard_input_pack(uint8_t *out, size_t size, uint32_t actions) {
    if (size < VANGUARD_INPUT_BYTES) return false;
    return cradle_bits_put(out, size, 0, 6, actions & VANGUARD_ACTIONS_MASK) &&
           cradle_bits_put(out, size, 6, 2, 0);
}

/* The actions in one player's input bytes; 0 when size is too small. */
static inline uint32_t vanguard_input_unpack(const uint8_t *in, size_t size) {
    uint32_t actions = 0;
    if (size < VANGUARD_INPUT_BYTES || !cradle_bits_get(in, size, 0, 6, &actions)) return 0;
    return actions;
}

#endif
