/*
 * The live session's window: cradle_client_live_window() runs the one window
 * loop (window.c) over the live source (live.c) on SDL's dummy video driver
 * (a window and a software renderer, nothing shown), joined as a --bot
 * player to a cradle-server on loopback (the built program, --insecure,
 * vanguard). With --screenshot FILE:30 the loop draws every frame, saves the
 * picture 30 steps after the join (the game, the letterbox, the HUD) and
 * ends; the source's finish then prints the session's done line (--steps)
 * and leaves.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <SDL.h>
#include <enet/enet.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cradle/cradle.h"
#include "live.h"
#include "options.h"

#define WIDTH 640
#define HEIGHT 480

static char dir[256], server_out[320], server_err[320], shot_path[320], out_path[320];
static char port_text[16];
static pid_t server = -1;

static bool file_has(const char *path, const char *text) {
    char line[1024];
    bool found = false;
    FILE *f = fopen(path, "r");
    if (!f) return false;
    while (!found && fgets(line, sizeof line, f)) found = strstr(line, text) != NULL;
    fclose(f);
    return found;
}

/* Starts cradle-server on a random high port, retrying when it is taken
 * (exit 3), and waits for its "serving" line. */
static int start_server(void) {
    srand((unsigned)getpid() ^ (unsigned)time(NULL));
    for (int attempt = 0; attempt < 8; attempt++) {
        snprintf(port_text, sizeof port_text, "%d", 20000 + rand() % 40000);
        server = fork();
        if (server < 0) return -1;
        if (server == 0) {
            int out = open(server_out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            int err = open(server_err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (out < 0 || err < 0 || dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0) _exit(127);
            execl(CRADLE_SERVER, CRADLE_SERVER, "--bind", "127.0.0.1", "--port", port_text, "--insecure", "--game",
                  VANGUARD_LIB, "--players", "1", "--hash-interval", "30", (char *)NULL);
            _exit(127);
        }
        for (int waited = 0; waited < 6000; waited++) { /* 60 s: a loaded machine starts slowly */
            if (file_has(server_out, "\"event\":\"serving\"")) return 0;
            int status;
            if (waitpid(server, &status, WNOHANG) == server) {
                server = -1;
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 3) return -1;
                break; /* the port was taken: another */
            }
            nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
        }
        if (server > 0) return -1;
    }
    return -1;
}

static int setup(void **unused) {
    (void)unused;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/cradle-live-window-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) return -1;
    snprintf(server_out, sizeof server_out, "%s/server.out", dir);
    snprintf(server_err, sizeof server_err, "%s/server.err", dir);
    snprintf(shot_path, sizeof shot_path, "%s/shot.bmp", dir);
    snprintf(out_path, sizeof out_path, "%s/client.out", dir);
    if (setenv("SDL_VIDEODRIVER", "dummy", 1) != 0 || setenv("SDL_AUDIODRIVER", "dummy", 1) != 0) return -1;
    if (enet_initialize() != 0) return -1;
    if (start_server() != 0) {
        char line[1024];
        FILE *f = fopen(server_err, "r");
        while (f && fgets(line, sizeof line, f)) fprintf(stderr, "server: %s", line);
        if (f) fclose(f);
        return -1;
    }
    return 0;
}

static int teardown(void **unused) {
    (void)unused;
    if (server > 0) {
        kill(server, SIGTERM);
        waitpid(server, NULL, 0);
    }
    enet_deinitialize();
    cradle_os_remove_tree(dir);
    return 0;
}

static void test_a_live_session_runs_through_the_window_loop(void **unused) {
    (void)unused;
    char shot[400], size[32];
    snprintf(shot, sizeof shot, "%s:30", shot_path);
    snprintf(size, sizeof size, "%dx%d", WIDTH, HEIGHT);
    const char *args[] = {"cradle-client", "--game", VANGUARD_LIB, "--port", port_text, "--insecure", "--bot",
                          "--steps", "100000", "--mute", "--size", size, "--screenshot", shot};
    enum { ARGS = sizeof args / sizeof args[0] };
    char copies[ARGS][400], *argv[ARGS + 1];
    for (int i = 0; i < ARGS; i++) {
        snprintf(copies[i], sizeof copies[i], "%s", args[i]); /* getopt wants them writable */
        argv[i] = copies[i];
    }
    argv[ARGS] = NULL;
    cradle_client_options o;
    assert_int_equal(cradle_client_options_parse(&o, ARGS, argv), CRADLE_CLIENT_RUN);

    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    assert_true(dup2(fd, STDOUT_FILENO) >= 0);
    close(fd);
    int status = cradle_client_live_window(&o);
    fflush(stdout);
    assert_true(dup2(saved, STDOUT_FILENO) >= 0);
    close(saved);
    assert_int_equal(status, 0);

    /* the frame the loop drew 30 steps after the join, at the window's size */
    SDL_Surface *picture = SDL_LoadBMP(shot_path);
    if (!picture) fail_msg("no screenshot: %s", SDL_GetError());
    assert_int_equal(picture->w, WIDTH);
    assert_int_equal(picture->h, HEIGHT);
    /* drawn: the game's background and ships, the letterbox, the HUD's panel and text */
    SDL_Surface *argb = SDL_ConvertSurfaceFormat(picture, SDL_PIXELFORMAT_ARGB8888, 0);
    assert_non_null(argb);
    uint32_t seen[8];
    int colours = 0;
    for (int y = 0; y < argb->h && colours < 8; y++) {
        const uint32_t *row = (const uint32_t *)((const uint8_t *)argb->pixels + (size_t)y * (size_t)argb->pitch);
        for (int x = 0; x < argb->w && colours < 8; x++) {
            int i = 0;
            while (i < colours && seen[i] != row[x]) i++;
            if (i == colours) seen[colours++] = row[x];
        }
    }
    assert_true(colours >= 5);
    SDL_FreeSurface(argb);
    SDL_FreeSurface(picture);

    /* finish: the done line of a session that played, and no desync */
    assert_true(file_has(out_path, "\"event\":\"done\""));
    assert_true(file_has(out_path, "\"slot\":0"));
    assert_true(file_has(out_path, "\"desync\":false"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_live_session_runs_through_the_window_loop),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
