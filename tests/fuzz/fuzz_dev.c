/* libFuzzer harness for the dev protocol parser and reply builders: any
 * bytes as a request line must parse without a crash, and every reply built
 * for it (ok or error, echoing its id and its raw bytes as a string field)
 * must be one line of valid UTF-8 JSON without raw control characters. */
#include <cjson/cJSON.h>
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
    cJSON *root = cJSON_ParseWithLength(w->data, w->length);
    if (!cJSON_IsObject(root) || !cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(root, "ok"))) abort();
    cJSON_Delete(root);
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
