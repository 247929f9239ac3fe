#ifndef CRADLE_WRITER_H
#define CRADLE_WRITER_H
/*
 * writer: a bounded byte buffer that text, formatted numbers and JSON
 * strings are appended to (the dev protocol's replies, the programs' JSON
 * lines). Pure: caller memory, no allocation.
 *
 * Appends are all-or-nothing: one that does not fit sets overflow, leaves
 * length unchanged, and every later append is ignored. The writer does not
 * own its buffer.
 */
#include <stdbool.h>
#include <stddef.h>

typedef struct cradle_writer {
    char *data;
    size_t capacity;
    size_t length;
    bool overflow;
} cradle_writer;

void cradle_writer_init(cradle_writer *writer, void *buffer, size_t capacity);
void cradle_writer_bytes(cradle_writer *writer, const void *bytes, size_t count);
void cradle_writer_text(cradle_writer *writer, const char *text);
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void cradle_writer_format(cradle_writer *writer, const char *format, ...);
/* Appends bytes as a quoted JSON string: '"' and '\\' escaped, control
 * characters and DEL as \n, \t ... or \u00XX, each byte of an invalid UTF-8
 * sequence (overlong, surrogate, above U+10FFFF, truncated) as \ufffd. */
void cradle_writer_json_string(cradle_writer *writer, const void *bytes, size_t count);

#endif
