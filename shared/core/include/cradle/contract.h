#ifndef CRADLE_CONTRACT_H
#define CRADLE_CONTRACT_H
/*
 * contract: validation of a game library's contract (game_abi.h) before a
 * host uses it.
 *
 * A contract comes from a library, so it is untrusted data: every field is
 * checked against the host's limits, strings are scanned only up to their
 * maximum length (never strlen), and a failure is returned with a message
 * that names the field and both values ("state size 4096 > capacity 2048"),
 * never asserted on. The module is pure: it touches no OS resource.
 */
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"
#include "cradle/game_abi.h"

#define CRADLE_CONTRACT_DEFAULT_MAX_ALIGN 64u

/* What a host accepts. Build one with cradle_contract_host_limits() and adjust. */
typedef struct cradle_contract_limits {
    uint32_t abi_major;       /* accepted major version: exactly this one */
    uint32_t abi_minor;       /* newest accepted minor version */
    uint32_t max_state_align; /* largest state alignment; 0 = CRADLE_CONTRACT_DEFAULT_MAX_ALIGN */
    uint32_t state_capacity;  /* largest state size in bytes; 0 = no limit */
} cradle_contract_limits;

/* This host's ABI version, the default alignment maximum, no size limit. */
cradle_contract_limits cradle_contract_host_limits(void);

/* Checks every field of c (which may be NULL) in this order and stops at the
 * first failure:
 *   abi_major == limits.abi_major                      CRADLE_ERELOAD_MAJOR
 *   abi_minor <= limits.abi_minor                      CRADLE_ERELOAD_MINOR
 *   state_align a power of two, <= max_state_align    CRADLE_ERELOAD_ALIGN
 *   state_size >= 1                                    CRADLE_ERELOAD_CONTRACT
 *   state_size <= state_capacity                       CRADLE_ERELOAD_SIZE
 *   input_bytes in 1..CRADLE_GAME_MAX_INPUT_BYTES,
 *   max_players in 1..CRADLE_GAME_MAX_PLAYERS,
 *   steps_per_second >= 1, source_frames_per_second >= 1 and dividing it,
 *   name: 1..CRADLE_GAME_NAME_MAX printable ASCII bytes and a NUL,
 *   build_id: 1..CRADLE_GAME_BUILD_ID_MAX printable ASCII bytes and a NUL,
 *   init and step non-NULL                             CRADLE_ERELOAD_CONTRACT
 *   from minor 2, when sound_count > 0: sound_count <= CRADLE_GAME_MAX_SOUNDS,
 *   sounds non-NULL, and each name 1..CRADLE_GAME_SOUND_NAME_MAX printable
 *   ASCII bytes and a NUL, not starting with '/', ending in ".wav", with no
 *   ".." component                                     CRADLE_ERELOAD_CONTRACT
 *   from minor 3: the layout's regions (cradle_layout_check, layout.h)
 *                                                      CRADLE_ERELOAD_CONTRACT
 *   from minor 4, when data_file_count > 0: data_file_count <=
 *   CRADLE_GAME_MAX_DATA_FILES, data_files and data non-NULL, each name as
 *   a sound's (without the .wav rule; CRADLE_GAME_DATA_NAME_MAX bytes) and
 *   distinct, max_bytes in 1..CRADLE_GAME_DATA_MAX_BYTES
 *                                                      CRADLE_ERELOAD_CONTRACT
 * Optional entries need no check (NULL means absent). The check reads the
 * fields of a minor only when abi_minor says they exist, so it is safe on a
 * contract of any accepted minor.
 * Returns 0 or that code; on failure writes a NUL-terminated message naming
 * the field and both values into message (message_size bytes; message may be
 * NULL when message_size is 0). On success message is set to "". */
CRADLE_MUST_CHECK int cradle_contract_check(const cradle_game_contract *c,
                                            const cradle_contract_limits *limits, char *message,
                                            size_t message_size);

/* The game's bot entry, or NULL when it has none: always NULL for a
 * contract older than CRADLE_ABI_MINOR_BOT, whose object ends before the
 * field (game_abi.h, the minor rule), so the field is read only when
 * abi_minor says it exists. c must be non-NULL and checked. */
cradle_game_bot_fn *cradle_contract_bot(const cradle_game_contract *c);

/* The game's sound file names and their count (*count; 0 and NULL when it
 * has none): always none before CRADLE_ABI_MINOR_SOUNDS. c must be non-NULL
 * and checked. */
const char *const *cradle_contract_sounds(const cradle_game_contract *c, uint32_t *count);

/* The game's state layout and its region count (*count; 0 and NULL when it
 * has none): always none before CRADLE_ABI_MINOR_LAYOUT. c must be non-NULL
 * and checked (its layout too). */
const cradle_state_region *cradle_contract_layout(const cradle_game_contract *c, uint32_t *count);

/* The game's data files and their count (*count; 0 and NULL when it has
 * none): always none before CRADLE_ABI_MINOR_DATA. c must be non-NULL and
 * checked; its data entry is then c->data. */
const cradle_game_data_file *cradle_contract_data(const cradle_game_contract *c, uint32_t *count);

/* The game's predictor and its confirmed-events entry, each NULL when it
 * has none: always NULL before CRADLE_ABI_MINOR_PREDICT. c must be non-NULL
 * and checked. */
cradle_game_predict_fn *cradle_contract_predict(const cradle_game_contract *c);
typedef void cradle_game_react_fn(const void *state, const cradle_event *events, uint32_t count,
                                  const cradle_fx *fx);
cradle_game_react_fn *cradle_contract_react_confirmed(const cradle_game_contract *c);

/* The length of s if a NUL occurs within its first max + 1 bytes, else
 * max + 1; reads no byte past the first NUL. s may be NULL (returns 0). */
size_t cradle_contract_strnlen(const char *s, size_t max);

#endif
