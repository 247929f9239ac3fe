/*
 * audio: synthesized cues and a small mixer (see audio.h).
 */
#include "audio.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAU 6.2831853f

/* A deterministic noise source for synthesis (not the simulation's). */
static float noise(uint32_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return (float)(*s >> 8) / 8388608.0f - 1.0f;
}

static float clampf(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

/* One sample of cue at time t (seconds) of its duration d. */
static float synth(int cue, float t, float d, uint32_t *rng, float *state) {
    float env, f;
    switch (cue) {
    case CRADLE_SOUND_SHOT: /* a falling square blip */
        f = 1200.0f - 700.0f * (t / d);
        env = expf(-t * 40.0f);
        return env * (sinf(TAU * f * t) > 0.0f ? 0.5f : -0.5f);
    case CRADLE_SOUND_EXPLOSION: { /* low-passed noise with a thump */
        *state += (noise(rng) - *state) * (0.25f - 0.2f * t / d);
        env = expf(-t * 5.0f);
        return env * (1.6f * *state + 0.5f * sinf(TAU * (60.0f - 30.0f * t) * t));
    }
    case CRADLE_SOUND_HIT:
        env = expf(-t * 25.0f);
        return env * (0.5f * noise(rng) + 0.5f * sinf(TAU * 220.0f * t));
    case CRADLE_SOUND_PICKUP: { /* a rising three-note arpeggio */
        static const float notes[3] = {659.25f, 830.61f, 987.77f};
        int n = (int)(t / (d / 3.0f));
        if (n > 2) n = 2;
        env = 1.0f - fmodf(t, d / 3.0f) / (d / 3.0f) * 0.6f;
        return 0.45f * env * sinf(TAU * notes[n] * t);
    }
    case CRADLE_SOUND_WAVE: /* a two-tone chime */
        env = expf(-t * 4.0f);
        return 0.4f * env * (sinf(TAU * 523.25f * t) + (t > 0.15f ? sinf(TAU * 784.0f * t) : 0.0f));
    case CRADLE_SOUND_NEAR_MISS: { /* a filtered noise sweep */
        float a = 0.05f + 0.4f * (t / d);
        *state += (noise(rng) - *state) * a;
        env = sinf(3.14159f * t / d);
        return 0.8f * env * *state;
    }
    case CRADLE_SOUND_GAME_OVER: { /* four falling notes */
        static const float notes[4] = {392.0f, 329.63f, 261.63f, 196.0f};
        int n = (int)(t / (d / 4.0f));
        if (n > 3) n = 3;
        env = 1.0f - fmodf(t, d / 4.0f) / (d / 4.0f) * 0.5f;
        float x = sinf(TAU * notes[n] * t);
        return 0.45f * env * (x + 0.3f * (x > 0.0f ? 1.0f : -1.0f)) * (1.0f - 0.3f * t / d);
    }
    default: return 0.0f;
    }
}

static const float durations[CRADLE_AUDIO_CUES] = {0.0f, 0.09f, 0.7f, 0.15f, 0.3f, 0.6f, 0.3f, 1.4f};

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
    for (int c = 1; c < (int)CRADLE_AUDIO_CUES; c++) {
        float d = durations[c];
        uint32_t n = (uint32_t)(d * (float)CRADLE_AUDIO_RATE);
        a->cue[c] = malloc(n * sizeof(int16_t));
        if (!a->cue[c]) {
            snprintf(message, message_size, "out of memory for the sound cues");
            cradle_audio_deinit(a);
            return -1;
        }
        a->cue_length[c] = n;
        uint32_t rng = 0x9e3779b9u * (uint32_t)c;
        float state = 0.0f;
        for (uint32_t i = 0; i < n; i++) {
            float t = (float)i / (float)CRADLE_AUDIO_RATE;
            float fade = i + 256u > n ? (float)(n - i) / 256.0f : 1.0f; /* no click at the end */
            a->cue[c][i] = (int16_t)(clampf(synth(c, t, d, &rng, &state) * fade, -1.0f, 1.0f) * 20000.0f);
        }
    }
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

void cradle_audio_play(void *context, cradle_sound cue, float volume, float pitch) {
    cradle_audio *a = context;
    if (!a->device || (int)cue < 1 || (int)cue >= (int)CRADLE_AUDIO_CUES) return;
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
    a->voices[pick] = (cradle_audio_voice){.samples = a->cue[cue],
                                           .length = a->cue_length[cue],
                                           .step = pitch,
                                           .volume = volume,
                                           .started = ++a->plays};
    SDL_UnlockAudioDevice(a->device);
}

void cradle_audio_deinit(cradle_audio *a) {
    if (a->device) SDL_CloseAudioDevice(a->device);
    a->device = 0;
    for (uint32_t c = 0; c < CRADLE_AUDIO_CUES; c++) {
        free(a->cue[c]);
        a->cue[c] = NULL;
    }
}
