/*
 * json_reader: strict JSON into a caller's token array, and readers that
 * check a value's type and range (see json_reader.h).
 *
 * The parser is a loop over an explicit stack of the containers open at the
 * cursor (at most CRADLE_JSON_MAX_DEPTH), so no input recurses the C stack.
 * Each step reads one thing: a value, a key and its ':', a ',' or a closing
 * bracket. A scalar's token is added once the scalar is read whole; a
 * container's when it opens, its `length` and `next` filled when it closes;
 * a key's `next` is its value's, set when the value ends.
 *
 * Strings are validated once, while parsing; what reads them later (the
 * comparisons, the string reader) decodes their escapes knowing they are
 * well formed.
 */
#include "cradle/json_reader.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define GOT_MAX 48u     /* bytes of a value shown after "got", with its NUL */
#define SHOWN_BYTES 32u /* bytes of a string or number shown in a message */

/* The document's largest size (json_reader.h): offsets and `next` fit a
 * uint32_t, with UINT32_MAX left for CRADLE_JSON_NONE. */
#define SIZE_MAX_BYTES (UINT32_MAX - 1u)

/* Fills *error (the message cut to its buffer) and returns false, so a
 * refusal reads `return say(error, line, offset, "what was wrong", ...)`.
 * offset is the byte where it went wrong (json_reader.h). */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static bool say(cradle_json_error *error, uint32_t line, uint32_t offset, const char *format, ...) {
    va_list args;
    va_start(args, format);
    error->line = line;
    error->offset = offset;
    (void)vsnprintf(error->message, sizeof error->message, format, args);
    va_end(args);
    return false;
}

static bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

/* The value of four hex digits at s (left bytes remain there), or -1. */
static int32_t hex4(const uint8_t *s, uint32_t left) {
    if (left < 4) return -1;
    int32_t v = 0;
    for (int i = 0; i < 4; i++) {
        uint8_t c = s[i];
        int32_t d;
        if (is_digit(c))
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        v = v << 4 | d;
    }
    return v;
}

/* ---- strings ------------------------------------------------------------ */

/* Code point u (at most U+10FFFF, no surrogate) as UTF-8 into out; returns
 * its length. */
static uint32_t encode(uint32_t u, uint8_t out[4]) {
    if (u < 0x80) {
        out[0] = (uint8_t)u;
        return 1;
    }
    if (u < 0x800) {
        out[0] = (uint8_t)(0xc0 | u >> 6);
        out[1] = (uint8_t)(0x80 | (u & 0x3f));
        return 2;
    }
    if (u < 0x10000) {
        out[0] = (uint8_t)(0xe0 | u >> 12);
        out[1] = (uint8_t)(0x80 | (u >> 6 & 0x3f));
        out[2] = (uint8_t)(0x80 | (u & 0x3f));
        return 3;
    }
    out[0] = (uint8_t)(0xf0 | u >> 18);
    out[1] = (uint8_t)(0x80 | (u >> 12 & 0x3f));
    out[2] = (uint8_t)(0x80 | (u >> 6 & 0x3f));
    out[3] = (uint8_t)(0x80 | (u & 0x3f));
    return 4;
}

cradle_json_chars cradle_json_chars_of(const cradle_json_doc *doc, uint32_t t) {
    assert(doc != NULL && t < doc->count && doc->tokens[t].type == CRADLE_JSON_STRING);
    const cradle_json_token *token = &doc->tokens[t];
    return (cradle_json_chars){.s = doc->text, .at = token->start, .end = token->start + token->length};
}

/* Strings were validated while parsing, so every escape here is well
 * formed, a high surrogate is followed by a low one and raw bytes are valid
 * UTF-8. */
uint32_t cradle_json_chars_next(cradle_json_chars *c, uint8_t out[4]) {
    if (c->at == c->end) return 0;
    uint8_t b = c->s[c->at];
    if (b != '\\') {
        uint32_t n = b < 0x80 ? 1u : b < 0xe0 ? 2u : b < 0xf0 ? 3u : 4u;
        memcpy(out, c->s + c->at, n);
        c->at += n;
        return n;
    }
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    uint8_t e = c->s[c->at + 1];
    if (e != 'u') {
        out[0] = (uint8_t)to[strchr(from, e) - from];
        c->at += 2;
        return 1;
    }
    uint32_t u = (uint32_t)hex4(c->s + c->at + 2, 4);
    c->at += 6;
    if (u >= 0xd800 && u <= 0xdbff) { /* a pair: 10 bits from each half, above U+FFFF */
        u = 0x10000u + ((u - 0xd800u) << 10) + ((uint32_t)hex4(c->s + c->at + 2, 4) - 0xdc00u);
        c->at += 6;
    }
    return encode(u, out);
}

/* The decoded bytes of a STRING token, one at a time. */
typedef struct chars {
    cradle_json_chars it;
    uint8_t unit[4]; /* the current character's UTF-8 bytes */
    uint32_t length, used;
} chars;

static void chars_init(chars *c, const cradle_json_doc *doc, uint32_t t) {
    *c = (chars){.it = cradle_json_chars_of(doc, t)};
}

/* The next decoded byte, or -1 at the string's end. */
static int chars_next(chars *c) {
    if (c->used == c->length) {
        c->length = cradle_json_chars_next(&c->it, c->unit);
        c->used = 0;
        if (c->length == 0) return -1;
    }
    return c->unit[c->used++];
}

/* Whether the strings at tokens a and b decode to the same bytes: the same
 * bytes as written, or the same once their escapes are resolved. */
static bool same_key(const cradle_json_doc *doc, uint32_t a, uint32_t b) {
    const cradle_json_token *x = &doc->tokens[a], *y = &doc->tokens[b];
    if (x->length == y->length && memcmp(doc->text + x->start, doc->text + y->start, x->length) == 0) return true;
    chars ca, cb;
    chars_init(&ca, doc, a);
    chars_init(&cb, doc, b);
    for (;;) {
        int u = chars_next(&ca), v = chars_next(&cb);
        if (u != v) return false;
        if (u < 0) return true;
    }
}

bool cradle_json_string_is(const cradle_json_doc *doc, uint32_t t, const char *s) {
    assert(doc != NULL && t < doc->count && s != NULL);
    if (doc->tokens[t].type != CRADLE_JSON_STRING) return false;
    chars c;
    chars_init(&c, doc, t);
    for (const uint8_t *p = (const uint8_t *)s;; p++) {
        int u = chars_next(&c);
        if (u < 0) return *p == '\0';
        if (*p == '\0' || *p != u) return false;
    }
}

uint32_t cradle_json_member(const cradle_json_doc *doc, uint32_t object, const char *key) {
    assert(doc != NULL && object < doc->count && key != NULL);
    const cradle_json_token *o = &doc->tokens[object];
    if (o->type != CRADLE_JSON_OBJECT) return CRADLE_JSON_NONE;
    for (uint32_t i = object + 1u; i < o->next; i = doc->tokens[i].next)
        if (cradle_json_string_is(doc, i, key)) return i + 1u;
    return CRADLE_JSON_NONE;
}

/* Token t as a message shows it after "got": a number or a string as
 * written (cut to SHOWN_BYTES, a string's unprintable bytes as '?'), a
 * literal, or the container's kind. */
static const char *got(const cradle_json_doc *doc, uint32_t t, char out[GOT_MAX]) {
    const cradle_json_token *token = &doc->tokens[t];
    const char *text = (const char *)doc->text + token->start;
    uint32_t shown = token->length < SHOWN_BYTES ? token->length : SHOWN_BYTES;
    const char *more = shown < token->length ? "..." : "";
    switch (token->type) {
    case CRADLE_JSON_NULL: return "null";
    case CRADLE_JSON_FALSE: return "false";
    case CRADLE_JSON_TRUE: return "true";
    case CRADLE_JSON_ARRAY: return "an array";
    case CRADLE_JSON_OBJECT: return "an object";
    case CRADLE_JSON_NUMBER: snprintf(out, GOT_MAX, "%.*s%s", (int)shown, text, more); return out;
    default: break;
    }
    char printable[SHOWN_BYTES + 1];
    for (uint32_t i = 0; i < shown; i++) {
        uint8_t c = doc->text[token->start + i];
        printable[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    printable[shown] = '\0';
    snprintf(out, GOT_MAX, "\"%s%s\"", printable, more);
    return out;
}

/* ---- parsing ---------------------------------------------------------- */

/* What the innermost open container takes next: its first member or
 * element or its closing bracket (FIRST), a member or element after a ','
 * (NEXT), or a ',' or its closing bracket after one (AFTER). */
typedef enum expect { EXPECT_FIRST, EXPECT_NEXT, EXPECT_AFTER } expect;

typedef struct parser {
    const uint8_t *text;
    uint32_t size, at; /* at: the next byte to read */
    uint32_t line;     /* the line of text[at] */
    cradle_json_token *tokens;
    uint32_t capacity, count;
    uint32_t open[CRADLE_JSON_MAX_DEPTH]; /* the containers around at, innermost last */
    uint32_t depth;
    cradle_json_error *error;
} parser;

/* A byte outside a string, as a message shows it: 'x', or what it is. */
static const char *describe(uint8_t c, char *out, size_t size) {
    if (c == '\0') return "a NUL byte";
    if (c == '\f') return "a form feed (not JSON whitespace)";
    if (c == '\'') return "a single quote (strings take double quotes)";
    if (c == '/') return "'/' (JSON has no comments)";
    if (c >= 0x20 && c < 0x7f)
        snprintf(out, size, "'%c'", c);
    else
        snprintf(out, size, "byte 0x%02x", c);
    return out;
}

/* Refuses the byte at the cursor, which is not what was expected. */
static bool refuse_byte(parser *p, const char *expected) {
    char shown[16];
    return say(p->error, p->line, p->at, "expected %s, got %s", expected,
               describe(p->text[p->at], shown, sizeof shown));
}

/* What the document's end interrupts: the innermost open container, or the
 * one top-level value. */
static bool refuse_end(parser *p) {
    if (p->depth == 0) return say(p->error, p->line, p->at, "the document holds no value");
    const cradle_json_token *open = &p->tokens[p->open[p->depth - 1]];
    return say(p->error, p->line, p->at, "the document ends inside the %s opened at line %u",
               open->type == CRADLE_JSON_OBJECT ? "object" : "array", (unsigned)open->line);
}

/* JSON's four whitespace bytes; a line is counted at each LF (so CRLF is
 * one line, and a lone CR none). */
static void skip_space(parser *p) {
    while (p->at < p->size) {
        uint8_t c = p->text[p->at];
        if (c == '\n')
            p->line++;
        else if (c != ' ' && c != '\t' && c != '\r')
            return;
        p->at++;
    }
}

/* A new token of type at start, on the current line, or CRADLE_JSON_NONE
 * (with the error) when the caller's array is full. */
static uint32_t add(parser *p, uint8_t type, uint32_t start, uint32_t length) {
    if (p->count == p->capacity) {
        /* offset: the value that did not fit (a string's opening quote). */
        (void)say(p->error, 0, type == CRADLE_JSON_STRING ? start - 1u : start,
                  "more than %u values (keys included) in the document", (unsigned)p->capacity);
        return CRADLE_JSON_NONE;
    }
    uint32_t t = p->count++;
    p->tokens[t] = (cradle_json_token){
        .type = type, .start = start, .length = length, .line = p->line, .count = 0, .next = t + 1u};
    return t;
}

/* Value t has ended at the cursor: its `next`, and its key's if it is a
 * member's value. */
static void finish(parser *p, uint32_t t) {
    p->tokens[t].next = p->count;
    if (p->depth > 0 && p->tokens[p->open[p->depth - 1]].type == CRADLE_JSON_OBJECT) p->tokens[t - 1u].next = p->count;
}

/* One UTF-8 character at the cursor (RFC 3629: shortest form, no
 * surrogates, at most U+10FFFF). The second byte's range is what rules out
 * the overlong forms, the surrogates and what lies above U+10FFFF. */
static bool utf8(parser *p) {
    const uint8_t *s = p->text + p->at;
    uint32_t left = p->size - p->at, n;
    uint8_t c = s[0], low = 0x80, high = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0) low = 0xa0;
        if (c == 0xed) high = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0) low = 0x90;
        if (c == 0xf4) high = 0x8f;
    } else if (c >= 0x80 && c <= 0xbf) {
        return say(p->error, p->line, p->at, "invalid UTF-8: continuation byte 0x%02x without a lead byte", c);
    } else if (c == 0xc0 || c == 0xc1) {
        return say(p->error, p->line, p->at, "invalid UTF-8: overlong encoding (lead byte 0x%02x)", c);
    } else {
        return say(p->error, p->line, p->at, "invalid UTF-8: byte 0x%02x", c);
    }
    for (uint32_t i = 1; i < n; i++) {
        if (i == left) return say(p->error, p->line, p->size, "the document ends inside a UTF-8 character");
        uint8_t b = s[i];
        if (b < 0x80 || b > 0xbf)
            return say(p->error, p->line, p->at + i,
                       "invalid UTF-8: byte 0x%02x after 0x%02x is not a continuation byte", b, c);
        if (i == 1 && (b < low || b > high))
            return say(p->error, p->line, p->at + i, "invalid UTF-8: %s (bytes 0x%02x 0x%02x)",
                       c == 0xed   ? "a surrogate (U+D800..U+DFFF)"
                       : c == 0xf4 ? "above U+10FFFF"
                                   : "overlong encoding",
                       c, b);
    }
    p->at += n;
    return true;
}

/* One escape at the cursor (a backslash). A \u high surrogate must be
 * followed by a \u low one: together they are one character. */
static bool escape(parser *p) {
    uint32_t left = p->size - p->at;
    if (left < 2) return say(p->error, p->line, p->size, "the document ends inside a string");
    uint8_t c = p->text[p->at + 1];
    if (c != '\0' && strchr("\"\\/bfnrt", c)) {
        p->at += 2;
        return true;
    }
    if (c != 'u') {
        char shown[16];
        return say(p->error, p->line, p->at + 1u,
                   "invalid escape: a backslash before %s (JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)",
                   describe(c, shown, sizeof shown));
    }
    int32_t u = hex4(p->text + p->at + 2, left - 2);
    if (u < 0) return say(p->error, p->line, p->at, "invalid escape: \\u takes four hex digits");
    if (u >= 0xdc00 && u <= 0xdfff)
        return say(p->error, p->line, p->at, "invalid escape: \\u%04x is a low surrogate without a high one before it",
                   (unsigned)u);
    if (u >= 0xd800 && u <= 0xdbff) {
        int32_t low = left >= 8 && p->text[p->at + 6] == '\\' && p->text[p->at + 7] == 'u'
                          ? hex4(p->text + p->at + 8, left - 8)
                          : -1;
        if (low < 0xdc00 || low > 0xdfff)
            return say(p->error, p->line, p->at,
                       "invalid escape: \\u%04x is a high surrogate without a low one (\\udc00..\\udfff) after it",
                       (unsigned)u);
        p->at += 6;
    }
    p->at += 6;
    return true;
}

/* A string at the cursor (its opening quote), validated whole before its
 * token is added; *t receives the token. */
static bool string(parser *p, uint32_t *t) {
    uint32_t start = ++p->at;
    for (;;) {
        if (p->at == p->size) return say(p->error, p->line, p->size, "the document ends inside a string");
        uint8_t c = p->text[p->at];
        if (c == '"') break;
        if (c == '\\') {
            if (!escape(p)) return false;
        } else if (c < 0x20) {
            return say(p->error, p->line, p->at,
                       "control character 0x%02x inside a string (write it as an escape, such as \\n or \\u%04x)", c,
                       c);
        } else if (c < 0x80) {
            p->at++;
        } else if (!utf8(p)) {
            return false;
        }
    }
    *t = add(p, CRADLE_JSON_STRING, start, p->at - start);
    p->at++;
    return *t != CRADLE_JSON_NONE;
}

/* Runs of digits at the cursor; false when there is none. */
static bool digits(parser *p) {
    uint32_t from = p->at;
    while (p->at < p->size && is_digit(p->text[p->at])) p->at++;
    return p->at > from;
}

/* A number at the cursor ('-' or a digit), in JSON's grammar exactly:
 * -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool number(parser *p) {
    uint32_t start = p->at;
    if (p->text[p->at] == '-') p->at++;
    if (p->at == p->size || !is_digit(p->text[p->at]))
        return say(p->error, p->line, p->at, "expected a digit after '-'");
    if (p->text[p->at] == '0') {
        p->at++;
        if (p->at < p->size && is_digit(p->text[p->at]))
            return say(p->error, p->line, p->at, "a number may not have a leading zero");
        if (p->at < p->size && (p->text[p->at] == 'x' || p->text[p->at] == 'X'))
            return say(p->error, p->line, p->at, "JSON has no hexadecimal numbers");
    } else {
        (void)digits(p);
    }
    if (p->at < p->size && p->text[p->at] == '.') {
        p->at++;
        if (!digits(p)) return say(p->error, p->line, p->at, "expected a digit after the decimal point");
    }
    if (p->at < p->size && (p->text[p->at] == 'e' || p->text[p->at] == 'E')) {
        p->at++;
        if (p->at < p->size && (p->text[p->at] == '+' || p->text[p->at] == '-')) p->at++;
        if (!digits(p)) return say(p->error, p->line, p->at, "expected a digit in the exponent");
    }
    return add(p, CRADLE_JSON_NUMBER, start, p->at - start) != CRADLE_JSON_NONE;
}

/* true, false or null at the cursor, whole and in lower case. */
static bool literal(parser *p, const char *word, uint8_t type) {
    size_t n = strlen(word);
    if (p->size - p->at < n || memcmp(p->text + p->at, word, n) != 0) {
        uint32_t end = p->at, differs = p->at; /* differs: the first byte that is not the word's */
        while (end < p->size && end - p->at < SHOWN_BYTES && p->text[end] >= 'a' && p->text[end] <= 'z') end++;
        while (differs < p->size && differs - p->at < n && p->text[differs] == (uint8_t)word[differs - p->at])
            differs++;
        return say(p->error, p->line, differs, "expected %s, got \"%.*s\"", word, (int)(end - p->at),
                   (const char *)p->text + p->at);
    }
    uint32_t start = p->at;
    p->at += (uint32_t)n;
    return add(p, type, start, (uint32_t)n) != CRADLE_JSON_NONE;
}

/* One value at the cursor: a scalar whole, or a container opened (pushed,
 * and *opened set). */
static bool value(parser *p, bool *opened) {
    *opened = false;
    if (p->at == p->size) return refuse_end(p);
    uint32_t t = CRADLE_JSON_NONE;
    uint8_t c = p->text[p->at];
    bool ok;
    switch (c) {
    case '{':
    case '[':
        if (p->depth == CRADLE_JSON_MAX_DEPTH)
            return say(p->error, p->line, p->at, "nesting deeper than %u arrays and objects",
                       (unsigned)CRADLE_JSON_MAX_DEPTH);
        t = add(p, c == '{' ? CRADLE_JSON_OBJECT : CRADLE_JSON_ARRAY, p->at, 0);
        if (t == CRADLE_JSON_NONE) return false;
        p->open[p->depth++] = t;
        p->at++;
        *opened = true;
        return true;
    case '"': ok = string(p, &t); break;
    case 't': ok = literal(p, "true", CRADLE_JSON_TRUE); break;
    case 'f': ok = literal(p, "false", CRADLE_JSON_FALSE); break;
    case 'n': ok = literal(p, "null", CRADLE_JSON_NULL); break;
    case '.':
        return say(p->error, p->line, p->at,
                   "expected a value, got '.' (a number needs a digit before its decimal point)");
    case '+': return say(p->error, p->line, p->at, "expected a value, got '+' (a number takes no plus sign)");
    default:
        if (c != '-' && !is_digit(c)) return refuse_byte(p, "a value");
        ok = number(p);
    }
    if (ok) finish(p, p->count - 1u);
    return ok;
}

/* A member's key at the cursor, its ':' and the space up to its value. */
static bool key(parser *p, uint32_t object, bool first) {
    if (p->text[p->at] != '"') return refuse_byte(p, first ? "a key (a string) or '}'" : "a key (a string) after ','");
    uint32_t k;
    if (!string(p, &k)) return false;
    const cradle_json_doc doc = {p->text, p->size, p->tokens, p->count};
    /* Quadratic in an object's members, so bounded by the caller's capacity:
     * at most capacity^2 / 8 comparisons, most of them ending at a first byte. */
    for (uint32_t i = object + 1u; i < k; i = p->tokens[i].next)
        if (same_key(&doc, i, k)) {
            char shown[GOT_MAX];
            return say(p->error, p->tokens[k].line, p->tokens[k].start - 1u, "duplicate key %s (first at line %u)",
                       got(&doc, k, shown),
                       (unsigned)p->tokens[i].line);
        }
    skip_space(p);
    if (p->at == p->size) return refuse_end(p);
    if (p->text[p->at] != ':') return refuse_byte(p, "':' after a key");
    p->at++;
    skip_space(p);
    return true;
}

/* One step inside the innermost open container: a member or element, a ','
 * or the closing bracket. */
static bool step(parser *p, expect *state) {
    skip_space(p);
    if (p->at == p->size) return refuse_end(p);
    uint32_t top = p->open[p->depth - 1];
    bool object = p->tokens[top].type == CRADLE_JSON_OBJECT;
    uint8_t c = p->text[p->at], closer = object ? '}' : ']';
    if (c == closer && *state != EXPECT_NEXT) {
        p->tokens[top].length = p->at + 1u - p->tokens[top].start;
        p->at++;
        p->depth--;
        finish(p, top);
        *state = EXPECT_AFTER;
        return true;
    }
    if (c == closer) return say(p->error, p->line, p->at, "a trailing comma before '%c'", closer);
    if (*state == EXPECT_AFTER) {
        if (c != ',') return refuse_byte(p, object ? "',' or '}' after a member" : "',' or ']' after an element");
        p->at++;
        *state = EXPECT_NEXT;
        return true;
    }
    if (object && !key(p, top, *state == EXPECT_FIRST)) return false;
    p->tokens[top].count++;
    bool opened;
    if (!value(p, &opened)) return false;
    *state = opened ? EXPECT_FIRST : EXPECT_AFTER;
    return true;
}

bool cradle_json_parse(cradle_json_doc *doc, const void *text, size_t size, cradle_json_token *tokens,
                       uint32_t capacity, cradle_json_error *error) {
    assert(doc != NULL && error != NULL && (text != NULL || size == 0) && (tokens != NULL || capacity == 0));
    *doc = (cradle_json_doc){.text = text, .size = 0, .tokens = tokens, .count = 0};
    error->line = 0;
    error->offset = 0;
    error->message[0] = '\0';
    if (size > SIZE_MAX_BYTES)
        return say(error, 0, 0, "the document is larger than %u bytes", (unsigned)SIZE_MAX_BYTES);
    parser p = {
        .text = text, .size = (uint32_t)size, .line = 1, .tokens = tokens, .capacity = capacity, .error = error};
    if (size >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        return say(error, 1, 0, "the document begins with a byte order mark (save it as UTF-8 without a BOM)");
    skip_space(&p);
    bool opened;
    if (!value(&p, &opened)) return false;
    expect state = EXPECT_FIRST;
    while (p.depth > 0)
        if (!step(&p, &state)) return false;
    skip_space(&p);
    if (p.at < p.size) return refuse_byte(&p, "the end of the document after its value");
    doc->size = p.size;
    doc->count = p.count;
    return true;
}

/* ---- readers ------------------------------------------------------------ */

/* Token t's first byte, a reader's error offset: a STRING's opening quote. */
static uint32_t at(const cradle_json_doc *doc, uint32_t t) {
    const cradle_json_token *token = &doc->tokens[t];
    return token->type == CRADLE_JSON_STRING ? token->start - 1u : token->start;
}

bool cradle_json_object(const cradle_json_doc *doc, uint32_t t, const char *name, const char *const *keys,
                        const bool *required, uint32_t key_count, uint32_t *values, cradle_json_error *error) {
    assert(doc != NULL && t < doc->count && name != NULL && error != NULL);
    assert((keys != NULL && values != NULL) || key_count == 0);
    const cradle_json_token *o = &doc->tokens[t];
    char shown[GOT_MAX];
    if (o->type != CRADLE_JSON_OBJECT)
        return say(error, o->line, at(doc, t), "\"%s\" must be an object, got %s", name, got(doc, t, shown));
    for (uint32_t k = 0; k < key_count; k++) values[k] = CRADLE_JSON_NONE;
    for (uint32_t i = t + 1u; i < o->next; i = doc->tokens[i].next) {
        uint32_t k = 0;
        while (k < key_count && !cradle_json_string_is(doc, i, keys[k])) k++;
        if (k == key_count) return say(error, doc->tokens[i].line, at(doc, i), "unknown field %s", got(doc, i, shown));
        values[k] = i + 1u;
    }
    for (uint32_t k = 0; k < key_count; k++)
        if (values[k] == CRADLE_JSON_NONE && (required == NULL || required[k]))
            return say(error, o->line, at(doc, t), "missing field \"%s\"", keys[k]);
    return true;
}

bool cradle_json_array(const cradle_json_doc *doc, uint32_t t, const char *name, uint32_t min, uint32_t max,
                       uint32_t *count, cradle_json_error *error) {
    assert(doc != NULL && t < doc->count && name != NULL && count != NULL && error != NULL && min <= max);
    const cradle_json_token *a = &doc->tokens[t];
    if (a->type == CRADLE_JSON_ARRAY && a->count >= min && a->count <= max) {
        *count = a->count;
        return true;
    }
    char range[32], shown[GOT_MAX];
    if (min == max)
        snprintf(range, sizeof range, "%u", (unsigned)min);
    else
        snprintf(range, sizeof range, "%u..%u", (unsigned)min, (unsigned)max);
    const char *what = shown;
    if (a->type == CRADLE_JSON_ARRAY)
        snprintf(shown, sizeof shown, "%u", (unsigned)a->count);
    else
        what = got(doc, t, shown);
    return say(error, a->line, at(doc, t), "\"%s\" must be an array of %s element%s, got %s", name, range,
               min == max && min == 1 ? "" : "s", what);
}

/* How a NUMBER's value, scaled, came out (see scaled()). */
typedef enum scale { SCALE_OK, SCALE_FRACTION, SCALE_RANGE } scale;

/* NUMBER token t's value times 10^decimals, exactly, into *out: SCALE_OK,
 * SCALE_FRACTION when that is not a whole number, SCALE_RANGE when it is
 * outside int64_t. The number is read as its mantissa's digits M (integer
 * and fraction, fraction_digits of them after the point) times
 * 10^(exponent - fraction_digits); with S the digits of M from its first to
 * its last non-zero one and z the zeros after them, the result is
 * S * 10^(z + exponent - fraction_digits + decimals), so it is whole when
 * that power is at least 0 and fits when S and the power are small enough.
 * No digit string is too long: exponents saturate, and counts are bounded
 * by the document's size. */
static scale scaled(const cradle_json_doc *doc, uint32_t t, uint32_t decimals, bool *exponent_written, int64_t *out) {
    const uint8_t *s = doc->text + doc->tokens[t].start, *end = s + doc->tokens[t].length;
    bool negative = *s == '-';
    if (negative) s++;
    const uint8_t *mantissa = s;
    int64_t digits = 0, fraction_digits = 0, first = -1, last = -1, exponent = 0;
    for (bool fraction = false; s < end && *s != 'e' && *s != 'E'; s++) {
        if (*s == '.') {
            fraction = true;
            continue;
        }
        if (*s != '0') {
            if (first < 0) first = digits;
            last = digits;
        }
        digits++;
        fraction_digits += fraction;
    }
    *exponent_written = s < end;
    if (s < end) {
        bool exponent_negative = *++s == '-';
        if (*s == '-' || *s == '+') s++;
        for (; s < end; s++)
            if (exponent < 1000000000000) exponent = exponent * 10 + (*s - '0'); /* saturate: far past any int64 */
        if (exponent_negative) exponent = -exponent;
    }
    *out = 0;
    if (first < 0) return SCALE_OK; /* zero, whatever its exponent */
    int64_t power = (digits - 1 - last) + exponent - fraction_digits + (int64_t)decimals;
    if (power < 0) return SCALE_FRACTION;
    if (last - first + 1 + power > 19) return SCALE_RANGE; /* at least 10^19 > 2^63 */
    uint64_t limit = negative ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX, v = 0;
    for (int64_t i = 0; mantissa < end; mantissa++) {
        if (*mantissa == '.') continue;
        if (i > last) break;
        if (i >= first) v = v * 10u + (uint64_t)(*mantissa - '0'); /* at most 19 digits: no wrap */
        i++;
    }
    for (int64_t i = 0; i < power; i++) v *= 10u; /* at most 19 digits in all */
    if (v > limit) return SCALE_RANGE;
    *out = !negative ? (int64_t)v : v == limit ? INT64_MIN : -(int64_t)v;
    return SCALE_OK;
}

bool cradle_json_int(const cradle_json_doc *doc, uint32_t t, const char *name, int64_t min, int64_t max, int64_t *out,
                     cradle_json_error *error) {
    assert(doc != NULL && t < doc->count && name != NULL && out != NULL && error != NULL && min <= max);
    const cradle_json_token *n = &doc->tokens[t];
    int64_t v = 0;
    bool exponent = false;
    if (n->type == CRADLE_JSON_NUMBER && scaled(doc, t, 0, &exponent, &v) == SCALE_OK && !exponent && v >= min &&
        v <= max) {
        *out = v;
        return true;
    }
    char shown[GOT_MAX];
    return say(error, n->line, at(doc, t), "\"%s\" must be an integer %lld..%lld, got %s", name, (long long)min,
               (long long)max,
               got(doc, t, shown));
}

/* v in units of 10^-decimals, written as a decimal: 5, decimals 1: "0.5". */
static void fixed(int64_t v, uint32_t decimals, char *out, size_t size) {
    uint64_t magnitude = v < 0 ? 0u - (uint64_t)v : (uint64_t)v, unit = 1;
    for (uint32_t i = 0; i < decimals; i++) unit *= 10u;
    if (decimals == 0)
        snprintf(out, size, "%s%llu", v < 0 ? "-" : "", (unsigned long long)magnitude);
    else
        snprintf(out, size, "%s%llu.%0*llu", v < 0 ? "-" : "", (unsigned long long)(magnitude / unit), (int)decimals,
                 (unsigned long long)(magnitude % unit));
}

bool cradle_json_decimal(const cradle_json_doc *doc, uint32_t t, const char *name, uint32_t decimals, int64_t min,
                         int64_t max, int64_t *out, cradle_json_error *error) {
    assert(doc != NULL && t < doc->count && name != NULL && out != NULL && error != NULL);
    assert(decimals <= 9 && min <= max);
    const cradle_json_token *n = &doc->tokens[t];
    char low[32], high[32], shown[GOT_MAX];
    fixed(min, decimals, low, sizeof low);
    fixed(max, decimals, high, sizeof high);
    if (n->type != CRADLE_JSON_NUMBER)
        return say(error, n->line, at(doc, t), "\"%s\" must be a number %s..%s, got %s", name, low, high,
                   got(doc, t, shown));
    int64_t v = 0;
    bool exponent;
    scale s = scaled(doc, t, decimals, &exponent, &v);
    if (s == SCALE_FRACTION && decimals == 0)
        return say(error, n->line, at(doc, t), "\"%s\" takes no decimals, got %s", name, got(doc, t, shown));
    if (s == SCALE_FRACTION)
        return say(error, n->line, at(doc, t), "\"%s\" takes at most %u decimal%s, got %s", name, (unsigned)decimals,
                   decimals == 1 ? "" : "s", got(doc, t, shown));
    if (s == SCALE_RANGE || v < min || v > max)
        return say(error, n->line, at(doc, t), "\"%s\" must be %s..%s, got %s", name, low, high, got(doc, t, shown));
    *out = v;
    return true;
}

bool cradle_json_bool(const cradle_json_doc *doc, uint32_t t, const char *name, bool *out, cradle_json_error *error) {
    assert(doc != NULL && t < doc->count && name != NULL && out != NULL && error != NULL);
    const cradle_json_token *b = &doc->tokens[t];
    if (b->type == CRADLE_JSON_TRUE || b->type == CRADLE_JSON_FALSE) {
        *out = b->type == CRADLE_JSON_TRUE;
        return true;
    }
    char shown[GOT_MAX];
    return say(error, b->line, at(doc, t), "\"%s\" must be true or false, got %s", name, got(doc, t, shown));
}

bool cradle_json_choice(const cradle_json_doc *doc, uint32_t t, const char *name, const char *const *choices,
                        uint32_t choice_count, uint32_t *out, cradle_json_error *error) {
    assert(doc != NULL && t < doc->count && name != NULL && out != NULL && error != NULL);
    assert(choices != NULL || choice_count == 0);
    for (uint32_t i = 0; i < choice_count; i++)
        if (cradle_json_string_is(doc, t, choices[i])) {
            *out = i;
            return true;
        }
    /* The choices as a list, cut short with "..." so that the value that
     * was wrong still fits the message. */
    char list[CRADLE_JSON_MESSAGE_MAX + 1] = "", shown[GOT_MAX];
    size_t used = 0;
    for (uint32_t i = 0; i < choice_count; i++) {
        size_t n = strlen(choices[i]) + (i ? 2u : 0u);
        if (used + n + 5u > sizeof list / 2) {
            snprintf(list + used, sizeof list - used, "%s...", i ? ", " : "");
            break;
        }
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", choices[i]);
    }
    return say(error, doc->tokens[t].line, at(doc, t), "\"%s\" must be one of %s, got %s", name, list,
               got(doc, t, shown));
}

bool cradle_json_string(const cradle_json_doc *doc, uint32_t t, const char *name, char *out, size_t capacity,
                        cradle_json_error *error) {
    assert(doc != NULL && t < doc->count && name != NULL && out != NULL && capacity > 0 && error != NULL);
    const cradle_json_token *token = &doc->tokens[t];
    char shown[GOT_MAX];
    out[0] = '\0';
    if (token->type != CRADLE_JSON_STRING)
        return say(error, token->line, at(doc, t), "\"%s\" must be a string, got %s", name, got(doc, t, shown));
    chars c;
    chars_init(&c, doc, t);
    size_t n = 0;
    for (int u = chars_next(&c); u >= 0; u = chars_next(&c)) {
        if (u == 0) {
            out[0] = '\0';
            return say(error, token->line, at(doc, t), "\"%s\" must not hold \\u0000", name);
        }
        if (n + 1 == capacity) {
            size_t whole = n;
            while (chars_next(&c) >= 0) whole++;
            out[0] = '\0';
            return say(error, token->line, at(doc, t), "\"%s\" must be at most %zu bytes, got %zu", name,
                       capacity - 1, whole + 1);
        }
        out[n++] = (char)u;
    }
    out[n] = '\0';
    return true;
}
