/*
 * audio: the game's sound files and a small mixer (see audio.h).
 */
#include "audio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/contract.h"

static float clampf(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

static void mix(void *userdata, Uint8 *stream, int len) {
    cradle_audio *a = userdata;
    int16_t *out = (int16_t *)(void *)stream;
    int frames = len / (int)sizeof(int16_t);
    for (int i = 0; i < frames; i++) {
        float sum = 0.0f;
        for (uint32_t v = 0; v < CRADLE_AUDIO_VOICES; v++) {
            cradle_audio_voice *voice = &a->voices[v];
            if (!voice->samples) continue;
            uint32_t at = (uint32_t)voice->position;
            if (at >= voice->length) {
                voice->samples = NULL;
                continue;
            }
            sum += (float)voice->samples[at] * voice->volume;
            voice->position += voice->step;
        }
        out[i] = (int16_t)clampf(sum * 0.6f, -32767.0f, 32767.0f);
    }
}

int cradle_audio_init(cradle_audio *a, bool open_device, char *message, size_t message_size) {
    memset(a, 0, sizeof *a);
    message[0] = '\0';
    if (!open_device) return 0;
    if (SDL_InitSubSystem(SDL_INIT_AUDIO) != 0) {
        snprintf(message, message_size, "no audio: %s", SDL_GetError());
        return 0;
    }
    SDL_AudioSpec want = {.freq = CRADLE_AUDIO_RATE, .format = AUDIO_S16SYS, .channels = 1, .samples = 512,
                          .callback = mix, .userdata = a};
    SDL_AudioSpec have;
    a->device = SDL_OpenAudioDevice(NULL, 0, &want, &have, 0);
    if (a->device == 0) {
        snprintf(message, message_size, "no audio device: %s", SDL_GetError());
        return 0;
    }
    SDL_PauseAudioDevice(a->device, 0);
    return 0;
}

/* The file's samples as 16-bit mono at CRADLE_AUDIO_RATE (malloc'd, *length
 * of them), or NULL with why in error. */
static int16_t *read_wav(const char *path, uint32_t *length, char *error, size_t error_size) {
    SDL_AudioSpec spec;
    Uint8 *data = NULL;
    Uint32 bytes = 0;
    if (!SDL_LoadWAV(path, &spec, &data, &bytes)) {
        snprintf(error, error_size, "%s", SDL_GetError());
        return NULL;
    }
    int16_t *out = NULL;
    SDL_AudioCVT cvt;
    if (SDL_BuildAudioCVT(&cvt, spec.format, spec.channels, spec.freq, AUDIO_S16SYS, 1, CRADLE_AUDIO_RATE) < 0) {
        snprintf(error, error_size, "cannot convert its format: %s", SDL_GetError());
        goto out;
    }
    cvt.len = (int)bytes;
    cvt.buf = malloc((size_t)bytes * (size_t)(cvt.len_mult > 0 ? cvt.len_mult : 1));
    if (!cvt.buf) {
        snprintf(error, error_size, "out of memory for %u bytes", (unsigned)bytes);
        goto out;
    }
    memcpy(cvt.buf, data, bytes);
    if (cvt.needed && SDL_ConvertAudio(&cvt) != 0) {
        snprintf(error, error_size, "cannot convert it: %s", SDL_GetError());
        free(cvt.buf);
        goto out;
    }
    size_t samples = (size_t)(cvt.needed ? cvt.len_cvt : cvt.len) / sizeof(int16_t);
    if (samples == 0 || samples > (size_t)CRADLE_AUDIO_MAX_SECONDS * CRADLE_AUDIO_RATE) {
        snprintf(error, error_size, "%s", samples == 0 ? "it holds no samples" : "it is longer than 60 s");
        free(cvt.buf);
        goto out;
    }
    out = (int16_t *)(void *)cvt.buf;
    *length = (uint32_t)samples;
out:
    SDL_FreeWAV(data);
    return out;
}

/* message += "; " + text, as far as it fits. */
static void add_problem(char *message, size_t size, const char *text) {
    size_t used = strlen(message);
    if (used + 3 >= size) return;
    snprintf(message + used, size - used, "%s%s", used ? "; " : "", text);
}

/* Stops every voice and frees the loaded sounds. */
static void drop_sounds(cradle_audio *a) {
    if (a->device) SDL_LockAudioDevice(a->device);
    memset(a->voices, 0, sizeof a->voices);
    if (a->device) SDL_UnlockAudioDevice(a->device);
    for (uint32_t i = 0; i <= CRADLE_GAME_MAX_SOUNDS; i++) {
        free(a->sound[i]);
        a->sound[i] = NULL;
        a->sound_length[i] = 0;
    }
    a->sound_count = 0;
    a->loaded_for = NULL;
}

uint32_t cradle_audio_load(cradle_audio *a, const cradle_game_contract *contract, const char *library_path,
                           char *message, size_t message_size) {
    message[0] = '\0';
    drop_sounds(a);
    uint32_t count = 0;
    const char *const *names = cradle_contract_sounds(contract, &count);
    const char *slash = strrchr(library_path, '/');
    int folder = slash ? (int)(slash - library_path) : 1;
    const char *base = slash ? library_path : ".";
    uint32_t loaded = 0;
    for (uint32_t i = 0; i < count; i++) {
        char path[4096], error[512], problem[768];
        snprintf(path, sizeof path, "%.*s/%s", folder, base, names[i]);
        uint32_t length = 0;
        int16_t *samples = read_wav(path, &length, error, sizeof error);
        if (!samples) {
            snprintf(problem, sizeof problem, "sound %u %.127s: %.600s", (unsigned)i + 1u, names[i], error);
            add_problem(message, message_size, problem);
            continue;
        }
        a->sound[i + 1u] = samples;
        a->sound_length[i + 1u] = length;
        loaded++;
    }
    a->sound_count = count;
    return loaded;
}

bool cradle_audio_follow(cradle_audio *a, const cradle_game_contract *contract, const char *library_path,
                         char *message, size_t message_size) {
    message[0] = '\0';
    if (a->loaded_for == contract) return false;
    (void)cradle_audio_load(a, contract, library_path, message, message_size);
    a->loaded_for = contract;
    return true;
}

void cradle_audio_play(void *context, cradle_sound sound, float volume, float pitch) {
    cradle_audio *a = context;
    if (!a->device || sound < 1 || sound > a->sound_count || !a->sound[sound]) return;
    if (!(pitch > 0.05f)) pitch = 1.0f;
    volume = clampf(volume, 0.0f, 1.0f);
    SDL_LockAudioDevice(a->device);
    uint32_t pick = 0;
    for (uint32_t v = 0; v < CRADLE_AUDIO_VOICES; v++) {
        if (!a->voices[v].samples) {
            pick = v;
            break;
        }
        if (a->voices[v].started < a->voices[pick].started) pick = v;
    }
    a->voices[pick] = (cradle_audio_voice){.samples = a->sound[sound],
                                           .length = a->sound_length[sound],
                                           .step = pitch,
                                           .volume = volume,
                                           .started = ++a->plays};
    SDL_UnlockAudioDevice(a->device);
}

void cradle_audio_deinit(cradle_audio *a) {
    if (a->device) SDL_CloseAudioDevice(a->device);
    a->device = 0;
    drop_sounds(a);
}
