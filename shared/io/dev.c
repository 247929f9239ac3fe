#include "cradle/dev.h"
#include "cradle/json.h"

#include <assert.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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

/* Checks an integer in [min, max] with |bounds| < 2^53. Only a JSON integer
 * (digits, no fraction, no exponent) is one: 1.0 and 1e3 are reals. "Huge"
 * is any magnitude from 2^53 on (where a double, which many JSON tools read
 * numbers into, stops being exact); a huge negative value counts as
 * negative when min >= 0. Integers beyond 2^63 do not parse at all. */
static integer_verdict classify_integer(const json_t *item, int64_t min, int64_t max, int64_t *out) {
    const json_int_t exact = (json_int_t)1 << 53;
    if (item == NULL) return INTEGER_MISSING;
    if (json_is_real(item)) {
        double d = json_real_value(item);
        bool whole = d >= 9.2e18 || d <= -9.2e18 || d == (double)(int64_t)d; /* range first: the cast */
        return whole ? INTEGER_REAL : INTEGER_FRACTION;
    }
    if (!json_is_integer(item)) return INTEGER_TYPE;
    json_int_t v = json_integer_value(item);
    if (v >= exact) return INTEGER_HUGE;
    if (v <= -exact) return min >= 0 ? INTEGER_NEGATIVE : INTEGER_HUGE;
    if (v < min) {
        if (min >= 1 && v == 0) return INTEGER_ZERO;
        if (min >= 0 && v < 0) return INTEGER_NEGATIVE;
        return INTEGER_BELOW;
    }
    if (v > max) return INTEGER_ABOVE;
    *out = (int64_t)v;
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

static int parse_count(cradle_dev_request *request, uint64_t max_count) {
    const json_t *item = json_object_get(request->root, "count");
    int64_t count = 0;
    integer_verdict verdict = classify_integer(item, 1, (int64_t)max_count, &count);
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
    char got[CRADLE_JSON_DESCRIBE_MAX];
    cradle_json_describe(item, got);
    return refuse(request, codes[verdict], "\"count\" must be an integer from 1 to %" PRIu64 ", got %s%s",
                  max_count, got, verdict_note(verdict));
}

/* Strict RFC 8259 through jansson: exactly one value and only JSON
 * whitespace around it, no duplicate keys, no NUL (raw or \u0000) in any
 * string or key, valid UTF-8, no lone surrogates, numbers without leading
 * zeros or bare dots, nesting at most 2048 deep. */
static int load_json(cradle_dev_request *request, const char *line, size_t length) {
    cradle_json_error error;
    request->root = cradle_json_load(line, length, JSON_DECODE_ANY, &error);
    if (request->root != NULL) return 0;
    size_t at = error.position;
    size_t blank = 0;
    while (blank < length && (line[blank] == ' ' || line[blank] == '\t' || line[blank] == '\r' || line[blank] == '\n'))
        blank++;
    if (blank == length) {
        return refuse(request, CRADLE_EDEV_NOT_JSON, "empty line: expected a JSON object such as {\"cmd\":\"status\"}");
    }
    return refuse(request, CRADLE_EDEV_NOT_JSON, "not valid JSON at byte %zu of %zu: %s", at, length, error.text);
}

/* "id": a string or an integer below 2^53 in magnitude, echoed exactly. */
static int read_id(cradle_dev_request *request) {
    const json_t *id = json_object_get(request->root, "id");
    if (id == NULL) return 0;
    json_int_t limit = (json_int_t)1 << 53;
    if (json_is_string(id) || (json_is_integer(id) && json_integer_value(id) < limit &&
                               json_integer_value(id) > -limit)) {
        request->id = id;
        return 0;
    }
    char got[CRADLE_JSON_DESCRIBE_MAX];
    cradle_json_describe(id, got);
    return refuse(request, CRADLE_EDEV_ARGUMENT, "\"id\" must be a string or an integer below 2^53, got %s", got);
}

int cradle_dev_parse(cradle_dev_request *request, const char *line, size_t length, uint64_t max_count) {
    assert(request != NULL && (line != NULL || length == 0));
    assert(max_count >= 1 && max_count <= CRADLE_DEV_COUNT_LIMIT);
    *request = (cradle_dev_request){.root = NULL};
    int rc = load_json(request, line ? line : "", length);
    if (rc != 0) return rc;
    char got[CRADLE_JSON_DESCRIBE_MAX];
    if (!json_is_object(request->root)) {
        cradle_json_describe(request->root, got);
        return refuse(request, CRADLE_EDEV_NOT_OBJECT, "request must be a JSON object, got %s", got);
    }
    rc = read_id(request);
    if (rc != 0) return rc;
    const json_t *cmd = json_object_get(request->root, "cmd");
    if (cmd == NULL) {
        return refuse(request, CRADLE_EDEV_NO_CMD,
                      "request has no \"cmd\" field (try {\"cmd\":\"status\"})");
    }
    if (!json_is_string(cmd)) {
        cradle_json_describe(cmd, got);
        return refuse(request, CRADLE_EDEV_CMD_TYPE, "\"cmd\" must be a string, got %s", got);
    }
    request->cmd = json_string_value(cmd);
    if (strcmp(request->cmd, "step") == 0) return parse_count(request, max_count);
    if (strcmp(request->cmd, "status") == 0) {
        request->command.kind = CRADLE_DEV_STATUS;
        return 0;
    }
    if (strcmp(request->cmd, "quit") == 0) {
        request->command.kind = CRADLE_DEV_QUIT;
        return 0;
    }
    size_t name_length = strlen(request->cmd);
    return refuse(request, CRADLE_EDEV_UNKNOWN, "unknown command \"%.*s%s\"",
                  (int)(name_length > 64 ? 64 : name_length), request->cmd, name_length > 64 ? "..." : "");
}

void cradle_dev_request_deinit(cradle_dev_request *request) {
    json_decref(request->root);
    request->root = NULL;
    request->id = NULL;
    request->cmd = NULL;
}

const cradle_dev_command *cradle_dev_common(const cradle_dev_request *request) {
    return (request->error == 0 && request->root != NULL) ? &request->command : NULL;
}

int cradle_dev_arg_integer(cradle_dev_request *request, const char *name, bool required, int64_t min,
                           int64_t max, int64_t fallback, int64_t *out) {
    assert(request->root != NULL && name != NULL && out != NULL);
    assert(min >= -(int64_t)CRADLE_DEV_COUNT_LIMIT && max <= (int64_t)CRADLE_DEV_COUNT_LIMIT && min <= max);
    const json_t *item = json_object_get(request->root, name);
    if (item == NULL && !required) {
        *out = fallback;
        return 0;
    }
    integer_verdict verdict = classify_integer(item, min, max, out);
    if (verdict == INTEGER_OK) return 0;
    if (verdict == INTEGER_MISSING) {
        return refuse(request, CRADLE_EDEV_ARGUMENT, "%s needs \"%s\", an integer from %" PRId64 " to %" PRId64,
                      request->cmd ? request->cmd : "the command", name, min, max);
    }
    char got[CRADLE_JSON_DESCRIBE_MAX];
    cradle_json_describe(item, got);
    return refuse(request, CRADLE_EDEV_ARGUMENT, "\"%s\" must be an integer from %" PRId64 " to %" PRId64 ", got %s%s",
                  name, min, max, got, verdict_note(verdict));
}

int cradle_dev_arg_names(cradle_dev_request *request, const char *name, const char *const *names, size_t count,
                         uint64_t *mask) {
    assert(request->root != NULL && name != NULL && mask != NULL && count <= 64);
    const json_t *item = json_object_get(request->root, name);
    *mask = 0;
    if (item == NULL) {
        *mask = count == 64 ? UINT64_MAX : (UINT64_C(1) << count) - 1;
        return 0;
    }
    char got[CRADLE_JSON_DESCRIBE_MAX];
    if (!json_is_array(item)) {
        cradle_json_describe(item, got);
        return refuse(request, CRADLE_EDEV_ARGUMENT, "\"%s\" must be an array of names, got %s", name, got);
    }
    size_t index;
    const json_t *value;
    json_array_foreach(item, index, value) {
        const char *text = json_string_value(value);
        size_t known = count;
        for (size_t i = 0; text && i < count; i++)
            if (strcmp(names[i], text) == 0) known = i;
        if (known == count) {
            if (text) {
                return refuse(request, CRADLE_EDEV_ARGUMENT, "\"%s\": unknown name \"%.64s\"", name, text);
            }
            cradle_json_describe(value, got);
            return refuse(request, CRADLE_EDEV_ARGUMENT, "\"%s\" must hold names (strings), got %s", name, got);
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

static void write_id(cradle_writer *reply, const cradle_dev_request *request) {
    if (request == NULL || request->id == NULL) return;
    const json_t *id = request->id;
    cradle_writer_bytes(reply, ",\"id\":", 6);
    if (json_is_string(id)) {
        cradle_writer_json_string(reply, json_string_value(id), json_string_length(id));
    } else {
        cradle_writer_format(reply, "%" JSON_INTEGER_FORMAT, json_integer_value(id));
    }
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
