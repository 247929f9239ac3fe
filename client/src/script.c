/*
 * script: input scripts (format in script.h).
 */
#include "script.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/errors.h"
#include "cradle/input.h"

int cradle_script_parse(cradle_script *script, const char *text, const char *name, char *message,
                        size_t message_size) {
    memset(script, 0, sizeof *script);
    size_t capacity = 0;
    unsigned line = 0;
    const char *p = text;
    while (*p) {
        line++;
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char buf[256];
        if (len >= sizeof buf) {
            snprintf(message, message_size, "%s line %u: line too long", name, line);
            goto out_error;
        }
        memcpy(buf, p, len);
        buf[len] = '\0';
        p += len + (end ? 1 : 0);
        char *s = buf;
        while (*s == ' ' || *s == '\t' || *s == '\r') s++;
        if (*s == '\0' || *s == '#') continue;
        char *after = NULL;
        errno = 0;
        if (*s < '0' || *s > '9') goto out_bad;
        unsigned long long step = strtoull(s, &after, 10);
        if (errno || (*after != ' ' && *after != '\t')) goto out_bad;
        s = after;
        while (*s == ' ' || *s == '\t') s++;
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F'))) goto out_bad;
        unsigned long long bits = strtoull(s, &after, 16);
        if (errno) goto out_bad;
        while (*after == ' ' || *after == '\t' || *after == '\r') after++;
        if (*after != '\0' && *after != '#') goto out_bad;
        if (script->count > 0 && step <= script->changes[script->count - 1].step) {
            snprintf(message, message_size, "%s line %u: step %llu does not follow step %" PRIu64, name, line,
                     step, script->changes[script->count - 1].step);
            goto out_error;
        }
        if (script->count == capacity) {
            capacity = capacity ? capacity * 2 : 64;
            cradle_input_script_change *bigger = realloc(script->changes, capacity * sizeof *bigger);
            if (!bigger) {
                snprintf(message, message_size, "%s: out of memory", name);
                goto out_error;
            }
            script->changes = bigger;
        }
        script->changes[script->count++] = (cradle_input_script_change){.step = step, .bits = bits};
        continue;
    out_bad:
        snprintf(message, message_size, "%s line %u: expected \"<step> <hex bits>\"", name, line);
        goto out_error;
    }
    return 0;
out_error:
    cradle_script_free(script);
    return CRADLE_EINVAL;
}

int cradle_script_load(cradle_script *script, const char *path, char *message, size_t message_size) {
    memset(script, 0, sizeof *script);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(message, message_size, "cannot open script %s: %s", path, strerror(errno));
        return CRADLE_EIO;
    }
    char *text = malloc(1u << 20);
    size_t n = text ? fread(text, 1, (1u << 20) - 1, f) : 0;
    bool too_big = text && n == (1u << 20) - 1 && fgetc(f) != EOF;
    fclose(f);
    if (!text || too_big) {
        free(text);
        snprintf(message, message_size, "script %s is larger than 1 MiB", path);
        return CRADLE_EINVAL;
    }
    text[n] = '\0';
    int rc = cradle_script_parse(script, text, path, message, message_size);
    free(text);
    return rc;
}

uint64_t cradle_script_bits(const cradle_script *script, uint64_t step) {
    uint64_t bits = 0;
    if (cradle_input_script_at(script->changes, script->count, 0, step, &bits) != 0) return 0;
    return bits;
}

void cradle_script_free(cradle_script *script) {
    free(script->changes);
    script->changes = NULL;
    script->count = 0;
}

void cradle_pack_bits(uint8_t *out, uint32_t input_bytes, uint64_t bits) {
    for (uint32_t i = 0; i < input_bytes * 8u && i < 64u; i++)
        if ((bits >> i) & 1u) (void)cradle_bits_put(out, input_bytes, i, 1, 1);
}
