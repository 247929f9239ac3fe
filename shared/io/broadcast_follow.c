/*
 * broadcast_follow: one viewer's place in a broadcast and the protocol that
 * moves it (see broadcast_follow.h). The checks of each document are
 * broadcast.c's; this file adds what ties them together: the session, the
 * keyframe's step and block, the order of fragments, gaps and the end.
 */
#include "cradle/broadcast_follow.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int refuse(cradle_broadcast_follow *f, char *message, size_t message_size, const char *format, ...) {
    if (message && message_size) {
        va_list args;
        va_start(args, format);
        (void)vsnprintf(message, message_size, format, args);
        va_end(args);
    }
    f->refused++;
    f->stalled = true;
    return CRADLE_EBROADCAST;
}

/* A broadcast.h check's message without its "<what>: " prefix, so the
 * document can be named by number ("fragment 1: ..."). */
static const char *after_prefix(const char *message) {
    const char *colon = strstr(message, ": ");
    return colon ? colon + 2 : message;
}

void cradle_broadcast_follow_init(cradle_broadcast_follow *f, const cradle_broadcast_follow_config *config,
                                  uint64_t first_poll) {
    assert(f && config);
    memset(f, 0, sizeof *f);
    f->config = config;
    f->poll_ns = (uint64_t)(config->poll_ms ? config->poll_ms : CRADLE_BROADCAST_FOLLOW_POLL_MS) * 1000000u;
    f->next_poll = first_poll;
}

void cradle_broadcast_follow_polled(cradle_broadcast_follow *f, uint64_t now) {
    f->next_poll += f->poll_ns;
    if (f->next_poll <= now) f->next_poll = now + f->poll_ns;
}

void cradle_broadcast_follow_failed(cradle_broadcast_follow *f) { f->stalled = true; }

int cradle_broadcast_follow_url(char *out, size_t size, const char *base, const cradle_broadcast_follow_ask *ask) {
    assert(ask->want != CRADLE_BROADCAST_FOLLOW_WAIT && ask->want != CRADLE_BROADCAST_FOLLOW_DONE);
    return cradle_broadcast_url(out, size, base, (cradle_broadcast_doc)ask->want, ask->number, NULL);
}

/* ---- where to start ----------------------------------------------------- */

/* The keyframe the config's choice names, past the gap f skips; NULL:
 * none. Keyframes are listed oldest first. */
static const cradle_broadcast_keyframe_ref *pick_keyframe(const cradle_broadcast_follow *f) {
    const cradle_broadcast_sync *s = &f->sync;
    if (f->config->from == CRADLE_BROADCAST_FOLLOW_FIRST) return NULL;
    uint64_t first_shown = UINT64_MAX;
    if (f->config->from == CRADLE_BROADCAST_FOLLOW_DELAYED) {
        uint64_t behind = (uint64_t)f->config->delay_ms * s->steps_per_second / 1000u;
        first_shown = s->live_step > behind ? s->live_step - behind : 0;
    }
    const cradle_broadcast_keyframe_ref *pick = NULL;
    for (uint32_t i = 0; i < s->keyframe_count; i++) {
        const cradle_broadcast_keyframe_ref *k = &s->keyframes[i];
        if (f->after_gap && k->fragment <= f->resume_after) continue;
        if (!pick || k->step <= first_shown) pick = k;
    }
    return pick;
}

/* Fragment n is in a gap: f starts again at a keyframe after it. */
static void skip_gap(cradle_broadcast_follow *f, uint64_t n, cradle_broadcast_follow_ask *ask) {
    uint64_t last = n;
    for (uint32_t i = 0; i < f->sync.gap_count; i++)
        if (n >= f->sync.gaps[i].first && n <= f->sync.gaps[i].last) last = f->sync.gaps[i].last;
    f->gaps++;
    f->after_gap = true;
    f->resume_after = last;
    f->positioned = false;
    ask->note = CRADLE_BROADCAST_FOLLOW_GAP;
    (void)snprintf(ask->message, sizeof ask->message,
                   "gap: fragments %" PRIu64 "..%" PRIu64 " were lost before they reached the origin; "
                   "starting again at a keyframe after them", n, last);
}

static void finish(cradle_broadcast_follow *f, bool complete, cradle_broadcast_follow_ask *ask) {
    f->done = true;
    f->complete = complete;
    ask->want = CRADLE_BROADCAST_FOLLOW_DONE;
}

/* The end, or the sync and the fragments taken disagree about it. */
static void finish_refused(cradle_broadcast_follow *f, cradle_broadcast_follow_ask *ask, uint64_t fragment,
                           const char *why) {
    ask->note = CRADLE_BROADCAST_FOLLOW_REFUSED;
    (void)refuse(f, ask->message, sizeof ask->message, "fragment %" PRIu64 ": %s", fragment, why);
    finish(f, false, ask);
}

/* Without a place: the keyframe to fetch, or fragment 0. False: nothing to
 * start from now (ask says WAIT or DONE). */
static bool find_place(cradle_broadcast_follow *f, cradle_broadcast_follow_ask *ask) {
    const cradle_broadcast_keyframe_ref *k = pick_keyframe(f);
    if (k) {
        f->key = *k;
        ask->want = CRADLE_BROADCAST_FOLLOW_KEYFRAME;
        ask->number = k->key;
        return false;
    }
    if (!f->after_gap && cradle_broadcast_sync_in_gap(&f->sync, 0)) skip_gap(f, 0, ask);
    if (f->after_gap) {
        /* nothing to start from past the gap yet; none will come after the end */
        if (f->sync.ended) finish(f, true, ask);
        return false;
    }
    f->segment++; /* no keyframe: the whole log, from fragment 0 */
    f->positioned = true;
    f->from_keyframe = false;
    f->next_fragment = 0;
    f->any_place = false;
    f->expect = (cradle_broadcast_position){0, 0};
    return true;
}

void cradle_broadcast_follow_next(cradle_broadcast_follow *f, uint64_t now, cradle_broadcast_follow_ask *ask) {
    ask->want = CRADLE_BROADCAST_FOLLOW_WAIT;
    ask->number = 0;
    ask->note = CRADLE_BROADCAST_FOLLOW_NOTHING;
    ask->message[0] = '\0';
    if (f->done) {
        ask->want = CRADLE_BROADCAST_FOLLOW_DONE;
        return;
    }
    if (now >= f->next_poll) {
        ask->want = CRADLE_BROADCAST_FOLLOW_SYNC;
        return;
    }
    if (!f->have_sync || f->stalled) return;
    if (!f->have_start) {
        ask->want = CRADLE_BROADCAST_FOLLOW_START;
        return;
    }
    for (;;) {
        if (!f->positioned && !find_place(f, ask)) return;
        if (f->next_fragment < f->sync.fragments) {
            if (f->trailer) {
                finish_refused(f, ask, f->next_fragment, "listed after the fragment that held the session's trailer");
                return;
            }
            if (cradle_broadcast_sync_in_gap(&f->sync, f->next_fragment)) {
                skip_gap(f, f->next_fragment, ask);
                continue;
            }
            ask->want = CRADLE_BROADCAST_FOLLOW_FRAGMENT;
            ask->number = f->next_fragment;
            return;
        }
        if (f->sync.ended) {
            if (f->trailer) finish(f, true, ask);
            else
                finish_refused(f, ask, f->sync.fragments - 1u,
                               "the sync document says the broadcast ended with it, but it holds no trailer");
        }
        return;
    }
}

/* ---- the documents ------------------------------------------------------ */

int cradle_broadcast_follow_take_sync(cradle_broadcast_follow *f, const void *text, size_t size, char *message,
                                      size_t message_size) {
    if (size == 0) return refuse(f, message, message_size, "sync: an empty document");
    cradle_broadcast_sync s;
    char why[CRADLE_BROADCAST_MESSAGE_MAX];
    if (cradle_broadcast_sync_decode(text, size, &s, why, sizeof why) != 0)
        return refuse(f, message, message_size, "%s", why);
    bool same = f->have_sync && memcmp(s.session, f->sync.session, sizeof s.session) == 0;
    if (f->have_start && !same)
        return refuse(f, message, message_size, "sync: now names another session than the one this viewer follows");
    f->stalled = false;
    if (same && s.fragments < f->sync.fragments) return 0; /* a cache's older copy: keep the newer */
    f->sync = s;
    f->have_sync = true;
    f->syncs++;
    return 0;
}

int cradle_broadcast_follow_take_start(cradle_broadcast_follow *f, const uint8_t *doc, size_t size, char *message,
                                       size_t message_size) {
    assert(f->have_sync && !f->have_start);
    if (size != CRADLE_LOG_HEADER_BYTES)
        return refuse(f, message, message_size, "start: %zu bytes, a log header is %u", size, CRADLE_LOG_HEADER_BYTES);
    cradle_log_reader r;
    char why[CRADLE_LOG_MESSAGE_MAX];
    if (cradle_log_reader_open_memory(&r, doc, size, why, sizeof why) != 0)
        return refuse(f, message, message_size, "start: %s", why);
    char game[sizeof r.header.game_name];
    memcpy(game, r.header.game_name, sizeof game);
    cradle_log_reader_close(&r);
    uint8_t session[CRADLE_BROADCAST_SESSION_BYTES];
    cradle_broadcast_session_of(doc, session);
    if (memcmp(session, f->sync.session, sizeof session) != 0)
        return refuse(f, message, message_size, "start: of another session than the sync document's");
    if (f->config->game && strcmp(game, f->config->game) != 0)
        return refuse(f, message, message_size, "start: a broadcast of game '%s', not '%s'", game, f->config->game);
    memcpy(f->start, doc, sizeof f->start);
    f->have_start = true;
    return 0;
}

int cradle_broadcast_follow_take_keyframe(cradle_broadcast_follow *f, cradle_state_pack *codec,
                                          const uint8_t *doc, size_t size, void *state, size_t capacity,
                                          cradle_broadcast_keyframe *k, char *message, size_t message_size) {
    assert(f->have_start && !f->positioned);
    uint64_t number = f->key.key;
    if (size == 0) return refuse(f, message, message_size, "keyframe %" PRIu64 ": an empty document", number);
    uint8_t session[CRADLE_BROADCAST_SESSION_BYTES];
    cradle_broadcast_session_of(f->start, session);
    char why[CRADLE_BROADCAST_MESSAGE_MAX];
    if (cradle_broadcast_keyframe_decode(codec, doc, size, session, f->config->verify_key, k, state, capacity, why,
                                         sizeof why) != 0)
        return refuse(f, message, message_size, "keyframe %" PRIu64 ": %s", number, after_prefix(why));
    if (k->step != f->key.step)
        return refuse(f, message, message_size, "keyframe %" PRIu64 ": holds step %" PRIu64
                      ", the sync document says %" PRIu64, number, k->step, f->key.step);
    f->keyframes++;
    f->segment++;
    f->positioned = true;
    f->from_keyframe = true;
    f->key_block = k->block_sequence;
    f->after_gap = false;
    f->any_place = true;
    f->next_fragment = f->key.fragment;
    return 0;
}

/* The first fragment after a keyframe must hold the keyframe's step and
 * block. Returns 0 or a refusal. */
static int holds_keyframe(cradle_broadcast_follow *f, const cradle_broadcast_fragment_info *info, char *message,
                          size_t message_size) {
    if (info->first.step > f->key.step + 1u)
        return refuse(f, message, message_size, "fragment %" PRIu64 ": starts at step %" PRIu64 ", after keyframe %"
                      PRIu64 "'s step %" PRIu64, f->next_fragment, info->first.step, f->key.key, f->key.step);
    if (f->key_block < info->first.sequence || f->key_block >= info->end.sequence)
        return refuse(f, message, message_size, "fragment %" PRIu64 ": blocks %" PRIu32 "..%" PRIu32 ", not keyframe %"
                      PRIu64 "'s block %" PRIu32, f->next_fragment, info->first.sequence, info->end.sequence - 1u,
                      f->key.key, f->key_block);
    return 0;
}

int cradle_broadcast_follow_take_fragment(cradle_broadcast_follow *f, const uint8_t *buffer, size_t size,
                                          cradle_broadcast_fragment_info *info, char *message, size_t message_size) {
    assert(f->positioned && !f->trailer && size >= CRADLE_LOG_HEADER_BYTES);
    assert(memcmp(buffer, f->start, CRADLE_LOG_HEADER_BYTES) == 0);
    char why[CRADLE_BROADCAST_MESSAGE_MAX];
    if (cradle_broadcast_fragment_check(buffer, size, f->any_place ? NULL : &f->expect, f->config->verify_key, info,
                                        why, sizeof why) != 0)
        return refuse(f, message, message_size, "fragment %" PRIu64 ": %s", f->next_fragment, after_prefix(why));
    if (f->any_place && holds_keyframe(f, info, message, message_size) != 0) return CRADLE_EBROADCAST;
    f->fragments++;
    f->any_place = false;
    f->expect = info->end;
    f->next_fragment++;
    if (info->trailer) f->trailer = true;
    return 0;
}
