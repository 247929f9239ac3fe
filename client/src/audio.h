#ifndef CRADLE_CLIENT_AUDIO_H
#define CRADLE_CLIENT_AUDIO_H
/*
 * audio: the sound cues (game_abi.h cradle_sound), synthesized at start-up
 * into 16-bit mono buffers (no asset files), played through one SDL audio
 * device whose callback mixes up to CRADLE_AUDIO_VOICES voices (a new cue
 * takes the oldest voice when all are busy). Volume and pitch per play;
 * pitch resamples the cue.
 *
 * cradle_audio_play is called from the main thread; it takes the device lock
 * for the few instructions that claim a voice.
 */
#include <SDL.h>
#include <stdbool.h>
#include <stdint.h>

#include "cradle/game_abi.h"

#define CRADLE_AUDIO_RATE 44100
#define CRADLE_AUDIO_VOICES 16u
#define CRADLE_AUDIO_CUES 8u /* index = cradle_sound value, 0 unused */

typedef struct cradle_audio_voice {
    const int16_t *samples; /* NULL = idle */
    uint32_t length;
    float position, step, volume;
    uint64_t started;
} cradle_audio_voice;

typedef struct cradle_audio {
    SDL_AudioDeviceID device; /* 0 = no device (muted or failed) */
    int16_t *cue[CRADLE_AUDIO_CUES];
    uint32_t cue_length[CRADLE_AUDIO_CUES];
    cradle_audio_voice voices[CRADLE_AUDIO_VOICES];
    uint64_t plays;
} cradle_audio;

/* Synthesizes the cues (always, so a test can inspect them) and, unless
 * open_device is false, opens the default output device. Returns 0; -1 with
 * message when the cues cannot be allocated. A missing audio device is not
 * an error: the client plays silently and says so in message. */
int cradle_audio_init(cradle_audio *a, bool open_device, char *message, size_t message_size);

/* Matches cradle_sound_fn (present.h). */
void cradle_audio_play(void *context, cradle_sound cue, float volume, float pitch);

void cradle_audio_deinit(cradle_audio *a);

#endif
