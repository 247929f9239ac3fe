#ifndef CRADLE_CLIENT_AUDIO_H
#define CRADLE_CLIENT_AUDIO_H
/*
 * audio: the game's own sounds (game_abi.h, minor 2: WAV files named by its
 * contract, beside its library), loaded with SDL_LoadWAV and converted to
 * 16-bit mono at CRADLE_AUDIO_RATE, played through one SDL audio device
 * whose callback mixes up to CRADLE_AUDIO_VOICES voices (a new sound takes
 * the oldest voice when all are busy). Volume and pitch per play; pitch
 * resamples the sound.
 *
 * cradle_audio_play is called from the main thread; it takes the device lock
 * for the few instructions that claim a voice. Loading (at start and after a
 * reload) takes it while it swaps the sounds.
 */
#include <SDL.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/game_abi.h"

#define CRADLE_AUDIO_RATE 44100
#define CRADLE_AUDIO_VOICES 16u
#define CRADLE_AUDIO_MAX_SECONDS 60u /* a longer sound file is refused */

typedef struct cradle_audio_voice {
    const int16_t *samples; /* NULL = idle */
    uint32_t length;
    float position, step, volume;
    uint64_t started;
} cradle_audio_voice;

typedef struct cradle_audio {
    SDL_AudioDeviceID device; /* 0 = no device (muted or failed) */
    int16_t *sound[CRADLE_GAME_MAX_SOUNDS + 1u]; /* index = sound id; NULL = silent */
    uint32_t sound_length[CRADLE_GAME_MAX_SOUNDS + 1u];
    uint32_t sound_count;
    cradle_audio_voice voices[CRADLE_AUDIO_VOICES];
    uint64_t plays;
    const cradle_game_contract *loaded_for; /* the contract whose sounds are loaded */
} cradle_audio;

/* Starts with no sounds and, unless open_device is false, opens the default
 * output device. Returns 0. A missing audio device is not an error: the
 * client plays silently and says so in message ("" otherwise). */
int cradle_audio_init(cradle_audio *a, bool open_device, char *message, size_t message_size);

/* Loads the sounds contract names (cradle_contract_sounds), each relative to
 * the folder of library_path, in place of the ones loaded before (a reload).
 * A file that is missing, is not a WAV SDL can read, or is longer than
 * CRADLE_AUDIO_MAX_SECONDS stays silent and is named in message with why
 * ("sound 2 vanguard/hit.wav: ..."; "" when all loaded). Returns how many
 * loaded. Allocates; never on the step path. */
uint32_t cradle_audio_load(cradle_audio *a, const cradle_game_contract *contract, const char *library_path,
                           char *message, size_t message_size);

/* cradle_audio_load when contract is not the one loaded for (the first
 * call, and after a reload brought another library). Returns true when it
 * loaded; message as cradle_audio_load's ("" when it did not load). */
bool cradle_audio_follow(cradle_audio *a, const cradle_game_contract *contract, const char *library_path,
                         char *message, size_t message_size);

/* Matches cradle_sound_fn (present.h): plays sound id `sound` (silent when
 * there is no device or no such sound). */
void cradle_audio_play(void *context, cradle_sound sound, float volume, float pitch);

void cradle_audio_deinit(cradle_audio *a);

#endif
