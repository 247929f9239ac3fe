#ifndef CRADLE_INTERNAL_H
#define CRADLE_INTERNAL_H
/*
 * internal: small helpers the library's own modules share (core and io).
 * Not part of the game-facing SDK; games and programs do not include it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Formats a message into the caller's buffer (skipped when message is NULL
 * or message_size 0) and returns code, so a check reads
 * `return cradle__say(CRADLE_E..., message, size, "what was wrong", ...)`. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
int cradle__say(int code, char *message, size_t message_size, const char *format, ...);

static inline bool cradle__power_of_two(uint64_t v) { return v != 0 && (v & (v - 1u)) == 0; }

#endif
