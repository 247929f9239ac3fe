#!/usr/bin/env python3
"""Writes vanguard's sound files (16-bit mono WAV, 22050 Hz) into this folder.

The cues are synthesized: a falling square blip (shot), low-passed noise
with a thump (explosion), a noisy tick (hit), a rising arpeggio (pickup), a
two-tone chime (wave), a noise sweep (near miss) and four falling notes
(game over). The committed .wav files are this script's output; run it again
after changing a cue:  python3 shared/games/vanguard/sounds/make_sounds.py
"""
import math
import os
import struct
import wave

RATE = 22050
TAU = 2 * math.pi


def noise_source(seed):
    s = seed & 0xFFFFFFFF

    def next_noise():
        nonlocal s
        s ^= (s << 13) & 0xFFFFFFFF
        s ^= s >> 17
        s ^= (s << 5) & 0xFFFFFFFF
        return (s >> 8) / 8388608.0 - 1.0

    return next_noise


def cue(name, duration, seed):
    noise = noise_source(0x9E3779B9 * seed)
    state = [0.0]

    def shot(t, d):
        f = 1200.0 - 700.0 * (t / d)
        return math.exp(-t * 40.0) * (0.5 if math.sin(TAU * f * t) > 0 else -0.5)

    def explosion(t, d):
        state[0] += (noise() - state[0]) * (0.25 - 0.2 * t / d)
        return math.exp(-t * 5.0) * (1.6 * state[0] + 0.5 * math.sin(TAU * (60.0 - 30.0 * t) * t))

    def hit(t, d):
        return math.exp(-t * 25.0) * (0.5 * noise() + 0.5 * math.sin(TAU * 220.0 * t))

    def pickup(t, d):
        notes = (659.25, 830.61, 987.77)
        n = min(int(t / (d / 3.0)), 2)
        env = 1.0 - math.fmod(t, d / 3.0) / (d / 3.0) * 0.6
        return 0.45 * env * math.sin(TAU * notes[n] * t)

    def wave_chime(t, d):
        second = math.sin(TAU * 784.0 * t) if t > 0.15 else 0.0
        return 0.4 * math.exp(-t * 4.0) * (math.sin(TAU * 523.25 * t) + second)

    def near_miss(t, d):
        state[0] += (noise() - state[0]) * (0.05 + 0.4 * (t / d))
        return 0.8 * math.sin(math.pi * t / d) * state[0]

    def game_over(t, d):
        notes = (392.0, 329.63, 261.63, 196.0)
        n = min(int(t / (d / 4.0)), 3)
        env = 1.0 - math.fmod(t, d / 4.0) / (d / 4.0) * 0.5
        x = math.sin(TAU * notes[n] * t)
        return 0.45 * env * (x + 0.3 * (1.0 if x > 0 else -1.0)) * (1.0 - 0.3 * t / d)

    synth = {"shot": shot, "explosion": explosion, "hit": hit, "pickup": pickup, "wave": wave_chime,
             "near_miss": near_miss, "game_over": game_over}[name]
    n = int(duration * RATE)
    frames = bytearray()
    for i in range(n):
        t = i / RATE
        fade = (n - i) / 128.0 if i + 128 > n else 1.0  # no click at the end
        v = max(-1.0, min(1.0, synth(t, duration) * fade))
        frames += struct.pack("<h", int(v * 20000.0))
    return bytes(frames)


# name, seconds: the order is vanguard's sound ids 1..7 (vanguard_internal.h)
CUES = [("shot", 0.09), ("explosion", 0.7), ("hit", 0.15), ("pickup", 0.3), ("wave", 0.6),
        ("near_miss", 0.3), ("game_over", 1.4)]

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    for number, (name, seconds) in enumerate(CUES, start=1):
        with wave.open(os.path.join(here, name + ".wav"), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(RATE)
            w.writeframes(cue(name, seconds, number))
