#include "cli.h"

#include <stdio.h>

/* Placeholder until the ingest command lands. */
int cmd_ingest(int argc, char **argv) {
    (void)argc; (void)argv;
    fputs("quire ingest: not implemented yet\n", stderr);
    return 2;
}
