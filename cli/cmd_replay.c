#include "cli.h"

#include <stdio.h>

/* Placeholder until the replay command lands. */
int cmd_replay(int argc, char **argv) {
    (void)argc; (void)argv;
    fputs("quire replay: not implemented yet\n", stderr);
    return 2;
}
