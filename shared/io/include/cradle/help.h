#ifndef CRADLE_HELP_H
#define CRADLE_HELP_H
/*
 * help: the programs' option tables. Each program lists its options once,
 * as rows of cradle_option (or of a struct of its own whose first member is
 * one, when it keeps more per option: the server's --config keys and value
 * kinds); getopt's tables and the --help list are built from the rows.
 */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

typedef struct cradle_option {
    const char *name; /* the long name; NULL: a heading, its help printed alone */
    int id;           /* getopt's value: an ASCII letter is the short option too */
    const char *arg;  /* the value's name in --help; NULL: a switch */
    const char *help; /* NULL: not listed (an option for tests and screenshots) */
} cradle_option;

/* Fills longs (count + 1 entries) and shorts (2 * count + 1 bytes, or NULL
 * for none) from count rows stride bytes apart, each starting with a
 * cradle_option. A row whose id is an ASCII letter gets a short option. */
void cradle_options_getopt(const cradle_option *rows, size_t count, size_t stride, struct option *longs,
                           char *shorts);

/* Prints the rows as --help's list, "  -x, --name ARG" (the short option
 * when the id is a letter and shorts is true) and the help from `column`. */
void cradle_options_help(FILE *to, const cradle_option *rows, size_t count, size_t stride, int column, int shorts);

/* Prints an option's help text after its name, which took `used` columns
 * of the line: the text starts at `column` (on the next line when the name
 * reaches it), and each '\n' in it continues on a new line at `column`. */
void cradle_help_print(FILE *to, int used, int column, const char *text);

#endif
