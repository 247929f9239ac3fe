/*
 * bindings: the key and button config and the held-bits state (see
 * bindings.h).
 */
#include "bindings.h"

#include <SDL.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cradle/json.h"

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


/* Reads one section ("keys" or "buttons") into table; problems go to message. */
static uint32_t parse_section(json_t *section, const char *text, const char *name, bool keys,
                              cradle_binding *table, char *message, size_t message_size) {
    const char *from = strstr(text, keys ? "\"keys\"" : "\"buttons\"");
    if (!from) from = text;
    uint32_t count = 0;
    const char *key;
    const json_t *item;
    /* jansson keeps the file's order, so the messages come in it. */
    json_object_foreach(section, key, item) {
        unsigned line = line_of_key(text, from, key);
        int32_t code = keys ? (int32_t)SDL_GetKeyFromName(key)
                            : (int32_t)SDL_GameControllerGetButtonFromString(key);
        if (keys ? code == SDLK_UNKNOWN : code == SDL_CONTROLLER_BUTTON_INVALID) {
            say(message, message_size, "%s line %u: unknown %s name \"%s\" (ignored)", name, line,
                keys ? "key" : "gamepad button", key);
            continue;
        }
        if (!json_is_integer(item) || json_integer_value(item) < 0 || json_integer_value(item) > 31) {
            char got[CRADLE_JSON_DESCRIBE_MAX];
            cradle_json_describe(item, got);
            say(message, message_size, "%s line %u: \"%s\" must map to an input bit number 0..31, got %s%s (ignored)",
                name, line, key, got,
                json_is_real(item) ? " (a fraction or an exponent makes a JSON real: the bit needs an integer)" : "");
            continue;
        }
        if (count == CRADLE_BINDINGS_MAX) {
            say(message, message_size, "%s line %u: more than %u %s bindings (ignored)", name, line,
                CRADLE_BINDINGS_MAX, keys ? "key" : "button");
            continue;
        }
        table[count++] = (cradle_binding){.code = code, .bit = (uint8_t)json_integer_value(item)};
    }
    return count;
}

/* Strict RFC 8259 through jansson, as the dev protocol (shared/io/dev.c)
 * and cradle-server --config: no duplicate keys, no NUL (raw or \u0000),
 * valid UTF-8, no leading zeros, no trailing commas, nothing after the
 * object. Says where it failed. */
static json_t *load_json(const char *text, size_t length, const char *name, char *message, size_t message_size) {
    cradle_json_load_error error;
    json_t *root = cradle_json_load(text, length, 0, &error);
    if (root) return root;
    const char *hint = error.code == json_error_duplicate_key ? " (each name once in a section)"
                       : error.code == json_error_null_character || error.code == json_error_null_byte_in_key
                           ? " (a name holds no NUL)"
                           : error.hint;
    say(message, message_size, "%s: not valid JSON (line %d, column %d): %s%s", name, error.line, error.column,
        error.text, hint);
    return NULL;
}

/* cradle_bindings_parse over length bytes (a file may hold a NUL: refused). */
static bool parse_text(cradle_bindings *b, const char *text, size_t length, const char *name, char *message,
                       size_t message_size) {
    json_t *root = load_json(text, length, name, message, message_size);
    bool ok = false;
    if (!root) goto out;
    json_t *keys = json_object_get(root, "keys");
    json_t *buttons = json_object_get(root, "buttons");
    if (!json_is_object(root) || !json_is_object(keys)) {
        say(message, message_size, "%s: expected an object with a \"keys\" object", name);
        goto out;
    }
    if (buttons && !json_is_object(buttons)) {
        say(message, message_size, "%s: \"buttons\" must be an object", name);
        goto out;
    }
    memset(b, 0, sizeof *b);
    b->key_count = parse_section(keys, text, name, true, b->keys, message, message_size);
    if (buttons) b->button_count = parse_section(buttons, text, name, false, b->buttons, message, message_size);
    ok = true;
out:
    json_decref(root);
    if (!ok) cradle_bindings_defaults(b);
    return ok;
}

bool cradle_bindings_parse(cradle_bindings *b, const char *text, const char *name, char *message,
                           size_t message_size) {
    return parse_text(b, text, strlen(text), name, message, message_size);
}

void cradle_bindings_defaults(cradle_bindings *b) {
    char ignored[CRADLE_BINDINGS_MESSAGE_MAX] = "";
    memset(b, 0, sizeof *b);
    json_t *root = json_loads(cradle_bindings_default_text, JSON_REJECT_DUPLICATES, NULL);
    if (!root) return;
    b->key_count = parse_section(json_object_get(root, "keys"), cradle_bindings_default_text, "defaults", true,
                                 b->keys, ignored, sizeof ignored);
    b->button_count = parse_section(json_object_get(root, "buttons"), cradle_bindings_default_text, "defaults",
                                    false, b->buttons, ignored, sizeof ignored);
    json_decref(root);
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
            bool ok = parse_text(b, text, n, path, message, message_size);
            free(text);
            if (ok) return CRADLE_BINDINGS_LOADED;
            snprintf(problem, sizeof problem, "%s", message);
            message[0] = '\0';
        } else {
            free(text);
            snprintf(problem, sizeof problem, "%s: unreadable or larger than 1 MiB", path);
        }
    } else if (errno != ENOENT) {
        snprintf(problem, sizeof problem, "%s: %s", path, strerror(errno));
    } else {
        snprintf(problem, sizeof problem, "%s: %s", path, strerror(errno));
        goto write_new;
    }
    /* A file that is there but bad is the user's: it is left as it is. */
    cradle_bindings_defaults(b);
    say(message, message_size, "%s; using the default bindings (the file is left as it is: fix it, or remove it for a new one)",
        problem);
    return CRADLE_BINDINGS_DEFAULTS;

write_new:
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
