#include "cradle/help.h"

#include <string.h>

static const cradle_option *row_at(const cradle_option *rows, size_t stride, size_t i) {
    return (const cradle_option *)(const void *)((const char *)rows + i * stride);
}

static int is_letter(int id) { return (id >= 'a' && id <= 'z') || (id >= 'A' && id <= 'Z'); }

void cradle_options_getopt(const cradle_option *rows, size_t count, size_t stride, struct option *longs,
                           char *shorts) {
    size_t n = 0, k = 0;
    for (size_t i = 0; i < count; i++) {
        const cradle_option *r = row_at(rows, stride, i);
        if (!r->name) continue;
        longs[n++] = (struct option){r->name, r->arg ? required_argument : no_argument, NULL, r->id};
        if (shorts && is_letter(r->id)) {
            shorts[k++] = (char)r->id;
            if (r->arg) shorts[k++] = ':';
        }
    }
    longs[n] = (struct option){NULL, 0, NULL, 0};
    if (shorts) shorts[k] = '\0';
}

void cradle_options_help(FILE *to, const cradle_option *rows, size_t count, size_t stride, int column, int shorts) {
    for (size_t i = 0; i < count; i++) {
        const cradle_option *r = row_at(rows, stride, i);
        if (!r->help) continue;
        if (!r->name) {
            fprintf(to, "%s\n", r->help);
            continue;
        }
        int used = shorts && is_letter(r->id) ? fprintf(to, "  -%c, --%s", r->id, r->name) : fprintf(to, "  --%s", r->name);
        if (r->arg) used += fprintf(to, " %s", r->arg);
        cradle_help_print(to, used, column, r->help);
    }
}

void cradle_help_print(FILE *to, int used, int column, const char *text) {
    for (const char *line = text; line;) {
        const char *end = strchr(line, '\n');
        int length = end ? (int)(end - line) : (int)strlen(line);
        if (used >= column - 1) {
            fputc('\n', to);
            used = 0;
        }
        fprintf(to, "%*s%.*s\n", column - used, "", length, line);
        used = 0;
        line = end ? end + 1 : NULL;
    }
}
