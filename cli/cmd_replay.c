#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char k_help[] =
    "usage: quire replay [--provider P] [--model M] [--caps F] [--policy F] [--lossy]\n"
    "                    [--from FORMAT] [--lift-reminders] [--skip-invalid] [--sidechains]\n"
    "                    [--digest] [--pretty] [--out DIR] [--check DIR] [--stats] [-o FILE] LOG|-\n"
    "\n"
    "Replays a quire.session/1 log (or, with --from, a Claude Code / Codex / Gemini CLI / Cline /\n"
    "SWE-agent log imported on the fly) through the library: every render becomes a request,\n"
    "reminder and compaction events are applied in order (docs/replay.md).\n"
    "\n"
    "Output (stdout or -o FILE) is JSONL: {\"type\":\"request\",\"turn\",\"target\",\"body\"},\n"
    "{\"type\":\"event\",\"event\"}, {\"type\":\"response\",\"message\"}, {\"type\":\"compacted\",...}.\n"
    "\n"
    "  --provider P      render every turn for provider P (its default model unless --model)\n"
    "  --model M         render every turn for model M\n"
    "  --caps FILE       capability override rows, consulted before the built-in table\n"
    "  --policy FILE     render policy for every turn (as `quire render --policy`)\n"
    "  --lossy           content the target cannot express becomes an event, not an error;\n"
    "                    without it a turn whose request would be invalid stops the replay (exit 1)\n"
    "  --from F          LOG is a claude-code, codex, gemini-cli, cline or swe-agent\n"
    "                    log: import it first (as `quire import`);\n"
    "                    errors then name LOG's own line\n"
    "  --lift-reminders  with --from: lift inline <system-reminder> text into reminder events\n"
    "  --skip-invalid    with --from: skip lines that are not JSON objects\n"
    "  --sidechains      with --from claude-code: replay the sub-agent (isSidechain) conversation\n"
    "  --digest          request lines carry \"bytes\" and a 128-bit \"digest\" instead of \"body\";\n"
    "                    with --out, only the last turn's body is written in full\n"
    "  --pretty          request bodies in --out files two-space indented\n"
    "  --out DIR         write turn-0001.json ... (request bodies) and events.jsonl (the stream,\n"
    "                    request lines in digest form) into DIR\n"
    "  --check DIR       compare with a previous --out DIR: prints a unified diff of the first\n"
    "                    mismatch and exits 3\n"
    "  --stats           one line per turn: request bytes, bytes shared with the previous\n"
    "                    request's prefix, reminders rendered, compactions; then the totals\n";

void cli_import_report(const char *file, const quire_bytes *rep, bool verbose);
bool cli_import_format_ok(const char *from);
bool cli_import_line_format(const char *from);
bool cli_import_sidecar(const char *from, const char *path, cli_file *meta);
bool cli_import_check(const char *file, const char *from, const quire_bytes *rep);

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static bool bput(buf *b, const void *p, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 4096;
        while (nc < b->n + n + 1) nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np) return false;
        b->p = np;
        b->cap = nc;
    }
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
    return true;
}

typedef struct turn_body {
    char *p;
    size_t n;
} turn_body;

typedef struct run {
    FILE *sink;        /* the JSONL stream is written here as it is produced (NULL: not wanted) */
    buf events;        /* the stream with request lines in digest form */
    turn_body *turns;  /* request bodies (kept when --out/--check need them) */
    size_t nturns, capturns;
    buf stats;
    unsigned long long total_bytes, total_shared;
    char *prev;
    size_t prev_n;
    unsigned compactions_since;
} run;

static void run_free(run *r) {
    free(r->events.p);
    for (size_t i = 0; i < r->nturns; i++) free(r->turns[i].p);
    free(r->turns);
    free(r->stats.p);
    free(r->prev);
}

/* The request line of a stream in digest form. */
static bool digest_line(buf *b, const quire_replay_step *s, const char *body, size_t n) {
    char hex[33];
    quire_digest128(body, n, hex);
    char head[600];
    int k = snprintf(head, sizeof head, "{\"type\":\"request\",\"turn\":%lld,\"target\":{\"provider\":\"%s\"",
                     (long long)s->turn, s->provider);
    if (k < 0 || (size_t)k >= sizeof head) return false;
    if (!bput(b, head, (size_t)k)) return false;
    if (s->model) {
        /* model names are plain identifiers; escape the two JSON specials anyway */
        if (!bput(b, ",\"model\":\"", 10)) return false;
        for (const char *m = s->model; *m; m++) {
            if ((*m == '"' || *m == '\\') && !bput(b, "\\", 1)) return false;
            if (!bput(b, m, 1)) return false;
        }
        if (!bput(b, "\"", 1)) return false;
    }
    k = snprintf(head, sizeof head, "},\"bytes\":%zu,\"digest\":\"%s\"}\n", n, hex);
    return k > 0 && bput(b, head, (size_t)k);
}

static size_t common_prefix(const char *a, size_t an, const char *b, size_t bn) {
    size_t n = an < bn ? an : bn, i = 0;
    while (i < n && a[i] == b[i]) i++;
    return i;
}

/* Splits out the request line of a step's output (the first line when the
 * step rendered). */
static const char *skip_first_line(const char *p, size_t n, size_t *rest) {
    const char *nl = memchr(p, '\n', n);
    if (!nl) { *rest = 0; return p + n; }
    *rest = n - (size_t)(nl + 1 - p);
    return nl + 1;
}

/* The line of the agent's own log that imported-log line `line` came from
 * (its "_meta":{"line":N}); 0 when the line carries none. */
static uint32_t raw_line_of(const char *log, size_t len, uint32_t line) {
    const char *p = log, *end = log + len;
    for (uint32_t k = 1; p < end && k < line; k++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return 0;
        p = nl + 1;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    static const char key[] = "\"_meta\":{\"line\":";
    const size_t kl = sizeof key - 1;
    uint32_t found = 0;
    for (size_t i = 0; i + kl < n; i++) /* the last one: _meta is written last */
        if (memcmp(p + i, key, kl) == 0) {
            uint32_t v = 0;
            for (size_t j = i + kl; j < n && p[j] >= '0' && p[j] <= '9' && v < 400000000u; j++) v = v * 10 + (uint32_t)(p[j] - '0');
            found = v;
        }
    return found;
}

/* An error of the replay. For an imported log (raw != NULL) it names the
 * agent's log and its own line, not the line of the imported log. */
static void report_err(const char *name, const char *raw, const char *log, size_t len, const quire_error *e) {
    if (!raw || !e->line) { cli_report(name, e); return; }
    quire_error m = *e;
    uint32_t rl = raw_line_of(log, len, e->line);
    if (rl) {
        m.line = rl;
        m.column = 1;
        cli_report(raw, &m);
        return;
    }
    char nm[600];
    snprintf(nm, sizeof nm, "%s (as imported)", raw);
    cli_report(nm, &m);
}

static int do_run(const char *name, const char *raw, const char *log, size_t len, const quire_replay_options *ro,
                  bool keep_bodies, bool want_stats, run *R) {
    quire_error e;
    quire_replay *rp = NULL;
    quire_options o = QUIRE_OPTIONS_INIT;
    o.flags = QUIRE_PARSE_BORROW;
    if (quire_replay_open(log, len, ro, &o, &rp, &e)) { report_err(name, raw, log, len, &e); return 1; }
    /* a second, compact render of each body is what --stats measures; the
     * step's body is pretty only when asked */
    for (;;) {
        quire_replay_step s;
        int done = 0;
        if (quire_replay_next(rp, &s, &done, &e)) {
            report_err(name, raw, log, len, &e);
            quire_replay_free(rp);
            return 1;
        }
        if (done) break;
        if (R->sink) {
            if (s.output_len && fwrite(s.output, 1, s.output_len, R->sink) != s.output_len) {
                quire_replay_free(rp);
                return cli_fail("write failed: %s", strerror(errno));
            }
        }
        if (s.compactions) R->compactions_since += s.compactions;
        if (keep_bodies) { /* events.jsonl of an --out folder: request lines in digest form */
            if (!s.turn) {
                if (!bput(&R->events, s.output, s.output_len)) goto oom;
                continue;
            }
            if (!digest_line(&R->events, &s, s.request, s.request_len)) goto oom;
            size_t rest;
            const char *after = skip_first_line(s.output, s.output_len, &rest);
            if (!bput(&R->events, after, rest)) goto oom;
        } else if (!s.turn) {
            continue;
        }
        if (keep_bodies) {
            if (R->nturns == R->capturns) {
                size_t nc = R->capturns ? R->capturns * 2 : 64;
                turn_body *nt = realloc(R->turns, nc * sizeof *nt);
                if (!nt) goto oom;
                R->turns = nt;
                R->capturns = nc;
            }
            char *copy = malloc(s.request_len + 1);
            if (!copy) goto oom;
            memcpy(copy, s.request, s.request_len);
            copy[s.request_len] = '\0';
            R->turns[R->nturns].p = copy;
            R->turns[R->nturns].n = s.request_len;
            R->nturns++;
        }
        if (want_stats) {
            size_t shared = R->prev ? common_prefix(R->prev, R->prev_n, s.request, s.request_len) : 0;
            char line[256];
            int k = snprintf(line, sizeof line, "turn %04lld  bytes %zu  prefix %zu  reminders %u  compactions %u\n",
                             (long long)s.turn, s.request_len, shared, s.reminders, R->compactions_since);
            if (k < 0 || !bput(&R->stats, line, (size_t)k)) goto oom;
            R->total_bytes += s.request_len;
            R->total_shared += shared;
            char *np = realloc(R->prev, s.request_len + 1);
            if (!np) goto oom;
            memcpy(np, s.request, s.request_len);
            R->prev = np;
            R->prev_n = s.request_len;
        }
        R->compactions_since = 0;
    }
    quire_replay_free(rp);
    return 0;
oom:
    quire_replay_free(rp);
    return cli_fail("out of memory");
}

/* ---- writing and checking an --out folder ---- */

/* Writes the --out folder all or nothing: every file goes to a temporary
 * sibling first and is renamed into place only when all were written; a folder
 * that did not exist is built under a temporary name and renamed when
 * complete, so a failure (a full disk) leaves nothing behind. */
typedef struct out_file {
    cli_target t;
    char *tmp;
} out_file;

static int write_out(const char *dir, const run *R, bool digest_only) {
    struct stat st;
    char *into = NULL; /* the folder the files are written in */
    bool fresh = false;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) return cli_fail("%s: exists and is not a directory", dir);
        into = strdup(dir);
    } else if (errno != ENOENT) {
        return cli_fail("%s: %s", dir, strerror(errno));
    } else {
        size_t dl = strlen(dir);
        while (dl > 1 && dir[dl - 1] == '/') dl--;
        const char *slash = NULL;
        for (size_t k = 0; k < dl; k++)
            if (dir[k] == '/') slash = dir + k;
        size_t pl = slash ? (size_t)(slash - dir) + 1 : 0;
        size_t n = dl + 32;
        into = malloc(n);
        if (into) {
            snprintf(into, n, "%.*s.%.*s.quire-XXXXXX", (int)pl, dir, (int)(dl - pl), dir + pl);
            if (!mkdtemp(into)) { int en = errno; free(into); return cli_fail("%s: %s", dir, strerror(en)); }
            mode_t um = umask(0);
            umask(um);
            (void)chmod(into, 0777 & ~um);
            fresh = true;
        }
    }
    if (!into) return cli_fail("out of memory");
    size_t nfiles = R->nturns + 1;
    out_file *fs = calloc(nfiles, sizeof *fs);
    int rc = fs ? 0 : cli_fail("out of memory");
    size_t used = 0;
    for (size_t i = 0; i < nfiles && rc == 0; i++) {
        const char *data;
        size_t n;
        char name[32];
        bool last = i == R->nturns;
        if (last) {
            snprintf(name, sizeof name, "events.jsonl");
            data = R->events.p ? R->events.p : "";
            n = R->events.n;
        } else {
            if (digest_only && i + 1 != R->nturns) continue;
            snprintf(name, sizeof name, "turn-%04zu.json", i + 1);
            data = R->turns[i].p;
            n = R->turns[i].n;
        }
        size_t pl = strlen(into) + sizeof name + 2;
        char *path = malloc(pl);
        if (!path) { rc = cli_fail("out of memory"); break; }
        snprintf(path, pl, "%s/%s", into, name);
        bool ok = cli_target_resolve(path, &fs[used].t);
        free(path);
        if (!ok) { rc = 1; break; }
        fs[used].t.name = dir;
        used++;
        if (fs[used - 1].t.kind != CLI_T_FILE) { rc = cli_fail("%s/%s: not a regular file", dir, name); break; }
        int fd = cli_tmp_open(&fs[used - 1].t, &fs[used - 1].tmp);
        if (fd < 0) { rc = 1; break; }
        /* each body ends with a newline, like every quire output file */
        bool w = true;
        const char *p = data;
        size_t left = n;
        while (w && left) {
            ssize_t k = write(fd, p, left);
            if (k < 0) { if (errno == EINTR) continue; w = false; break; }
            p += k;
            left -= (size_t)k;
        }
        if (w && !last) w = write(fd, "\n", 1) == 1;
        int en = errno;
        if (close(fd) != 0 && w) { w = false; en = errno; }
        if (!w) rc = cli_fail("%s/%s: write failed: %s", dir, name, strerror(en));
    }
    for (size_t i = 0; i < used; i++) {
        if (!fs[i].tmp) continue;
        if (rc == 0 && rename(fs[i].tmp, fs[i].t.path) != 0) rc = cli_fail("%s: %s", dir, strerror(errno));
        if (rc != 0) unlink(fs[i].tmp);
    }
    if (fresh && rc == 0 && rename(into, dir) != 0) rc = cli_fail("%s: %s", dir, strerror(errno));
    if (fresh && rc != 0) { /* remove what was put in the temporary folder, then the folder */
        for (size_t i = 0; i < used; i++)
            if (fs[i].t.path) unlink(fs[i].t.path);
        rmdir(into);
    }
    for (size_t i = 0; i < used; i++) { free(fs[i].tmp); cli_target_free(&fs[i].t); }
    free(fs);
    free(into);
    return rc;
}

/* Lines of a text (pointers into it). */
typedef struct lines {
    const char **l;
    size_t *n;
    size_t count;
} lines;

static bool split_lines(const char *p, size_t n, lines *out) {
    memset(out, 0, sizeof *out);
    size_t cap = 0;
    const char *end = p + n;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t k = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (out->count == cap) {
            cap = cap ? cap * 2 : 256;
            const char **nlp = realloc(out->l, cap * sizeof *nlp);
            if (!nlp) return false;
            out->l = nlp;
            size_t *nn = realloc(out->n, cap * sizeof *nn);
            if (!nn) return false;
            out->n = nn;
        }
        out->l[out->count] = p;
        out->n[out->count] = k;
        out->count++;
        p += k + (nl ? 1 : 0);
    }
    return true;
}

static void lines_free(lines *l) { free(l->l); free(l->n); }

static bool line_eq(const lines *a, size_t i, const lines *b, size_t j) {
    return a->n[i] == b->n[j] && memcmp(a->l[i], b->l[j], a->n[i]) == 0;
}

/* A unified diff with one hunk: common head and tail lines trimmed, three
 * lines of context. */
static void unified_diff(const char *aname, const char *a, size_t an, const char *bname, const char *b, size_t bn) {
    lines A, B;
    if (!split_lines(a, an, &A) || !split_lines(b, bn, &B)) { lines_free(&A); lines_free(&B); return; }
    size_t pre = 0;
    while (pre < A.count && pre < B.count && line_eq(&A, pre, &B, pre)) pre++;
    size_t suf = 0;
    while (suf < A.count - pre && suf < B.count - pre && line_eq(&A, A.count - 1 - suf, &B, B.count - 1 - suf)) suf++;
    size_t ctx0 = pre > 3 ? pre - 3 : 0;
    size_t ctx1a = A.count - suf + (suf > 3 ? 3 : suf), ctx1b = B.count - suf + (suf > 3 ? 3 : suf);
    printf("--- %s\n+++ %s\n", aname, bname);
    printf("@@ -%zu,%zu +%zu,%zu @@\n", ctx0 + 1, ctx1a - ctx0, ctx0 + 1, ctx1b - ctx0);
    for (size_t i = ctx0; i < pre; i++) printf(" %.*s\n", (int)A.n[i], A.l[i]);
    for (size_t i = pre; i < A.count - suf; i++) printf("-%.*s\n", (int)A.n[i], A.l[i]);
    for (size_t i = pre; i < B.count - suf; i++) printf("+%.*s\n", (int)B.n[i], B.l[i]);
    for (size_t i = A.count - suf; i < ctx1a; i++) printf(" %.*s\n", (int)A.n[i], A.l[i]);
    lines_free(&A);
    lines_free(&B);
}

/* Pretty form of a JSON text for diffing (falls back to the bytes). */
static char *pretty(const char *p, size_t n, size_t *outn) {
    quire_bytes b = {0};
    if (quire_json_format(p, n, 1, NULL, &b, NULL) == QUIRE_OK) {
        char *c = malloc(b.len + 2);
        if (c) { memcpy(c, b.data, b.len); c[b.len] = '\n'; c[b.len + 1] = '\0'; *outn = b.len + 1; }
        quire_bytes_free(&b);
        return c;
    }
    char *c = malloc(n + 1);
    if (c) { memcpy(c, p, n); c[n] = '\0'; *outn = n; }
    return c;
}

static bool read_opt(const char *path, cli_file *f, bool *exists) {
    struct stat st;
    *exists = stat(path, &st) == 0;
    if (!*exists) { memset(f, 0, sizeof *f); return true; }
    return cli_read(path, f);
}

static int check_out(const char *dir, const run *R) {
    size_t pl = strlen(dir) + 64;
    char *path = malloc(pl);
    if (!path) return cli_fail("out of memory");
    int rc = 0;
    /* turn bodies that the folder holds in full, in turn order */
    for (size_t i = 0; i < R->nturns && rc == 0; i++) {
        snprintf(path, pl, "%s/turn-%04zu.json", dir, i + 1);
        cli_file f;
        bool ex;
        if (!read_opt(path, &f, &ex)) { rc = 1; break; }
        if (!ex) continue;
        size_t n = f.len;
        if (n && f.data[n - 1] == '\n') n--;
        if (n != R->turns[i].n || memcmp(f.data, R->turns[i].p, n) != 0) {
            size_t an = 0, bn = 0;
            char *a = pretty(f.data, n, &an), *b = pretty(R->turns[i].p, R->turns[i].n, &bn);
            char nb[64];
            snprintf(nb, sizeof nb, "turn-%04zu.json (replay)", i + 1);
            if (a && b) unified_diff(path, a, an, nb, b, bn);
            free(a);
            free(b);
            fprintf(stderr, "quire: replay differs from %s at turn %zu\n", dir, i + 1);
            rc = 3;
        }
        cli_file_free(&f);
    }
    if (rc == 0) {
        snprintf(path, pl, "%s/turn-%04zu.json", dir, R->nturns + 1);
        struct stat st;
        if (stat(path, &st) == 0) {
            fprintf(stderr, "quire: %s has %s but the replay renders only %zu turns\n", dir, path, R->nturns);
            rc = 3;
        }
    }
    if (rc == 0) {
        snprintf(path, pl, "%s/events.jsonl", dir);
        cli_file f;
        bool ex;
        if (!read_opt(path, &f, &ex)) rc = 1;
        else if (ex && (f.len != R->events.n || (f.len && memcmp(f.data, R->events.p, f.len) != 0))) {
            unified_diff(path, f.data, f.len, "events.jsonl (replay)", R->events.p ? R->events.p : "", R->events.n);
            fprintf(stderr, "quire: replay differs from %s in events.jsonl\n", dir);
            rc = 3;
        }
        if (ex) cli_file_free(&f);
    }
    free(path);
    return rc;
}

int cmd_replay(int argc, char **argv) {
    const char *provider = NULL, *model = NULL, *from = NULL, *outdir = NULL, *checkdir = NULL, *out = NULL;
    const char *caps_file = NULL, *policy_file = NULL;
    bool digest = false, pretty_b = false, stats = false, lift = false, skip = false, side = false, lossy = false;
    const cli_opt opts[] = {
        {"provider", CLI_STRING, &provider, NULL}, {"model", CLI_STRING, &model, NULL},
        {"from", CLI_STRING, &from, NULL},         {"lift-reminders", CLI_FLAG, &lift, NULL},
        {"skip-invalid", CLI_FLAG, &skip, NULL},   {"digest", CLI_FLAG, &digest, NULL},
        {"pretty", CLI_FLAG, &pretty_b, NULL},     {"out", CLI_STRING, &outdir, NULL},
        {"check", CLI_STRING, &checkdir, NULL},    {"stats", CLI_FLAG, &stats, NULL},
        {"o", CLI_STRING, &out, NULL},             {"sidechains", CLI_FLAG, &side, NULL},
        {"caps", CLI_STRING, &caps_file, NULL},    {"policy", CLI_STRING, &policy_file, NULL},
        {"lossy", CLI_FLAG, &lossy, NULL},
    };
    const char *pos[1];
    int npos = 0;
    int r = cli_parse("replay", k_help, argc, argv, opts, sizeof opts / sizeof opts[0], pos, 1, &npos);
    if (r >= 0) return r;
    if (!npos) return cli_usage("replay", "a session LOG is required");
    if (from && !cli_import_format_ok(from))
        return cli_usage("replay", "--from takes claude-code, codex, gemini-cli, cline or swe-agent, not '%s'", from);
    if ((lift || skip || side) && !from)
        return cli_usage("replay", "--lift-reminders, --skip-invalid and --sidechains need --from");
    if (side && strcmp(from, "claude-code") != 0) return cli_usage("replay", "--sidechains applies to claude-code logs");
    if ((lift || skip) && !cli_import_line_format(from))
        return cli_usage("replay", "--lift-reminders and --skip-invalid apply to claude-code and codex logs");
    if (outdir && checkdir) return cli_usage("replay", "--out and --check cannot be combined");
    if (provider && !*provider) return cli_usage("replay", "--provider needs a name");

    /* render options of every turn: --caps, --policy, --lossy */
    quire_render_options base = QUIRE_RENDER_OPTIONS_INIT;
    quire_caps *caps;
    if (!cli_load_caps_policy(caps_file, policy_file, &base, &caps)) return 1;
    base.caps = caps;
    if (lossy) base.lossy = 1;
    cli_file f;
    if (!cli_read(pos[0], &f)) { quire_caps_free(caps); return 1; }
    quire_bytes imported = {0};
    const char *log = f.data;
    size_t len = f.len;
    if (from) {
        quire_import_options io = QUIRE_IMPORT_OPTIONS_INIT;
        io.format = from;
        io.flags = (lift ? QUIRE_IMPORT_LIFT_REMINDERS : 0u) | (skip ? QUIRE_IMPORT_SKIP_INVALID : 0u) |
                   (side ? QUIRE_IMPORT_SIDECHAINS : 0u);
        cli_file meta;
        if (!cli_import_sidecar(from, pos[0], &meta)) { cli_file_free(&f); quire_caps_free(caps); return 1; }
        io.metadata = meta.data;
        io.metadata_len = meta.len;
        quire_bytes rep = {0};
        quire_error e;
        quire_status ist = quire_import(f.data, f.len, &io, NULL, &imported, &rep, &e);
        cli_file_free(&meta);
        if (ist) {
            cli_report(f.name, &e);
            cli_file_free(&f);
            quire_caps_free(caps);
            return 1;
        }
        bool ok = cli_import_check(f.name, from, &rep);
        if (ok) cli_import_report(f.name, &rep, false);
        quire_bytes_free(&rep);
        if (!ok) { quire_bytes_free(&imported); quire_caps_free(caps); cli_file_free(&f); return 1; }
        log = imported.data;
        len = imported.len;
    } else {
        size_t k = 0; /* an empty log replays nothing: a wrong path, not a session */
        while (k < len && (log[k] == ' ' || log[k] == '\t' || log[k] == '\n' || log[k] == '\r')) k++;
        if (k == len) { quire_caps_free(caps); cli_file_free(&f); return cli_fail("%s: empty session log (no lines)", f.name); }
    }
    quire_replay_options ro = QUIRE_REPLAY_OPTIONS_INIT;
    ro.provider = provider;
    ro.model = model;
    ro.pretty = (outdir || checkdir) && pretty_b;
    ro.flags = digest && !outdir && !checkdir ? QUIRE_REPLAY_DIGEST : 0u;
    ro.render = &base;
    run R;
    memset(&R, 0, sizeof R);
    /* the plain stream is written as it is produced (a long session's requests
     * add up to far more than its log): to stdout, or to a temporary sibling
     * of -o FILE renamed into place only when the whole replay succeeded */
    char *tmp = NULL;
    cli_target tgt;
    memset(&tgt, 0, sizeof tgt);
    bool streaming = !outdir && !checkdir && !stats;
    if (streaming) {
        if (!cli_target_resolve(out, &tgt)) { quire_bytes_free(&imported); quire_caps_free(caps); cli_file_free(&f); return 1; }
        if (tgt.kind == CLI_T_STDOUT) {
            R.sink = stdout;
        } else if (tgt.kind == CLI_T_FD) { /* the open descriptor, at its offset */
            fflush(stdout);
            int d = dup(tgt.fd);
            R.sink = d >= 0 ? fdopen(d, "wb") : NULL;
            if (!R.sink && d >= 0) close(d);
        } else if (tgt.kind == CLI_T_DEVICE) { /* a terminal, pipe or device: written as produced */
            R.sink = fopen(tgt.path, "wb");
        } else {
            int fd = cli_tmp_open(&tgt, &tmp);
            R.sink = fd >= 0 ? fdopen(fd, "wb") : NULL;
            if (fd >= 0 && !R.sink) { close(fd); unlink(tmp); }
            if (fd < 0) { cli_target_free(&tgt); quire_bytes_free(&imported); quire_caps_free(caps); cli_file_free(&f); return 1; }
        }
        if (!R.sink) {
            int en = errno;
            free(tmp);
            cli_target_free(&tgt);
            quire_bytes_free(&imported);
            quire_caps_free(caps);
            cli_file_free(&f);
            return cli_fail("%s: %s", out, strerror(en));
        }
    }
    int rc = do_run(f.name, from ? f.name : NULL, log, len, &ro, outdir || checkdir, stats, &R);
    quire_caps_free(caps);
    if (R.sink) {
        if (fflush(R.sink) != 0 && rc == 0) rc = cli_fail("%s: write failed: %s", out ? out : "<stdout>", strerror(errno));
        if (R.sink != stdout && fclose(R.sink) != 0 && rc == 0) rc = cli_fail("%s: write failed: %s", out, strerror(errno));
        if (tmp) { /* the whole stream, or nothing */
            if (rc == 0 && rename(tmp, tgt.path) != 0) rc = cli_fail("%s: %s", out, strerror(errno));
            if (rc != 0) unlink(tmp);
            free(tmp);
        }
    }
    cli_target_free(&tgt);
    quire_bytes_free(&imported);
    cli_file_free(&f);
    if (rc == 0 && outdir) rc = write_out(outdir, &R, digest);
    if (rc == 0 && checkdir) rc = check_out(checkdir, &R);
    if (rc == 0 && !outdir && !checkdir && stats) {
        cli_outputs *outs = cli_out_new();
        {
            char tot[256];
            double reuse = R.total_bytes ? 100.0 * (double)R.total_shared / (double)R.total_bytes : 0.0;
            size_t turns = 0;
            for (size_t i = 0; i < R.stats.n; i++)
                if (R.stats.p[i] == '\n') turns++;
            int k = snprintf(tot, sizeof tot, "total  turns %zu  bytes %llu  prefix %llu  reuse %.1f%%\n", turns,
                             R.total_bytes, R.total_shared, reuse);
            if (k > 0) bput(&R.stats, tot, (size_t)k);
            cli_out_add_copy(outs, out, R.stats.p ? R.stats.p : "", R.stats.n);
        }
        rc = cli_out_commit(outs);
    } else if (rc == 0 && stats) {
        fwrite(R.stats.p ? R.stats.p : "", 1, R.stats.n, stdout);
    }
    run_free(&R);
    return rc;
}
