/* libFuzzer harness for the dev protocol parser and reply builders. Any
 * bytes as a request line must parse without a crash, and the parser
 * (json_reader and the protocol's own rules) must agree with jansson, the
 * protocol's parser before it, run as the protocol ran it (duplicate keys
 * refused, no NUL): a line one takes as JSON the other does, but for
 * json_reader's two limits (64 deep, 512 values) and a raw NUL byte, which
 * jansson took for the end of the line after a value; an accepted line's tokens
 * hold what jansson's tree holds (the shape, every key and string decoded,
 * every number an integer or a real alike, integers equal); cmd is the
 * string jansson read, and a real count is described as jansson's double
 * was. Every reply built for the line (ok or error, echoing its id and its
 * raw bytes as a string field) must be one line of valid UTF-8 JSON without
 * raw control characters, and echo the id jansson read. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/cradle.h"
#include "../support/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


/* Checks a reply line and returns it parsed (json_decref it). */
static json_t *check_reply(const cradle_writer *w) {
    if (w->overflow) abort();
    if (w->length < 2 || w->data[w->length - 1] != '\n') abort();
    for (size_t i = 0; i + 1 < w->length; i++) {
        if ((unsigned char)w->data[i] < 0x20) abort();
    }
    if (!valid_utf8((const unsigned char *)w->data, w->length)) abort();
    json_t *root = json_loadb(w->data, w->length, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, NULL);
    if (!json_is_object(root) || !json_is_boolean(json_object_get(root, "ok"))) abort();
    return root;
}

/* The reply echoes the id jansson read from the request (an integer id
 * below 2^53 is exact as the double INT_AS_REAL reads). */
static void check_id(const cradle_dev_request *request, json_t *reply, json_t *want_root) {
    json_t *got = json_object_get(reply, "id");
    if (request->id == NULL) {
        if (got) abort();
        return;
    }
    json_t *want = json_object_get(want_root, "id");
    if (!got || !want) abort();
    if (json_is_string(want)) {
        if (!json_is_string(got) || json_string_length(got) != json_string_length(want) ||
            memcmp(json_string_value(got), json_string_value(want), json_string_length(want)) != 0)
            abort();
    } else if (!json_is_integer(want) || !json_is_real(got) ||
               json_real_value(got) != (double)json_integer_value(want)) {
        abort();
    }
}

/* Token t and what follows it hold the value v holds. */
static bool same(const cradle_json_doc *doc, uint32_t t, json_t *v) {
    const cradle_json_token *token = &doc->tokens[t];
    switch (token->type) {
    case CRADLE_JSON_NULL: return json_is_null(v);
    case CRADLE_JSON_TRUE: return json_is_true(v);
    case CRADLE_JSON_FALSE: return json_is_false(v);
    case CRADLE_JSON_NUMBER: {
        const char *s = (const char *)doc->text + token->start;
        bool real = memchr(s, '.', token->length) || memchr(s, 'e', token->length) || memchr(s, 'E', token->length);
        if (real) return json_is_real(v);
        char copy[32];
        if (!json_is_integer(v) || token->length >= sizeof copy) return false;
        memcpy(copy, s, token->length);
        copy[token->length] = '\0';
        return strtoll(copy, NULL, 10) == json_integer_value(v);
    }
    case CRADLE_JSON_STRING: {
        /* Decoded, a string is never longer than as written. */
        char *out = malloc(token->length + 1u);
        cradle_json_error error;
        if (!out || !cradle_json_string(doc, t, "s", out, token->length + 1u, &error)) abort();
        bool equal = json_is_string(v) && json_string_length(v) == strlen(out) &&
                     memcmp(json_string_value(v), out, strlen(out)) == 0;
        free(out);
        return equal;
    }
    case CRADLE_JSON_ARRAY:
        if (!json_is_array(v) || json_array_size(v) != token->count) return false;
        for (uint32_t i = t + 1u, n = 0; i < token->next; i = doc->tokens[i].next, n++)
            if (!same(doc, i, json_array_get(v, n))) return false;
        return true;
    case CRADLE_JSON_OBJECT:
        if (!json_is_object(v) || json_object_size(v) != token->count) return false;
        for (uint32_t k = t + 1u; k < token->next; k = doc->tokens[k].next) {
            const cradle_json_token *key = &doc->tokens[k];
            char *name = malloc(key->length + 1u);
            cradle_json_error error;
            if (!name || !cradle_json_string(doc, k, "key", name, key->length + 1u, &error)) abort();
            json_t *member = json_object_getn(v, name, strlen(name));
            free(name);
            if (!member || !same(doc, k + 1u, member)) return false;
        }
        return true;
    default: return false;
    }
}

/* What the dev protocol says a real was ("got 3.0"), as jansson's
 * cradle_json_describe (json.h, which this file cannot include beside
 * json_reader.h) wrote it. */
static void describe_real(double d, char out[48]) {
    snprintf(out, 48, "%.15g", d);
    if (strtod(out, NULL) != d) snprintf(out, 48, "%.17g", d);
    if (!strpbrk(out, ".eEn")) strcat(out, ".0");
}

/* The parser and jansson agree on the line. A raw NUL byte is never JSON,
 * but jansson takes one after the value as the end of its input ("0\0"):
 * the parser refuses such a line, and jansson is not asked. */
static void agree(const cradle_dev_request *request, int rc, json_t *want, bool nul) {
    bool ours = rc != CRADLE_EDEV_NOT_JSON;
    if (nul) {
        if (ours) abort();
        return;
    }
    if (!want) {
        if (ours) abort();
        return;
    }
    if (!ours) {
        if (!strstr(request->message, "nesting deeper than 64") && !strstr(request->message, "more than 512 values"))
            abort();
        return;
    }
    cradle_json_doc doc;
    cradle_dev_request_doc(request, &doc);
    if (doc.count == 0 || !same(&doc, 0, want)) abort();
    if (!json_is_object(want) || rc == CRADLE_EDEV_NO_CMD || rc == CRADLE_EDEV_CMD_TYPE ||
        (rc == CRADLE_EDEV_ARGUMENT && request->cmd == NULL))
        return;
    json_t *cmd = json_object_get(want, "cmd");
    if (!request->cmd || !json_is_string(cmd)) abort();
    size_t n = strlen(request->cmd), whole = json_string_length(cmd);
    if (n > whole || (whole < CRADLE_DEV_CMD_BYTES && n != whole) || memcmp(request->cmd, json_string_value(cmd), n) != 0)
        abort();
    json_t *count = json_object_get(want, "count");
    if (strcmp(request->cmd, "step") == 0 && json_is_real(count)) {
        if (rc != CRADLE_EDEV_COUNT_TYPE && rc != CRADLE_EDEV_COUNT_FLOAT) abort();
        char got[64] = "got ";
        describe_real(json_real_value(count), got + 4);
        if (!strstr(request->message, got)) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint64_t max_count = 1 + (size ? (uint64_t)data[size - 1] * 997u : 0u);
    size_t capacity = size * 12 + 1024; /* the id and the raw bytes, each escaped up to 6x */
    char *buffer = malloc(capacity);
    if (!buffer) return 0;
    cradle_writer w;

    cradle_dev_request request;
    int rc = cradle_dev_parse(&request, (const char *)data, size, max_count);
    const cradle_dev_command *common = cradle_dev_common(&request);
    if ((rc == 0) != (common != NULL)) abort();
    json_t *want = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
    agree(&request, rc, want, memchr(data, 0, size) != NULL);
    if (common && common->kind == CRADLE_DEV_STEP && (common->count < 1 || common->count > max_count)) abort();
    if (rc == CRADLE_EDEV_UNKNOWN) {
        if (request.cmd == NULL || request.count == 0) abort();
        int64_t value = 0;
        if (cradle_dev_arg_integer(&request, "n", false, -5, 5, 0, &value) == 0 && (value < -5 || value > 5)) abort();
        static const char *const names[] = {"a", "b"};
        uint64_t mask = 0;
        if (cradle_dev_arg_names(&request, "e", names, 2, &mask) == 0 && mask > 3) abort();
    }

    cradle_writer_init(&w, buffer, capacity);
    if (common) {
        cradle_dev_reply_begin(&w, &request);
        cradle_dev_field_u64(&w, "count", common->count);
        cradle_dev_reply_end(&w);
    } else {
        cradle_dev_reply_parse_error(&w, &request);
    }
    json_t *reply = check_reply(&w);
    if (want && rc != CRADLE_EDEV_NOT_JSON) check_id(&request, reply, want);
    json_decref(reply);

    /* The raw bytes as a string field, with the request's id. */
    cradle_writer_init(&w, buffer, capacity);
    cradle_dev_reply_begin(&w, &request);
    cradle_writer_text(&w, ",\"raw\":");
    cradle_writer_json_string(&w, data, size);
    cradle_dev_reply_end(&w);
    json_decref(check_reply(&w));

    json_decref(want);
    cradle_dev_request_deinit(&request);
    free(buffer);
    return 0;
}
