/* The quire command: shared helpers. The CLI does all I/O and uses only
 * include/quire.h. */
#ifndef QUIRE_CLI_H
#define QUIRE_CLI_H

#include "quire.h"
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* An input file read whole ("-" = standard input). */
typedef struct cli_file {
    char *data;
    size_t len;
    const char *name; /* as given on the command line; "<stdin>" for "-" */
    size_t mapped;    /* nonzero: data is a mapping of this size (anonymous, or the file's, read-only) */
} cli_file;

/* Reads path; on failure prints "quire: PATH: reason" and returns false.
 * Reading stops at cli_max_input bytes (--max-input, every command): a larger
 * input is an error, whatever kind of file it is (pipe, device, regular). */
bool cli_read(const char *path, cli_file *out);
/* The same for a caller that only reads the bytes: a regular file of 64 KiB
 * or more is mapped read-only from the page cache (no copy, no fresh pages;
 * writing to data faults); anything else is read as cli_read does. The file
 * must not shrink while it is mapped. */
bool cli_map(const char *path, cli_file *out);
#define CLI_MAX_INPUT_DEFAULT (1ull << 30)
extern unsigned long long cli_max_input;
void cli_file_free(cli_file *f);

/* --caps and --policy of the commands that render: parses the capability
 * rows of caps_file into *caps (NULL when none is given; the caller frees
 * them) and applies policy_file to *ro. On failure reports the file and
 * returns false with *caps NULL. Does not set ro->caps. */
bool cli_load_caps_policy(const char *caps_file, const char *policy_file, quire_render_options *ro,
                          quire_caps **caps);
/* --bytes-per-token N: a token counter that counts ceil(len / N); ud points
 * at N (a size_t). */
size_t cli_count_by_bytes(const char *text, size_t len, void *ud);

/* Prints "quire: FILE:LINE:COL: /pointer: message" (parts omitted when unknown). */
void cli_report(const char *file, const quire_error *e);
/* Prints "quire: message" and returns 1. */
int cli_fail(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Prints "quire CMD: message" + "Try 'quire CMD --help'." and returns 2. */
int cli_usage(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Pending outputs: nothing touches the file system until cli_out_commit(),
 * which writes every regular file to a new temporary sibling, then standard
 * output, descriptors and devices, and only when all of them were written
 * renames the files into place; on any failure no named file changes.
 * path NULL or "-" = stdout. */
typedef struct cli_outputs cli_outputs;
cli_outputs *cli_out_new(void);
/* Takes ownership of b's data. */
void cli_out_add(cli_outputs *o, const char *path, quire_bytes *b);
/* Takes b's data and adds a final newline. */
void cli_out_add_line(cli_outputs *o, const char *path, quire_bytes *b);
/* Adds a copy of data. */
void cli_out_add_copy(cli_outputs *o, const char *path, const char *data, size_t len);
/* Returns 0 or 1 (error printed). Frees o. */
int cli_out_commit(cli_outputs *o);
void cli_out_discard(cli_outputs *o);

/* Where an output path gets written (docs/cli.md, "Output files"). */
enum { CLI_T_STDOUT, CLI_T_FD, CLI_T_DEVICE, CLI_T_FILE };
typedef struct cli_target {
    int kind;
    int fd;           /* CLI_T_STDOUT, CLI_T_FD: the open descriptor (/dev/stdout, /dev/fd/N, ...) */
    char *path;       /* CLI_T_DEVICE: the path to open (terminal, FIFO, device); CLI_T_FILE: the
                       * absolute path of the regular file, symlinks (dangling ones too) followed */
    const char *name; /* as given */
    bool exists;      /* CLI_T_FILE: the file is there; st holds its mode and owner */
    struct stat st;
} cli_target;
/* Resolves path (NULL or "-" = stdout); false with the error printed. */
bool cli_target_resolve(const char *path, cli_target *t);
void cli_target_free(cli_target *t);
/* Creates a temporary sibling of a CLI_T_FILE target (O_CREAT|O_EXCL, the
 * existing file's mode and, for root, owner). Returns its descriptor and
 * sets *tmp (free it), or -1 with the error printed. */
int cli_tmp_open(const cli_target *t, char **tmp);

/* Option parsing. */
typedef enum { CLI_FLAG, CLI_STRING, CLI_UINT } cli_kind;
typedef struct cli_opt {
    const char *name;   /* long name without dashes, e.g. "provider"; "o" for -o */
    cli_kind kind;
    void *dest;         /* bool* | const char ** | unsigned long long * */
    bool *seen;         /* optional: set when given */
} cli_opt;
/* Parses argv[1..argc) (argv[0] is the command name). Positionals are stored in
 * pos (at most maxpos). Returns -1 on success, 0 if --help was printed, 2 on a
 * usage error (printed). */
int cli_parse(const char *cmd, const char *help, int argc, char **argv, const cli_opt *opts, size_t nopts,
              const char **pos, int maxpos, int *npos);

int cmd_render(int argc, char **argv);
int cmd_compact(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_caps(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_json(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_accept(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_estimate(int argc, char **argv);

/* Reminder state I/O shared by render and ingest (cli/remind_io.c). */
typedef struct cli_remind {
    const char *state_path;  /* --state F: the reminder state to start from (default: a fresh one) */
    const char *remind_path; /* --remind F: session-log lines (mcp, acp, reminder, clear) to apply first */
    const char *state_out;   /* --state-out F: where the next state goes */
    const char *events_out;  /* --events F: lifecycle events, JSONL */
} cli_remind;
#define CLI_REMIND_OPTS(r)                                                                                  \
    {"state", CLI_STRING, &(r)->state_path, NULL}, {"remind", CLI_STRING, &(r)->remind_path, NULL},         \
    {"state-out", CLI_STRING, &(r)->state_out, NULL}, { "events", CLI_STRING, &(r)->events_out, NULL }
#define CLI_REMIND_HELP                                                                                     \
    "  --state F        reminder state (quire.state/1) to render with (default: none)\n"                     \
    "  --remind F       session-log lines of type mcp, acp, reminder, clear (JSONL or a JSON array),\n"      \
    "                   applied in order to the state before rendering (ACP responses are discarded)\n"     \
    "  --state-out F    write the state after this model call (turn + 1, TTLs spent) to F\n"               \
    "  --events F       write the lifecycle events (ACP SessionUpdate objects, JSONL) to F\n"
/* Loads r->state_path (or a fresh state with session_id) into *state and
 * applies r->remind_path; events of that step go to *events, JSON-RPC
 * responses to *responses (may be NULL: discarded). Returns 0, or 1 with the
 * error printed (file:line:col: pointer: message). */
int cli_remind_load(const cli_remind *r, const char *session_id, quire_state **state, quire_bytes *events,
                    quire_bytes *responses);
/* Queues --state-out (state, when given) and --events (pre, mid then post, any
 * may be NULL) on outs. Takes ownership of the event buffers. Returns false on
 * error (printed). */
bool cli_remind_outputs(const cli_remind *r, cli_outputs *outs, const quire_state *state, quire_bytes *pre,
                        quire_bytes *mid, quire_bytes *post);

#endif
