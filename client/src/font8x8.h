#ifndef CRADLE_CLIENT_FONT8X8_H
#define CRADLE_CLIENT_FONT8X8_H
/*
 * font8x8: the client's bitmap font, authored here as 5x7 string art and
 * expanded at start-up into 8x8 cells (no asset file). Covers printable
 * ASCII; lower case shares the upper-case glyphs, anything else is a box.
 */
#include <stdint.h>

/* Row r (0 = top) of glyph c as 8 bits, bit 7 = leftmost pixel. */
uint8_t cradle_font8x8_row(unsigned char c, unsigned r);

#endif
