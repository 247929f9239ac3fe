#ifndef CRADLE_BROADCAST_H
#define CRADLE_BROADCAST_H
/*
 * broadcast: the documents of a session broadcast over HTTP (the GOTV+
 * model: the server uploads, any HTTP cache or CDN fans out). What they
 * hold and how each is checked; the server's uploader is
 * server/src/broadcast.c, the viewers' fetching broadcast_mirror.h.
 *
 * Under a broadcast's base URL B (ending in '/'):
 *   B/start        the session log's 256-byte header, exactly as in the log
 *   B/frag/<n>     fragment n (0, 1, 2, ...): whole log blocks, in order.
 *                  start, frag/0, frag/1, ... concatenated are the
 *                  server's session log byte for byte.
 *   B/key/<n>      keyframe n: the state block after a hash step, zstd-
 *                  compressed, with the step, its hash and the build
 *   B/data/<hex>   a game data file the session applied, named by its
 *                  BLAKE2b-256 (the log's DATA record names it)
 *   B/web/<hex>    a file of the browser viewer's (below), named by the
 *                  SHA-256 of its bytes: a build's WebAssembly twin, its
 *                  sound files, its manifest
 *   B/sync         the sync document (JSON): the newest fragment, recent
 *                  keyframes, gaps, the live step; the only document that
 *                  changes. Everything else is immutable: its URL always
 *                  names the same bytes, so caches keep it for a year.
 *
 * A keyframe (version 1), little-endian:
 *     0   8  magic 89 'C' 'R' 'D' 'K' 'E' 'Y' 0A
 *     8   4  version (1)            12   4  header bytes (256)
 *    16  16  session: the log header's checksum (its bytes 240..255)
 *    32   8  step: the state is the one after this step ran
 *    40   8  state hash (cradle_hash64), as the log's HASH record of step
 *    48   4  state size             52   4  compressed bytes that follow
 *    56   4  block: sequence of the log block holding step's HASH record
 *    60   4  reserved, zero
 *    64   8  that block's first step
 *    72  64  build id in charge, NUL-padded (1..63 printable bytes)
 *   136  40  reserved, zero
 *   176  16  BLAKE2b-128 of bytes 0..175 and the compressed bytes
 *   192  64  Ed25519 signature by the server's key of "cradle-keyframe-v1"
 *            NUL and bytes 0..191; all zero when the server signs nothing
 *   256      one zstd frame of exactly state size bytes
 *
 * Signing. A secure server (one with --key) signs every log block
 * (log.h's SIGN record: over the block, its place and the session) and
 * every keyframe with its Ed25519 key. A viewer that pins that key
 * (--verify-key, cradle-keys pub server.key --sign) refuses any fragment
 * block or keyframe it did not sign for this session; start is vouched for
 * by the blocks (they sign its checksum). The sync document is not signed:
 * it only points at documents that are checked themselves, so a forged one
 * can delay a viewer, never feed it a step the server did not run.
 *
 * The sync document (version 2), one JSON object, every field required:
 *   {"cradle_broadcast":2, "session":"<32 hex>", "game":"vanguard",
 *    "build":"<build in charge>", "steps_per_second":60, "fragment_ms":2000,
 *    "fragments":N,                     fragments 0..N-1 are published
 *    "keyframes":[{"key":K,"step":S,"fragment":F}, ...],  oldest first; a
 *                 viewer starts at fragment F, which holds step S's hash
 *    "gaps":[{"first":A,"last":B}, ...], fragments lost before upload
 *    "web":[{"build":"<build id>","manifest":"<64 hex>"}, ...],  0..4 of
 *                 the builds the session ran, oldest first, each once: the
 *                 SHA-256 of that build's web manifest (B/web/<manifest>).
 *                 A build the server has no WebAssembly twin of is not
 *                 listed (a browser cannot show it; a native viewer can)
 *    "live":{"step":S,"unix_ms":T},     the server was running step S at T
 *    "ended":false}                     true once the trailer's fragment is up
 * Version 1 was the same without "web"; a reader takes its own version
 * only.
 *
 * The browser viewer's files (B/web/<hex>, immutable like data files). A
 * game build's WebAssembly twin is the file beside its library named like
 * it with ".wasm" for ".so" (counter.so: counter.wasm), made by the SDK;
 * its custom section "cradle_build" holds exactly the build id's bytes
 * (wasm_module.h), which the server checks before it publishes anything.
 * Each file is named by the SHA-256 of its bytes (a browser checks it with
 * WebCrypto, which has SHA-256 and not BLAKE2b): the module, each sound
 * file, and the build's manifest, one line of JSON:
 *   {"cradle_web":1, "game":"vanguard", "build":"<build id>",
 *    "wasm":{"sha256":"<64 hex>","bytes":N},
 *    "sounds":[{"name":"<contract sound name>","sha256":"<64 hex>","bytes":N},
 *              ...]}
 * sounds follow the contract's order (sound id i plays sounds[i-1]); a
 * sound file the server lacks is listed with "sha256":null,"bytes":0, so
 * the ids keep their places. Each file is at most
 * CRADLE_BROADCAST_WEB_FILE_MAX bytes.
 *
 * Checks are strict: every document is refused with a message naming the
 * document and what was wrong ("keyframe 4: checksum mismatch", "sync:
 * \"fragments\" must be an integer ..."), never trusted in part.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"
#include "cradle/game_abi.h"
#include "cradle/log.h"
#include "cradle/state_pack.h"

#define CRADLE_BROADCAST_VERSION 2u          /* of the sync document */
#define CRADLE_BROADCAST_KEYFRAME_VERSION 1u /* of a keyframe */
#define CRADLE_BROADCAST_WEB_VERSION 1u      /* of a web manifest ("cradle_web") */
#define CRADLE_BROADCAST_SESSION_BYTES 16u
#define CRADLE_BROADCAST_KEYFRAME_HEADER_BYTES 256u
/* Bytes of a sync document: the largest the server writes (every list full,
 * every number at its top, every string of bytes JSON escapes) is 2174. */
#define CRADLE_BROADCAST_SYNC_MAX 4096u
#define CRADLE_BROADCAST_KEYFRAMES_MAX 8u     /* keyframes a sync document lists */
#define CRADLE_BROADCAST_GAPS_MAX 8u          /* gaps a sync document lists */
#define CRADLE_BROADCAST_FRAGMENT_MAX (8u << 20) /* bytes of one fragment */
#define CRADLE_BROADCAST_STATE_MAX (64u << 20)   /* state bytes of a keyframe */
#define CRADLE_BROADCAST_URL_MAX 1024u
#define CRADLE_BROADCAST_MESSAGE_MAX 256u
#define CRADLE_BROADCAST_FRAGMENT_DATA_MAX 16u /* DATA records one fragment may hold */
#define CRADLE_BROADCAST_WEB_MAX 4u            /* builds a sync document lists in "web" */
#define CRADLE_BROADCAST_WEB_HASH_BYTES 32u    /* SHA-256 (crypto_hash_sha256_BYTES) */
#define CRADLE_BROADCAST_WEB_FILE_MAX (16u << 20) /* bytes of one web file (a module, a sound) */
/* Bytes of a web manifest: its worst case (CRADLE_GAME_MAX_SOUNDS sounds of
 * the longest names, every byte one JSON escapes) is 92242. */
#define CRADLE_BROADCAST_WEB_MANIFEST_MAX (128u << 10)

typedef enum cradle_broadcast_doc {
    CRADLE_BROADCAST_START = 1,
    CRADLE_BROADCAST_SYNC,
    CRADLE_BROADCAST_FRAGMENT, /* number */
    CRADLE_BROADCAST_KEYFRAME, /* number */
    CRADLE_BROADCAST_DATA,     /* hash */
    CRADLE_BROADCAST_WEB,      /* hash (SHA-256) */
} cradle_broadcast_doc;

/* The session's id: the log header's checksum (bytes 240..255 of start). */
void cradle_broadcast_session_of(const uint8_t header[CRADLE_LOG_HEADER_BYTES],
                                 uint8_t session[CRADLE_BROADCAST_SESSION_BYTES]);

/* "<base>start", "<base>frag/<n>", "<base>key/<n>", "<base>data/<hex>",
 * "<base>web/<hex>", "<base>sync" into out; base ends in '/' (or is "" for
 * the relative path). hash: 32 bytes, for data and web documents only.
 * Returns 0 or CRADLE_ERANGE when out is too small. */
CRADLE_MUST_CHECK int cradle_broadcast_url(char *out, size_t size, const char *base, cradle_broadcast_doc doc,
                                           uint64_t number, const uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES]);

/* ---- the sync document -------------------------------------------------- */

typedef struct cradle_broadcast_keyframe_ref {
    uint64_t key;      /* its number: B/key/<key> */
    uint64_t step;     /* the state after this step */
    uint64_t fragment; /* the fragment to start from: it holds step's hash */
} cradle_broadcast_keyframe_ref;

typedef struct cradle_broadcast_gap {
    uint64_t first, last; /* fragments first..last were lost */
} cradle_broadcast_gap;

/* A build the browser viewer can show: its web manifest. */
typedef struct cradle_broadcast_web {
    char build[CRADLE_GAME_BUILD_ID_MAX + 1];
    uint8_t manifest[CRADLE_BROADCAST_WEB_HASH_BYTES]; /* SHA-256: B/web/<hex> */
} cradle_broadcast_web;

typedef struct cradle_broadcast_sync {
    uint8_t session[CRADLE_BROADCAST_SESSION_BYTES];
    char game[CRADLE_GAME_NAME_MAX + 1];
    char build[CRADLE_GAME_BUILD_ID_MAX + 1];
    uint32_t steps_per_second; /* 1..1000 */
    uint32_t fragment_ms;      /* 100..60000 */
    uint64_t fragments;
    uint32_t keyframe_count;
    cradle_broadcast_keyframe_ref keyframes[CRADLE_BROADCAST_KEYFRAMES_MAX];
    uint32_t gap_count;
    cradle_broadcast_gap gaps[CRADLE_BROADCAST_GAPS_MAX];
    uint32_t web_count;
    cradle_broadcast_web web[CRADLE_BROADCAST_WEB_MAX]; /* oldest first, builds distinct */
    uint64_t live_step;
    uint64_t live_unix_ms;
    bool ended;
} cradle_broadcast_sync;

/* Writes s as one line of JSON (no newline) into out. Returns the length,
 * or 0 when it does not fit (asserts s is valid). */
size_t cradle_broadcast_sync_encode(const cradle_broadcast_sync *s, char *out, size_t size);

/* Parses and checks a sync document: strict JSON (json_reader.h), every
 * field present and none unknown, version 2, hex session, printable game and
 * build, ranges, keyframes increasing in key and step with fragment <
 * fragments, gaps increasing and within fragments, no keyframe in a gap,
 * web entries of printable builds, each once, and 64 lowercase hex.
 * Returns 0 or CRADLE_EBROADCAST with "sync: <what>" in message. */
CRADLE_MUST_CHECK int cradle_broadcast_sync_decode(const void *text, size_t size, cradle_broadcast_sync *s,
                                                   char *message, size_t message_size);

/* Whether fragment f falls in one of s's gaps. */
bool cradle_broadcast_sync_in_gap(const cradle_broadcast_sync *s, uint64_t f);

/* ---- the browser viewer's files ------------------------------------------ */

/* One file a manifest lists. */
typedef struct cradle_broadcast_web_file {
    bool present;       /* false: a sound file the server lacks ("sha256":null, "bytes":0) */
    uint8_t sha256[CRADLE_BROADCAST_WEB_HASH_BYTES];
    uint32_t bytes;     /* at most CRADLE_BROADCAST_WEB_FILE_MAX */
} cradle_broadcast_web_file;

/* What a build's manifest says. The pointers are the caller's. */
typedef struct cradle_broadcast_web_manifest {
    const char *game;                       /* printable, 1..CRADLE_GAME_NAME_MAX */
    const char *build;                      /* printable, 1..CRADLE_GAME_BUILD_ID_MAX */
    cradle_broadcast_web_file wasm;         /* present */
    uint32_t sound_count;                   /* 0..CRADLE_GAME_MAX_SOUNDS */
    const char *const *sound_names;         /* the contract's, in its order */
    const cradle_broadcast_web_file *sounds; /* sound_count of them */
} cradle_broadcast_web_manifest;

/* Writes m as one line of JSON (no newline) into out. Returns the length,
 * or 0 when it does not fit (CRADLE_BROADCAST_WEB_MANIFEST_MAX always
 * does; asserts m is valid: printable game, build and sound names). */
size_t cradle_broadcast_web_manifest_encode(const cradle_broadcast_web_manifest *m, char *out, size_t size);

/* ---- keyframes ---------------------------------------------------------- */

typedef struct cradle_broadcast_keyframe {
    uint8_t session[CRADLE_BROADCAST_SESSION_BYTES];
    uint64_t step;
    uint64_t state_hash;
    uint32_t state_size;
    uint32_t block_sequence;
    uint64_t block_first_step;
    char build_id[CRADLE_GAME_BUILD_ID_MAX + 1];
} cradle_broadcast_keyframe;

/* Bytes a keyframe of state_size bytes needs at most. */
size_t cradle_broadcast_keyframe_bound(uint32_t state_size);

/* Encodes k and its state (k->state_size bytes) into out, signed with
 * sign_secret (Ed25519, 64 bytes, keys.h; NULL: unsigned). Returns 0 with
 * *length set, or CRADLE_ERANGE (out too small: see _bound) / CRADLE_EIO
 * (zstd failed) with a message. */
CRADLE_MUST_CHECK int cradle_broadcast_keyframe_encode(cradle_state_pack *c, const cradle_broadcast_keyframe *k,
                                                       const void *state, const uint8_t *sign_secret, uint8_t *out,
                                                       size_t size, size_t *length, char *message,
                                                       size_t message_size);

/* Checks a keyframe document and decompresses its state into state
 * (capacity bytes): magic, version, sizes, checksum, the session (must be
 * `session`), build id, reserved bytes, exactly state size bytes out of one
 * zstd frame, and their hash; with a signer (an Ed25519 public key; NULL:
 * none pinned) its signature. Returns 0 with *k filled, or
 * CRADLE_EBROADCAST with "keyframe: <what>" in message. */
CRADLE_MUST_CHECK int cradle_broadcast_keyframe_decode(cradle_state_pack *c, const uint8_t *doc, size_t size,
                                                       const uint8_t session[CRADLE_BROADCAST_SESSION_BYTES],
                                                       const uint8_t *signer,
                                                       cradle_broadcast_keyframe *k, void *state, size_t capacity,
                                                       char *message, size_t message_size);

/* ---- fragments ---------------------------------------------------------- */

/* Where a fragment must start: the log block after the last one taken. */
typedef struct cradle_broadcast_position {
    uint32_t sequence;
    uint64_t step;
} cradle_broadcast_position;

typedef struct cradle_broadcast_fragment_info {
    uint32_t blocks;
    cradle_broadcast_position first; /* its first block */
    cradle_broadcast_position end;   /* where the next fragment starts */
    uint64_t hashes;                 /* HASH records */
    uint64_t last_hash_step;         /* of the last HASH record; UINT64_MAX: none */
    uint32_t reloads;                /* RELOAD records */
    bool trailer;                    /* the session's last fragment */
    uint32_t data_count;             /* DATA records: the files a viewer fetches */
    uint8_t data_hash[CRADLE_BROADCAST_FRAGMENT_DATA_MAX][CRADLE_LOG_FILE_HASH_BYTES];
    uint32_t data_size[CRADLE_BROADCAST_FRAGMENT_DATA_MAX];
} cradle_broadcast_fragment_info;

/* Checks a fragment. buffer holds the session's 256 header bytes (start)
 * followed by the fragment's size bytes: whole log blocks that verify, of
 * consecutive sequence and steps, starting at *expect (NULL: anywhere, the
 * first fragment a viewer takes), every record valid (log.h's reader), a
 * trailer only as the last block; with a signer (an Ed25519 public key;
 * NULL: none pinned) every block signed by it for this start's session.
 * Returns 0 with *info filled, or CRADLE_EBROADCAST with "fragment: <what>"
 * in message (truncated, a checksum that fails, out of order, unsigned or
 * signed by another key or for another session...). Unsigned, a block's
 * session is not bound: blocks of another session with the same layout and
 * place would pass; pin the key to rule that out. */
CRADLE_MUST_CHECK int cradle_broadcast_fragment_check(const uint8_t *buffer, size_t size,
                                                      const cradle_broadcast_position *expect,
                                                      const uint8_t *signer,
                                                      cradle_broadcast_fragment_info *info, char *message,
                                                      size_t message_size);

#endif
