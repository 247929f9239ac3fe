/*
 * broadcast: the broadcast's documents (broadcast.h): their URLs, the sync
 * document (written here, read with core's strict json_reader), the
 * browser viewer's manifest (written here; the page reads it), keyframes
 * (zstd, BLAKE2b-128) and the check of a fragment (the log reader over the
 * fragment's blocks).
 */
#include "cradle/broadcast.h"

#include <assert.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cradle/cursor.h"
#include "cradle/data_files.h"
#include "cradle/hash.h"
#include "cradle/json_reader.h"
#include "cradle/writer.h"
#include "log_internal.h"

static const uint8_t keyframe_magic[8] = {0x89, 'C', 'R', 'D', 'K', 'E', 'Y', 0x0A};

enum {
    K_VERSION = 8,
    K_HEADER_BYTES = 12,
    K_SESSION = 16,
    K_STEP = 32,
    K_HASH = 40,
    K_STATE_SIZE = 48,
    K_COMPRESSED = 52,
    K_SEQUENCE = 56,
    K_RESERVED1 = 60,
    K_FIRST_STEP = 64,
    K_BUILD = 72,
    K_RESERVED2 = 136,
    K_CHECKSUM = 176,
    K_CHECKSUM_BYTES = 16,
    K_SIGNATURE = 192,
    SYNC_TOKENS = 160, /* the most a valid document has: 145 (every list full) */
};

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int refuse(char *out, size_t size, const char *what, const char *format, ...) {
    if (out && size) {
        int n = snprintf(out, size, "%s: ", what);
        if (n >= 0 && (size_t)n < size) {
            va_list args;
            va_start(args, format);
            (void)vsnprintf(out + n, size - (size_t)n, format, args);
            va_end(args);
        }
    }
    return CRADLE_EBROADCAST;
}

static void hex_of(char *out, const uint8_t *bytes, size_t n) {
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15u];
    }
    out[2 * n] = '\0';
}

static bool printable_id(const char *s, size_t max) {
    size_t n = strlen(s);
    if (n == 0 || n > max) return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < 0x20 || s[i] > 0x7e) return false;
    return true;
}

void cradle_broadcast_session_of(const uint8_t header[CRADLE_LOG_HEADER_BYTES],
                                 uint8_t session[CRADLE_BROADCAST_SESSION_BYTES]) {
    memcpy(session, header + CRADLE_LOG_HEADER_BYTES - CRADLE_BROADCAST_SESSION_BYTES, CRADLE_BROADCAST_SESSION_BYTES);
}

int cradle_broadcast_url(char *out, size_t size, const char *base, cradle_broadcast_doc doc, uint64_t number,
                         const uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES]) {
    int n = -1;
    switch (doc) {
    case CRADLE_BROADCAST_START: n = snprintf(out, size, "%sstart", base); break;
    case CRADLE_BROADCAST_SYNC: n = snprintf(out, size, "%ssync", base); break;
    case CRADLE_BROADCAST_FRAGMENT: n = snprintf(out, size, "%sfrag/%" PRIu64, base, number); break;
    case CRADLE_BROADCAST_KEYFRAME: n = snprintf(out, size, "%skey/%" PRIu64, base, number); break;
    case CRADLE_BROADCAST_DATA:
    case CRADLE_BROADCAST_WEB: {
        assert(hash);
        _Static_assert(CRADLE_LOG_FILE_HASH_BYTES == CRADLE_BROADCAST_WEB_HASH_BYTES, "one hash size for both");
        char hex[2 * CRADLE_LOG_FILE_HASH_BYTES + 1];
        hex_of(hex, hash, CRADLE_LOG_FILE_HASH_BYTES);
        n = snprintf(out, size, "%s%s/%s", base, doc == CRADLE_BROADCAST_DATA ? "data" : "web", hex);
        break;
    }
    }
    return n >= 0 && (size_t)n < size ? 0 : CRADLE_ERANGE;
}

/* ---- the sync document -------------------------------------------------- */

/* Whether web entry i names a build an earlier entry named. */
static bool web_repeats(const cradle_broadcast_sync *s, uint32_t i) {
    for (uint32_t j = 0; j < i; j++)
        if (strcmp(s->web[j].build, s->web[i].build) == 0) return true;
    return false;
}

size_t cradle_broadcast_sync_encode(const cradle_broadcast_sync *s, char *out, size_t size) {
    assert(s->keyframe_count <= CRADLE_BROADCAST_KEYFRAMES_MAX && s->gap_count <= CRADLE_BROADCAST_GAPS_MAX);
    assert(printable_id(s->game, CRADLE_GAME_NAME_MAX) && printable_id(s->build, CRADLE_GAME_BUILD_ID_MAX));
    assert(s->web_count <= CRADLE_BROADCAST_WEB_MAX);
    for (uint32_t i = 0; i < s->web_count; i++)
        assert(printable_id(s->web[i].build, CRADLE_GAME_BUILD_ID_MAX) && !web_repeats(s, i));
    char session[2 * CRADLE_BROADCAST_SESSION_BYTES + 1];
    hex_of(session, s->session, sizeof s->session);
    cradle_writer w;
    cradle_writer_init(&w, out, size);
    cradle_writer_format(&w, "{\"cradle_broadcast\":%u,\"session\":\"%s\",\"game\":", CRADLE_BROADCAST_VERSION,
                         session);
    cradle_writer_json_string(&w, s->game, strlen(s->game));
    cradle_writer_text(&w, ",\"build\":");
    cradle_writer_json_string(&w, s->build, strlen(s->build));
    cradle_writer_format(&w, ",\"steps_per_second\":%" PRIu32 ",\"fragment_ms\":%" PRIu32 ",\"fragments\":%" PRIu64
                         ",\"keyframes\":[",
                         s->steps_per_second, s->fragment_ms, s->fragments);
    for (uint32_t i = 0; i < s->keyframe_count; i++)
        cradle_writer_format(&w, "%s{\"key\":%" PRIu64 ",\"step\":%" PRIu64 ",\"fragment\":%" PRIu64 "}",
                             i ? "," : "", s->keyframes[i].key, s->keyframes[i].step, s->keyframes[i].fragment);
    cradle_writer_text(&w, "],\"gaps\":[");
    for (uint32_t i = 0; i < s->gap_count; i++)
        cradle_writer_format(&w, "%s{\"first\":%" PRIu64 ",\"last\":%" PRIu64 "}", i ? "," : "", s->gaps[i].first,
                             s->gaps[i].last);
    cradle_writer_text(&w, "],\"web\":[");
    for (uint32_t i = 0; i < s->web_count; i++) {
        char manifest[2 * CRADLE_BROADCAST_WEB_HASH_BYTES + 1];
        hex_of(manifest, s->web[i].manifest, sizeof s->web[i].manifest);
        cradle_writer_text(&w, i ? ",{\"build\":" : "{\"build\":");
        cradle_writer_json_string(&w, s->web[i].build, strlen(s->web[i].build));
        cradle_writer_format(&w, ",\"manifest\":\"%s\"}", manifest);
    }
    cradle_writer_format(&w, "],\"live\":{\"step\":%" PRIu64 ",\"unix_ms\":%" PRIu64 "},\"ended\":%s}", s->live_step,
                         s->live_unix_ms, s->ended ? "true" : "false");
    if (w.overflow || w.length >= size) return 0;
    out[w.length] = '\0';
    return w.length;
}

/* A JSON integer 0..max into *out (the reader's int64 holds them all). */
static bool read_u64(const cradle_json_doc *doc, uint32_t t, const char *name, uint64_t max, uint64_t *out,
                     cradle_json_error *e) {
    int64_t v;
    if (!cradle_json_int(doc, t, name, 0, (int64_t)max, &v, e)) return false;
    *out = (uint64_t)v;
    return true;
}

static bool read_hex(const cradle_json_doc *doc, uint32_t t, const char *name, uint8_t *out, size_t n,
                     cradle_json_error *e) {
    char text[2 * CRADLE_BROADCAST_WEB_HASH_BYTES + 2]; /* the longest hex read, and a byte to see one more */
    bool ok = 2 * n < sizeof text && cradle_json_string(doc, t, name, text, sizeof text, e);
    if (ok && strlen(text) != 2 * n) ok = false;
    for (size_t i = 0; ok && i < 2 * n; i++) {
        char c = text[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0) ok = false;
        else if (i % 2 == 0) out[i / 2] = (uint8_t)(v << 4);
        else out[i / 2] |= (uint8_t)v;
    }
    if (!ok && e->message[0] == '\0')
        (void)snprintf(e->message, sizeof e->message, "\"%s\" must be %zu lowercase hex digits", name, 2 * n);
    return ok;
}

static bool read_id(const cradle_json_doc *doc, uint32_t t, const char *name, char *out, size_t capacity,
                    cradle_json_error *e) {
    if (!cradle_json_string(doc, t, name, out, capacity, e)) return false;
    if (printable_id(out, capacity - 1)) return true;
    (void)snprintf(e->message, sizeof e->message, "\"%s\" must be 1..%zu printable ASCII bytes", name, capacity - 1);
    return false;
}

static bool read_keyframes(const cradle_json_doc *doc, uint32_t t, cradle_broadcast_sync *s, cradle_json_error *e) {
    static const char *const keys[] = {"key", "step", "fragment"};
    uint32_t count;
    if (!cradle_json_array(doc, t, "keyframes", 0, CRADLE_BROADCAST_KEYFRAMES_MAX, &count, e)) return false;
    s->keyframe_count = count;
    uint32_t item = t + 1;
    for (uint32_t i = 0; i < count; i++, item = doc->tokens[item].next) {
        uint32_t v[3];
        char name[40];
        (void)snprintf(name, sizeof name, "keyframes[%" PRIu32 "]", i);
        cradle_broadcast_keyframe_ref *k = &s->keyframes[i];
        if (!cradle_json_object(doc, item, name, keys, NULL, 3, v, e) ||
            !read_u64(doc, v[0], "key", UINT32_MAX, &k->key, e) ||
            !read_u64(doc, v[1], "step", (uint64_t)INT64_MAX, &k->step, e) ||
            !read_u64(doc, v[2], "fragment", UINT32_MAX, &k->fragment, e))
            return false;
        if (i > 0 && (k->key <= k[-1].key || k->step <= k[-1].step || k->fragment < k[-1].fragment)) {
            (void)snprintf(e->message, sizeof e->message, "%s does not come after the keyframe before it", name);
            e->line = doc->tokens[item].line;
            return false;
        }
    }
    return true;
}

static bool read_gaps(const cradle_json_doc *doc, uint32_t t, cradle_broadcast_sync *s, cradle_json_error *e) {
    static const char *const keys[] = {"first", "last"};
    uint32_t count;
    if (!cradle_json_array(doc, t, "gaps", 0, CRADLE_BROADCAST_GAPS_MAX, &count, e)) return false;
    s->gap_count = count;
    uint32_t item = t + 1;
    for (uint32_t i = 0; i < count; i++, item = doc->tokens[item].next) {
        uint32_t v[2];
        char name[40];
        (void)snprintf(name, sizeof name, "gaps[%" PRIu32 "]", i);
        cradle_broadcast_gap *g = &s->gaps[i];
        if (!cradle_json_object(doc, item, name, keys, NULL, 2, v, e) ||
            !read_u64(doc, v[0], "first", UINT32_MAX, &g->first, e) ||
            !read_u64(doc, v[1], "last", UINT32_MAX, &g->last, e))
            return false;
        if (g->last < g->first || (i > 0 && g->first <= g[-1].last + 1u)) {
            (void)snprintf(e->message, sizeof e->message, "%s is empty or does not come after the gap before it", name);
            e->line = doc->tokens[item].line;
            return false;
        }
    }
    return true;
}

static bool read_web(const cradle_json_doc *doc, uint32_t t, cradle_broadcast_sync *s, cradle_json_error *e) {
    static const char *const keys[] = {"build", "manifest"};
    uint32_t count;
    if (!cradle_json_array(doc, t, "web", 0, CRADLE_BROADCAST_WEB_MAX, &count, e)) return false;
    s->web_count = count;
    uint32_t item = t + 1;
    for (uint32_t i = 0; i < count; i++, item = doc->tokens[item].next) {
        uint32_t v[2];
        char name[40];
        (void)snprintf(name, sizeof name, "web[%" PRIu32 "]", i);
        cradle_broadcast_web *w = &s->web[i];
        if (!cradle_json_object(doc, item, name, keys, NULL, 2, v, e) ||
            !read_id(doc, v[0], "build", w->build, sizeof w->build, e) ||
            !read_hex(doc, v[1], "manifest", w->manifest, sizeof w->manifest, e))
            return false;
        if (web_repeats(s, i)) {
            (void)snprintf(e->message, sizeof e->message, "%s names build \"%s\" again: each build is listed once",
                           name, w->build);
            e->line = doc->tokens[item].line;
            return false;
        }
    }
    return true;
}

bool cradle_broadcast_sync_in_gap(const cradle_broadcast_sync *s, uint64_t f) {
    for (uint32_t i = 0; i < s->gap_count; i++)
        if (f >= s->gaps[i].first && f <= s->gaps[i].last) return true;
    return false;
}

/* What the fields say together, once each is valid on its own. */
static bool consistent(const cradle_broadcast_sync *s, char *why, size_t n) {
    for (uint32_t i = 0; i < s->keyframe_count; i++) {
        if (s->keyframes[i].fragment >= s->fragments) {
            (void)snprintf(why, n, "keyframe %" PRIu64 " starts at fragment %" PRIu64 ", of %" PRIu64 " published",
                           s->keyframes[i].key, s->keyframes[i].fragment, s->fragments);
            return false;
        }
        if (cradle_broadcast_sync_in_gap(s, s->keyframes[i].fragment)) {
            (void)snprintf(why, n, "keyframe %" PRIu64 " starts at fragment %" PRIu64 ", which is in a gap",
                           s->keyframes[i].key, s->keyframes[i].fragment);
            return false;
        }
    }
    if (s->gap_count && s->gaps[s->gap_count - 1].last >= s->fragments) {
        (void)snprintf(why, n, "a gap ends at fragment %" PRIu64 ", of %" PRIu64 " published",
                       s->gaps[s->gap_count - 1].last, s->fragments);
        return false;
    }
    if (s->ended && s->fragments == 0) {
        (void)snprintf(why, n, "an ended broadcast without a fragment");
        return false;
    }
    return true;
}

int cradle_broadcast_sync_decode(const void *text, size_t size, cradle_broadcast_sync *s, char *message,
                                 size_t message_size) {
    static const char *const keys[] = {"cradle_broadcast", "session", "game", "build", "steps_per_second",
                                       "fragment_ms", "fragments", "keyframes", "gaps", "web", "live", "ended"};
    static const char *const live_keys[] = {"step", "unix_ms"};
    enum { VERSION, SESSION, GAME, BUILD, RATE, FRAGMENT_MS, FRAGMENTS, KEYFRAMES, GAPS, WEB, LIVE, ENDED, FIELDS };
    memset(s, 0, sizeof *s);
    if (size > CRADLE_BROADCAST_SYNC_MAX)
        return refuse(message, message_size, "sync", "%zu bytes, more than the %u a sync document may hold", size,
                      CRADLE_BROADCAST_SYNC_MAX);
    cradle_json_token tokens[SYNC_TOKENS];
    cradle_json_doc doc;
    cradle_json_error e = {0};
    uint32_t v[FIELDS], lv[2];
    int64_t version = 0;
    uint64_t rate = 0, fragment_ms = 0;
    bool ok = cradle_json_parse(&doc, text, size, tokens, SYNC_TOKENS, &e);
    /* The version before the fields: another version's document has other
     * fields (version 1 had no "web"), and "version 1" is what to say. */
    uint32_t vt = ok && doc.tokens[0].type == CRADLE_JSON_OBJECT ? cradle_json_member(&doc, 0, "cradle_broadcast")
                                                                 : CRADLE_JSON_NONE;
    cradle_json_error ignored = {0};
    if (vt != CRADLE_JSON_NONE && cradle_json_int(&doc, vt, "cradle_broadcast", 0, INT32_MAX, &version, &ignored) &&
        version != CRADLE_BROADCAST_VERSION)
        return refuse(message, message_size, "sync", "version %" PRId64 ", this program reads version %u", version,
                      CRADLE_BROADCAST_VERSION);
    ok = ok && cradle_json_object(&doc, 0, "sync", keys, NULL, FIELDS, v, &e) &&
         cradle_json_int(&doc, v[VERSION], "cradle_broadcast", 0, INT32_MAX, &version, &e) &&
         read_hex(&doc, v[SESSION], "session", s->session, sizeof s->session, &e) &&
         read_id(&doc, v[GAME], "game", s->game, sizeof s->game, &e) &&
         read_id(&doc, v[BUILD], "build", s->build, sizeof s->build, &e) &&
         read_u64(&doc, v[RATE], "steps_per_second", 1000, &rate, &e) &&
         read_u64(&doc, v[FRAGMENT_MS], "fragment_ms", 60000, &fragment_ms, &e) &&
         read_u64(&doc, v[FRAGMENTS], "fragments", UINT32_MAX, &s->fragments, &e) &&
         read_keyframes(&doc, v[KEYFRAMES], s, &e) && read_gaps(&doc, v[GAPS], s, &e) &&
         read_web(&doc, v[WEB], s, &e) &&
         cradle_json_object(&doc, v[LIVE], "live", live_keys, NULL, 2, lv, &e) &&
         read_u64(&doc, lv[0], "live.step", (uint64_t)INT64_MAX, &s->live_step, &e) &&
         read_u64(&doc, lv[1], "live.unix_ms", (uint64_t)INT64_MAX, &s->live_unix_ms, &e) &&
         cradle_json_bool(&doc, v[ENDED], "ended", &s->ended, &e);
    if (!ok) {
        if (e.line) return refuse(message, message_size, "sync", "line %" PRIu32 ": %s", e.line, e.message);
        return refuse(message, message_size, "sync", "%s", e.message);
    }
    if (rate == 0 || fragment_ms < 100)
        return refuse(message, message_size, "sync", "%s", rate == 0 ? "\"steps_per_second\" must be 1..1000"
                                                                     : "\"fragment_ms\" must be 100..60000");
    s->steps_per_second = (uint32_t)rate;
    s->fragment_ms = (uint32_t)fragment_ms;
    char why[160];
    if (!consistent(s, why, sizeof why)) return refuse(message, message_size, "sync", "%s", why);
    return 0;
}

/* ---- the browser viewer's files -------------------------------------------- */

static void web_file(cradle_writer *w, const cradle_broadcast_web_file *f) {
    if (!f->present) {
        cradle_writer_text(w, "\"sha256\":null,\"bytes\":0");
        return;
    }
    assert(f->bytes <= CRADLE_BROADCAST_WEB_FILE_MAX);
    char hex[2 * CRADLE_BROADCAST_WEB_HASH_BYTES + 1];
    hex_of(hex, f->sha256, sizeof f->sha256);
    cradle_writer_format(w, "\"sha256\":\"%s\",\"bytes\":%" PRIu32, hex, f->bytes);
}

size_t cradle_broadcast_web_manifest_encode(const cradle_broadcast_web_manifest *m, char *out, size_t size) {
    assert(m->game && printable_id(m->game, CRADLE_GAME_NAME_MAX));
    assert(m->build && printable_id(m->build, CRADLE_GAME_BUILD_ID_MAX));
    assert(m->wasm.present && m->sound_count <= CRADLE_GAME_MAX_SOUNDS);
    assert(m->sound_count == 0 || (m->sound_names && m->sounds));
    cradle_writer w;
    cradle_writer_init(&w, out, size);
    cradle_writer_format(&w, "{\"cradle_web\":%u,\"game\":", CRADLE_BROADCAST_WEB_VERSION);
    cradle_writer_json_string(&w, m->game, strlen(m->game));
    cradle_writer_text(&w, ",\"build\":");
    cradle_writer_json_string(&w, m->build, strlen(m->build));
    cradle_writer_text(&w, ",\"wasm\":{");
    web_file(&w, &m->wasm);
    cradle_writer_text(&w, "},\"sounds\":[");
    for (uint32_t i = 0; i < m->sound_count; i++) {
        assert(printable_id(m->sound_names[i], CRADLE_GAME_SOUND_NAME_MAX));
        cradle_writer_text(&w, i ? ",{\"name\":" : "{\"name\":");
        cradle_writer_json_string(&w, m->sound_names[i], strlen(m->sound_names[i]));
        cradle_writer_text(&w, ",");
        web_file(&w, &m->sounds[i]);
        cradle_writer_text(&w, "}");
    }
    cradle_writer_text(&w, "]}");
    if (w.overflow || w.length >= size) return 0;
    out[w.length] = '\0';
    return w.length;
}

/* ---- keyframes ---------------------------------------------------------- */

size_t cradle_broadcast_keyframe_bound(uint32_t state_size) {
    return CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES + cradle_state_pack_bound(state_size);
}

static void keyframe_checksum(const uint8_t *doc, const uint8_t *payload, size_t n, uint8_t out[K_CHECKSUM_BYTES]) {
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, K_CHECKSUM_BYTES);
    crypto_generichash_update(&st, doc, K_CHECKSUM);
    crypto_generichash_update(&st, payload, n);
    crypto_generichash_final(&st, out, K_CHECKSUM_BYTES);
}

static bool all_zero(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

/* What a keyframe's signature signs: a context and its bytes 0..191. */
enum { K_SIGNED_BYTES = 19 + K_SIGNATURE };
static void keyframe_signed(const uint8_t *doc, uint8_t out[K_SIGNED_BYTES]) {
    memcpy(out, "cradle-keyframe-v1", 19);
    memcpy(out + 19, doc, K_SIGNATURE);
}

int cradle_broadcast_keyframe_encode(cradle_state_pack *c, const cradle_broadcast_keyframe *k,
                                     const void *state, const uint8_t *sign_secret, uint8_t *out, size_t size,
                                     size_t *length, char *message, size_t message_size) {
    assert(c && c->compress && k && state && out && length);
    assert(printable_id(k->build_id, CRADLE_GAME_BUILD_ID_MAX) && k->state_size <= CRADLE_BROADCAST_STATE_MAX);
    if (size < cradle_broadcast_keyframe_bound(k->state_size)) {
        (void)refuse(message, message_size, "keyframe", "no room for a %" PRIu32 "-byte state", k->state_size);
        return CRADLE_ERANGE;
    }
    uint8_t *payload = out + CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES;
    size_t n =
        cradle_state_pack_encode(c, state, k->state_size, payload, size - CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES);
    if (n == 0) {
        (void)refuse(message, message_size, "keyframe", "zstd failed (out of memory)");
        return CRADLE_EIO;
    }
    memset(out, 0, CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES);
    memcpy(out, keyframe_magic, sizeof keyframe_magic);
    cradle_cursor_store_u32(out + K_VERSION, CRADLE_BROADCAST_KEYFRAME_VERSION);
    cradle_cursor_store_u32(out + K_HEADER_BYTES, CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES);
    memcpy(out + K_SESSION, k->session, CRADLE_BROADCAST_SESSION_BYTES);
    cradle_cursor_store_u64(out + K_STEP, k->step);
    cradle_cursor_store_u64(out + K_HASH, k->state_hash);
    cradle_cursor_store_u32(out + K_STATE_SIZE, k->state_size);
    cradle_cursor_store_u32(out + K_COMPRESSED, (uint32_t)n);
    cradle_cursor_store_u32(out + K_SEQUENCE, k->block_sequence);
    cradle_cursor_store_u64(out + K_FIRST_STEP, k->block_first_step);
    memcpy(out + K_BUILD, k->build_id, strlen(k->build_id));
    keyframe_checksum(out, payload, n, out + K_CHECKSUM);
    if (sign_secret) {
        uint8_t m[K_SIGNED_BYTES];
        keyframe_signed(out, m);
        crypto_sign_detached(out + K_SIGNATURE, NULL, m, sizeof m, sign_secret);
    }
    *length = CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES + n;
    return 0;
}

int cradle_broadcast_keyframe_decode(cradle_state_pack *c, const uint8_t *doc, size_t size,
                                     const uint8_t session[CRADLE_BROADCAST_SESSION_BYTES], const uint8_t *signer,
                                     cradle_broadcast_keyframe *k, void *state, size_t capacity, char *message,
                                     size_t message_size) {
    assert(c && c->decompress && doc && k);
    memset(k, 0, sizeof *k);
    const char *what = "keyframe";
    if (size < CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES)
        return refuse(message, message_size, what, "%zu bytes, shorter than its %u-byte header", size,
                      CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES);
    if (memcmp(doc, keyframe_magic, sizeof keyframe_magic) != 0)
        return refuse(message, message_size, what, "not a Cradle keyframe (bad magic)");
    uint32_t version = cradle_cursor_load_u32(doc + K_VERSION);
    if (version != CRADLE_BROADCAST_KEYFRAME_VERSION)
        return refuse(message, message_size, what, "version %" PRIu32 ", this program reads version %u", version,
                      CRADLE_BROADCAST_KEYFRAME_VERSION);
    if (cradle_cursor_load_u32(doc + K_HEADER_BYTES) != CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES)
        return refuse(message, message_size, what, "header of %" PRIu32 " bytes, expected %u",
                      cradle_cursor_load_u32(doc + K_HEADER_BYTES), CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES);
    uint32_t compressed = cradle_cursor_load_u32(doc + K_COMPRESSED);
    if (size - CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES != compressed)
        return refuse(message, message_size, what, "%zu bytes after the header, the header says %" PRIu32
                      " (truncated or padded)", size - CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES, compressed);
    uint8_t sum[K_CHECKSUM_BYTES];
    keyframe_checksum(doc, doc + CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES, compressed, sum);
    if (sodium_memcmp(sum, doc + K_CHECKSUM, sizeof sum) != 0)
        return refuse(message, message_size, what, "checksum mismatch (damaged in transit or storage)");
    if (signer) {
        uint8_t m[K_SIGNED_BYTES];
        keyframe_signed(doc, m);
        if (all_zero(doc + K_SIGNATURE, crypto_sign_BYTES))
            return refuse(message, message_size, what, "unsigned, and this viewer pinned a server key");
        if (crypto_sign_verify_detached(doc + K_SIGNATURE, m, sizeof m, signer) != 0)
            return refuse(message, message_size, what, "not signed by the pinned key");
    }
    if (session && sodium_memcmp(doc + K_SESSION, session, CRADLE_BROADCAST_SESSION_BYTES) != 0)
        return refuse(message, message_size, what, "of another session than this broadcast's start");
    if (!all_zero(doc + K_RESERVED1, 4) || !all_zero(doc + K_RESERVED2, K_CHECKSUM - K_RESERVED2))
        return refuse(message, message_size, what, "reserved bytes are not zero");
    memcpy(k->session, doc + K_SESSION, CRADLE_BROADCAST_SESSION_BYTES);
    k->step = cradle_cursor_load_u64(doc + K_STEP);
    k->state_hash = cradle_cursor_load_u64(doc + K_HASH);
    k->state_size = cradle_cursor_load_u32(doc + K_STATE_SIZE);
    k->block_sequence = cradle_cursor_load_u32(doc + K_SEQUENCE);
    k->block_first_step = cradle_cursor_load_u64(doc + K_FIRST_STEP);
    const uint8_t *build = doc + K_BUILD;
    size_t len = 0;
    while (len < CRADLE_GAME_BUILD_ID_MAX + 1u && build[len]) len++;
    if (len == 0 || len > CRADLE_GAME_BUILD_ID_MAX || !all_zero(build + len, K_RESERVED2 - K_BUILD - len))
        return refuse(message, message_size, what, "the build id is not 1..%u bytes NUL-padded", CRADLE_GAME_BUILD_ID_MAX);
    memcpy(k->build_id, build, len);
    k->build_id[len] = '\0';
    if (!printable_id(k->build_id, CRADLE_GAME_BUILD_ID_MAX))
        return refuse(message, message_size, what, "the build id is not printable ASCII");
    if (k->block_first_step > k->step || k->step == UINT64_MAX)
        return refuse(message, message_size, what, "step %" PRIu64 " is not in its block, which starts at step %" PRIu64,
                      k->step, k->block_first_step);
    if (k->state_size == 0 || k->state_size > CRADLE_BROADCAST_STATE_MAX || k->state_size > capacity)
        return refuse(message, message_size, what, "a %" PRIu32 "-byte state; this viewer holds at most %zu",
                      k->state_size, capacity < CRADLE_BROADCAST_STATE_MAX ? capacity : (size_t)CRADLE_BROADCAST_STATE_MAX);
    const uint8_t *payload = doc + CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES;
    const char *problem = cradle_state_pack_decode(c, payload, compressed, state, k->state_size, k->state_hash);
    if (problem) return refuse(message, message_size, what, "%s", problem);
    return 0;
}

/* ---- fragments ---------------------------------------------------------- */

int cradle_broadcast_fragment_check(const uint8_t *buffer, size_t size, const cradle_broadcast_position *expect,
                                    const uint8_t *signer, cradle_broadcast_fragment_info *info, char *message,
                                    size_t message_size) {
    assert(buffer && info && size >= CRADLE_LOG_HEADER_BYTES);
    memset(info, 0, sizeof *info);
    info->last_hash_step = UINT64_MAX;
    const char *what = "fragment";
    if (size == CRADLE_LOG_HEADER_BYTES) return refuse(message, message_size, what, "empty");
    if (size - CRADLE_LOG_HEADER_BYTES > CRADLE_BROADCAST_FRAGMENT_MAX)
        return refuse(message, message_size, what, "%zu bytes, more than the %u a fragment may hold",
                      size - CRADLE_LOG_HEADER_BYTES, CRADLE_BROADCAST_FRAGMENT_MAX);
    cradle_log_reader r;
    char why[CRADLE_LOG_MESSAGE_MAX];
    int rc = cradle_log_reader_open_memory(&r, buffer, size, why, sizeof why);
    if (rc != 0) return refuse(message, message_size, what, "the start document: %s", why);
    cradle_log_reader_start_anywhere(&r);
    if (signer) cradle_log_reader_require_signer(&r, signer);
    cradle_log_record rec;
    bool first = true;
    while ((rc = cradle_log_reader_next(&r, &rec)) == 1) {
        if (first) {
            first = false;
            info->first = (cradle_broadcast_position){.sequence = r.sequence - 1u,
                                                      .step = rec.kind == CRADLE_LOG_RECORD_STEP ? rec.step : r.steps};
            /* the block's own first step, whatever its first record */
            info->first.step = cradle_cursor_load_u64(buffer + r.block_offset + CRADLE__LOG_BLOCK_FIRST_STEP);
            if (expect && (info->first.sequence != expect->sequence || info->first.step != expect->step)) {
                cradle_log_reader_close(&r);
                return refuse(message, message_size, what,
                              "starts at block %" PRIu32 " (step %" PRIu64 "), expected block %" PRIu32
                              " (step %" PRIu64 "): out of order or of another session",
                              info->first.sequence, info->first.step, expect->sequence, expect->step);
            }
        }
        switch (rec.kind) {
        case CRADLE_LOG_RECORD_HASH:
            info->hashes++;
            info->last_hash_step = rec.step;
            break;
        case CRADLE_LOG_RECORD_RELOAD: info->reloads++; break;
        case CRADLE_LOG_RECORD_TRAILER: info->trailer = true; break;
        case CRADLE_LOG_RECORD_DATA:
            if (info->data_count == CRADLE_BROADCAST_FRAGMENT_DATA_MAX) {
                cradle_log_reader_close(&r);
                return refuse(message, message_size, what, "more than %u data files", CRADLE_BROADCAST_FRAGMENT_DATA_MAX);
            }
            memcpy(info->data_hash[info->data_count], rec.file_hash, CRADLE_LOG_FILE_HASH_BYTES);
            info->data_size[info->data_count++] = rec.data_size;
            break;
        default: break;
        }
    }
    if (rc < 0) {
        (void)refuse(message, message_size, what, "%s", r.message);
    } else if (r.end == CRADLE_LOG_END_TORN) {
        rc = refuse(message, message_size, what, "truncated or damaged: its last block is not whole (byte %" PRIu64 ")",
                    r.tail_offset - CRADLE_LOG_HEADER_BYTES);
    } else if (first) {
        rc = refuse(message, message_size, what, "holds no record");
    }
    if (rc == 0) {
        info->end = (cradle_broadcast_position){.sequence = r.sequence, .step = r.steps};
        info->blocks = info->end.sequence - info->first.sequence;
    }
    cradle_log_reader_close(&r);
    return rc < 0 ? CRADLE_EBROADCAST : 0;
}
