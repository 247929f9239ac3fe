/*
 * live: the live session as the window loop's source (see live.h). A frame:
 * read events (bindings; focus loss releases every key), service the
 * connection, run the received steps due, and report a failure or a desync
 * once; the window loop draws the session's sim and the HUD filled here.
 */
#include "live.h"

#include <SDL.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bindings.h"
#include "session_run.h"
#include "window.h"

/* Everything one live window session holds, from the options to the
 * teardown (large: kept in static storage). */
typedef struct live_session {
    const cradle_client_options *o;
    char message[CRADLE_BINDINGS_MESSAGE_MAX];
    char report[64]; /* the default desync report path */
    char title[128];
    cradle_netclient net;
    cradle_bindings bindings;
    cradle_script script;
    cradle_input_source input;
    FILE *output;
    bool quit;     /* Escape, the close button, or --steps reached */
    bool predict_said; /* why prediction ended was said */
    /* what the window was last told it shows (a change restarts the alpha) */
    const cradle_sim *shown;
    uint64_t shown_step, shown_changes;
    /* the HUD's prediction figures, over the last second */
    uint64_t rate_ns, rate_rollbacks, rate_steps;
    double rollbacks_per_s, mean_depth;
    bool reported; /* the failure or desync was said */
    int status;
} live_session;

/* Loads the key bindings from --config or the default path, else the defaults. */
static void load_bindings(live_session *s) {
    char path[4096];
    const char *config_path = s->o->config;
    if (!config_path && cradle_bindings_default_path(path, sizeof path)) config_path = path;
    if (config_path) {
        cradle_bindings_outcome outcome =
            cradle_bindings_load(&s->bindings, config_path, s->message, sizeof s->message);
        if (s->message[0]) fprintf(stderr, "cradle-client: config %s\n", s->message);
        (void)outcome;
    } else {
        cradle_bindings_defaults(&s->bindings);
    }
}

/* Loads the script, opens --output and starts the connection; -1 (said on stderr) on failure. */
static int open_session(live_session *s, uint64_t now) {
    const cradle_client_options *o = s->o;
    if (o->script && cradle_script_load(&s->script, o->script, s->message, sizeof s->message) != 0) {
        fprintf(stderr, "cradle-client: %s\n", s->message);
        return -1;
    }
    if (o->output && !(s->output = fopen(o->output, "wb"))) {
        fprintf(stderr, "cradle-client: cannot create --output %s\n", o->output);
        return -1;
    }
    s->input.script = o->script ? &s->script : NULL;
    s->input.use_bot = o->bot;
    s->input.net = &s->net;
    cradle_bot_init(&s->input.bot, o->seed);
    cradle_netclient_config config = cradle_client_net_config(o);
    snprintf(s->report, sizeof s->report, "cradle-desync-%ld.bin", (long)getpid());
    config.desync_report = o->desync_report ? o->desync_report : s->report;
    config.output = s->output;
    config.input = cradle_input_source_fill;
    config.input_context = &s->input;
    config.effects = true;
    if (cradle_netclient_open(&s->net, &config, now) != 0) {
        fprintf(stderr, "cradle-client: %s\n", s->net.message);
        return -1;
    }
    return 0;
}

/* Feeds the pending SDL events to the bindings; Escape or the close button quits. */
static void live_poll(void *context, int width, int height) {
    live_session *s = context;
    (void)width;
    (void)height;
    SDL_Event e;
    while (SDL_PollEvent(&e)) {
        switch (e.type) {
        case SDL_QUIT: s->quit = true; break;
        case SDL_KEYDOWN:
        case SDL_KEYUP:
            if (e.type == SDL_KEYDOWN && e.key.keysym.sym == SDLK_ESCAPE) s->quit = true;
            cradle_bindings_key(&s->bindings, e.key.keysym.sym, e.type == SDL_KEYDOWN, e.key.repeat != 0);
            break;
        case SDL_CONTROLLERDEVICEADDED: (void)SDL_GameControllerOpen(e.cdevice.which); break;
        case SDL_CONTROLLERBUTTONDOWN:
        case SDL_CONTROLLERBUTTONUP:
            cradle_bindings_button(&s->bindings, e.cbutton.button, e.type == SDL_CONTROLLERBUTTONDOWN);
            break;
        case SDL_WINDOWEVENT:
            if (e.window.event == SDL_WINDOWEVENT_FOCUS_LOST) cradle_bindings_release_all(&s->bindings);
            break;
        default: break;
        }
    }
    s->input.held = cradle_bindings_bits(&s->bindings);
}

/* Reports a failure or a desync once; false when the loop is to end at once. */
static bool report_once(live_session *s, bool was_playing) {
    cradle_netclient *net = &s->net;
    if (net->error && !s->reported) {
        s->reported = true;
        s->status = cradle_client_report_failure(net, "cradle-client");
        if (!was_playing && !net->sim.has_previous) return false; /* never joined: nothing to show */
        if (s->o->steps || s->o->screenshot) return false; /* automated: nobody will close the window */
    }
    if (net->desync && !s->reported) {
        s->reported = true;
        s->status = cradle_client_report_failure(net, "cradle-client");
    }
    return true;
}

/* Tells the window when the state shown changed (a confirmed step, a
 * predicted one, a rollback), with the events gathered since (each once:
 * netclient.h's effects), and empties the queues. */
static void show(live_session *s, cradle_window *window) {
    cradle_netclient *net = &s->net;
    const cradle_sim *shown = cradle_netclient_shown(net);
    cradle_event_queue *present, *confirmed;
    cradle_netclient_effects(net, &present, &confirmed);
    if (shown->state && (shown != s->shown || shown->next_step != s->shown_step ||
                         net->predict.shown_changes != s->shown_changes)) {
        s->shown = shown;
        s->shown_step = shown->next_step;
        s->shown_changes = net->predict.shown_changes;
        if (net->phase == CRADLE_NETCLIENT_PLAYING || shown->has_previous)
            cradle_window_shown(window, shown, present, &net->sim, confirmed);
    }
    cradle_events_clear(present);
    cradle_events_clear(confirmed);
}

/* The HUD's rollbacks a second and their mean depth, over the last second. */
static void measure_prediction(live_session *s, uint64_t now) {
    const cradle_predict_figures *f = &s->net.predict.figures;
    if (now - s->rate_ns < 1000000000ull) return;
    uint64_t rollbacks = f->rollbacks - s->rate_rollbacks, steps = f->rollback_steps - s->rate_steps;
    s->rollbacks_per_s = s->rate_ns ? (double)rollbacks * 1e9 / (double)(now - s->rate_ns) : 0.0;
    s->mean_depth = rollbacks ? (double)steps / (double)rollbacks : 0.0;
    s->rate_ns = now;
    s->rate_rollbacks = f->rollbacks;
    s->rate_steps = f->rollback_steps;
}

/* Services the connection, runs up to CRADLE_LIVE_MAX_STEPS_PER_FRAME
 * received steps, brings the prediction up to the newest input, and shows
 * the result with its events; --steps reached quits. */
static bool live_advance(void *context, cradle_window *window, uint64_t now, uint64_t elapsed) {
    live_session *s = context;
    const cradle_client_options *o = s->o;
    cradle_netclient *net = &s->net;
    (void)elapsed;
    (void)cradle_netclient_service(net, now, 0);
    bool was_playing = cradle_netclient_playing(net);
    if (o->steps && was_playing && net->welcome.start_step >= o->steps) {
        /* --steps is the step to stop before: one already passed runs nothing. */
        fprintf(stderr,
                "cradle-client: --steps %" PRIu64 " is already past: the session was at step %" PRIu64
                " when this client joined (--steps N stops before step N; give a later step)\n",
                o->steps, net->welcome.start_step);
        s->status = 2;
        return false;
    }
    for (uint32_t i = 0; i < CRADLE_LIVE_MAX_STEPS_PER_FRAME; i++) {
        if (cradle_netclient_step(net, now) != 1) break;
        if (o->steps && net->sim.next_step >= o->steps) s->quit = true;
    }
    (void)cradle_netclient_predict(net);
    if (net->predict.message[0] && !s->predict_said) {
        s->predict_said = true; /* prediction ended: the player goes on in lockstep */
        fprintf(stderr, "cradle-client: %s\n", net->predict.message);
    }
    show(s, window);
    measure_prediction(s, now);
    return report_once(s, was_playing);
}

/* The session's state once there is one to show (joined, or after it ended). */
static const cradle_sim *live_sim(void *context) {
    const cradle_netclient *net = &((live_session *)context)->net;
    if (!net->sim.state || net->phase == CRADLE_NETCLIENT_JOINING ||
        !(net->sim.has_previous || net->phase == CRADLE_NETCLIENT_PLAYING))
        return NULL;
    return cradle_netclient_shown(net);
}

static double live_rate(void *context) {
    (void)context;
    return 1.0; /* the server's clock */
}

/* The HUD's banner (and its detail line) for the session's state: ended,
 * desync, connecting, joining, waiting for a build. */
static void set_banner(const cradle_netclient *net, cradle_window_hud *h) {
    cradle_hud_info *hud = &h->info;
    if (net->error) {
        hud->banner =
            net->error == CRADLE_ENET_INIT || net->error == CRADLE_ENET_TIMEOUT ? "CONNECTION LOST" : "SESSION ENDED";
        snprintf(h->detail, sizeof h->detail, "%.90s", net->message);
        hud->detail = h->detail;
        hud->banner_rgba = 0xff5252ffu;
    } else if (net->desync) {
        hud->banner = "DESYNC";
        snprintf(h->detail, sizeof h->detail, "FIRST DIFFERING STEP %" PRIu64 " - REPORT %.40s", net->desync_step,
                 net->config.desync_report ? net->config.desync_report : "-");
        hud->detail = h->detail;
        hud->banner_rgba = 0xffab40ffu;
    } else if (net->phase == CRADLE_NETCLIENT_CONNECTING || net->phase == CRADLE_NETCLIENT_HELLO) {
        hud->banner = "CONNECTING";
        hud->banner_rgba = 0x80d8ffffu;
    } else if (net->phase == CRADLE_NETCLIENT_JOINING) {
        hud->banner = "JOINING";
        hud->banner_rgba = 0x80d8ffffu;
    } else if (net->reload_pending && net->sim.next_step == net->reload_at) {
        hud->banner = "WAITING FOR BUILD";
        hud->detail = net->reload_build;
        hud->banner_rgba = 0x80d8ffffu;
    }
}

/* The HUD: step, round trip, delay, players, slot, queue, banner. */
static void live_hud(void *context, cradle_window_hud *h) {
    live_session *s = context;
    cradle_netclient *net = &s->net;
    h->info = (cradle_hud_info){.step = net->sim.next_step,
                                .rtt_ms = net->rtt_ns ? (double)net->rtt_ns / 1e6 : -1.0,
                                .input_delay = net->welcome.input_delay,
                                .players = cradle_netclient_players_present(net),
                                .player_limit = net->welcome.players,
                                .slot = net->welcome.slot == CRADLE_WIRE_SPECTATOR ? -1 : (int)net->welcome.slot,
                                .pending = cradle_netclient_pending(net),
                                .ahead = net->predict.on ? (int)net->predict.figures.ahead : -1,
                                .window = net->predict.window,
                                .rollbacks_per_s = s->rollbacks_per_s,
                                .mean_depth = s->mean_depth,
                                .max_depth = net->predict.figures.rollback_max};
    set_banner(net, h);
}

static const char *live_sound_library(void *context) { return ((live_session *)context)->o->game; }

/* --screenshot is due once the session has run --screenshot-after steps from its join. */
static bool live_screenshot_due(void *context) {
    const live_session *s = context;
    const cradle_netclient *net = &s->net;
    return net->phase == CRADLE_NETCLIENT_PLAYING &&
           net->sim.next_step >= net->welcome.start_step + s->o->screenshot_after;
}

static bool live_done(void *context) { return ((live_session *)context)->quit; }

/* A session still on: the summary line (with --steps) and a goodbye. */
static int live_finish(void *context) {
    live_session *s = context;
    if (s->net.phase == CRADLE_NETCLIENT_PLAYING && !s->net.error) {
        if (s->o->steps) cradle_client_print_done(stdout, &s->net);
        cradle_netclient_leave(&s->net, 300);
    }
    return s->status;
}

/* Frees what open_session made and shuts SDL down; returns the final exit
 * status (1 when --output could not be closed). */
static int close_session(live_session *s, int status) {
    cradle_netclient_close(&s->net);
    cradle_script_free(&s->script);
    if (s->output && fclose(s->output) != 0 && status == 0) status = 1;
    SDL_Quit();
    return status;
}

int cradle_client_live_window(const cradle_client_options *o) {
    if (!cradle_client_video_init()) return cradle_client_run_headless(o);
    static live_session session;
    live_session *s = &session;
    memset(s, 0, sizeof *s);
    s->o = o;
    load_bindings(s);
    if (open_session(s, cradle_client_now_ns()) != 0) return close_session(s, 1);
    const cradle_game_contract *k = s->net.sim.contract;
    snprintf(s->title, sizeof s->title, "%s - cradle-client %s:%u", k->name, o->host, (unsigned)o->port);
    cradle_window_source source = {.context = s,
                                   .title = s->title,
                                   .view = k,
                                   .poll = live_poll,
                                   .advance = live_advance,
                                   .sim = live_sim,
                                   .rate = live_rate,
                                   .hud = live_hud,
                                   .sound_library = live_sound_library,
                                   .screenshot_due = live_screenshot_due,
                                   .done = live_done,
                                   .finish = live_finish};
    return close_session(s, cradle_window_run(&source, o));
}
