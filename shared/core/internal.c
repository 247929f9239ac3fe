#include "cradle/internal.h"

#include <stdarg.h>
#include <stdio.h>

int cradle__say(int code, char *message, size_t message_size, const char *format, ...) {
    if (message && message_size > 0) {
        va_list args;
        va_start(args, format);
        (void)vsnprintf(message, message_size, format, args);
        va_end(args);
    }
    return code;
}
