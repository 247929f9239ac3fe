/*
 * playback: --play's keys and speed/step state machine (see playback.h).
 * SDL appears only as its keycode constants (SDL_keycode.h, no SDL call).
 */
#include "playback.h"

#include <SDL_keycode.h>
#include <stdio.h>

void cradle_playback_init(cradle_playback *p) { *p = (cradle_playback){.speed = 1.0, .bar = -1.0}; }

cradle_playback_action cradle_playback_key(int32_t keycode, bool repeat) {
    switch (keycode) {
    case SDLK_SPACE: return repeat ? CRADLE_PLAYBACK_NONE : CRADLE_PLAYBACK_TOGGLE_PAUSE;
    case SDLK_ESCAPE: return repeat ? CRADLE_PLAYBACK_NONE : CRADLE_PLAYBACK_QUIT;
    case SDLK_PLUS:
    case SDLK_EQUALS: /* + without shift on most layouts */
    case SDLK_KP_PLUS:
    case SDLK_UP: return CRADLE_PLAYBACK_FASTER;
    case SDLK_MINUS:
    case SDLK_KP_MINUS:
    case SDLK_DOWN: return CRADLE_PLAYBACK_SLOWER;
    case SDLK_RIGHT:
    case SDLK_PERIOD: return CRADLE_PLAYBACK_STEP;
    case SDLK_LEFT:
    case SDLK_COMMA: return CRADLE_PLAYBACK_STEP_BACK;
    case SDLK_l:
    case SDLK_PAGEDOWN: return CRADLE_PLAYBACK_JUMP_FORWARD;
    case SDLK_j:
    case SDLK_PAGEUP: return CRADLE_PLAYBACK_JUMP_BACK;
    case SDLK_HOME: return repeat ? CRADLE_PLAYBACK_NONE : CRADLE_PLAYBACK_TO_START;
    case SDLK_END: return repeat ? CRADLE_PLAYBACK_NONE : CRADLE_PLAYBACK_TO_END;
    default: return CRADLE_PLAYBACK_NONE;
    }
}

void cradle_playback_apply(cradle_playback *p, cradle_playback_action action) {
    switch (action) {
    case CRADLE_PLAYBACK_TOGGLE_PAUSE:
        p->paused = !p->paused;
        p->owed = 0.0;        /* resuming starts from this frame */
        p->step_requests = 0; /* steps asked for and not run are void either way */
        break;
    case CRADLE_PLAYBACK_FASTER:
        if (p->speed < CRADLE_PLAYBACK_SPEED_MAX) p->speed *= 2.0;
        break;
    case CRADLE_PLAYBACK_SLOWER:
        if (p->speed > CRADLE_PLAYBACK_SPEED_MIN) p->speed /= 2.0;
        break;
    case CRADLE_PLAYBACK_STEP:
        if (p->paused && p->step_requests < CRADLE_PLAYBACK_MAX_STEP_REQUESTS) p->step_requests++;
        break;
    case CRADLE_PLAYBACK_QUIT: p->quit = true; break;
    case CRADLE_PLAYBACK_STEP_BACK:
        if (p->paused && p->step_backs < CRADLE_PLAYBACK_MAX_STEP_REQUESTS) p->step_backs++;
        break;
    case CRADLE_PLAYBACK_JUMP_FORWARD:
    case CRADLE_PLAYBACK_JUMP_BACK:
        p->jumps += action == CRADLE_PLAYBACK_JUMP_FORWARD ? 1 : -1;
        if (p->jumps > 1000) p->jumps = 1000;
        if (p->jumps < -1000) p->jumps = -1000;
        p->edge = 0;
        break;
    case CRADLE_PLAYBACK_TO_START:
    case CRADLE_PLAYBACK_TO_END:
        p->edge = action == CRADLE_PLAYBACK_TO_START ? -1 : 1;
        p->jumps = 0;
        p->step_backs = 0;
        p->bar = -1.0;
        break;
    case CRADLE_PLAYBACK_NONE: break;
    }
}

void cradle_playback_bar(cradle_playback *p, double fraction) {
    p->bar = fraction < 0.0 ? 0.0 : fraction > 1.0 ? 1.0 : fraction;
    p->jumps = 0;
    p->step_backs = 0;
    p->edge = 0;
}

bool cradle_playback_seek(cradle_playback *p, uint64_t next_step, uint64_t steps, uint32_t steps_per_second,
                          uint64_t *target) {
    uint64_t end = steps;
    if (p->bar < 0.0 && p->jumps == 0 && p->step_backs == 0 && p->edge == 0) return false;
    uint64_t to = next_step < end ? next_step : end;
    if (p->bar >= 0.0) {
        to = (uint64_t)(p->bar * (double)end + 0.5);
    } else if (p->edge) {
        to = p->edge < 0 ? 0 : end;
    } else {
        int64_t move = (int64_t)p->jumps * CRADLE_PLAYBACK_JUMP_SECONDS * (int64_t)steps_per_second -
                       (int64_t)p->step_backs;
        if (move < 0) to = (uint64_t)(-move) > to ? 0 : to - (uint64_t)(-move);
        else to = end - to < (uint64_t)move ? end : to + (uint64_t)move;
    }
    if (to > end) to = end;
    p->bar = -1.0;
    p->jumps = 0;
    p->step_backs = 0;
    p->edge = 0;
    p->step_requests = 0; /* single steps forward asked with a seek are void */
    p->owed = 0.0;
    *target = to;
    return true;
}

uint32_t cradle_playback_steps(cradle_playback *p, uint64_t elapsed_ns, uint32_t steps_per_second) {
    if (p->paused) {
        uint32_t run = p->step_requests;
        p->step_requests = 0;
        return run;
    }
    p->owed += (double)elapsed_ns / 1e9 * (double)steps_per_second * p->speed;
    if (p->owed > (double)CRADLE_PLAYBACK_MAX_OWED) p->owed = (double)CRADLE_PLAYBACK_MAX_OWED;
    uint32_t run = (uint32_t)p->owed;
    p->owed -= (double)run;
    return run;
}

double cradle_playback_rate(const cradle_playback *p) { return p->paused ? 0.0 : p->speed; }

void cradle_playback_mode(const cradle_playback *p, char *out, size_t size) {
    if (p->paused) snprintf(out, size, "PAUSED");
    else snprintf(out, size, "PLAY X%g", p->speed);
}
