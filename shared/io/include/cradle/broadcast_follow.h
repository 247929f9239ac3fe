#ifndef CRADLE_BROADCAST_FOLLOW_H
#define CRADLE_BROADCAST_FOLLOW_H
/*
 * broadcast_follow: one viewer's place in a broadcast (broadcast.h) and the
 * protocol that moves it, with no I/O and no clock: the caller fetches what
 * it is asked for, however it likes (a thread with blocking libcurl in
 * broadcast_mirror.c, thousands of viewers over libcurl's multi interface
 * in tools/cradle_viewers.c, a test's bytes), and hands the bytes back.
 *
 * The protocol. The sync document every poll; once, the start document
 * (the log header of the sync's session); then the keyframe the choice
 * below names (decoded and checked), or fragment 0 when none is listed;
 * then every fragment from the keyframe's on, in order, each checked
 * against the one before (cradle_broadcast_fragment_check). A fragment in
 * one of the sync's gaps makes the follower start again at the first
 * keyframe after the gap (a new segment). It is done once the sync says
 * "ended" and it holds the fragment with the trailer.
 *
 * Failures. A document that fails its check is refused: take_* returns
 * CRADLE_EBROADCAST with a message naming the document ("fragment 3:
 * checksum ...", "keyframe 2: holds step 10, the sync document says 12"),
 * and the follower asks for nothing but the sync document until it has
 * taken the next one; then it asks for the refused document again. A fetch
 * that failed (HTTP, memory, the caller's disk) is told with _failed and
 * waits the same way. Nothing unverified moves the follower.
 *
 * Time. `now` is any monotonic clock in nanoseconds, the caller's; the
 * follower only compares it with the poll times it was given.
 *
 * Memory. Fixed size, nothing allocated; the caller owns the struct and the
 * config, which must outlive it (many followers may share one config).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/broadcast.h"
#include "cradle/errors.h"
#include "cradle/log.h"

#define CRADLE_BROADCAST_FOLLOW_POLL_MS 500u

/* Which keyframe a follower starts from (and starts again from after a
 * gap: only keyframes after the gap count). */
typedef enum cradle_broadcast_follow_from {
    CRADLE_BROADCAST_FOLLOW_NEWEST = 0, /* the newest keyframe listed (cradle-viewers) */
    CRADLE_BROADCAST_FOLLOW_DELAYED,    /* the newest at or before the first step shown, the
                                           sync's live step less delay_ms, else the oldest
                                           (cradle-client --watch) */
    CRADLE_BROADCAST_FOLLOW_FIRST,      /* never a keyframe: fragment 0 on, the whole log
                                           (cradle-replay URL); after a gap it goes no further */
} cradle_broadcast_follow_from;

typedef struct cradle_broadcast_follow_config {
    cradle_broadcast_follow_from from;
    uint32_t delay_ms;         /* DELAYED: how far behind live the viewer plays */
    uint32_t poll_ms;          /* the sync document's period; 0 = 500 */
    const char *game;          /* not NULL: the broadcast must be of this game */
    const uint8_t *verify_key; /* not NULL: the server's Ed25519 public key (32 bytes): every
                                  fragment block and keyframe must be signed by it */
} cradle_broadcast_follow_config;

/* What a follower asks for. The documents have broadcast.h's numbers. */
typedef enum cradle_broadcast_follow_want {
    CRADLE_BROADCAST_FOLLOW_WAIT = 0,                          /* nothing until the next poll */
    CRADLE_BROADCAST_FOLLOW_START = CRADLE_BROADCAST_START,
    CRADLE_BROADCAST_FOLLOW_SYNC = CRADLE_BROADCAST_SYNC,
    CRADLE_BROADCAST_FOLLOW_FRAGMENT = CRADLE_BROADCAST_FRAGMENT, /* number */
    CRADLE_BROADCAST_FOLLOW_KEYFRAME = CRADLE_BROADCAST_KEYFRAME, /* number */
    CRADLE_BROADCAST_FOLLOW_DONE = 16,                         /* nothing ever again */
} cradle_broadcast_follow_want;

/* What asking found on the way, for the caller to count or show. */
typedef enum cradle_broadcast_follow_note {
    CRADLE_BROADCAST_FOLLOW_NOTHING = 0,
    CRADLE_BROADCAST_FOLLOW_GAP,     /* it skipped a gap: message names its fragments */
    CRADLE_BROADCAST_FOLLOW_REFUSED, /* the sync and the fragments taken disagree (an
                                        ended broadcast without its trailer...): message */
} cradle_broadcast_follow_note;

typedef struct cradle_broadcast_follow_ask {
    cradle_broadcast_follow_want want;
    uint64_t number; /* FRAGMENT, KEYFRAME: which one */
    cradle_broadcast_follow_note note;
    char message[CRADLE_BROADCAST_MESSAGE_MAX]; /* "" unless note */
} cradle_broadcast_follow_ask;

/* One viewer's place. The caller may read every field; only the functions
 * below write them. */
typedef struct cradle_broadcast_follow {
    const cradle_broadcast_follow_config *config;
    uint64_t poll_ns;          /* config's period */
    uint64_t next_poll;        /* when the next sync document is due (the caller's clock) */
    bool have_sync, have_start;
    cradle_broadcast_sync sync; /* the newest taken */
    uint8_t start[CRADLE_LOG_HEADER_BYTES]; /* have_start: the session's log header */
    /* the segment: where the fragments it takes start */
    uint32_t segment;          /* 0 until it first has a place; 1, 2, ... after each gap */
    bool positioned;           /* it knows its next fragment */
    bool from_keyframe;        /* the segment starts at key (else at fragment 0) */
    cradle_broadcast_keyframe_ref key; /* the keyframe it starts from, or asks for */
    uint32_t key_block;        /* that keyframe's log block */
    uint64_t next_fragment;
    bool any_place;            /* the next fragment is the segment's first after its keyframe */
    cradle_broadcast_position expect; /* else where the next fragment must start */
    bool after_gap;            /* waiting for a keyframe after fragment resume_after */
    uint64_t resume_after;
    bool stalled;              /* a refusal or failure: nothing but sync until one is taken */
    bool trailer;              /* it took the fragment with the session's trailer */
    bool done;                 /* nothing more to ask */
    bool complete;             /* done well: it took the trailer, or the end came while it
                                  waited for a keyframe after a gap */
    /* counts */
    uint64_t syncs;            /* sync documents taken as the newest */
    uint64_t keyframes, fragments, gaps, refused;
} cradle_broadcast_follow;

/* A follower with nothing yet, its first sync document due at first_poll. */
void cradle_broadcast_follow_init(cradle_broadcast_follow *f, const cradle_broadcast_follow_config *config,
                                  uint64_t first_poll);

/* What f asks for now: the sync document when a poll is due, else the next
 * step of the protocol, or WAIT (for the next poll) or DONE. Asking again
 * without taking anything gives the same answer (a poll may fall due); what
 * a call finds on the way (a gap it skips, a refusal that ends it) is in
 * the ask's note once. */
void cradle_broadcast_follow_next(cradle_broadcast_follow *f, uint64_t now, cradle_broadcast_follow_ask *ask);

/* "<base>sync", "<base>frag/<n>"...: the URL of a document ask wants. Returns
 * 0 or CRADLE_ERANGE (out too small). */
CRADLE_MUST_CHECK int cradle_broadcast_follow_url(char *out, size_t size, const char *base,
                                                  const cradle_broadcast_follow_ask *ask);

/* The sync request went out at now: the next is due one period later (a
 * late one keeps the period, not the beat). */
void cradle_broadcast_follow_polled(cradle_broadcast_follow *f, uint64_t now);

/* The document asked for could not be had (HTTP, memory, the caller's own
 * storage): f waits for the next sync document. */
void cradle_broadcast_follow_failed(cradle_broadcast_follow *f);

/* The documents asked for, each checked strictly (broadcast.h). Each returns
 * 0, or CRADLE_EBROADCAST with a message naming the document and what was
 * wrong (f refuses it: counted, and nothing but sync until the next one).
 *
 * take_sync: a sync document of another session than the start taken is
 * refused; a copy older than the one held (fewer fragments: a cache's) is
 * taken and ignored. take_start: the start document, of the sync's session
 * (and config's game). */
CRADLE_MUST_CHECK int cradle_broadcast_follow_take_sync(cradle_broadcast_follow *f, const void *text, size_t size,
                                                        char *message, size_t message_size);
CRADLE_MUST_CHECK int cradle_broadcast_follow_take_start(cradle_broadcast_follow *f, const uint8_t *doc,
                                                         size_t size, char *message, size_t message_size);

/* The keyframe f asked for, decoded with codec into state (capacity bytes),
 * *k filled: of f's session, signed when a key is pinned, holding the step
 * the sync named. Taken, f's new segment starts there. */
CRADLE_MUST_CHECK int cradle_broadcast_follow_take_keyframe(cradle_broadcast_follow *f, cradle_state_pack *codec,
                                                            const uint8_t *doc, size_t size, void *state,
                                                            size_t capacity, cradle_broadcast_keyframe *k,
                                                            char *message, size_t message_size);

/* The fragment f asked for: buffer holds f->start followed by the
 * fragment's bytes (size in all). Checked against the fragment before it,
 * or, first after a keyframe, holding the keyframe's step and block; *info
 * says what it holds (its data files, whether it ends the session). */
CRADLE_MUST_CHECK int cradle_broadcast_follow_take_fragment(cradle_broadcast_follow *f, const uint8_t *buffer,
                                                            size_t size, cradle_broadcast_fragment_info *info,
                                                            char *message, size_t message_size);

#endif
