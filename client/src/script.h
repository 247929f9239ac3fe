#ifndef CRADLE_CLIENT_SCRIPT_H
#define CRADLE_CLIENT_SCRIPT_H
/*
 * script: the local player's input from a text file (--script FILE).
 *
 * Format: one change per line, "<step> <hex bits>", steps strictly
 * increasing; the bits hold from that step until the next line (bit i is the
 * game's input bit i, packed with cradle_bits_put at bit i). Blank lines and
 * lines starting with '#' are ignored. Example for vanguard (bit 3 right,
 * bit 4 fire):
 *     0 18
 *     120 0
 *     300 11
 * Before the first line the input is 0. Errors name the line.
 */
#include <stddef.h>
#include <stdint.h>

#include "cradle/input_script.h"

typedef struct cradle_script {
    cradle_input_script_change *changes; /* malloc'd at load */
    size_t count;
} cradle_script;

/* Reads path. Returns 0, or a negative code with message set ("script.txt
 * line 3: steps must increase"). */
int cradle_script_load(cradle_script *script, const char *path, char *message, size_t message_size);

/* Parses text (NUL-terminated) the same way; name is used in messages. */
int cradle_script_parse(cradle_script *script, const char *text, const char *name, char *message,
                        size_t message_size);

/* The bits in force at step. */
uint64_t cradle_script_bits(const cradle_script *script, uint64_t step);

void cradle_script_free(cradle_script *script);

/* Packs bits 0..(8*input_bytes - 1) of bits into out: bit i at bit i. */
void cradle_pack_bits(uint8_t *out, uint32_t input_bytes, uint64_t bits);

#endif
