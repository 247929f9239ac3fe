/* libFuzzer harness for the dev protocol parser and reply builders: any
 * bytes as a request line must parse without a crash; a line the parser
 * accepts as an object must re-serialise to an equivalent object (nothing
 * cut at a NUL, no key lost to a duplicate) and hold no NUL in any string or
 * key; and every reply built for it (ok or error, echoing its id and its raw
 * bytes as a string field) must be one line of valid UTF-8 JSON without raw
 * control characters. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/cradle.h"
#include "../support/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


static void check_reply(const cradle_writer *w) {
    if (w->overflow) abort();
    if (w->length < 2 || w->data[w->length - 1] != '\n') abort();
    for (size_t i = 0; i + 1 < w->length; i++) {
        if ((unsigned char)w->data[i] < 0x20) abort();
    }
    if (!valid_utf8((const unsigned char *)w->data, w->length)) abort();
    json_t *root = json_loadb(w->data, w->length, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, NULL);
    if (!json_is_object(root) || !json_is_boolean(json_object_get(root, "ok"))) abort();
    json_decref(root);
}

/* No string or key anywhere in value holds a NUL. */
static void no_nul(json_t *value) {
    const char *key;
    size_t key_length;
    json_t *item;
    size_t index;
    switch (json_typeof(value)) {
    case JSON_STRING:
        if (strlen(json_string_value(value)) != json_string_length(value)) abort();
        break;
    case JSON_OBJECT:
        json_object_keylen_foreach(value, key, key_length, item) {
            if (strlen(key) != key_length) abort();
            no_nul(item);
        }
        break;
    case JSON_ARRAY:
        json_array_foreach(value, index, item) no_nul(item);
        break;
    default: break;
    }
}

/* What the parser accepted re-serialises to an equivalent value. */
static void round_trips(json_t *root) {
    char *text = json_dumps(root, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text) abort();
    json_t *again = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
    if (!again || !json_equal(root, again)) abort();
    json_decref(again);
    free(text);
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
    if (request.root) {
        no_nul(request.root);
        round_trips(request.root);
    }
    if (common && common->kind == CRADLE_DEV_STEP && (common->count < 1 || common->count > max_count)) abort();
    if (rc == CRADLE_EDEV_UNKNOWN) {
        if (request.cmd == NULL || request.root == NULL) abort();
        int64_t value = 0;
        if (cradle_dev_arg_integer(&request, "n", false, -5, 5, 0, &value) == 0 && (value < -5 || value > 5)) abort();
    }

    cradle_writer_init(&w, buffer, capacity);
    if (common) {
        cradle_dev_reply_begin(&w, &request);
        cradle_dev_field_u64(&w, "count", common->count);
        cradle_dev_reply_end(&w);
    } else {
        cradle_dev_reply_parse_error(&w, &request);
    }
    check_reply(&w);

    /* The raw bytes as a string field, with the request's id. */
    cradle_writer_init(&w, buffer, capacity);
    cradle_dev_reply_begin(&w, &request);
    cradle_writer_text(&w, ",\"raw\":");
    cradle_writer_json_string(&w, data, size);
    cradle_dev_reply_end(&w);
    check_reply(&w);

    cradle_dev_request_deinit(&request);
    free(buffer);
    return 0;
}
