#include "cli.h"

#include <stdio.h>

/* Placeholder until the compact command lands. */
int cmd_compact(int argc, char **argv) {
    (void)argc; (void)argv;
    fputs("quire compact: not implemented yet\n", stderr);
    return 2;
}
