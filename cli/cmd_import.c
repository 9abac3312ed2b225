#include "cli.h"

#include <stdio.h>

/* Placeholder until the import command lands. */
int cmd_import(int argc, char **argv) {
    (void)argc; (void)argv;
    fputs("quire import: not implemented yet\n", stderr);
    return 2;
}
