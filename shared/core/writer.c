/*
 * writer: bounded appends to a caller's buffer, and JSON strings (writer.h).
 */
#include "cradle/writer.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void cradle_writer_init(cradle_writer *writer, void *buffer, size_t capacity) {
    assert(writer != NULL && (buffer != NULL || capacity == 0));
    *writer = (cradle_writer){.data = buffer, .capacity = capacity, .length = 0, .overflow = false};
}

/* Appends without touching the overflow flag; false when it does not fit. */
static bool writer_put(cradle_writer *w, const void *bytes, size_t count) {
    if (w->overflow || count > w->capacity - w->length) return false;
    if (count) memcpy(w->data + w->length, bytes, count);
    w->length += count;
    return true;
}

void cradle_writer_bytes(cradle_writer *writer, const void *bytes, size_t count) {
    if (!writer_put(writer, bytes, count)) writer->overflow = true;
}

void cradle_writer_text(cradle_writer *writer, const char *text) {
    cradle_writer_bytes(writer, text, strlen(text));
}

void cradle_writer_format(cradle_writer *writer, const char *format, ...) {
    if (writer->overflow) return;
    size_t room = writer->capacity - writer->length;
    va_list args;
    va_start(args, format);
    /* vsnprintf writes a NUL after the text: the text fits only if room > n. */
    int n = vsnprintf(room ? writer->data + writer->length : NULL, room, format, args);
    va_end(args);
    if (n < 0 || (size_t)n >= room) {
        writer->overflow = true;
        return;
    }
    writer->length += (size_t)n;
}

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 when the byte at s
 * does not start one (RFC 3629: no overlongs, no surrogates, <= U+10FFFF). */
static size_t utf8_sequence(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    if (c < 0xC2) return 0;
    if (c < 0xE0) return (n >= 2 && (s[1] & 0xC0) == 0x80) ? 2 : 0;
    if (c < 0xF0) {
        if (n < 3 || (s[2] & 0xC0) != 0x80) return 0;
        unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return (s[1] >= lo && s[1] <= hi) ? 3 : 0;
    }
    if (c < 0xF5) {
        if (n < 4 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80) return 0;
        unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return (s[1] >= lo && s[1] <= hi) ? 4 : 0;
    }
    return 0;
}

void cradle_writer_json_string(cradle_writer *writer, const void *bytes, size_t count) {
    if (writer->overflow) return;
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = bytes;
    size_t start = writer->length;
    bool fits = writer_put(writer, "\"", 1);
    size_t i = 0;
    while (fits && i < count) {
        /* Copy the longest run that needs no escape in one go. */
        size_t run = i;
        while (run < count) {
            unsigned char c = s[run];
            if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
                run++;
                continue;
            }
            if (c < 0x80) break;
            size_t len = utf8_sequence(s + run, count - run);
            if (len == 0) break;
            run += len;
        }
        if (run > i) {
            fits = writer_put(writer, s + i, run - i);
            i = run;
            continue;
        }
        unsigned char c = s[i];
        char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        switch (c) {
        case '"': fits = writer_put(writer, "\\\"", 2); break;
        case '\\': fits = writer_put(writer, "\\\\", 2); break;
        case '\n': fits = writer_put(writer, "\\n", 2); break;
        case '\r': fits = writer_put(writer, "\\r", 2); break;
        case '\t': fits = writer_put(writer, "\\t", 2); break;
        default:
            if (c < 0x80) fits = writer_put(writer, esc, 6);
            else fits = writer_put(writer, "\\ufffd", 6); /* one invalid byte */
            break;
        }
        i++;
    }
    if (fits) fits = writer_put(writer, "\"", 1);
    if (!fits) {
        writer->length = start;
        writer->overflow = true;
    }
}
