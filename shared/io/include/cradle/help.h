#ifndef CRADLE_HELP_H
#define CRADLE_HELP_H
/*
 * help: the layout of the programs' --help option lists.
 */
#include <stdio.h>

/* Prints an option's help text after its name, which took `used` columns
 * of the line: the text starts at `column` (on the next line when the name
 * reaches it), and each '\n' in it continues on a new line at `column`. */
void cradle_help_print(FILE *to, int used, int column, const char *text);

#endif
