#ifndef CRADLE_CLIENT_PRESENT_H
#define CRADLE_CLIENT_PRESENT_H
/*
 * present: what the game's react() asks of the client (game_abi.h
 * cradle_fx): particles from a fixed pool, screen shake, and sound requests
 * handed to a player function (audio.c, or none when muted/headless).
 *
 * Pure: no SDL, no clock (the caller passes the frame's seconds), no
 * allocation after init (the caller provides the particle storage). A burst
 * that finds the pool full drops the particles it has no room for (counted).
 * Nothing here can reach the simulation: react() gets the state const and
 * this module only keeps its own presentation data.
 */
#include <stdbool.h>
#include <stdint.h>

#include "cradle/game_abi.h"

typedef struct cradle_particle {
    float x, y, vx, vy; /* world units, world units per second */
    float age, life;    /* seconds */
    uint32_t rgba;
} cradle_particle;

typedef void (*cradle_sound_fn)(void *context, cradle_sound sound, float volume, float pitch);

typedef struct cradle_present {
    cradle_particle *particles; /* caller's storage */
    uint32_t capacity, count;
    uint64_t dropped;           /* particles refused because the pool was full */
    float shake;                /* current shake amplitude, world units; decays */
    float shake_x, shake_y;     /* this frame's offset */
    uint64_t rng;
    cradle_sound_fn play;       /* may be NULL */
    void *play_context;
    uint64_t sounds;            /* sound requests seen */
} cradle_present;

void cradle_present_init(cradle_present *p, cradle_particle *storage, uint32_t capacity, uint64_t seed);

/* The effects interface to hand to the game's react(). */
cradle_fx cradle_present_fx(cradle_present *p);

/* Moves and ages the particles by dt seconds (removing dead ones), decays
 * the shake (half-life 80 ms, capped at 40 units) and picks this frame's
 * shake offset. */
void cradle_present_update(cradle_present *p, float dt);

/* Draws the particles (small squares fading with age) in world units. */
void cradle_present_draw(const cradle_present *p, const cradle_draw *draw);

/* The interpolation alpha render() draws at: how far the picture is from
 * the state before the last step to the newest one, since_step_ns after
 * the newest appeared, at steps_per_second times rate (the picture's pace
 * against the game's: 1 live, a recording's speed), from 0 up to 0.999: the
 * picture never passes the newest state. A rate of 0 (a paused recording)
 * is the newest state as it is: 0.999. The window loop (window.c) draws
 * every source with it. */
float cradle_present_alpha(uint64_t since_step_ns, uint32_t steps_per_second, double rate);

#endif
