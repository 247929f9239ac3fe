#ifndef CRADLE_JSON_READER_H
#define CRADLE_JSON_READER_H
/*
 * json_reader: a strict JSON (RFC 8259) reader for game data files, pure and
 * allocation-free, so a game's data() entry (game_abi.h) can parse the
 * bytes the host hands it and refuse them with the line and field a
 * designer needs ("\"count\" must be 1..64, got 0" at line 14).
 *
 * Why not the I/O layer's JSON (jansson, json.h): a game links only the pure
 * modules; it must not allocate or depend on the C library's float parsing
 * (strtod follows the locale and its rounding is the library's): numbers
 * here are read as exact decimals into integers or fixed point.
 *
 * Parsing fills a caller-provided token array, one token per value and per
 * object key, in document order:
 *
 *   - an OBJECT token is followed by its members, each a STRING token (the
 *     key) then the member's value (its subtree);
 *   - an ARRAY token is followed by its elements' subtrees;
 *   - every token's `next` is the index just past its subtree (for a key,
 *     past its value's subtree), so siblings are walked without recursion:
 *     for (i = t + 1; i < tokens[t].next; i = tokens[i].next) ...
 *
 * Strict means: exactly one value, optionally surrounded by whitespace
 * (space, tab, LF, CR; no BOM, no NUL, no form feed); valid UTF-8 everywhere
 * (no overlong forms, no surrogates, nothing above U+10FFFF); strings
 * without raw control characters, with only the eight JSON escapes and
 * \uXXXX (a surrogate pair must be whole); numbers in JSON's grammar only
 * (no leading zero, no "1.", no ".5", no "+1", no hex, no NaN); nesting at
 * most CRADLE_JSON_MAX_DEPTH; no duplicate key in one object; and a
 * document of at most UINT32_MAX - 1 bytes. Anything else is refused with
 * the line (1-based) and a sentence naming what was wrong.
 *
 * Readers of values (below) check type and range and, on a mismatch, fill
 * the same error with the value's line and a message naming the field:
 * "\"count\" must be an integer 1..64, got 0", "\"kind\" must be one of
 * drifter, chaser, shooter, got \"boss2\"", "unknown field \"cuont\"",
 * "missing field \"count\"". `name` arguments are the field names used in
 * these messages (a key, or a path such as "waves[2].count": the caller
 * decides).
 *
 * Pure: no allocation, no I/O, no global state; every function is
 * deterministic and bounded by the document's size.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CRADLE_JSON_MAX_DEPTH 64u
#define CRADLE_JSON_MESSAGE_MAX 191u /* bytes of an error message, without the NUL */
#define CRADLE_JSON_NONE UINT32_MAX  /* "no token" */

typedef enum cradle_json_type {
    CRADLE_JSON_NULL = 1,
    CRADLE_JSON_FALSE,
    CRADLE_JSON_TRUE,
    CRADLE_JSON_NUMBER,
    CRADLE_JSON_STRING,
    CRADLE_JSON_ARRAY,
    CRADLE_JSON_OBJECT,
} cradle_json_type;

typedef struct cradle_json_token {
    uint8_t type;      /* cradle_json_type */
    uint32_t start;    /* byte offset of the value; a STRING's first byte after the quote */
    uint32_t length;   /* bytes of the value; a STRING's bytes between the quotes (escapes
                          as written) */
    uint32_t line;     /* 1-based line of the value's first byte */
    uint32_t count;    /* ARRAY: elements; OBJECT: members; else 0 */
    uint32_t next;     /* index just past this token's subtree */
} cradle_json_token;

typedef struct cradle_json_doc {
    const uint8_t *text;
    uint32_t size;
    cradle_json_token *tokens;
    uint32_t count;    /* tokens filled */
} cradle_json_doc;

/* What was wrong and where. line 0: the document as a whole (say, more
 * tokens than the caller's array holds). offset is the byte, counted from 0,
 * where it went wrong, set on every refusal: for parse, the byte refused (the
 * second digit of "01", the 'x' of "\x", the continuation byte that is not
 * one, a duplicate key's opening quote), or the document's size when it ends
 * too soon; 0 for a document refused whole (a BOM, too large); for "more
 * than N values", where the value that did not fit begins. For a reader, the
 * first byte of the value it refused (a STRING's opening quote). */
typedef struct cradle_json_error {
    uint32_t line;
    uint32_t offset;
    char message[CRADLE_JSON_MESSAGE_MAX + 1];
} cradle_json_error;

/* Parses size bytes of text into tokens (capacity of them). Returns true and
 * fills *doc (the root is tokens[0]), or false with *error filled ("line
 * 3: expected ',' or '}' after a member, got 'x'", "more than N values")
 * and doc->count 0. text must outlive doc. */
bool cradle_json_parse(cradle_json_doc *doc, const void *text, size_t size, cradle_json_token *tokens,
                       uint32_t capacity, cradle_json_error *error);

/* Whether token t (a STRING: a key or a value) decodes to exactly the
 * NUL-terminated string s. */
bool cradle_json_string_is(const cradle_json_doc *doc, uint32_t t, const char *s);

/* A STRING token's characters decoded one at a time (escapes resolved, as
 * UTF-8), for a caller that streams a long string rather than copy it
 * whole: cradle_json_chars_next() writes the next character's 1..4 bytes
 * into out and returns how many, or 0 at the string's end. A \u0000 is the
 * one byte 0. */
typedef struct cradle_json_chars {
    const uint8_t *s;
    uint32_t at, end;
} cradle_json_chars;

cradle_json_chars cradle_json_chars_of(const cradle_json_doc *doc, uint32_t t);
uint32_t cradle_json_chars_next(cradle_json_chars *c, uint8_t out[4]);

/* The value of member `key` of OBJECT token `object`, or CRADLE_JSON_NONE. */
uint32_t cradle_json_member(const cradle_json_doc *doc, uint32_t object, const char *key);

/* ---- readers with messages ------------------------------------------------
 *
 * Each returns true and writes *out, or false with *error filled (the line
 * of token t, and a message naming `name`). */

/* An OBJECT whose keys are all in keys[0..key_count) (else "unknown field
 * \"x\"" at the key's line) and which has every key whose required[i] is
 * true (else "missing field \"k\"" at the object's line; required may be
 * NULL: all required). values[i] receives the member's value token, or
 * CRADLE_JSON_NONE for an absent optional one. A non-object: "\"name\" must
 * be an object". */
bool cradle_json_object(const cradle_json_doc *doc, uint32_t t, const char *name, const char *const *keys,
                        const bool *required, uint32_t key_count, uint32_t *values,
                        cradle_json_error *error);

/* An ARRAY of min..max elements ("\"name\" must be an array of 1..64
 * elements, got 0"). *count receives the element count; the first element
 * is t + 1 and each next one tokens[i].next. */
bool cradle_json_array(const cradle_json_doc *doc, uint32_t t, const char *name, uint32_t min, uint32_t max,
                       uint32_t *count, cradle_json_error *error);

/* An integer (a NUMBER with no fraction, or with a fraction of zeros, and no
 * exponent) in min..max. Digits beyond int64 are out of range, not
 * wrapped. */
bool cradle_json_int(const cradle_json_doc *doc, uint32_t t, const char *name, int64_t min, int64_t max,
                     int64_t *out, cradle_json_error *error);

/* A decimal number read exactly into fixed point: its value times 10^decimals
 * (decimals 0..9), which must be a whole number (2.55 with decimals 1 is
 * refused: "\"speed\" takes at most 1 decimal, got 2.55") in min..max (in
 * those units; the message shows them as decimals: "must be 0.5..8.0").
 * An exponent is taken when the result is exact (1e2 = 100). */
bool cradle_json_decimal(const cradle_json_doc *doc, uint32_t t, const char *name, uint32_t decimals,
                         int64_t min, int64_t max, int64_t *out, cradle_json_error *error);

/* true or false. */
bool cradle_json_bool(const cradle_json_doc *doc, uint32_t t, const char *name, bool *out,
                      cradle_json_error *error);

/* A STRING equal to one of choices[0..choice_count): *out receives its
 * index. Else "\"kind\" must be one of a, b, c, got \"x\"" (the value cut to
 * 32 bytes, non-printable bytes as '?'). */
bool cradle_json_choice(const cradle_json_doc *doc, uint32_t t, const char *name, const char *const *choices,
                        uint32_t choice_count, uint32_t *out, cradle_json_error *error);

/* A STRING decoded (escapes resolved, UTF-8) into out (capacity bytes,
 * NUL-terminated) of at most capacity - 1 bytes ("\"name\" must be at most
 * N bytes"). */
bool cradle_json_string(const cradle_json_doc *doc, uint32_t t, const char *name, char *out, size_t capacity,
                        cradle_json_error *error);

#endif
