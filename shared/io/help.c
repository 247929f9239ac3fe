#include "cradle/help.h"

#include <string.h>

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
