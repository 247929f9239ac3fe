#ifndef CRADLE_SERVER_ENET_FILTER_H
#define CRADLE_SERVER_ENET_FILTER_H
/*
 * enet_filter: whether a datagram at the server's UDP port is one ENet
 * would read. ENet drops anything else without a word (its protocol.c,
 * enet_protocol_handle_incoming_commands); the network thread (net.c)
 * asks this first, in ENet's intercept hook, so that garbage (a scanner, an
 * attack, a stale client of another session) is dropped there and counted
 * (dropped_garbage, the "garbage" event) rather than invisible.
 *
 * ENet would read a datagram that is
 *   - a CONNECT addressed to no peer yet, long enough for its command, or
 *   - any valid command for a peer that is there (neither disconnected
 *     nor a zombie), from that peer's address, in its session (once the
 *     peer has its outgoing id: before, any session).
 * No compressor and no checksum are set on Cradle's hosts, so a datagram
 * that claims compression is garbage too.
 *
 * Pure: it reads the datagram and the host's peer table, nothing else.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <enet/enet.h>

bool cradle_enet_would_read(const ENetHost *host, const uint8_t *datagram, size_t size, const ENetAddress *from);

#endif
