#include "cradle/ackpace.h"

#include <assert.h>

uint64_t cradle_ackpace_wait_ns(uint32_t steps_per_second) {
    assert(steps_per_second >= 1);
    return 1000000000ull * CRADLE_ACKPACE_WAIT_STEPS_X2 / (2ull * steps_per_second);
}

void cradle_ackpace_init(cradle_ackpace *pace, bool spectator, uint32_t steps_per_second, uint64_t start_step) {
    assert(pace);
    *pace = (cradle_ackpace){
        .every = spectator ? CRADLE_ACKPACE_SPECTATOR_STEPS : 1u,
        .wait_ns = cradle_ackpace_wait_ns(steps_per_second),
        .sent = start_step,
    };
}

bool cradle_ackpace_due(cradle_ackpace *pace, uint64_t received_next, uint64_t now_ns) {
    assert(pace && pace->every >= 1);
    if (pace->resend) return true;
    if (received_next <= pace->sent) {
        pace->waiting = false;
        return false;
    }
    if (received_next - pace->sent >= pace->every) return true;
    if (!pace->waiting) {
        pace->waiting = true;
        pace->waiting_since_ns = now_ns;
        return false;
    }
    return now_ns - pace->waiting_since_ns >= pace->wait_ns;
}

void cradle_ackpace_repeated(cradle_ackpace *pace) {
    assert(pace);
    pace->resend = true;
}

void cradle_ackpace_sent(cradle_ackpace *pace, uint64_t ack) {
    assert(pace);
    if (ack > pace->sent) pace->sent = ack;
    pace->waiting = false;
    pace->resend = false;
}
