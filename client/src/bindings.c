/*
 * bindings: the key and button config and the held-bits state (see
 * bindings.h).
 */
#include "bindings.h"

#include <SDL.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONFIG_FILE_MAX (1u << 20)

const char cradle_bindings_default_text[] =
    "{\n"
    "  \"about\": \"cradle-client bindings: key names (SDL_GetKeyFromName) and gamepad buttons "
    "(SDL_GameControllerGetButtonFromString) to the game's input bit numbers 0..31\",\n"
    "  \"keys\": {\n"
    "    \"Up\": 0, \"W\": 0,\n"
    "    \"Down\": 1, \"S\": 1,\n"
    "    \"Left\": 2, \"A\": 2,\n"
    "    \"Right\": 3, \"D\": 3,\n"
    "    \"Space\": 4,\n"
    "    \"R\": 5\n"
    "  },\n"
    "  \"buttons\": {\n"
    "    \"dpup\": 0, \"dpdown\": 1, \"dpleft\": 2, \"dpright\": 3,\n"
    "    \"a\": 4,\n"
    "    \"start\": 5\n"
    "  }\n"
    "}\n";

static void say(char *message, size_t size, const char *format, ...) __attribute__((format(printf, 3, 4)));
static void say(char *message, size_t size, const char *format, ...) {
    size_t used = strlen(message);
    if (used + 1 >= size) return;
    if (used) {
        message[used++] = '\n';
        message[used] = '\0';
    }
    va_list args;
    va_start(args, format);
    vsnprintf(message + used, size - used, format, args);
    va_end(args);
}

/* The 1-based line of the first `"name"` followed by ':' at or after from. */
static unsigned line_of_key(const char *text, const char *from, const char *name) {
    size_t n = strlen(name);
    for (const char *p = strchr(from, '"'); p; p = strchr(p + 1, '"')) {
        if (strncmp(p + 1, name, n) != 0 || p[1 + n] != '"') continue;
        const char *q = p + 2 + n;
        while (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n') q++;
        if (*q != ':') continue;
        unsigned line = 1;
        for (const char *c = text; c < p; c++) line += *c == '\n';
        return line;
    }
    return 0;
}

static unsigned line_at(const char *text, const char *at) {
    unsigned line = 1;
    for (const char *c = text; *c && c < at; c++) line += *c == '\n';
    return line;
}

/* Reads one section ("keys" or "buttons") into table; problems go to message. */
static uint32_t parse_section(const cJSON *section, const char *text, const char *name, bool keys,
                              cradle_binding *table, char *message, size_t message_size) {
    const char *from = strstr(text, keys ? "\"keys\"" : "\"buttons\"");
    if (!from) from = text;
    uint32_t count = 0;
    for (const cJSON *item = section->child; item; item = item->next) {
        const char *key = item->string ? item->string : "";
        unsigned line = line_of_key(text, from, key);
        int32_t code = keys ? (int32_t)SDL_GetKeyFromName(key)
                            : (int32_t)SDL_GameControllerGetButtonFromString(key);
        if (keys ? code == SDLK_UNKNOWN : code == SDL_CONTROLLER_BUTTON_INVALID) {
            say(message, message_size, "%s line %u: unknown %s name \"%s\" (ignored)", name, line,
                keys ? "key" : "gamepad button", key);
            continue;
        }
        if (!cJSON_IsNumber(item) || item->valuedouble < 0.0 || item->valuedouble > 31.0 ||
            item->valuedouble != (double)(int)item->valuedouble) {
            say(message, message_size, "%s line %u: \"%s\" must map to an input bit number 0..31 (ignored)",
                name, line, key);
            continue;
        }
        if (count == CRADLE_BINDINGS_MAX) {
            say(message, message_size, "%s line %u: more than %u %s bindings (ignored)", name, line,
                CRADLE_BINDINGS_MAX, keys ? "key" : "button");
            continue;
        }
        table[count++] = (cradle_binding){.code = code, .bit = (uint8_t)item->valueint};
    }
    return count;
}

bool cradle_bindings_parse(cradle_bindings *b, const char *text, const char *name, char *message,
                           size_t message_size) {
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    bool ok = false;
    if (!root) {
        say(message, message_size, "%s: not valid JSON (line %u)", name, line_at(text, end ? end : text));
        goto out;
    }
    const cJSON *keys = cJSON_GetObjectItemCaseSensitive(root, "keys");
    const cJSON *buttons = cJSON_GetObjectItemCaseSensitive(root, "buttons");
    if (!cJSON_IsObject(root) || !cJSON_IsObject(keys)) {
        say(message, message_size, "%s: expected an object with a \"keys\" object", name);
        goto out;
    }
    if (buttons && !cJSON_IsObject(buttons)) {
        say(message, message_size, "%s: \"buttons\" must be an object", name);
        goto out;
    }
    memset(b, 0, sizeof *b);
    b->key_count = parse_section(keys, text, name, true, b->keys, message, message_size);
    if (buttons) b->button_count = parse_section(buttons, text, name, false, b->buttons, message, message_size);
    ok = true;
out:
    cJSON_Delete(root);
    if (!ok) cradle_bindings_defaults(b);
    return ok;
}

void cradle_bindings_defaults(cradle_bindings *b) {
    char ignored[CRADLE_BINDINGS_MESSAGE_MAX] = "";
    memset(b, 0, sizeof *b);
    cJSON *root = cJSON_Parse(cradle_bindings_default_text);
    if (!root) return;
    b->key_count = parse_section(cJSON_GetObjectItemCaseSensitive(root, "keys"), cradle_bindings_default_text,
                                 "defaults", true, b->keys, ignored, sizeof ignored);
    b->button_count = parse_section(cJSON_GetObjectItemCaseSensitive(root, "buttons"),
                                    cradle_bindings_default_text, "defaults", false, b->buttons, ignored,
                                    sizeof ignored);
    cJSON_Delete(root);
}

bool cradle_bindings_default_path(char *out, size_t size) {
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    int n;
    if (xdg && xdg[0] == '/') n = snprintf(out, size, "%s/cradle/client.json", xdg);
    else if (home && home[0]) n = snprintf(out, size, "%s/.config/cradle/client.json", home);
    else return false;
    return n > 0 && (size_t)n < size;
}

/* Creates the parent directories of path (mode 0700 for new ones). */
static void make_parents(const char *path) {
    char buf[4096];
    if (strlen(path) >= sizeof buf) return;
    strcpy(buf, path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        (void)mkdir(buf, 0700);
        *p = '/';
    }
}

/* Writes the defaults to path through a temp file and rename, so a crash
 * never leaves a half-written config. */
static bool write_defaults(const char *path, char *why, size_t why_size) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
    make_parents(path);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        snprintf(why, why_size, "%s", strerror(errno));
        return false;
    }
    size_t n = strlen(cradle_bindings_default_text);
    bool ok = fwrite(cradle_bindings_default_text, 1, n, f) == n;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        snprintf(why, why_size, "%s", strerror(errno));
        (void)remove(tmp);
        return false;
    }
    return true;
}

cradle_bindings_outcome cradle_bindings_load(cradle_bindings *b, const char *path, char *message,
                                             size_t message_size) {
    message[0] = '\0';
    char problem[CRADLE_BINDINGS_MESSAGE_MAX] = "";
    FILE *f = fopen(path, "rb");
    if (f) {
        char *text = malloc(CONFIG_FILE_MAX + 1u);
        size_t n = text ? fread(text, 1, CONFIG_FILE_MAX, f) : 0;
        bool read_error = ferror(f) != 0;
        fclose(f);
        if (text && !read_error && n < CONFIG_FILE_MAX) {
            text[n] = '\0';
            bool ok = cradle_bindings_parse(b, text, path, message, message_size);
            free(text);
            if (ok) return CRADLE_BINDINGS_LOADED;
            snprintf(problem, sizeof problem, "%s", message);
            message[0] = '\0';
        } else {
            free(text);
            snprintf(problem, sizeof problem, "%s: unreadable or larger than 1 MiB", path);
        }
    } else {
        snprintf(problem, sizeof problem, "%s: %s", path, strerror(errno));
    }
    cradle_bindings_defaults(b);
    char why[256];
    if (write_defaults(path, why, sizeof why)) {
        say(message, message_size, "%s; wrote a new one with the default bindings", problem);
        return CRADLE_BINDINGS_REGENERATED;
    }
    say(message, message_size, "%s; using the default bindings (cannot write the file: %s)", problem, why);
    return CRADLE_BINDINGS_DEFAULTS;
}

void cradle_bindings_key(cradle_bindings *b, int32_t keycode, bool down, bool repeat) {
    if (repeat) return;
    for (uint32_t i = 0; i < b->key_count; i++)
        if (b->keys[i].code == keycode) b->keys[i].down = down;
}

void cradle_bindings_button(cradle_bindings *b, int32_t button, bool down) {
    for (uint32_t i = 0; i < b->button_count; i++)
        if (b->buttons[i].code == button) b->buttons[i].down = down;
}

void cradle_bindings_release_all(cradle_bindings *b) {
    for (uint32_t i = 0; i < b->key_count; i++) b->keys[i].down = false;
    for (uint32_t i = 0; i < b->button_count; i++) b->buttons[i].down = false;
}

uint32_t cradle_bindings_bits(const cradle_bindings *b) {
    uint32_t bits = 0;
    for (uint32_t i = 0; i < b->key_count; i++)
        if (b->keys[i].down) bits |= 1u << b->keys[i].bit;
    for (uint32_t i = 0; i < b->button_count; i++)
        if (b->buttons[i].down) bits |= 1u << b->buttons[i].bit;
    return bits;
}
