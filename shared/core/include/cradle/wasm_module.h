#ifndef CRADLE_WASM_MODULE_H
#define CRADLE_WASM_MODULE_H
/*
 * wasm_module: a strict reader of a WebAssembly module's section list, to
 * find one custom section. A game build's WebAssembly twin (the browser
 * viewer's copy of the game, beside its library) names the build it was
 * made from in a custom section "cradle_build" whose payload is exactly the
 * build id's bytes (no NUL); the server reads it before it publishes the
 * module (server/src/broadcast.c), so a viewer never runs a twin of another
 * build.
 *
 * The binary format (WebAssembly Core Specification 2.0, 5.5), as read here:
 *     0   4  magic 00 'a' 's' 'm'
 *     4   4  version, little-endian: 1
 *     8      sections until the end of the file, each:
 *              1  id: 0 custom, 1 type, 2 import, 3 function, 4 table,
 *                 5 memory, 6 global, 7 export, 8 start, 9 element,
 *                 10 code, 11 data, 12 data count; any other id is refused
 *              n  its size: unsigned LEB128 of at most 5 bytes (padding
 *                 within 5 bytes is the format's; the fifth byte carries
 *                 only the top 4 bits of a u32), at most the bytes left
 *              size bytes of content. A custom section's content begins
 *                 with its name: a LEB128 u32 length and that many bytes
 *                 of valid UTF-8 (no overlong form, no surrogate, nothing
 *                 above U+10FFFF), within the section; the rest is the
 *                 payload.
 *            Sections other than custom ones appear at most once each, in
 *            the order type, import, function, table, memory, global,
 *            export, start, element, data count, code, data; custom
 *            sections may come anywhere.
 * The whole list is checked, also past the section asked for: a module
 * truncated or damaged anywhere is refused, never half trusted. Section
 * contents other than a custom section's name are not decoded (this is not
 * a validator: the browser compiles the module and checks the rest).
 *
 * Pure: no allocation, no OS; the payload points into the caller's bytes.
 */
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"

#define CRADLE_WASM_HEADER_BYTES 8u
#define CRADLE_WASM_VERSION 1u

/* Finds the first custom section called `name` (NUL-terminated, compared
 * byte for byte with the section's name) in size bytes of module. Returns
 * 0 with *payload pointing at its payload (into module) and *payload_size
 * set; CRADLE_EWASM_NO_SECTION when the module is valid and has no such
 * section; CRADLE_EWASM when the bytes are no valid module. Either failure
 * leaves *payload NULL and *payload_size 0 and writes into message what was
 * wrong and at which byte offset of the module ("byte 8: section id 42 is
 * not a WebAssembly section"; message may be NULL). */
CRADLE_MUST_CHECK int cradle_wasm_custom_section(const uint8_t *module, size_t size, const char *name,
                                                 const uint8_t **payload, size_t *payload_size, char *message,
                                                 size_t message_size);

#endif
