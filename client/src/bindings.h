#ifndef CRADLE_CLIENT_BINDINGS_H
#define CRADLE_CLIENT_BINDINGS_H
/*
 * bindings: keys and gamepad buttons mapped to the game's input bits, from a
 * JSON config file (jansson), and the held-bits state the window feeds.
 *
 * The file (default $XDG_CONFIG_HOME/cradle/client.json, else
 * ~/.config/cradle/client.json):
 *   {
 *     "keys":    { "Up": 0, "W": 0, ..., "Space": 4, "R": 5 },
 *     "buttons": { "dpup": 0, ..., "a": 4, "start": 5 }
 *   }
 * Key names are SDL_GetKeyFromName names ("Up", "W", "Space", "Left Shift"),
 * button names SDL_GameControllerGetButtonFromString names ("a", "dpup",
 * "start"); values are input bit numbers 0..31 (bit i of the player's input
 * bytes, cradle_bits_put at bit i). Several keys may share a bit. The
 * defaults suit vanguard: arrows/WASD bits 0..3 (up, down, left, right),
 * Space bit 4 (fire), R bit 5 (restart); dpad, A and Start alike.
 *
 * The file is strict RFC 8259, read by jansson as the dev protocol and
 * cradle-server --config are: a name given twice in a section (named in the
 * message), a NUL in a string (raw or \u0000), invalid UTF-8, a leading
 * zero (04), a trailing comma or anything after the object makes it not
 * JSON. A bit number is a JSON integer, digits alone: 3.0 and 3e0 are JSON
 * reals, not bit numbers.
 *
 * Loading: a missing file, or one that is not JSON (the message gives the
 * line, the column and jansson's reason) or whose top level is not an
 * object with a "keys" object, is written anew with the defaults (a temp
 * file in the same directory, then rename) and one line says what was wrong.
 * An unknown key or button name, or a value that is not a bit number, is
 * reported with its line in the file and skipped; the rest of the file holds.
 *
 * Input state: key repeat is ignored; cradle_bindings_release_all (on focus
 * loss) releases every held key and button.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CRADLE_BINDINGS_MAX 64u
#define CRADLE_BINDINGS_MESSAGE_MAX 1024u

typedef struct cradle_binding {
    int32_t code; /* SDL_Keycode or SDL_GameControllerButton */
    uint8_t bit;  /* 0..31 */
    bool down;
} cradle_binding;

typedef struct cradle_bindings {
    cradle_binding keys[CRADLE_BINDINGS_MAX];
    uint32_t key_count;
    cradle_binding buttons[CRADLE_BINDINGS_MAX];
    uint32_t button_count;
} cradle_bindings;

typedef enum cradle_bindings_outcome {
    CRADLE_BINDINGS_LOADED = 0,      /* the file was used (message may list skipped names) */
    CRADLE_BINDINGS_REGENERATED = 1, /* the file was missing; the defaults were written to it */
    CRADLE_BINDINGS_DEFAULTS = 2,    /* the file is invalid or unreadable (it is left as it is), or was
                                        missing and could not be written: the defaults are in use */
} cradle_bindings_outcome;

/* The default config file's text (what a regenerated file holds). */
extern const char cradle_bindings_default_text[];

void cradle_bindings_defaults(cradle_bindings *b);

/* The default path into out; false when neither XDG_CONFIG_HOME nor HOME is set. */
bool cradle_bindings_default_path(char *out, size_t size);

/* Loads path into *b (see above). message gets one line per problem, "" if
 * none. */
cradle_bindings_outcome cradle_bindings_load(cradle_bindings *b, const char *path, char *message,
                                             size_t message_size);

/* Parses text, a NUL-terminated string (load() passes the file's length, so
 * a NUL byte in a file is refused, not read as its end). Returns true when
 * the text is a usable config (problems with single entries go to message,
 * with line numbers); false when it is invalid as a whole (message says why,
 * *b holds the defaults). */
bool cradle_bindings_parse(cradle_bindings *b, const char *text, const char *name, char *message,
                           size_t message_size);

/* Key and button events; repeat presses are ignored. */
void cradle_bindings_key(cradle_bindings *b, int32_t keycode, bool down, bool repeat);
void cradle_bindings_button(cradle_bindings *b, int32_t button, bool down);
void cradle_bindings_release_all(cradle_bindings *b);

/* The input bits held now. */
uint32_t cradle_bindings_bits(const cradle_bindings *b);

#endif
