/*
 * cradle-client: joins a cradle-server session and shows it (see
 * client/README.md). main() parses the options and hands over to the
 * headless loop (no SDL), the live window, the log player or the viewer.
 */
#include <enet/enet.h>
#include <signal.h>
#include <stdio.h>

#include "options.h"
#include "session_run.h"
#include "live.h"
#include "play.h"
#include "watch.h"

int main(int argc, char **argv) {
    cradle_client_options o;
    cradle_client_parse parsed = cradle_client_options_parse(&o, argc, argv);
    if (parsed == CRADLE_CLIENT_EXIT_OK) return 0;
    if (parsed == CRADLE_CLIENT_EXIT_USAGE) return 2;
    /* A reader that went away (cradle-client ... | head -1) must not kill the
     * client before it cleans up: its library copy beside the game file
     * (game.so.cradle-<pid>-<n>.so) is removed only on the way out. A write
     * to the closed pipe then just fails. */
    signal(SIGPIPE, SIG_IGN);
    if (o.play) return cradle_client_play(&o);
    if (o.watch) return cradle_client_watch(&o);
    if (enet_initialize() != 0) {
        fprintf(stderr, "cradle-client: cannot initialise ENet\n");
        return 1;
    }
    int status = o.headless ? cradle_client_run_headless(&o) : cradle_client_live_window(&o);
    enet_deinitialize();
    return status;
}
