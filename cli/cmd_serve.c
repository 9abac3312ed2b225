#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char k_help[] =
    "usage: quire serve [--caps F] [--max-line N]\n"
    "\n"
    "The session API as JSONL (docs/serve.md): one request object a line on standard\n"
    "input, one reply object a line on standard output. Ops: open, restore, append,\n"
    "apply, render, accept, tool_outcome, compact, plan, estimate, transcript, state,\n"
    "log, close; one process holds many named sessions. A bad line gets an error reply\n"
    "and the server reads on; blank lines are skipped; end of input ends the server\n"
    "(exit 0).\n"
    "\n"
    "  --caps FILE      capability override rows for every session\n"
    "  --max-line N     longest request line in bytes (default 268435456); a longer line\n"
    "                   gets one QUIRE_E_LIMIT reply and is dropped (standard input as a\n"
    "                   whole has no limit; --max-input applies to the --caps file)\n";

#define SERVE_MAX_LINE_DEFAULT (256ull << 20)

typedef struct obuf {
    char *data;
    size_t len, cap;
    bool failed;
} obuf;

static void out_put(obuf *o, const char *p, size_t n) {
    if (o->failed) return;
    if (o->cap - o->len < n + 1) {
        size_t nc = o->cap ? o->cap : 65536;
        while (nc - o->len < n + 1) nc *= 2;
        char *nd = realloc(o->data, nc);
        if (!nd) { o->failed = true; return; }
        o->data = nd;
        o->cap = nc;
    }
    memcpy(o->data + o->len, p, n);
    o->len += n;
}

static bool out_flush(obuf *o) {
    size_t off = 0;
    while (off < o->len) {
        ssize_t w = write(STDOUT_FILENO, o->data + off, o->len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        off += (size_t)w;
    }
    o->len = 0;
    return true;
}

static bool reply(obuf *o, quire_bytes *b) {
    if (b->len) {
        out_put(o, b->data, b->len);
        out_put(o, "\n", 1);
    }
    quire_bytes_free(b);
    return !o->failed;
}

int cmd_serve(int argc, char **argv) {
    const char *caps_file = NULL;
    unsigned long long max_line = SERVE_MAX_LINE_DEFAULT;
    const cli_opt opts[] = {
        {"caps", CLI_STRING, &caps_file, NULL},
        {"max-line", CLI_UINT, &max_line, NULL},
    };
    int npos = 0;
    int r = cli_parse("serve", k_help, argc, argv, opts, sizeof opts / sizeof opts[0], NULL, 0, &npos);
    if (r >= 0) return r;
    if (max_line == 0) return cli_usage("serve", "--max-line must be at least 1");
    if (max_line > SIZE_MAX / 4) max_line = SIZE_MAX / 4;
    quire_error e;
    quire_caps *caps = NULL;
    if (caps_file) {
        cli_file cf;
        if (!cli_read(caps_file, &cf)) return 1;
        quire_status st = quire_caps_parse(cf.data, cf.len, NULL, &caps, &e);
        if (st) { cli_report(cf.name, &e); cli_file_free(&cf); return 1; }
        cli_file_free(&cf);
    }
    quire_server *sv = NULL;
    if (quire_server_new(caps, NULL, &sv, &e)) { quire_caps_free(caps); return cli_fail("%s", e.message); }

    /* in: [start, len) holds unread bytes; a line is served once its newline
     * (or the end of input) is in the buffer */
    size_t cap = 1 << 16, start = 0, len = 0, scan = 0;
    char *in = malloc(cap);
    obuf out = {NULL, 0, 0, false};
    bool eof = false, dropping = false, ok = in != NULL, wfail = false;
    int rc = 0;
    while (ok) {
        /* serve every complete line buffered */
        for (;;) {
            char *nl = memchr(in + scan, '\n', len - scan);
            if (!nl) {
                scan = len;
                if (!(eof && len > start)) break;
            }
            size_t end = nl ? (size_t)(nl - in) : len;
            size_t n = end - start;
            const char *line = in + start;
            if (n && line[n - 1] == '\r') n--;
            if (dropping) {
                dropping = false; /* the rest of an over-long line */
            } else if (n > max_line) {
                quire_bytes b;
                if (quire_server_overlong(sv, max_line, &b, &e) || !reply(&out, &b)) { ok = false; break; }
            } else {
                quire_bytes b;
                if (quire_server_handle(sv, line, n, &b, &e) || !reply(&out, &b)) { ok = false; break; }
            }
            start = scan = nl ? end + 1 : len;
            /* pipelined requests: replies go out once 1 MiB waits, so memory
             * stays bounded by the largest reply, not by their number */
            if (out.len >= ((size_t)1 << 20) && !out_flush(&out)) { ok = false; wfail = true; break; }
        }
        if (wfail) { rc = cli_fail("standard output: write error"); break; }
        if (!ok) break;
        /* a partial line longer than the limit: answer it now, drop it up to its newline */
        if (!dropping && len - start > max_line + 1) {
            quire_bytes b;
            if (quire_server_overlong(sv, max_line, &b, &e) || !reply(&out, &b)) { ok = false; break; }
            dropping = true;
        }
        if (dropping) start = scan = len;
        /* nothing complete is buffered: the replies go out before we wait */
        if (out.len && !out_flush(&out)) { rc = cli_fail("standard output: write error"); break; }
        if (eof) break;
        if (start == len) start = scan = len = 0;
        if (start > 0 && start >= cap / 2) {
            memmove(in, in + start, len - start);
            len -= start;
            scan -= start;
            start = 0;
        }
        if (cap - len < 4096) {
            char *ni = realloc(in, cap * 2);
            if (!ni) { ok = false; break; }
            in = ni;
            cap *= 2;
        }
        ssize_t got = read(STDIN_FILENO, in + len, cap - len);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) { rc = cli_fail("standard input: %s", strerror(errno)); break; }
        if (got == 0) eof = true;
        len += (size_t)got;
    }
    if (!ok && !rc) rc = cli_fail("out of memory");
    free(in);
    free(out.data);
    quire_server_free(sv);
    quire_caps_free(caps);
    return rc;
}
