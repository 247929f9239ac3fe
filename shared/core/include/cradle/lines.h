#ifndef CRADLE_LINES_H
#define CRADLE_LINES_H
/*
 * lines: the next line of a text file held in memory, for the parsers of
 * the project's own text formats (the client's desync report header, the
 * digest golden file). A line is printable ASCII, at most a given length,
 * and ends with "\n"; what is wrong is returned as a status for the caller
 * to name in its own words. Pure; reads nothing past size.
 */
#include <stddef.h>
#include <stdint.h>

typedef enum cradle_line_status {
    CRADLE_LINE_OK,           /* out holds the line, NUL-terminated, without its newline */
    CRADLE_LINE_END,          /* nothing is left: the text ended before this line */
    CRADLE_LINE_UNTERMINATED, /* the text ends inside the line, without its newline */
    CRADLE_LINE_LONG,         /* the line is longer than max bytes */
    CRADLE_LINE_BYTE,         /* *bad is a byte that is not printable ASCII */
} cradle_line_status;

typedef struct cradle_lines {
    const uint8_t *bytes;
    size_t size, at;
    unsigned line; /* the line read last, from 1 */
} cradle_lines;

/* Reads the next line into out (max + 1 bytes) and counts it in l->line. */
cradle_line_status cradle_lines_next(cradle_lines *l, char *out, size_t max, uint8_t *bad);

#endif
