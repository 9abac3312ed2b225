#include "cli.h"

#include <stdio.h>

/* Placeholder until the validate command lands. */
int cmd_validate(int argc, char **argv) {
    (void)argc; (void)argv;
    fputs("quire validate: not implemented yet\n", stderr);
    return 2;
}
