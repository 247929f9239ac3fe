/*
 * fuzz_contract: a game library's contract (bytes from a library are outside
 * bytes) through cradle_contract_check, and cradle_contract_strnlen against a
 * reference.
 *
 * The input (short inputs are zero-padded to the header):
 *     0  40  the contract's ten u32 fields, LE, in game_abi.h order
 *    40  16  the limits: abi_major, abi_minor, max_state_align, state_capacity
 *    56   1  bits 0..5: init, step, output, render, on_reload, react set;
 *            bit 6: the contract pointer is NULL; bit 7: message NULL when
 *            the message size is 0
 *    57   1  bit 0: name NULL; bit 1: build id NULL; bit 2: bot set (minor 1);
 *            bit 3: sounds (minor 2) follow the build id; bit 4: add 256 to
 *            their count; bit 5: the sounds array is NULL
 *    58   2  message size (u16 LE, mod 512)
 *    60   1  name byte count; 61: build id byte count; 62: strnlen's max
 *    63      name bytes, build id bytes, [with bit 3: a count byte, then per
 *            sound a length byte and its name bytes, a missing one NULL],
 *            then the strnlen test bytes
 * Strings are copied into heap buffers of exactly the size a correct check
 * may read (up to the first NUL, or max + 1 bytes when there is none), so an
 * overread is an ASan finding; so is the contract itself, sized as the
 * library its abi_minor names would have built it (a minor-0 object ends
 * before the bot field: game_abi.h's minor rule). The check's result must
 * equal an independent evaluation of the rules documented in contract.h, in
 * their order, and cradle_contract_bot() must give the bot only from minor 1
 * on; the message must be NUL-terminated within its size, printable, "" on
 * success and non-empty on failure. The entry points abort if called.
 *
 * Seeds: CRADLE_FUZZ_WRITE_SEEDS=DIR fuzz_contract writes the seed corpus
 * (tests/fuzz/corpus/contract) into DIR and exits.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/contract.h"
#include "cradle/input.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HEADER 63u

/* Entry points the check must look at, never call. */
static int never_init(void *s, uint64_t seed, uint32_t n) {
    (void)s, (void)seed, (void)n;
    abort();
}
static void never_step(void *s, const cradle_game_step *st, const cradle_event_sink *e) {
    (void)s, (void)st, (void)e;
    abort();
}
static size_t never_output(const void *s, uint64_t step, uint8_t *out, size_t cap) {
    (void)s, (void)step, (void)out, (void)cap;
    abort();
}
static void never_render(const void *p, const void *s, float a, const cradle_draw *d) {
    (void)p, (void)s, (void)a, (void)d;
    abort();
}
static void never_reload(void *s) {
    (void)s;
    abort();
}
static void never_react(const void *s, const cradle_event *e, uint32_t n, const cradle_fx *fx) {
    (void)s, (void)e, (void)n, (void)fx;
    abort();
}
static void never_bot(const void *s, uint64_t step, uint32_t slot, uint64_t random, uint8_t *in,
                      uint32_t n) {
    (void)s, (void)step, (void)slot, (void)random, (void)in, (void)n;
    abort();
}

/* The bytes a library built against abi_minor has of the contract: minor 0
 * ends where minor 1's bot field begins, minor 1 where minor 2's sounds do,
 * minor 2 where minor 3's layout does (fuzz_layout.c fuzzes the layout; here
 * it is none). */
static size_t ref_contract_size(uint32_t abi_minor) {
    if (abi_minor >= 3u) return sizeof(cradle_game_contract);
    if (abi_minor >= 2u) return offsetof(cradle_game_contract, layout);
    return abi_minor >= 1u ? offsetof(cradle_game_contract, sounds) : offsetof(cradle_game_contract, bot);
}

/* A heap copy of the n bytes at src sized to what a reader bounded by max
 * may touch: through the first NUL within max + 1 bytes; else max + 1 bytes
 * without a NUL when n reaches that; else the n bytes plus a NUL. */
static char *string_buffer(const uint8_t *src, size_t n, size_t max, size_t *size) {
    size_t scan = n < max + 1 ? n : max + 1;
    const uint8_t *nul = memchr(src, 0, scan);
    size_t keep = nul ? (size_t)(nul - src) + 1 : scan;
    bool terminate = !nul && n < max + 1;
    *size = keep + (terminate ? 1u : 0u);
    char *s = malloc(*size);
    if (!s) abort();
    memcpy(s, src, keep);
    if (terminate) s[keep] = '\0';
    return s;
}

/* The reference strnlen over a buffer built by string_buffer. */
static size_t ref_strnlen(const char *s, size_t size, size_t max) {
    for (size_t i = 0; i <= max && i < size; i++)
        if (s[i] == '\0') return i;
    return max + 1;
}

static bool ref_string_ok(const char *s, size_t size, size_t max) {
    if (!s) return false;
    size_t n = ref_strnlen(s, size, max);
    if (n == 0 || n > max) return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20u || (unsigned char)s[i] > 0x7eu) return false;
    return true;
}

/* The sounds of the input (bit 3 of byte 57): names[count] with each name a
 * string_buffer (NULL past the input's end), and their buffer sizes. */
typedef struct sounds {
    uint32_t count;
    char **names;
    size_t *sizes;
    size_t used; /* input bytes taken */
} sounds;

static sounds read_sounds(const uint8_t *bytes, size_t n, uint8_t flags) {
    sounds out = {0};
    if (!(flags & 0x08u) || n == 0) return out;
    out.count = bytes[0] + ((flags & 0x10u) ? 256u : 0u);
    out.used = 1;
    out.names = calloc(out.count ? out.count : 1, sizeof *out.names);
    out.sizes = calloc(out.count ? out.count : 1, sizeof *out.sizes);
    if (!out.names || !out.sizes) abort();
    for (uint32_t i = 0; i < out.count && out.used < n; i++) {
        size_t length = bytes[out.used++];
        if (length > n - out.used) length = n - out.used;
        out.names[i] = string_buffer(bytes + out.used, length, CRADLE_GAME_SOUND_NAME_MAX, &out.sizes[i]);
        out.used += length;
    }
    return out;
}

static void free_sounds(sounds *s) {
    for (uint32_t i = 0; s->names && i < s->count; i++) free(s->names[i]);
    free(s->names);
    free(s->sizes);
}

/* One sound name's rules (contract.h): a string, relative, ".wav", no "..". */
static bool ref_sound_ok(const char *name, size_t size) {
    if (!ref_string_ok(name, size, CRADLE_GAME_SOUND_NAME_MAX)) return false;
    size_t n = ref_strnlen(name, size, CRADLE_GAME_SOUND_NAME_MAX);
    if (name[0] == '/' || n < 5 || memcmp(name + n - 4, ".wav", 4) != 0) return false;
    for (size_t i = 0; i + 1 < n; i++) {
        bool starts = i == 0 || name[i - 1] == '/';
        if (starts && name[i] == '.' && name[i + 1] == '.' && (i + 2 == n || name[i + 2] == '/')) return false;
    }
    return true;
}

static int ref_sounds(const cradle_game_contract *c, const sounds *s) {
    if (c->abi_minor < 2u || c->sound_count == 0) return CRADLE_OK;
    if (c->sound_count > CRADLE_GAME_MAX_SOUNDS || !c->sounds) return CRADLE_ERELOAD_CONTRACT;
    for (uint32_t i = 0; i < c->sound_count; i++)
        if (!ref_sound_ok(s->names[i], s->sizes[i])) return CRADLE_ERELOAD_CONTRACT;
    return CRADLE_OK;
}

/* contract.h's rules, in its order: the code the first broken one returns. */
static int ref_check(const cradle_game_contract *c, const cradle_contract_limits *l,
                     size_t name_size, size_t build_size, const sounds *s) {
    if (!c) return CRADLE_ERELOAD_CONTRACT;
    if (c->abi_major != l->abi_major) return CRADLE_ERELOAD_MAJOR;
    if (c->abi_minor > l->abi_minor) return CRADLE_ERELOAD_MINOR;
    uint64_t max_align = l->max_state_align ? l->max_state_align : CRADLE_CONTRACT_DEFAULT_MAX_ALIGN;
    bool pow2 = false;
    for (uint64_t p = 1; p <= UINT32_MAX; p <<= 1)
        if (c->state_align == p) pow2 = true;
    if (!pow2 || c->state_align > max_align) return CRADLE_ERELOAD_ALIGN;
    if (c->state_size < 1) return CRADLE_ERELOAD_CONTRACT;
    if (l->state_capacity != 0 && c->state_size > l->state_capacity) return CRADLE_ERELOAD_SIZE;
    if (c->input_bytes < 1 || c->input_bytes > CRADLE_GAME_MAX_INPUT_BYTES) return CRADLE_ERELOAD_CONTRACT;
    if (c->max_players < 1 || c->max_players > CRADLE_GAME_MAX_PLAYERS) return CRADLE_ERELOAD_CONTRACT;
    if (c->steps_per_second < 1 || c->source_frames_per_second < 1) return CRADLE_ERELOAD_CONTRACT;
    if (c->steps_per_second % c->source_frames_per_second != 0) return CRADLE_ERELOAD_CONTRACT;
    if (!ref_string_ok(c->name, name_size, CRADLE_GAME_NAME_MAX)) return CRADLE_ERELOAD_CONTRACT;
    if (!ref_string_ok(c->build_id, build_size, CRADLE_GAME_BUILD_ID_MAX)) return CRADLE_ERELOAD_CONTRACT;
    if (!c->init || !c->step) return CRADLE_ERELOAD_CONTRACT;
    return ref_sounds(c, s); /* other optional entries (bot, minor 1) need no check */
}

static void fuzz_strnlen(const uint8_t *bytes, size_t n, size_t max) {
    size_t size = 0;
    char *s = string_buffer(bytes, n, max, &size);
    size_t expect = ref_strnlen(s, size, max);
    if (cradle_contract_strnlen(s, max) != expect) abort();
    /* With a NUL in the buffer, any larger max gives the same length and
     * still reads nothing past the NUL. */
    if (memchr(s, 0, size) && cradle_contract_strnlen(s, max + 1000u) != expect) abort();
    free(s);
    if (cradle_contract_strnlen(NULL, max) != 0) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t h[HEADER] = {0};
    memcpy(h, data, size < HEADER ? size : HEADER);
    const uint8_t *rest = size > HEADER ? data + HEADER : data + size;
    size_t rest_size = size > HEADER ? size - HEADER : 0;

    uint32_t f[14];
    for (size_t i = 0; i < 14; i++) f[i] = cradle_cursor_load_u32(h + 4 * i);
    uint8_t fn = h[56], strings = h[57];
    size_t message_size = cradle_cursor_load_u16(h + 58) % 512u;
    size_t name_n = h[60] < rest_size ? h[60] : rest_size;
    size_t build_n = h[61] < rest_size - name_n ? h[61] : rest_size - name_n;
    size_t strnlen_max = h[62];

    size_t name_size = 0, build_size = 0;
    char *name = (strings & 1u) ? NULL : string_buffer(rest, name_n, CRADLE_GAME_NAME_MAX, &name_size);
    char *build = (strings & 2u) ? NULL
                                 : string_buffer(rest + name_n, build_n, CRADLE_GAME_BUILD_ID_MAX,
                                                 &build_size);
    size_t strings_end = name_n + build_n;
    sounds snd = read_sounds(rest + strings_end, rest_size - strings_end, strings);
    size_t tail = strings_end + snd.used;
    cradle_game_contract c = {
        .abi_major = f[0],
        .abi_minor = f[1],
        .state_size = f[2],
        .state_align = f[3],
        .input_bytes = f[4],
        .max_players = f[5],
        .steps_per_second = f[6],
        .source_frames_per_second = f[7],
        .view_width = f[8],
        .view_height = f[9],
        .name = name,
        .build_id = build,
        .init = (fn & 0x01u) ? never_init : NULL,
        .step = (fn & 0x02u) ? never_step : NULL,
        .output = (fn & 0x04u) ? never_output : NULL,
        .render = (fn & 0x08u) ? never_render : NULL,
        .on_reload = (fn & 0x10u) ? never_reload : NULL,
        .react = (fn & 0x20u) ? never_react : NULL,
        .bot = (strings & 4u) ? never_bot : NULL,
        .sounds = (strings & 0x20u) ? NULL : (const char *const *)snd.names,
        .sound_count = snd.count,
    };
    cradle_contract_limits limits = {
        .abi_major = f[10], .abi_minor = f[11], .max_state_align = f[12], .state_capacity = f[13],
    };
    size_t object_size = ref_contract_size(c.abi_minor);
    cradle_game_contract *object = malloc(object_size);
    if (!object) abort();
    memcpy(object, &c, object_size);
    const cradle_game_contract *cp = (fn & 0x40u) ? NULL : object;

    char *message = NULL;
    if (message_size > 0 || !(fn & 0x80u)) {
        message = malloc(message_size ? message_size : 1);
        if (!message) abort();
        memset(message, 'x', message_size ? message_size : 1);
    }
    int rc = cradle_contract_check(cp, &limits, message, message_size);
    int expect = ref_check(cp, &limits, name_size, build_size, &snd);
    if (rc != expect) abort();
    if (memcmp(object, &c, object_size) != 0) abort();
    if (cp && cradle_contract_bot(cp) != (c.abi_minor >= 1u ? c.bot : NULL)) abort();
    if (cp && rc == CRADLE_OK) {
        uint32_t count = 99;
        const char *const *names = cradle_contract_sounds(cp, &count);
        bool has = c.abi_minor >= 2u && c.sound_count > 0;
        if (names != (has ? c.sounds : NULL) || count != (has ? c.sound_count : 0u)) abort();
    }
    if (message_size > 0) {
        const char *nul = memchr(message, 0, message_size);
        if (!nul) abort();
        size_t len = (size_t)(nul - message);
        if (rc == CRADLE_OK && len != 0) abort();
        if (rc != CRADLE_OK && message_size > 1 && len == 0) abort();
        for (size_t i = 0; i < len; i++)
            if ((unsigned char)message[i] < 0x20u || (unsigned char)message[i] > 0x7eu) abort();
    }
    free(message);
    free(object);
    free(name);
    free(build);
    free_sounds(&snd);

    fuzz_strnlen(rest + tail, rest_size - tail, strnlen_max);
    return 0;
}

/* ---- seeds ---------------------------------------------------------------- */

static void write_seed(const char *dir, int index, const uint8_t *bytes, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/seed-%02d", dir, index);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bytes, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "fuzz_contract: cannot write %s\n", path);
        exit(1);
    }
}

/* A seed: a valid contract for the host limits (capacity 4096) with field
 * `field` (an index into the header's u32s; < 0: none) set to value. */
static size_t make_seed(uint8_t *out, int field, uint32_t value, const char *name, const char *build,
                        size_t name_n, size_t build_n, uint8_t fn, uint16_t message_size) {
    uint32_t f[14] = {CRADLE_ABI_MAJOR, CRADLE_ABI_MINOR, 2048, 16, 4, 8, 60, 20, 320, 240,
                      CRADLE_ABI_MAJOR, CRADLE_ABI_MINOR, 0, 4096};
    if (field >= 0) f[field] = value;
    memset(out, 0, HEADER);
    for (size_t i = 0; i < 14; i++) cradle_cursor_store_u32(out + 4 * i, f[i]);
    out[56] = fn;
    cradle_cursor_store_u16(out + 58, message_size);
    out[60] = (uint8_t)name_n;
    out[61] = (uint8_t)build_n;
    out[62] = 31;
    memcpy(out + HEADER, name, name_n);
    memcpy(out + HEADER + name_n, build, build_n);
    memcpy(out + HEADER + name_n + build_n, "strnlen-tail", 12);
    return HEADER + name_n + build_n + 12;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    const char *dir = getenv("CRADLE_FUZZ_WRITE_SEEDS");
    if (!dir) return 0;
    uint8_t b[512];
    char long_name[80];
    memset(long_name, 'n', sizeof long_name);
    const struct {
        int field;
        uint32_t value;
        const char *name, *build;
        size_t name_n, build_n;
        uint8_t fn;
        uint16_t message_size;
    } seeds[] = {
        {-1, 0, "vanguard", "0123456789abcdef", 9, 17, 0x3f, 256},    /* accepted, all entry points */
        {-1, 0, "counter", "b1", 8, 3, 0x03, 256},                    /* accepted, init + step only */
        {-1, 0, "g", "b", 1, 1, 0x03, 8},                             /* accepted, short message */
        {0, 2, "game", "b", 5, 2, 0x03, 256},                         /* abi major */
        {1, CRADLE_ABI_MINOR + 1u, "game", "b", 5, 2, 0x03, 256},     /* abi minor */
        {3, 24, "game", "b", 5, 2, 0x03, 256},                        /* alignment */
        {3, 128, "game", "b", 5, 2, 0x03, 256},                       /* alignment above 64 */
        {2, 0, "game", "b", 5, 2, 0x03, 256},                         /* state size 0 */
        {2, 8192, "game", "b", 5, 2, 0x03, 16},                       /* over capacity */
        {4, 33, "game", "b", 5, 2, 0x03, 256},                        /* input bytes */
        {5, 65, "game", "b", 5, 2, 0x03, 256},                        /* players */
        {7, 7, "game", "b", 5, 2, 0x03, 256},                         /* rates */
        {-1, 0, long_name, "b", 32, 2, 0x03, 256},                    /* no NUL within 32 */
        {-1, 0, "ga\x01me", "b", 6, 2, 0x03, 256},                    /* non-printable name */
        {-1, 0, "", "b", 1, 2, 0x03, 256},                            /* empty name */
        {-1, 0, "game", long_name, 5, 64, 0x03, 256},                 /* build id no NUL */
        {-1, 0, "game", "b", 5, 2, 0x02, 256},                        /* init NULL */
        {-1, 0, "game", "b", 5, 2, 0x01, 256},                        /* step NULL */
        {-1, 0, "game", "b", 5, 2, 0xc3, 0},                          /* NULL contract, NULL message */
        {-1, 0, "game", "b", 5, 2, 0x03, 1},                          /* 1-byte message */
    };
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        size_t n = make_seed(b, seeds[i].field, seeds[i].value, seeds[i].name, seeds[i].build,
                             seeds[i].name_n, seeds[i].build_n, seeds[i].fn, seeds[i].message_size);
        write_seed(dir, (int)i, b, n);
    }
    /* The bot entry set on a minor-0 contract (never read) and a minor-1 one. */
    for (uint32_t minor = 0; minor <= 1u; minor++) {
        size_t n = make_seed(b, 1, minor, "game", "b", 5, 2, 0x03, 256);
        b[57] = 4u;
        write_seed(dir, (int)(sizeof seeds / sizeof seeds[0] + minor), b, n);
    }
    exit(0);
}
