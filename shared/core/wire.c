#include "cradle/wire.h"

#include <assert.h>
#include <string.h>

/* ---- names --------------------------------------------------------------- */

const char *cradle_wire_type_name(int type) {
    switch (type) {
    case CRADLE_WIRE_HELLO: return "hello";
    case CRADLE_WIRE_WELCOME: return "welcome";
    case CRADLE_WIRE_REFUSE: return "refuse";
    case CRADLE_WIRE_INPUT: return "input";
    case CRADLE_WIRE_STEPS: return "steps";
    case CRADLE_WIRE_STATE: return "state";
    case CRADLE_WIRE_RELOAD: return "reload";
    case CRADLE_WIRE_PING: return "ping";
    case CRADLE_WIRE_PONG: return "pong";
    case CRADLE_WIRE_BYE: return "bye";
    case CRADLE_WIRE_DESYNC: return "desync";
    case CRADLE_WIRE_DATA: return "data";
    case CRADLE_WIRE_DELAY: return "delay";
    case CRADLE_WIRE_REPORT: return "report";
    default: return "unknown";
    }
}

const char *cradle_wire_refusal_name(int reason) {
    switch (reason) {
    case CRADLE_WIRE_REFUSE_FULL: return "full";
    case CRADLE_WIRE_REFUSE_PROTOCOL: return "protocol";
    case CRADLE_WIRE_REFUSE_GAME: return "game";
    case CRADLE_WIRE_REFUSE_BUILD: return "build";
    case CRADLE_WIRE_REFUSE_AUTH: return "auth";
    case CRADLE_WIRE_REFUSE_REQUEST: return "request";
    case CRADLE_WIRE_REFUSE_BUSY: return "busy";
    default: return "unknown";
    }
}

const char *cradle_wire_bye_name(int reason) {
    switch (reason) {
    case CRADLE_WIRE_BYE_LEAVING: return "leaving";
    case CRADLE_WIRE_BYE_SHUTDOWN: return "shutdown";
    case CRADLE_WIRE_BYE_KICKED: return "kicked";
    case CRADLE_WIRE_BYE_TIMEOUT: return "timeout";
    case CRADLE_WIRE_BYE_PROTOCOL: return "protocol";
    default: return "unknown";
    }
}

uint64_t cradle_wire_step_expand(uint64_t reference, uint32_t low) {
    const uint64_t span = (uint64_t)1 << 32, half = (uint64_t)1 << 31;
    uint64_t candidate = (reference & ~(span - 1u)) | low;
    if (candidate < reference && reference - candidate > half && candidate <= UINT64_MAX - span)
        candidate += span;
    else if (candidate > reference && candidate - reference > half && candidate >= span)
        candidate -= span;
    return candidate;
}

void cradle_wire_set_text(char *field, size_t capacity, const char *text) {
    assert(field && capacity > 0);
    size_t n = 0;
    if (text) {
        for (; n + 1 < capacity && text[n] != '\0'; n++) {
            unsigned char ch = (unsigned char)text[n];
            field[n] = (ch >= 0x20 && ch <= 0x7e) ? (char)ch : '?';
        }
    }
    field[n] = '\0';
}

/* ---- shared validation ---------------------------------------------------- */

/* Length of a string field of capacity max + 1 bytes, or max + 1 when it is
 * not NUL-terminated within them or holds a byte outside 0x20..0x7e. */
static size_t text_length(const char *s, size_t max) {
    for (size_t n = 0; n <= max; n++) {
        unsigned char ch = (unsigned char)s[n];
        if (ch == '\0') return n;
        if (ch < 0x20 || ch > 0x7e) return max + 1;
    }
    return max + 1;
}

/* The rules both directions share; returns NULL or the problem. Strings are
 * checked here as the struct holds them (decode has produced them already). */
/* A DATA chunk's numbers (its bytes are the caller's to check). */
static const char *check_data(const cradle_wire_data *d) {
    if (d->file >= CRADLE_GAME_MAX_DATA_FILES) return "data: file index is 16 or more";
    if (d->total > CRADLE_GAME_DATA_MAX_BYTES) return "data: total is over 1 MiB";
    if (d->length > CRADLE_WIRE_DATA_CHUNK_MAX) return "data: length is over 1024";
    if (d->length == 0 && d->total != 0) return "data: empty chunk of a non-empty file";
    if (d->offset > d->total || d->length > d->total - d->offset) return "data: chunk lies outside the file";
    return NULL;
}

/* A REPORT's figures: what one client's prediction can have counted. */
static const char *check_report(const cradle_wire_report *r) {
    if (r->window > CRADLE_WIRE_REPORT_WINDOW_MAX) return "report: window is past 64";
    if (r->window == 0 && (r->ahead | r->steps | r->rollbacks | r->rollback_steps | r->rollback_max |
                           r->corrections | r->own_overridden))
        return "report: figures from a player in lockstep";
    if (r->ahead > r->window) return "report: ahead is past the window";
    if (r->rollback_max > r->window) return "report: a rollback deeper than the window";
    if (r->corrections > r->rollbacks) return "report: more corrections than rollbacks";
    if (r->own_overridden > r->steps) return "report: more inputs overridden than steps";
    return NULL;
}

static const char *check_fields(const cradle_wire_message *m) {
    switch (m->type) {
    case CRADLE_WIRE_HELLO: {
        const cradle_wire_hello *h = &m->as.hello;
        if (h->requested_slot != CRADLE_WIRE_ANY_SLOT && h->requested_slot >= CRADLE_GAME_MAX_PLAYERS)
            return "hello: requested slot is neither 255 (any) nor below the player maximum";
        if (h->spectator && h->requested_slot != CRADLE_WIRE_ANY_SLOT)
            return "hello: a spectator cannot request a slot";
        size_t n = text_length(h->game, CRADLE_GAME_NAME_MAX);
        if (n == 0 || n > CRADLE_GAME_NAME_MAX) return "hello: game name is empty, too long or not printable";
        n = text_length(h->build_id, CRADLE_GAME_BUILD_ID_MAX);
        if (n == 0 || n > CRADLE_GAME_BUILD_ID_MAX)
            return "hello: build id is empty, too long or not printable";
        if (h->credential_size > CRADLE_WIRE_CREDENTIAL_MAX) return "hello: credential is too long";
        return NULL;
    }
    case CRADLE_WIRE_WELCOME: {
        const cradle_wire_welcome *w = &m->as.welcome;
        if (w->max_players < 1 || w->max_players > CRADLE_GAME_MAX_PLAYERS)
            return "welcome: max_players is outside 1..64";
        if (w->players < 1 || w->players > w->max_players)
            return "welcome: players is outside 1..max_players";
        if (w->slot != CRADLE_WIRE_SPECTATOR && w->slot >= w->max_players)
            return "welcome: slot is neither 255 (spectator) nor below max_players";
        if (w->input_bytes < 1 || w->input_bytes > CRADLE_GAME_MAX_INPUT_BYTES)
            return "welcome: input_bytes is outside 1..32";
        if (w->state_size < 1 || w->state_size > CRADLE_WIRE_STATE_MAX)
            return "welcome: state_size is outside 1..256 MiB";
        if (w->steps_per_second < 1) return "welcome: steps_per_second is 0";
        if (w->source_frames_per_second < 1 || w->steps_per_second % w->source_frames_per_second != 0)
            return "welcome: source_frames_per_second is 0 or does not divide steps_per_second";
        if (w->hash_interval < 1) return "welcome: hash_interval is 0";
        size_t n = text_length(w->game, CRADLE_GAME_NAME_MAX);
        if (n == 0 || n > CRADLE_GAME_NAME_MAX)
            return "welcome: game name is empty, too long or not printable";
        n = text_length(w->build_id, CRADLE_GAME_BUILD_ID_MAX);
        if (n == 0 || n > CRADLE_GAME_BUILD_ID_MAX)
            return "welcome: build id is empty, too long or not printable";
        return NULL;
    }
    case CRADLE_WIRE_REFUSE:
        if (m->as.refuse.reason < CRADLE_WIRE_REFUSE_FULL || m->as.refuse.reason > CRADLE_WIRE_REFUSE_LAST)
            return "refuse: unknown reason";
        if (text_length(m->as.refuse.text, CRADLE_WIRE_TEXT_MAX) > CRADLE_WIRE_TEXT_MAX)
            return "refuse: text is too long or not printable";
        return NULL;
    case CRADLE_WIRE_INPUT: {
        const cradle_wire_input *in = &m->as.input;
        if (in->count > CRADLE_WIRE_INPUT_STEPS_MAX) return "input: count is outside 0..16";
        if (in->input_bytes < 1 || in->input_bytes > CRADLE_GAME_MAX_INPUT_BYTES)
            return "input: input_bytes is outside 1..32";
        if (in->first_step > UINT64_MAX - in->count) return "input: steps overflow";
        if (in->count > 0 && !in->inputs) return "input: no input bytes";
        return NULL;
    }
    case CRADLE_WIRE_STEPS: {
        const cradle_wire_steps *s = &m->as.steps;
        if (s->count < 1 || s->count > CRADLE_WIRE_STEPS_MAX) return "steps: count is outside 1..64";
        if (s->snapshot_size < 1 || s->snapshot_size > CRADLE_SNAPSHOT_MAX)
            return "steps: snapshot_size is outside 1..4096";
        if ((uint32_t)s->count * s->snapshot_size > CRADLE_WIRE_STEPS_BYTES_MAX)
            return "steps: snapshot bytes exceed 16384";
        if (!s->snapshots) return "steps: no snapshot bytes";
        if (s->hash_count > s->count) return "steps: more hashes than steps";
        for (uint32_t i = 0; i < s->hash_count; i++) {
            if (s->hashes[i].offset >= s->count) return "steps: a hash is for a step outside the message";
            if (i > 0 && s->hashes[i].offset <= s->hashes[i - 1].offset)
                return "steps: hash offsets are not increasing";
        }
        return NULL;
    }
    case CRADLE_WIRE_STATE: {
        const cradle_wire_state *st = &m->as.state;
        if (st->total < 1 || st->total > CRADLE_WIRE_STATE_PACKED_MAX) return "state: total is outside 1..258 MiB";
        if (st->length < 1 || st->length > CRADLE_WIRE_STATE_CHUNK_MAX)
            return "state: length is outside 1..1024";
        if (st->offset > st->total || st->length > st->total - st->offset)
            return "state: chunk lies outside the block";
        if (!st->bytes) return "state: no bytes";
        return NULL;
    }
    case CRADLE_WIRE_RELOAD: {
        size_t n = text_length(m->as.reload.build_id, CRADLE_GAME_BUILD_ID_MAX);
        if (n == 0 || n > CRADLE_GAME_BUILD_ID_MAX)
            return "reload: build id is empty, too long or not printable";
        return NULL;
    }
    case CRADLE_WIRE_DATA:
        if (m->as.data.length && !m->as.data.bytes) return "data: no bytes";
        return check_data(&m->as.data);
    case CRADLE_WIRE_DELAY:
        if (m->as.delay.input_delay < 1 || m->as.delay.input_delay > CRADLE_WIRE_INPUT_DELAY_MAX)
            return "delay: input delay is outside 1..1000";
        return NULL;
    case CRADLE_WIRE_REPORT: return check_report(&m->as.report);
    case CRADLE_WIRE_PING:
    case CRADLE_WIRE_PONG:
    case CRADLE_WIRE_DESYNC: return NULL;
    case CRADLE_WIRE_BYE:
        if (m->as.bye.reason < CRADLE_WIRE_BYE_LEAVING || m->as.bye.reason > CRADLE_WIRE_BYE_LAST)
            return "bye: unknown reason";
        if (text_length(m->as.bye.text, CRADLE_WIRE_TEXT_MAX) > CRADLE_WIRE_TEXT_MAX)
            return "bye: text is too long or not printable";
        return NULL;
    default: return "unknown message type";
    }
}

/* ---- encode ----------------------------------------------------------------- */

static void put_text(cradle_cursor *c, const char *s, size_t max) {
    size_t n = text_length(s, max); /* checked <= max by check_fields */
    cradle_cursor_put_u8(c, (uint8_t)n);
    cradle_cursor_put_bytes(c, s, n);
}

int cradle_wire_encode(void *out, size_t capacity, size_t *written, const cradle_wire_message *m) {
    assert(out && written && m);
    *written = 0;
    if (check_fields(m) != NULL) return CRADLE_EINVAL;
    cradle_cursor c = cradle_cursor_writer(out, capacity);
    cradle_cursor_put_u8(&c, m->type);
    cradle_cursor_put_u8(&c, (uint8_t)CRADLE_WIRE_VERSION);
    switch (m->type) {
    case CRADLE_WIRE_HELLO: {
        const cradle_wire_hello *h = &m->as.hello;
        cradle_cursor_put_u8(&c, h->spectator ? CRADLE_WIRE_HELLO_SPECTATOR : 0u);
        cradle_cursor_put_u8(&c, h->requested_slot);
        put_text(&c, h->game, CRADLE_GAME_NAME_MAX);
        put_text(&c, h->build_id, CRADLE_GAME_BUILD_ID_MAX);
        cradle_cursor_put_u16(&c, h->credential_size);
        cradle_cursor_put_bytes(&c, h->credential, h->credential_size);
        break;
    }
    case CRADLE_WIRE_WELCOME: {
        const cradle_wire_welcome *w = &m->as.welcome;
        cradle_cursor_put_u8(&c, w->slot);
        cradle_cursor_put_u8(&c, w->players);
        cradle_cursor_put_u8(&c, w->max_players);
        cradle_cursor_put_u8(&c, w->input_bytes);
        cradle_cursor_put_u32(&c, w->state_size);
        cradle_cursor_put_u32(&c, w->steps_per_second);
        cradle_cursor_put_u32(&c, w->source_frames_per_second);
        cradle_cursor_put_u64(&c, w->seed);
        cradle_cursor_put_u16(&c, w->input_delay);
        cradle_cursor_put_u32(&c, w->hash_interval);
        cradle_cursor_put_u64(&c, w->start_step);
        cradle_cursor_put_u8(&c, w->epoch);
        cradle_cursor_put_u8(&c, w->state_follows ? CRADLE_WIRE_WELCOME_STATE_FOLLOWS : 0u);
        put_text(&c, w->game, CRADLE_GAME_NAME_MAX);
        put_text(&c, w->build_id, CRADLE_GAME_BUILD_ID_MAX);
        break;
    }
    case CRADLE_WIRE_REFUSE:
        cradle_cursor_put_u8(&c, m->as.refuse.reason);
        put_text(&c, m->as.refuse.text, CRADLE_WIRE_TEXT_MAX);
        break;
    case CRADLE_WIRE_INPUT: {
        const cradle_wire_input *in = &m->as.input;
        cradle_cursor_put_u64(&c, in->ack);
        cradle_cursor_put_u64(&c, in->first_step);
        cradle_cursor_put_u8(&c, in->count);
        cradle_cursor_put_u8(&c, in->input_bytes);
        cradle_cursor_put_bytes(&c, in->inputs, (size_t)in->count * in->input_bytes);
        break;
    }
    case CRADLE_WIRE_STEPS: {
        const cradle_wire_steps *s = &m->as.steps;
        cradle_cursor_put_u32(&c, (uint32_t)s->first_step);
        cradle_cursor_put_u8(&c, s->epoch);
        cradle_cursor_put_u8(&c, s->count);
        cradle_cursor_put_u8(&c, s->hash_count);
        for (uint32_t i = 0; i < s->hash_count; i++) {
            cradle_cursor_put_u8(&c, s->hashes[i].offset);
            cradle_cursor_put_u64(&c, s->hashes[i].hash);
        }
        cradle_cursor_put_bytes(&c, s->snapshots, (size_t)s->count * s->snapshot_size);
        break;
    }
    case CRADLE_WIRE_STATE: {
        const cradle_wire_state *st = &m->as.state;
        cradle_cursor_put_u64(&c, st->step);
        cradle_cursor_put_u64(&c, st->hash);
        cradle_cursor_put_u32(&c, st->total);
        cradle_cursor_put_u32(&c, st->offset);
        cradle_cursor_put_u16(&c, st->length);
        cradle_cursor_put_bytes(&c, st->bytes, st->length);
        break;
    }
    case CRADLE_WIRE_RELOAD:
        cradle_cursor_put_u64(&c, m->as.reload.at_step);
        cradle_cursor_put_u8(&c, m->as.reload.epoch);
        put_text(&c, m->as.reload.build_id, CRADLE_GAME_BUILD_ID_MAX);
        break;
    case CRADLE_WIRE_PING:
        cradle_cursor_put_u64(&c, m->as.ping.echo);
        cradle_cursor_put_u32(&c, m->as.ping.rtt_us);
        break;
    case CRADLE_WIRE_PONG:
        cradle_cursor_put_u64(&c, m->as.ping.echo);
        cradle_cursor_put_u32(&c, m->as.ping.hold_us);
        break;
    case CRADLE_WIRE_DELAY: cradle_cursor_put_u16(&c, m->as.delay.input_delay); break;
    case CRADLE_WIRE_REPORT: {
        const cradle_wire_report *r = &m->as.report;
        cradle_cursor_put_u16(&c, r->window);
        cradle_cursor_put_u16(&c, r->ahead);
        cradle_cursor_put_u32(&c, r->steps);
        cradle_cursor_put_u32(&c, r->rollbacks);
        cradle_cursor_put_u32(&c, r->rollback_steps);
        cradle_cursor_put_u16(&c, r->rollback_max);
        cradle_cursor_put_u32(&c, r->corrections);
        cradle_cursor_put_u32(&c, r->own_overridden);
        break;
    }
    case CRADLE_WIRE_BYE:
        cradle_cursor_put_u8(&c, m->as.bye.reason);
        put_text(&c, m->as.bye.text, CRADLE_WIRE_TEXT_MAX);
        break;
    case CRADLE_WIRE_DESYNC:
        cradle_cursor_put_u64(&c, m->as.desync.step);
        cradle_cursor_put_u64(&c, m->as.desync.hash);
        cradle_cursor_put_u64(&c, m->as.desync.expected);
        break;
    case CRADLE_WIRE_DATA: {
        const cradle_wire_data *d = &m->as.data;
        cradle_cursor_put_u64(&c, d->at_step);
        cradle_cursor_put_u8(&c, d->epoch);
        cradle_cursor_put_u8(&c, d->file);
        cradle_cursor_put_u32(&c, d->total);
        cradle_cursor_put_bytes(&c, d->hash, sizeof d->hash);
        cradle_cursor_put_u32(&c, d->offset);
        cradle_cursor_put_u16(&c, d->length);
        if (d->length) cradle_cursor_put_bytes(&c, d->bytes, d->length);
        break;
    }
    default: return CRADLE_EINVAL; /* unreachable: check_fields refused it */
    }
    if (c.failed) return CRADLE_EFULL;
    *written = c.pos;
    return 0;
}

/* ---- decode ----------------------------------------------------------------- */

/* Takes n bytes in place; NULL (and the cursor failed) when fewer remain. */
static const uint8_t *take(cradle_cursor *c, size_t n) {
    if (c->failed || n > c->size - c->pos) {
        c->failed = true;
        return NULL;
    }
    const uint8_t *p = c->rdata + c->pos;
    c->pos += n;
    return p;
}

/* Reads a str8 into field (capacity max + 1). Returns false for a length
 * above max or a byte outside 0x20..0x7e; a short read sets c->failed. */
static bool get_text(cradle_cursor *c, char *field, size_t max) {
    uint8_t n = cradle_cursor_get_u8(c);
    field[0] = '\0';
    if (c->failed) return true; /* reported as truncation */
    if (n > max) return false;
    const uint8_t *p = take(c, n);
    if (!p) return true;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < 0x20 || p[i] > 0x7e) return false;
        field[i] = (char)p[i];
    }
    field[n] = '\0';
    return true;
}

static int refuse(cradle_wire_message *m, const char *problem) {
    m->problem = problem;
    return CRADLE_ENET_MESSAGE;
}

/* The decoders of each message type's body, after the header. Each returns
 * 0 or, for a field out of its range, the refusal; a short read only leaves
 * the cursor failed, reported by cradle_wire_decode as truncation. */

static int decode_hello(cradle_wire_message *m, cradle_cursor *c) {
    cradle_wire_hello *h = &m->as.hello;
    uint8_t flags = cradle_cursor_get_u8(c);
    if (!c->failed && (flags & ~CRADLE_WIRE_HELLO_SPECTATOR) != 0)
        return refuse(m, "hello: unknown flag bits are set");
    h->spectator = (flags & CRADLE_WIRE_HELLO_SPECTATOR) != 0;
    h->requested_slot = cradle_cursor_get_u8(c);
    bool text_ok = get_text(c, h->game, CRADLE_GAME_NAME_MAX) && get_text(c, h->build_id, CRADLE_GAME_BUILD_ID_MAX);
    if (!text_ok) return refuse(m, "hello: game name or build id is too long or not printable");
    h->credential_size = cradle_cursor_get_u16(c);
    if (!c->failed && h->credential_size > CRADLE_WIRE_CREDENTIAL_MAX)
        return refuse(m, "hello: credential is too long");
    cradle_cursor_get_bytes(c, h->credential, c->failed ? 0 : h->credential_size);
    return 0;
}

static int decode_welcome(cradle_wire_message *m, cradle_cursor *c) {
    cradle_wire_welcome *w = &m->as.welcome;
    w->slot = cradle_cursor_get_u8(c);
    w->players = cradle_cursor_get_u8(c);
    w->max_players = cradle_cursor_get_u8(c);
    w->input_bytes = cradle_cursor_get_u8(c);
    w->state_size = cradle_cursor_get_u32(c);
    w->steps_per_second = cradle_cursor_get_u32(c);
    w->source_frames_per_second = cradle_cursor_get_u32(c);
    w->seed = cradle_cursor_get_u64(c);
    w->input_delay = cradle_cursor_get_u16(c);
    w->hash_interval = cradle_cursor_get_u32(c);
    w->start_step = cradle_cursor_get_u64(c);
    w->epoch = cradle_cursor_get_u8(c);
    uint8_t flags = cradle_cursor_get_u8(c);
    if (!c->failed && (flags & ~CRADLE_WIRE_WELCOME_STATE_FOLLOWS) != 0)
        return refuse(m, "welcome: unknown flag bits are set");
    w->state_follows = (flags & CRADLE_WIRE_WELCOME_STATE_FOLLOWS) != 0;
    bool text_ok = get_text(c, w->game, CRADLE_GAME_NAME_MAX) && get_text(c, w->build_id, CRADLE_GAME_BUILD_ID_MAX);
    if (!text_ok) return refuse(m, "welcome: game name or build id is too long or not printable");
    return 0;
}

static int decode_refuse(cradle_wire_message *m, cradle_cursor *c) {
    m->as.refuse.reason = cradle_cursor_get_u8(c);
    if (!get_text(c, m->as.refuse.text, CRADLE_WIRE_TEXT_MAX))
        return refuse(m, "refuse: text is too long or not printable");
    return 0;
}

static int decode_input(cradle_wire_message *m, cradle_cursor *c) {
    cradle_wire_input *in = &m->as.input;
    in->ack = cradle_cursor_get_u64(c);
    in->first_step = cradle_cursor_get_u64(c);
    in->count = cradle_cursor_get_u8(c);
    in->input_bytes = cradle_cursor_get_u8(c);
    if (c->failed) return 0;
    if (in->count > CRADLE_WIRE_INPUT_STEPS_MAX) return refuse(m, "input: count is outside 0..16");
    if (in->input_bytes < 1 || in->input_bytes > CRADLE_GAME_MAX_INPUT_BYTES)
        return refuse(m, "input: input_bytes is outside 1..32");
    if (in->count > 0) in->inputs = take(c, (size_t)in->count * in->input_bytes);
    return 0;
}

/* STEPS: the hashes, then the rest of the message is count equal snapshots. */
static int decode_steps(cradle_wire_message *m, cradle_cursor *c) {
    cradle_wire_steps *s = &m->as.steps;
    s->first_step = cradle_cursor_get_u32(c);
    s->epoch = cradle_cursor_get_u8(c);
    s->count = cradle_cursor_get_u8(c);
    s->hash_count = cradle_cursor_get_u8(c);
    if (c->failed) return 0;
    if (s->count < 1 || s->count > CRADLE_WIRE_STEPS_MAX) return refuse(m, "steps: count is outside 1..64");
    if (s->hash_count > s->count) return refuse(m, "steps: more hashes than steps");
    for (uint32_t i = 0; i < s->hash_count; i++) {
        s->hashes[i].offset = cradle_cursor_get_u8(c);
        s->hashes[i].hash = cradle_cursor_get_u64(c);
    }
    if (c->failed) return 0;
    size_t rest = c->size - c->pos;
    if (rest == 0 || rest % s->count != 0) return refuse(m, "steps: snapshot bytes are not count equal parts");
    if (rest / s->count > CRADLE_SNAPSHOT_MAX) return refuse(m, "steps: snapshot_size is outside 1..4096");
    if (rest > CRADLE_WIRE_STEPS_BYTES_MAX) return refuse(m, "steps: snapshot bytes exceed 16384");
    s->snapshot_size = (uint16_t)(rest / s->count);
    s->snapshots = take(c, rest);
    return 0;
}

static int decode_state(cradle_wire_message *m, cradle_cursor *c) {
    cradle_wire_state *st = &m->as.state;
    st->step = cradle_cursor_get_u64(c);
    st->hash = cradle_cursor_get_u64(c);
    st->total = cradle_cursor_get_u32(c);
    st->offset = cradle_cursor_get_u32(c);
    st->length = cradle_cursor_get_u16(c);
    if (c->failed) return 0;
    if (st->length < 1 || st->length > CRADLE_WIRE_STATE_CHUNK_MAX)
        return refuse(m, "state: length is outside 1..1024");
    st->bytes = take(c, st->length);
    return 0;
}

static int decode_reload(cradle_wire_message *m, cradle_cursor *c) {
    m->as.reload.at_step = cradle_cursor_get_u64(c);
    m->as.reload.epoch = cradle_cursor_get_u8(c);
    if (!get_text(c, m->as.reload.build_id, CRADLE_GAME_BUILD_ID_MAX))
        return refuse(m, "reload: build id is too long or not printable");
    return 0;
}

static int decode_data(cradle_wire_message *m, cradle_cursor *c) {
    cradle_wire_data *d = &m->as.data;
    d->at_step = cradle_cursor_get_u64(c);
    d->epoch = cradle_cursor_get_u8(c);
    d->file = cradle_cursor_get_u8(c);
    d->total = cradle_cursor_get_u32(c);
    const uint8_t *hash = take(c, sizeof d->hash);
    if (hash) memcpy(d->hash, hash, sizeof d->hash);
    d->offset = cradle_cursor_get_u32(c);
    d->length = cradle_cursor_get_u16(c);
    if (c->failed) return 0;
    const char *problem = check_data(d);
    if (problem) return refuse(m, problem);
    d->bytes = d->length ? take(c, d->length) : NULL;
    return 0;
}

static int decode_bye(cradle_wire_message *m, cradle_cursor *c) {
    m->as.bye.reason = cradle_cursor_get_u8(c);
    if (!get_text(c, m->as.bye.text, CRADLE_WIRE_TEXT_MAX)) return refuse(m, "bye: text is too long or not printable");
    return 0;
}

static int decode_desync(cradle_wire_message *m, cradle_cursor *c) {
    m->as.desync.step = cradle_cursor_get_u64(c);
    m->as.desync.hash = cradle_cursor_get_u64(c);
    m->as.desync.expected = cradle_cursor_get_u64(c);
    return 0;
}

/* The body of a message by its type (range-checked by the caller). */
static int decode_body(cradle_wire_message *m, cradle_cursor *c) {
    switch (m->type) {
    case CRADLE_WIRE_HELLO: return decode_hello(m, c);
    case CRADLE_WIRE_WELCOME: return decode_welcome(m, c);
    case CRADLE_WIRE_REFUSE: return decode_refuse(m, c);
    case CRADLE_WIRE_INPUT: return decode_input(m, c);
    case CRADLE_WIRE_STEPS: return decode_steps(m, c);
    case CRADLE_WIRE_STATE: return decode_state(m, c);
    case CRADLE_WIRE_RELOAD: return decode_reload(m, c);
    case CRADLE_WIRE_PING:
        m->as.ping.echo = cradle_cursor_get_u64(c);
        m->as.ping.rtt_us = cradle_cursor_get_u32(c);
        return 0;
    case CRADLE_WIRE_PONG:
        m->as.ping.echo = cradle_cursor_get_u64(c);
        m->as.ping.hold_us = cradle_cursor_get_u32(c);
        return 0;
    case CRADLE_WIRE_BYE: return decode_bye(m, c);
    case CRADLE_WIRE_DESYNC: return decode_desync(m, c);
    case CRADLE_WIRE_DATA: return decode_data(m, c);
    case CRADLE_WIRE_DELAY: m->as.delay.input_delay = cradle_cursor_get_u16(c); return 0;
    case CRADLE_WIRE_REPORT: {
        cradle_wire_report *r = &m->as.report;
        r->window = cradle_cursor_get_u16(c);
        r->ahead = cradle_cursor_get_u16(c);
        r->steps = cradle_cursor_get_u32(c);
        r->rollbacks = cradle_cursor_get_u32(c);
        r->rollback_steps = cradle_cursor_get_u32(c);
        r->rollback_max = cradle_cursor_get_u16(c);
        r->corrections = cradle_cursor_get_u32(c);
        r->own_overridden = cradle_cursor_get_u32(c);
        return 0;
    }
    default: return refuse(m, "unknown message type"); /* unreachable: range checked above */
    }
}

int cradle_wire_decode(cradle_wire_message *m, const void *data, size_t size) {
    assert(m && (data || size == 0));
    memset(m, 0, sizeof *m);
    if (size < CRADLE_WIRE_HEADER_BYTES) return refuse(m, "message is shorter than its header");
    if (size > CRADLE_WIRE_MESSAGE_MAX) return refuse(m, "message is longer than the maximum");
    cradle_cursor c = cradle_cursor_reader(data, size);
    m->type = cradle_cursor_get_u8(&c);
    m->version = cradle_cursor_get_u8(&c);
    if (m->type < CRADLE_WIRE_TYPE_FIRST || m->type > CRADLE_WIRE_TYPE_LAST)
        return refuse(m, "unknown message type");
    if (m->version != CRADLE_WIRE_VERSION) {
        m->problem = "protocol version differs";
        return CRADLE_ENET_VERSION;
    }
    int rc = decode_body(m, &c);
    if (rc != 0) return rc;
    if (c.failed) return refuse(m, "message is truncated");
    if (c.pos != size) return refuse(m, "message has trailing bytes");
    const char *problem = check_fields(m);
    if (problem) return refuse(m, problem);
    return 0;
}

/* The message's pointer field and the bytes it refers to, or NULL. */
static const uint8_t **payload_of(cradle_wire_message *m, size_t *size) {
    switch (m->type) {
    case CRADLE_WIRE_INPUT: *size = (size_t)m->as.input.count * m->as.input.input_bytes; return &m->as.input.inputs;
    case CRADLE_WIRE_STEPS:
        *size = (size_t)m->as.steps.count * m->as.steps.snapshot_size;
        return &m->as.steps.snapshots;
    case CRADLE_WIRE_STATE: *size = m->as.state.length; return &m->as.state.bytes;
    case CRADLE_WIRE_DATA: *size = m->as.data.length; return &m->as.data.bytes;
    default: *size = 0; return NULL;
    }
}

size_t cradle_wire_detach(cradle_wire_message *m, void *payload, size_t capacity) {
    assert(m && (payload || capacity == 0));
    size_t size = 0;
    const uint8_t **field = payload_of(m, &size);
    if (!field) return 0;
    if (size > capacity) return SIZE_MAX;
    if (size) memcpy(payload, *field, size);
    *field = NULL;
    return size;
}

void cradle_wire_attach(cradle_wire_message *m, const void *payload) {
    assert(m && payload);
    size_t size = 0;
    const uint8_t **field = payload_of(m, &size);
    if (field) *field = size ? payload : NULL;
}
