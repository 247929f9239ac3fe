/*
 * dev: the dev protocol's requests and replies (dev.h).
 *
 * A line is parsed by json_reader (pure, strict RFC 8259, no allocation)
 * into the request's own token array. Three rules of the protocol that
 * RFC 8259 leaves open are checked over the tokens next, as jansson, the
 * protocol's parser before, enforced them: no string or key holds NUL (raw
 * NUL is a control character json_reader refuses; \u0000 is checked here),
 * an integer fits int64_t, and a real is finite as a double. Then the root's
 * members are looked at once for "id", "cmd" and "count".
 *
 * The common path (a short request of ASCII strings without escapes, as
 * cradlectl sends) reads each key and string as its bytes: escapes are
 * decoded only where a string holds a backslash.
 */
#include "cradle/dev.h"
#include "cradle/json_reader.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* What a message shows after "got": as cradle_json_describe (json.h) did. */
#define DESCRIBE_MAX 48u

/* Significant digits of a real given to strtod (real_value). */
#define REAL_DIGITS 800u

/* The request's tokens, non-const because json_reader's doc is; only
 * load_json writes them. */
static cradle_json_token *tokens_of(const cradle_dev_request *request) {
    return (cradle_json_token *)(uintptr_t)request->tokens;
}

static cradle_json_doc doc_of(const cradle_dev_request *request) {
    return (cradle_json_doc){.text = (const uint8_t *)request->line,
                             .size = request->count ? (uint32_t)request->length : 0,
                             .tokens = tokens_of(request),
                             .count = request->count};
}

void cradle_dev_request_doc(const cradle_dev_request *request, cradle_json_doc *doc) { *doc = doc_of(request); }

/* ---- values ---- */

static const uint8_t *bytes_of(const cradle_dev_request *request, const cradle_json_token *token) {
    return (const uint8_t *)request->line + token->start;
}

/* Whether a NUMBER token is a JSON integer: digits alone, no fraction and
 * no exponent. */
static bool is_integer(const uint8_t *s, uint32_t length) {
    for (uint32_t i = 0; i < length; i++)
        if (s[i] == '.' || s[i] == 'e' || s[i] == 'E') return false;
    return true;
}

/* An integer NUMBER token's value, or false when it lies outside int64_t
 * (then it is not_json, as jansson had it: a json_int_t is 64 bits). */
static bool integer_value(const uint8_t *s, uint32_t length, int64_t *out) {
    bool negative = s[0] == '-';
    const uint64_t limit = negative ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    for (uint32_t i = negative; i < length; i++) {
        uint64_t digit = (uint64_t)(s[i] - '0');
        if (v > (limit - digit) / 10u) return false;
        v = v * 10u + digit;
    }
    *out = !negative ? (int64_t)v : v == limit ? INT64_MIN : -(int64_t)v;
    return true;
}

/* A real NUMBER token's value as strtod reads it (jansson read reals so).
 * The token is rewritten first as "[-]DIGITSe[-]POWER", its digits without
 * the decimal point: strtod then sees no locale's decimal point and no byte
 * past the token (the line need not end in NUL). Past REAL_DIGITS
 * significant digits the rest becomes one sticky digit, which rounds the
 * same way: a point halfway between two doubles has at most 767
 * significant digits. */
static double real_value(const uint8_t *s, uint32_t length) {
    char text[REAL_DIGITS + 32];
    const uint8_t *end = s + length;
    size_t n = 0, kept = 0;
    int64_t power = 0; /* text's digits times 10^power is the value */
    bool fraction = false, sticky = false;
    if (*s == '-') {
        text[n++] = '-';
        s++;
    }
    for (; s < end && *s != 'e' && *s != 'E'; s++) {
        if (*s == '.') {
            fraction = true;
            continue;
        }
        power -= fraction;
        if (kept == 0 && *s == '0') continue; /* leading zeros */
        if (kept < REAL_DIGITS) {
            text[n++] = (char)*s;
            kept++;
        } else {
            power++;
            sticky |= *s != '0';
        }
    }
    if (kept == 0) text[n++] = '0';
    if (sticky) {
        text[n++] = '1';
        power--;
    }
    if (s < end) { /* the exponent, saturated far past any double */
        bool negative = *++s == '-';
        if (*s == '-' || *s == '+') s++;
        int64_t e = 0;
        for (; s < end; s++)
            if (e < 1000000000) e = e * 10 + (*s - '0');
        power += negative ? -e : e;
    }
    if (power > 1000000000) power = 1000000000;
    if (power < -1000000000) power = -1000000000;
    snprintf(text + n, sizeof text - n, "e%" PRId64, power);
    return strtod(text, NULL);
}

/* What a message says a value was: "an array", "true", "40", "a string",
 * and a real always with a fraction or an exponent ("3.0", "1e+300"), so it
 * never reads as an integer. */
static const char *describe(const cradle_dev_request *request, const cradle_json_token *token,
                            char out[DESCRIBE_MAX]) {
    switch (token->type) {
    case CRADLE_JSON_NULL: return "null";
    case CRADLE_JSON_FALSE: return "false";
    case CRADLE_JSON_TRUE: return "true";
    case CRADLE_JSON_STRING: return "a string";
    case CRADLE_JSON_ARRAY: return "an array";
    case CRADLE_JSON_OBJECT: return "an object";
    default: break;
    }
    const uint8_t *s = bytes_of(request, token);
    int64_t v = 0;
    if (is_integer(s, token->length) && integer_value(s, token->length, &v)) {
        snprintf(out, DESCRIBE_MAX, "%" PRId64, v);
        return out;
    }
    double d = real_value(s, token->length);
    snprintf(out, DESCRIBE_MAX, "%.15g", d);
    if (strtod(out, NULL) != d) snprintf(out, DESCRIBE_MAX, "%.17g", d);
    if (!strpbrk(out, ".eEn")) strcat(out, ".0");
    return out;
}

/* ---- strings ---- */

/* A STRING token's characters, decoded one at a time by json_reader. */
static cradle_json_chars chars_of(const cradle_dev_request *request, const cradle_json_token *token) {
    cradle_json_doc doc = doc_of(request);
    return cradle_json_chars_of(&doc, (uint32_t)(token - request->tokens));
}

/* A STRING token decoded into out (capacity bytes, NUL-terminated), cut
 * before the first character that does not fit; returns the whole decoded
 * length, which may be more than fits. */
static size_t decode(const cradle_dev_request *request, const cradle_json_token *token, char *out,
                     size_t capacity) {
    const uint8_t *s = bytes_of(request, token);
    if (token->length < capacity && !memchr(s, '\\', token->length)) {
        memcpy(out, s, token->length);
        out[token->length] = '\0';
        return token->length;
    }
    cradle_json_chars c = chars_of(request, token);
    size_t whole = 0, used = 0;
    uint8_t unit[4];
    bool cut = false;
    for (uint32_t n = cradle_json_chars_next(&c, unit); n > 0; n = cradle_json_chars_next(&c, unit)) {
        if (!cut && used + n < capacity) {
            memcpy(out + used, unit, n);
            used += n;
        } else {
            cut = true;
        }
        whole += n;
    }
    out[used] = '\0';
    return whole;
}

/* Whether a STRING token is exactly the NUL-terminated word: its bytes when
 * it has no escape (the common case), else decoded. */
static bool string_is(const cradle_dev_request *request, uint32_t t, const char *word, size_t length) {
    const cradle_json_token *token = &tokens_of(request)[t];
    const uint8_t *s = bytes_of(request, token);
    if (!memchr(s, '\\', token->length)) return token->length == length && memcmp(s, word, length) == 0;
    cradle_json_doc doc = doc_of(request);
    return cradle_json_string_is(&doc, t, word);
}

/* The member `name` of the root object, or CRADLE_JSON_NONE. */
static uint32_t member(const cradle_dev_request *request, const char *name) {
    const cradle_json_token *tokens = tokens_of(request);
    if (request->count == 0 || tokens[0].type != CRADLE_JSON_OBJECT) return CRADLE_JSON_NONE;
    size_t length = strlen(name);
    for (uint32_t k = 1; k < tokens[0].next; k = tokens[k].next)
        if (string_is(request, k, name, length)) return k + 1u;
    return CRADLE_JSON_NONE;
}

/* ---- integers ---- */

typedef enum integer_verdict {
    INTEGER_OK,
    INTEGER_MISSING,
    INTEGER_TYPE,
    INTEGER_REAL,     /* a number written with a fraction or an exponent, whole-valued */
    INTEGER_FRACTION, /* a number with a fractional part */
    INTEGER_NEGATIVE,
    INTEGER_ZERO,
    INTEGER_BELOW,
    INTEGER_ABOVE,
    INTEGER_HUGE,
} integer_verdict;

/* Checks token t (CRADLE_JSON_NONE: absent) as an integer in [min, max]
 * with |bounds| < 2^53. Only a JSON integer (digits, no fraction, no
 * exponent) is one: 1.0 and 1e3 are reals, "whole" or not as the double
 * they read as (so 1.00000000000000000001 is a whole 1.0). "Huge" is any
 * magnitude from 2^53 on (where a double, which many JSON tools read numbers
 * into, stops being exact); a huge negative value counts as negative when
 * min >= 0. Integers beyond int64_t never get here: parse refused them. */
static integer_verdict classify_integer(const cradle_dev_request *request, uint32_t t, int64_t min, int64_t max,
                                        int64_t *out) {
    const int64_t exact = (int64_t)1 << 53;
    if (t == CRADLE_JSON_NONE) return INTEGER_MISSING;
    const cradle_json_token *token = &tokens_of(request)[t];
    if (token->type != CRADLE_JSON_NUMBER) return INTEGER_TYPE;
    const uint8_t *s = bytes_of(request, token);
    int64_t v = 0;
    if (!is_integer(s, token->length) || !integer_value(s, token->length, &v)) {
        double d = real_value(s, token->length);
        bool whole = d >= 9.2e18 || d <= -9.2e18 || d == (double)(int64_t)d; /* range first: the cast */
        return whole ? INTEGER_REAL : INTEGER_FRACTION;
    }
    if (v >= exact) return INTEGER_HUGE;
    if (v <= -exact) return min >= 0 ? INTEGER_NEGATIVE : INTEGER_HUGE;
    if (v < min) {
        if (min >= 1 && v == 0) return INTEGER_ZERO;
        if (min >= 0 && v < 0) return INTEGER_NEGATIVE;
        return INTEGER_BELOW;
    }
    if (v > max) return INTEGER_ABOVE;
    *out = v;
    return INTEGER_OK;
}

static const char *verdict_note(integer_verdict verdict) {
    switch (verdict) {
    case INTEGER_ABOVE: return " (above the maximum)";
    case INTEGER_BELOW: return " (below the minimum)";
    case INTEGER_HUGE: return " (absurdly large: beyond 2^53)";
    case INTEGER_REAL: return " (a fraction or an exponent: write the digits alone)";
    default: return "";
    }
}

/* ---- requests ---- */

static int refuse(cradle_dev_request *request, int code, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int refuse(cradle_dev_request *request, int code, const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(request->message, sizeof request->message, format, args);
    va_end(args);
    request->error = code;
    return code;
}

static int not_json(cradle_dev_request *request, size_t at, const char *what) {
    request->count = 0;
    return refuse(request, CRADLE_EDEV_NOT_JSON, "not valid JSON at byte %zu of %zu: %s", at, request->length, what);
}

/* The byte of the first \u0000 in a STRING token, or UINT32_MAX. */
static uint32_t escaped_nul(const cradle_dev_request *request, const cradle_json_token *token) {
    const uint8_t *s = bytes_of(request, token), *end = s + token->length;
    for (const uint8_t *b = memchr(s, '\\', token->length); b; b = memchr(b, '\\', (size_t)(end - b))) {
        if (b[1] == 'u' && memcmp(b + 2, "0000", 4) == 0) return token->start + (uint32_t)(b - s);
        b += b[1] == 'u' ? 6 : 2; /* escapes are whole: parsed */
        if (b >= end) break;
    }
    return UINT32_MAX;
}

/* Parses the line strictly (the header's list): json_reader's RFC 8259,
 * then, over every token, no \u0000 in a string or key, integers within
 * int64_t and reals within a double. */
static int load_json(cradle_dev_request *request) {
    cradle_json_doc doc;
    cradle_json_error error;
    cradle_json_token *tokens = tokens_of(request);
    if (!cradle_json_parse(&doc, request->line, request->length, tokens, CRADLE_DEV_TOKENS, &error)) {
        size_t blank = 0;
        const char *line = request->line;
        while (blank < request->length &&
               (line[blank] == ' ' || line[blank] == '\t' || line[blank] == '\r' || line[blank] == '\n'))
            blank++;
        if (blank == request->length) {
            return refuse(request, CRADLE_EDEV_NOT_JSON,
                          "empty line: expected a JSON object such as {\"cmd\":\"status\"}");
        }
        return not_json(request, error.offset, error.message);
    }
    request->count = doc.count;
    for (uint32_t t = 0; t < doc.count; t++) {
        const cradle_json_token *token = &tokens[t];
        if (token->type == CRADLE_JSON_STRING) {
            uint32_t at = escaped_nul(request, token);
            if (at != UINT32_MAX) return not_json(request, at, "\\u0000 in a string or key (a string holds no NUL)");
        } else if (token->type == CRADLE_JSON_NUMBER) {
            const uint8_t *s = bytes_of(request, token);
            int64_t v;
            if (is_integer(s, token->length)) {
                if (!integer_value(s, token->length, &v))
                    return not_json(request, token->start,
                                    "an integer beyond 64 bits (from -2^63 to 2^63 - 1 only)");
            } else if (isinf(real_value(s, token->length))) {
                return not_json(request, token->start, "a number beyond the range of a double");
            }
        }
    }
    return 0;
}

static int parse_count(cradle_dev_request *request, uint32_t item, uint64_t max_count) {
    int64_t count = 0;
    integer_verdict verdict = classify_integer(request, item, 1, (int64_t)max_count, &count);
    if (verdict == INTEGER_OK) {
        request->command = (cradle_dev_command){.kind = CRADLE_DEV_STEP, .count = (uint64_t)count};
        return 0;
    }
    if (verdict == INTEGER_MISSING) {
        return refuse(request, CRADLE_EDEV_COUNT_MISSING,
                      "step needs \"count\", an integer from 1 to %" PRIu64, max_count);
    }
    static const int codes[] = {
        [INTEGER_TYPE] = CRADLE_EDEV_COUNT_TYPE,   [INTEGER_REAL] = CRADLE_EDEV_COUNT_TYPE,
        [INTEGER_FRACTION] = CRADLE_EDEV_COUNT_FLOAT, [INTEGER_NEGATIVE] = CRADLE_EDEV_COUNT_NEG,
        [INTEGER_ZERO] = CRADLE_EDEV_COUNT_ZERO,   [INTEGER_ABOVE] = CRADLE_EDEV_COUNT_MAX,
        [INTEGER_HUGE] = CRADLE_EDEV_COUNT_HUGE,
    };
    char got[DESCRIBE_MAX];
    return refuse(request, codes[verdict], "\"count\" must be an integer from 1 to %" PRIu64 ", got %s%s",
                  max_count, describe(request, &tokens_of(request)[item], got), verdict_note(verdict));
}

/* "id": a string or an integer below 2^53 in magnitude, echoed exactly. */
static int read_id(cradle_dev_request *request, uint32_t item) {
    if (item == CRADLE_JSON_NONE) return 0;
    const cradle_json_token *id = &tokens_of(request)[item];
    const int64_t limit = (int64_t)1 << 53;
    int64_t v = 0;
    if (id->type == CRADLE_JSON_STRING) {
        request->id = id;
        return 0;
    }
    if (id->type == CRADLE_JSON_NUMBER && is_integer(bytes_of(request, id), id->length) &&
        integer_value(bytes_of(request, id), id->length, &v) && v < limit && v > -limit) {
        request->id = id;
        request->id_value = v;
        return 0;
    }
    char got[DESCRIBE_MAX];
    return refuse(request, CRADLE_EDEV_ARGUMENT, "\"id\" must be a string or an integer below 2^53, got %s",
                  describe(request, id, got));
}

int cradle_dev_parse(cradle_dev_request *request, const char *line, size_t length, uint64_t max_count) {
    assert(request != NULL && (line != NULL || length == 0));
    assert(max_count >= 1 && max_count <= CRADLE_DEV_COUNT_LIMIT);
    /* Field by field: the token bytes are not cleared (12 KiB a line). */
    request->line = line ? line : "";
    request->length = length;
    request->count = 0;
    request->id = NULL;
    request->id_value = 0;
    request->cmd = NULL;
    request->command = (cradle_dev_command){.kind = CRADLE_DEV_STEP, .count = 0};
    request->error = 0;
    request->message[0] = '\0';
    int rc = load_json(request);
    if (rc != 0) return rc;
    const cradle_json_token *tokens = tokens_of(request);
    char got[DESCRIBE_MAX];
    if (tokens[0].type != CRADLE_JSON_OBJECT)
        return refuse(request, CRADLE_EDEV_NOT_OBJECT, "request must be a JSON object, got %s",
                      describe(request, &tokens[0], got));
    /* One walk over the members for the three the protocol reads. */
    uint32_t id = CRADLE_JSON_NONE, cmd = CRADLE_JSON_NONE, count = CRADLE_JSON_NONE;
    for (uint32_t k = 1; k < tokens[0].next; k = tokens[k].next) {
        if (string_is(request, k, "cmd", 3))
            cmd = k + 1u;
        else if (string_is(request, k, "id", 2))
            id = k + 1u;
        else if (string_is(request, k, "count", 5))
            count = k + 1u;
    }
    rc = read_id(request, id);
    if (rc != 0) return rc;
    if (cmd == CRADLE_JSON_NONE) {
        return refuse(request, CRADLE_EDEV_NO_CMD,
                      "request has no \"cmd\" field (try {\"cmd\":\"status\"})");
    }
    if (tokens[cmd].type != CRADLE_JSON_STRING)
        return refuse(request, CRADLE_EDEV_CMD_TYPE, "\"cmd\" must be a string, got %s",
                      describe(request, &tokens[cmd], got));
    size_t name_length = decode(request, &tokens[cmd], request->cmd_text, sizeof request->cmd_text);
    request->cmd = request->cmd_text;
    if (strcmp(request->cmd, "step") == 0) return parse_count(request, count, max_count);
    if (strcmp(request->cmd, "status") == 0) {
        request->command.kind = CRADLE_DEV_STATUS;
        return 0;
    }
    if (strcmp(request->cmd, "quit") == 0) {
        request->command.kind = CRADLE_DEV_QUIT;
        return 0;
    }
    return refuse(request, CRADLE_EDEV_UNKNOWN, "unknown command \"%.*s%s\"",
                  (int)(name_length > 64 ? 64 : name_length), request->cmd, name_length > 64 ? "..." : "");
}

void cradle_dev_request_deinit(cradle_dev_request *request) {
    request->count = 0;
    request->id = NULL;
    request->cmd = NULL;
}

const cradle_dev_command *cradle_dev_common(const cradle_dev_request *request) {
    return (request->error == 0 && request->count > 0) ? &request->command : NULL;
}

int cradle_dev_arg_integer(cradle_dev_request *request, const char *name, bool required, int64_t min,
                           int64_t max, int64_t fallback, int64_t *out) {
    assert(request->count > 0 && name != NULL && out != NULL);
    assert(min >= -(int64_t)CRADLE_DEV_COUNT_LIMIT && max <= (int64_t)CRADLE_DEV_COUNT_LIMIT && min <= max);
    uint32_t item = member(request, name);
    if (item == CRADLE_JSON_NONE && !required) {
        *out = fallback;
        return 0;
    }
    integer_verdict verdict = classify_integer(request, item, min, max, out);
    if (verdict == INTEGER_OK) return 0;
    if (verdict == INTEGER_MISSING) {
        return refuse(request, CRADLE_EDEV_ARGUMENT, "%s needs \"%s\", an integer from %" PRId64 " to %" PRId64,
                      request->cmd ? request->cmd : "the command", name, min, max);
    }
    char got[DESCRIBE_MAX];
    return refuse(request, CRADLE_EDEV_ARGUMENT, "\"%s\" must be an integer from %" PRId64 " to %" PRId64 ", got %s%s",
                  name, min, max, describe(request, &tokens_of(request)[item], got), verdict_note(verdict));
}

int cradle_dev_arg_names(cradle_dev_request *request, const char *name, const char *const *names, size_t count,
                         uint64_t *mask) {
    assert(request->count > 0 && name != NULL && mask != NULL && count <= 64);
    const cradle_json_token *tokens = tokens_of(request);
    uint32_t item = member(request, name);
    *mask = 0;
    if (item == CRADLE_JSON_NONE) {
        *mask = count == 64 ? UINT64_MAX : (UINT64_C(1) << count) - 1;
        return 0;
    }
    char got[DESCRIBE_MAX];
    if (tokens[item].type != CRADLE_JSON_ARRAY) {
        return refuse(request, CRADLE_EDEV_ARGUMENT, "\"%s\" must be an array of names, got %s", name,
                      describe(request, &tokens[item], got));
    }
    for (uint32_t e = item + 1u; e < tokens[item].next; e = tokens[e].next) {
        if (tokens[e].type != CRADLE_JSON_STRING) {
            return refuse(request, CRADLE_EDEV_ARGUMENT, "\"%s\" must hold names (strings), got %s", name,
                          describe(request, &tokens[e], got));
        }
        size_t known = count;
        for (size_t i = 0; i < count && known == count; i++)
            if (string_is(request, e, names[i], strlen(names[i]))) known = i;
        if (known == count) {
            char text[65];
            (void)decode(request, &tokens[e], text, sizeof text);
            return refuse(request, CRADLE_EDEV_ARGUMENT, "\"%s\": unknown name \"%.64s\"", name, text);
        }
        *mask |= UINT64_C(1) << known;
    }
    return 0;
}

const cradle_dev_entry *cradle_dev_find(const cradle_dev_entry *table, size_t count, const char *name) {
    if (name == NULL) return NULL;
    for (size_t i = 0; i < count; i++) {
        if (strcmp(table[i].name, name) == 0) return &table[i];
    }
    return NULL;
}

/* ---- replies ---- */

/* A STRING token as a JSON string, the way cradle_writer_json_string
 * escapes its decoded bytes (so an id comes back as jansson echoed it). A
 * string without escapes is its own decoded bytes; one with escapes is
 * decoded a chunk of whole characters at a time and each chunk escaped by
 * the writer, without the chunk's quotes. */
static void write_string(cradle_writer *reply, const cradle_dev_request *request, const cradle_json_token *token) {
    const uint8_t *s = bytes_of(request, token);
    if (!memchr(s, '\\', token->length)) {
        cradle_writer_json_string(reply, s, token->length);
        return;
    }
    enum { CHUNK = 256 };
    char chunk[CHUNK], escaped[CHUNK * 6 + 2]; /* at most 6 bytes a byte (\u00XX), and the quotes */
    cradle_json_chars c = chars_of(request, token);
    uint8_t unit[4];
    size_t used = 0;
    cradle_writer_bytes(reply, "\"", 1);
    for (uint32_t n = cradle_json_chars_next(&c, unit);; n = cradle_json_chars_next(&c, unit)) {
        if (n == 0 || used + n > CHUNK) {
            cradle_writer w;
            cradle_writer_init(&w, escaped, sizeof escaped);
            cradle_writer_json_string(&w, chunk, used);
            assert(!w.overflow && w.length >= 2);
            cradle_writer_bytes(reply, escaped + 1, w.length - 2);
            used = 0;
        }
        if (n == 0) break;
        memcpy(chunk + used, unit, n);
        used += n;
    }
    cradle_writer_bytes(reply, "\"", 1);
}

static void write_id(cradle_writer *reply, const cradle_dev_request *request) {
    if (request == NULL || request->id == NULL) return;
    cradle_writer_bytes(reply, ",\"id\":", 6);
    if (request->id->type == CRADLE_JSON_STRING)
        write_string(reply, request, request->id);
    else
        cradle_writer_format(reply, "%" PRId64, request->id_value);
}

static void write_key(cradle_writer *reply, const char *key) {
    cradle_writer_bytes(reply, ",", 1);
    cradle_writer_json_string(reply, key, strlen(key));
    cradle_writer_bytes(reply, ":", 1);
}

void cradle_dev_reply_begin(cradle_writer *reply, const cradle_dev_request *request) {
    cradle_writer_bytes(reply, "{\"ok\":true", 10);
    write_id(reply, request);
}

void cradle_dev_field_u64(cradle_writer *reply, const char *key, uint64_t value) {
    write_key(reply, key);
    cradle_writer_format(reply, "%" PRIu64, value);
}

void cradle_dev_field_i64(cradle_writer *reply, const char *key, int64_t value) {
    write_key(reply, key);
    cradle_writer_format(reply, "%" PRId64, value);
}

void cradle_dev_field_bool(cradle_writer *reply, const char *key, bool value) {
    write_key(reply, key);
    cradle_writer_text(reply, value ? "true" : "false");
}

void cradle_dev_field_string(cradle_writer *reply, const char *key, const char *value) {
    write_key(reply, key);
    cradle_writer_json_string(reply, value, strlen(value));
}

void cradle_dev_field_raw(cradle_writer *reply, const char *key, const char *json) {
    write_key(reply, key);
    cradle_writer_text(reply, json);
}

void cradle_dev_reply_end(cradle_writer *reply) { cradle_writer_bytes(reply, "}\n", 2); }

void cradle_dev_reply_ok(cradle_writer *reply, const cradle_dev_request *request) {
    cradle_dev_reply_begin(reply, request);
    cradle_dev_reply_end(reply);
}

void cradle_dev_reply_error(cradle_writer *reply, const cradle_dev_request *request, int code,
                            const char *message) {
    assert(code < 0);
    if (message == NULL || message[0] == '\0') message = cradle_strerror(code);
    cradle_writer_bytes(reply, "{\"ok\":false", 11);
    write_id(reply, request);
    cradle_writer_bytes(reply, ",\"error\":", 9);
    cradle_writer_json_string(reply, cradle_error_name(code), strlen(cradle_error_name(code)));
    cradle_writer_bytes(reply, ",\"message\":", 11);
    cradle_writer_json_string(reply, message, strlen(message));
    cradle_dev_reply_end(reply);
}

void cradle_dev_reply_parse_error(cradle_writer *reply, const cradle_dev_request *request) {
    cradle_dev_reply_error(reply, request, request->error, request->message);
}
