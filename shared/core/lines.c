#include "cradle/lines.h"

cradle_line_status cradle_lines_next(cradle_lines *l, char *out, size_t max, uint8_t *bad) {
    l->line++;
    if (l->at == l->size) return CRADLE_LINE_END;
    size_t n = 0;
    while (l->at < l->size && l->bytes[l->at] != '\n') {
        if (n == max) return CRADLE_LINE_LONG;
        uint8_t c = l->bytes[l->at++];
        if (c < 0x20 || c > 0x7e) {
            *bad = c;
            return CRADLE_LINE_BYTE;
        }
        out[n++] = (char)c;
    }
    if (l->at == l->size) return CRADLE_LINE_UNTERMINATED;
    l->at++;
    out[n] = '\0';
    return CRADLE_LINE_OK;
}
