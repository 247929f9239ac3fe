#ifndef CRADLE_JSON_H
#define CRADLE_JSON_H
/*
 * json: the strict JSON reading the dev protocol (dev.h), cradle-server's
 * --config and the client's client.json share, through jansson: RFC 8259
 * with duplicate keys refused (JSON_REJECT_DUPLICATES), no NUL in a string
 * or key, valid UTF-8, nothing after the value. It says where a text went
 * wrong, with a hint for the mistakes people make, and describes a value
 * for messages.
 */
#include <jansson.h>
#include <stddef.h>

#define CRADLE_JSON_DESCRIBE_MAX 48u

/* Where and why a text is not JSON. */
typedef struct cradle_json_load_error {
    int line, column;           /* jansson's, from 1 */
    size_t position;            /* the byte where parsing stopped, at most the length */
    enum json_error_code code;
    char text[JSON_ERROR_TEXT_LENGTH]; /* jansson's words */
    const char *hint;           /* "" or " (a JSON number has no leading zero: ...)": a leading
                                   zero, a NUL, invalid UTF-8 or a duplicate key */
} cradle_json_load_error;

/* Parses length bytes of text (no NUL needed) with
 * JSON_REJECT_DUPLICATES | flags. Returns the value (json_decref it), or
 * NULL with *error filled. */
json_t *cradle_json_load(const char *text, size_t length, size_t flags, cradle_json_load_error *error);

/* "a string", "true", "40", "3.0" ...: what a message says a value was. A
 * real always shows a fraction or an exponent, so 3.0 never reads as the
 * integer 3. */
void cradle_json_describe(const json_t *item, char out[CRADLE_JSON_DESCRIBE_MAX]);

#endif
