#ifndef CRADLE_PARSE_H
#define CRADLE_PARSE_H
/*
 * parse: numbers given by people (command-line options, config values,
 * script fields), read strictly.
 *
 * Pure: no locale, no errno, no allocation.
 */
#include <stdbool.h>
#include <stdint.h>

#include "cradle/errors.h"

/* Reads text as an unsigned decimal number from min to max (both
 * inclusive) into *out. The whole string must be ASCII digits 0-9: no sign,
 * no space, no "0x" (leading zeros are decimal: "010" is 10). Returns false,
 * leaving *out untouched, for NULL or empty text, any other character, a
 * value above UINT64_MAX, or one outside [min, max]. min > max is a
 * programmer error (asserts). */
CRADLE_MUST_CHECK bool cradle_parse_u64(const char *text, uint64_t min, uint64_t max,
                                        uint64_t *out);

#endif
