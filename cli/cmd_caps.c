#include "cli.h"

#include <stdio.h>

/* Placeholder until the caps command lands. */
int cmd_caps(int argc, char **argv) {
    (void)argc; (void)argv;
    fputs("quire caps: not implemented yet\n", stderr);
    return 2;
}
