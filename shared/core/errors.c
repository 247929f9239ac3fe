#include "cradle/errors.h"

const char *cradle_strerror(int code) {
    switch (code) {
#define CRADLE__ERROR_MESSAGE(name, value, wire, message) \
    case (value): return (message);
        CRADLE_ERROR_TABLE(CRADLE__ERROR_MESSAGE)
#undef CRADLE__ERROR_MESSAGE
    default: return "unknown error";
    }
}

const char *cradle_error_name(int code) {
    switch (code) {
#define CRADLE__ERROR_WIRE(name, value, wire, message) \
    case (value): return (wire);
        CRADLE_ERROR_TABLE(CRADLE__ERROR_WIRE)
#undef CRADLE__ERROR_WIRE
    default: return "unknown";
    }
}
