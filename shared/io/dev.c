#include "cradle/dev.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- numbers and value descriptions ---- */

/* The shortest of %.15g / %.17g that reads back as d; d finite. */
static void format_number(double d, char out[40]) {
    snprintf(out, 40, "%.15g", d);
    if (strtod(out, NULL) != d) snprintf(out, 40, "%.17g", d);
}

/* "a string", "true", "1.5" ...: what a message says it got. */
static void describe(const cJSON *item, char out[40]) {
    if (cJSON_IsNumber(item)) {
        if (isfinite(item->valuedouble)) format_number(item->valuedouble, out);
        else snprintf(out, 40, "%s", item->valuedouble > 0 ? "a number too large for a double" : "a number too small for a double");
    } else if (cJSON_IsString(item)) {
        snprintf(out, 40, "a string");
    } else if (cJSON_IsTrue(item)) {
        snprintf(out, 40, "true");
    } else if (cJSON_IsFalse(item)) {
        snprintf(out, 40, "false");
    } else if (cJSON_IsNull(item)) {
        snprintf(out, 40, "null");
    } else if (cJSON_IsArray(item)) {
        snprintf(out, 40, "an array");
    } else {
        snprintf(out, 40, "an object");
    }
}

typedef enum integer_verdict {
    INTEGER_OK,
    INTEGER_MISSING,
    INTEGER_TYPE,
    INTEGER_FRACTION,
    INTEGER_NEGATIVE,
    INTEGER_ZERO,
    INTEGER_BELOW,
    INTEGER_ABOVE,
    INTEGER_HUGE,
} integer_verdict;

/* Checks a whole number in [min, max] with |bounds| < 2^53. "Huge" is any
 * value whose magnitude reaches 2^53 (where doubles stop being exact) or is
 * infinite; a huge negative value counts as negative when min >= 0. */
static integer_verdict classify_integer(const cJSON *item, int64_t min, int64_t max, int64_t *out) {
    const double exact = 9007199254740992.0; /* 2^53 */
    if (item == NULL) return INTEGER_MISSING;
    if (!cJSON_IsNumber(item)) return INTEGER_TYPE;
    double d = item->valuedouble;
    if (d >= exact) return INTEGER_HUGE;
    if (d <= -exact) return min >= 0 ? INTEGER_NEGATIVE : INTEGER_HUGE;
    int64_t v = (int64_t)d; /* |d| < 2^53: exact when d is whole */
    if ((double)v != d) return INTEGER_FRACTION;
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
    default: return "";
    }
}

/* ---- requests ---- */

static bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

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
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(request->root, "count");
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
        [INTEGER_TYPE] = CRADLE_EDEV_COUNT_TYPE,   [INTEGER_FRACTION] = CRADLE_EDEV_COUNT_FLOAT,
        [INTEGER_NEGATIVE] = CRADLE_EDEV_COUNT_NEG, [INTEGER_ZERO] = CRADLE_EDEV_COUNT_ZERO,
        [INTEGER_ABOVE] = CRADLE_EDEV_COUNT_MAX,   [INTEGER_HUGE] = CRADLE_EDEV_COUNT_HUGE,
    };
    char got[40];
    describe(item, got);
    return refuse(request, codes[verdict], "\"count\" must be an integer from 1 to %" PRIu64 ", got %s%s",
                  max_count, got, verdict_note(verdict));
}

int cradle_dev_parse(cradle_dev_request *request, const char *line, size_t length, uint64_t max_count) {
    assert(request != NULL && (line != NULL || length == 0));
    assert(max_count >= 1 && max_count <= CRADLE_DEV_COUNT_LIMIT);
    *request = (cradle_dev_request){.root = NULL};

    size_t first = 0;
    while (first < length && is_json_space(line[first])) first++;
    if (first == length) {
        return refuse(request, CRADLE_EDEV_NOT_JSON,
                      "empty line: expected a JSON object such as {\"cmd\":\"status\"}");
    }
    const char *end = NULL;
    request->root = cJSON_ParseWithLengthOpts(line, length, &end, false);
    if (request->root == NULL) {
        size_t at = (end != NULL && end >= line && end <= line + length) ? (size_t)(end - line) : 0;
        return refuse(request, CRADLE_EDEV_NOT_JSON, "not valid JSON (error near byte %zu of %zu)", at,
                      length);
    }
    size_t after = (size_t)(end - line);
    while (after < length && is_json_space(line[after])) after++;
    if (after < length) {
        return refuse(request, CRADLE_EDEV_NOT_JSON,
                      "not valid JSON: unexpected bytes after the value at byte %zu", after);
    }
    char got[40];
    if (!cJSON_IsObject(request->root)) {
        describe(request->root, got);
        return refuse(request, CRADLE_EDEV_NOT_OBJECT, "request must be a JSON object, got %s", got);
    }
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(request->root, "id");
    if (id != NULL) {
        if (cJSON_IsString(id) || (cJSON_IsNumber(id) && isfinite(id->valuedouble))) {
            request->id = id;
        } else {
            describe(id, got);
            return refuse(request, CRADLE_EDEV_ARGUMENT, "\"id\" must be a string or a number, got %s", got);
        }
    }
    const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(request->root, "cmd");
    if (cmd == NULL) {
        return refuse(request, CRADLE_EDEV_NO_CMD,
                      "request has no \"cmd\" field (try {\"cmd\":\"status\"})");
    }
    if (!cJSON_IsString(cmd) || cmd->valuestring == NULL) {
        describe(cmd, got);
        return refuse(request, CRADLE_EDEV_CMD_TYPE, "\"cmd\" must be a string, got %s", got);
    }
    request->cmd = cmd->valuestring;
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
    cJSON_Delete(request->root);
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
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(request->root, name);
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
    char got[40];
    describe(item, got);
    return refuse(request, CRADLE_EDEV_ARGUMENT, "\"%s\" must be an integer from %" PRId64 " to %" PRId64 ", got %s%s",
                  name, min, max, got, verdict_note(verdict));
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
    const cJSON *id = request->id;
    cradle_writer_bytes(reply, ",\"id\":", 6);
    if (cJSON_IsString(id)) {
        cradle_writer_json_string(reply, id->valuestring, strlen(id->valuestring));
    } else {
        char text[40];
        format_number(id->valuedouble, text);
        cradle_writer_text(reply, text);
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
