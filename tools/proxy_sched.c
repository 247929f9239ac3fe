#include "proxy_sched.h"

#include <assert.h>
#include <string.h>

bool cradle_proxy_impairment_valid(const cradle_proxy_impairment *c) {
    return c->latency_ms <= CRADLE_PROXY_DELAY_MAX_MS && c->jitter_ms <= CRADLE_PROXY_DELAY_MAX_MS &&
           c->loss_pct <= 100 && c->duplicate_pct <= 100 && c->reorder_pct <= 100;
}

void cradle_proxy_sched_init(cradle_proxy_sched *s, const cradle_proxy_impairment *config,
                             cradle_proxy_entry *entries, cradle_proxy_packet *packets,
                             uint32_t *free_list, uint32_t capacity) {
    assert(config && cradle_proxy_impairment_valid(config));
    assert(entries && packets && free_list && capacity >= 1);
    memset(s, 0, sizeof *s);
    s->config = *config;
    cradle_rng_seed(&s->rng, config->seed, 0x70726f7879u /* "proxy" */);
    s->heap = entries;
    s->packets = packets;
    s->free_list = free_list;
    s->capacity = capacity;
    /* Hand out low indices first: pop from the end of the list. */
    for (uint32_t i = 0; i < capacity; i++) free_list[i] = capacity - 1u - i;
    s->free_count = capacity;
}

static bool chance(cradle_rng *rng, uint32_t pct) {
    /* Always draw, so a setting of 0 or 100 does not shift later decisions. */
    return cradle_rng_below(rng, 100) < pct;
}

static bool entry_before(const cradle_proxy_entry *a, const cradle_proxy_entry *b) {
    return a->release_us < b->release_us || (a->release_us == b->release_us && a->order < b->order);
}

static void heap_swap(cradle_proxy_entry *h, uint32_t i, uint32_t j) {
    cradle_proxy_entry t = h[i];
    h[i] = h[j];
    h[j] = t;
}

static void heap_push(cradle_proxy_sched *s, cradle_proxy_entry e) {
    cradle_proxy_entry *h = s->heap;
    uint32_t i = s->count++;
    h[i] = e;
    while (i > 0) {
        uint32_t parent = (i - 1u) / 2u;
        if (!entry_before(&h[i], &h[parent])) break;
        heap_swap(h, i, parent);
        i = parent;
    }
}

static cradle_proxy_entry heap_pop(cradle_proxy_sched *s) {
    cradle_proxy_entry *h = s->heap;
    cradle_proxy_entry top = h[0];
    h[0] = h[--s->count];
    uint32_t i = 0;
    for (;;) {
        uint32_t l = 2u * i + 1u, r = l + 1u, m = i;
        if (l < s->count && entry_before(&h[l], &h[m])) m = l;
        if (r < s->count && entry_before(&h[r], &h[m])) m = r;
        if (m == i) break;
        heap_swap(h, i, m);
        i = m;
    }
    return top;
}

static uint64_t draw_delay_us(cradle_proxy_sched *s, uint64_t now_us) {
    int64_t delay = (int64_t)s->config.latency_ms * 1000;
    int32_t j = (int32_t)(s->config.jitter_ms * 1000u); /* <= 6e7: fits */
    delay += cradle_rng_range(&s->rng, -j, j);
    if (delay < 0) delay = 0;
    return now_us + (uint64_t)delay;
}

static uint32_t enqueue(cradle_proxy_sched *s, uint64_t release_us, uint64_t tag, const uint8_t *bytes,
                        uint32_t length) {
    if (s->free_count == 0) {
        s->counters.overflowed++;
        return 0;
    }
    uint32_t index = s->free_list[--s->free_count];
    cradle_proxy_packet *p = &s->packets[index];
    p->tag = tag;
    p->length = length;
    if (length) memcpy(p->bytes, bytes, length);
    heap_push(s, (cradle_proxy_entry){.release_us = release_us, .order = s->next_order++, .packet = index});
    return 1;
}

uint32_t cradle_proxy_sched_submit(cradle_proxy_sched *s, uint64_t now_us, uint64_t tag,
                                   const uint8_t *bytes, uint32_t length) {
    assert(length <= CRADLE_PROXY_PACKET_MAX);
    assert(bytes || length == 0);
    s->counters.submitted++;
    if (chance(&s->rng, s->config.loss_pct)) {
        s->counters.lost++;
        return 0;
    }
    uint64_t release = draw_delay_us(s, now_us);
    if (chance(&s->rng, s->config.reorder_pct)) {
        s->counters.reordered++;
        release += CRADLE_PROXY_REORDER_MIN_US +
                   cradle_rng_below(&s->rng, CRADLE_PROXY_REORDER_MAX_US - CRADLE_PROXY_REORDER_MIN_US + 1u);
    }
    bool duplicate = chance(&s->rng, s->config.duplicate_pct);
    uint32_t queued = enqueue(s, release, tag, bytes, length);
    if (duplicate) {
        s->counters.duplicated++;
        queued += enqueue(s, draw_delay_us(s, now_us), tag, bytes, length);
    }
    return queued;
}

bool cradle_proxy_sched_next_release(const cradle_proxy_sched *s, uint64_t *release_us) {
    if (s->count == 0) return false;
    *release_us = s->heap[0].release_us;
    return true;
}

bool cradle_proxy_sched_pop_due(cradle_proxy_sched *s, uint64_t now_us, cradle_proxy_packet *out) {
    if (s->count == 0 || s->heap[0].release_us > now_us) return false;
    cradle_proxy_entry e = heap_pop(s);
    const cradle_proxy_packet *p = &s->packets[e.packet];
    out->tag = p->tag;
    out->length = p->length;
    memcpy(out->bytes, p->bytes, p->length);
    s->free_list[s->free_count++] = e.packet;
    s->counters.released++;
    return true;
}

uint32_t cradle_proxy_sched_count(const cradle_proxy_sched *s) { return s->count; }
