#ifndef CRADLE_INPUT_SCRIPT_H
#define CRADLE_INPUT_SCRIPT_H
/*
 * input_script: scripted input for tests and tools (seed 001). A script is
 * a list of input changes sorted by step, each holding until the next. Input
 * is a set of up to 64 named bits (a game maps its actions to bits); the bits
 * in pulse_mask (a restart, say) are true only on their own entry's step.
 * Pure: the caller owns the list.
 */
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"

/* One entry of an input script: from `step` on, `bits` is the input. */
typedef struct cradle_input_script_change {
    uint64_t step;
    uint64_t bits;
} cradle_input_script_change;

/* Checks that the script is sorted by step (equal steps are not allowed:
 * one entry per step). Returns 0 or CRADLE_EUNSORTED. */
CRADLE_MUST_CHECK int cradle_input_script_check(const cradle_input_script_change *changes, size_t count);

/* The input in force at `step`: the bits of the last entry whose step is <=
 * `step`, with the pulse bits cleared unless that entry's step is `step`
 * itself; 0 before the first entry. Returns 0 or CRADLE_EUNSORTED (then
 * *bits is 0). Checks the order each call: O(count). */
CRADLE_MUST_CHECK int cradle_input_script_at(const cradle_input_script_change *changes, size_t count,
                                      uint64_t pulse_mask, uint64_t step, uint64_t *bits);

#endif
