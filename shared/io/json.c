#include "cradle/json.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *cradle_json_load(const char *text, size_t length, size_t flags, cradle_json_load_error *error) {
    json_error_t e;
    json_t *root = json_loadb(text, length, JSON_REJECT_DUPLICATES | flags, &e);
    if (root) return root;
    size_t at = e.position > 0 ? (size_t)e.position : 0;
    if (at > length) at = length;
    *error = (cradle_json_load_error){.line = e.line, .column = e.column, .position = at, .code = json_error_code(&e),
                                 .hint = ""};
    snprintf(error->text, sizeof error->text, "%s", e.text);
    /* jansson stops just after the 0 of "07": say why. */
    bool leading_zero = at > 0 && at < length && text[at - 1] == '0' && text[at] >= '0' && text[at] <= '9' &&
                        (at == 1 || text[at - 2] < '0' || text[at - 2] > '9');
    if (leading_zero) error->hint = " (a JSON number has no leading zero: write 4, not 04)";
    else if (error->code == json_error_duplicate_key) error->hint = " (each key once)";
    else if (error->code == json_error_null_character || error->code == json_error_null_byte_in_key)
        error->hint = " (a string holds no NUL)";
    else if (error->code == json_error_invalid_utf8) error->hint = " (the file must be UTF-8)";
    return NULL;
}

void cradle_json_describe(const json_t *item, char out[CRADLE_JSON_DESCRIBE_MAX]) {
    const size_t n = CRADLE_JSON_DESCRIBE_MAX;
    switch (json_typeof(item)) {
    case JSON_INTEGER: snprintf(out, n, "%" JSON_INTEGER_FORMAT, json_integer_value(item)); break;
    case JSON_REAL: {
        double d = json_real_value(item);
        snprintf(out, n, "%.15g", d);
        if (strtod(out, NULL) != d) snprintf(out, n, "%.17g", d);
        if (!strpbrk(out, ".eEn")) strcat(out, ".0");
        break;
    }
    case JSON_STRING: snprintf(out, n, "a string"); break;
    case JSON_TRUE: snprintf(out, n, "true"); break;
    case JSON_FALSE: snprintf(out, n, "false"); break;
    case JSON_NULL: snprintf(out, n, "null"); break;
    case JSON_ARRAY: snprintf(out, n, "an array"); break;
    default: snprintf(out, n, "an object"); break;
    }
}
