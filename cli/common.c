#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_POPULATE */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

bool cli_read(const char *path, cli_file *out) {
    memset(out, 0, sizeof *out);
    bool is_stdin = strcmp(path, "-") == 0;
    out->name = is_stdin ? "<stdin>" : path;
    int fd = is_stdin ? 0 : open(path, O_RDONLY);
    if (fd < 0) { cli_fail("%s: %s", path, strerror(errno)); return false; }
    struct stat st;
    size_t cap = 65536;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (!is_stdin) close(fd);
        cli_fail("%s: is a directory", path);
        return false;
    }
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) cap = (size_t)st.st_size + 1;
    /* A large regular file is read into pre-faulted anonymous memory: the
     * kernel maps every page in one call instead of one fault per page. */
#if defined(MAP_POPULATE) && defined(MAP_ANONYMOUS)
    if (!is_stdin && S_ISREG(st.st_mode) && cap >= ((size_t)1 << 20)) {
        void *m = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (m != MAP_FAILED) {
            size_t len = 0;
            while (len < cap) {
                ssize_t r = read(fd, (char *)m + len, cap - len);
                if (r < 0 && errno == EINTR) continue;
                if (r <= 0) break;
                len += (size_t)r;
            }
            if (len < cap) { /* the whole file (it did not grow past its size) */
                close(fd);
                out->data = m;
                out->len = len;
                out->mapped = cap;
                return true;
            }
            munmap(m, cap); /* it grew while we read: fall back to the growing reader */
            if (lseek(fd, 0, SEEK_SET) != 0) { close(fd); cli_fail("%s: cannot rewind", path); return false; }
        }
    }
#endif
    char *buf = malloc(cap);
    size_t len = 0;
    for (;;) {
        if (!buf) { if (!is_stdin) close(fd); cli_fail("%s: out of memory", path); return false; }
        if (len == cap) {
            if (cap > ((size_t)1 << 40)) { free(buf); buf = NULL; continue; }
            char *nb = realloc(buf, cap * 2);
            if (!nb) { free(buf); buf = NULL; continue; }
            buf = nb; cap *= 2;
        }
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            free(buf);
            if (!is_stdin) close(fd);
            cli_fail("%s: %s", path, strerror(e));
            return false;
        }
        if (r == 0) break;
        len += (size_t)r;
    }
    if (!is_stdin) close(fd);
    out->data = buf;
    out->len = len;
    return true;
}

void cli_file_free(cli_file *f) {
    if (f->mapped) munmap(f->data, f->mapped);
    else free(f->data);
    f->data = NULL; f->len = 0; f->mapped = 0;
}

void cli_report(const char *file, const quire_error *e) {
    fputs("quire: ", stderr);
    if (file) {
        fputs(file, stderr);
        if (e->line) fprintf(stderr, ":%u:%u", e->line, e->column);
        fputs(": ", stderr);
    }
    if (e->pointer[0]) fprintf(stderr, "%s: ", e->pointer);
    fprintf(stderr, "%s\n", e->message[0] ? e->message : quire_status_name(e->code));
}

int cli_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("quire: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

int cli_usage(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "quire %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'quire %s --help'.\n", cmd);
    va_end(ap);
    return 2;
}

/* ---- pending outputs ---- */
typedef struct cli_out_item {
    char *path; /* NULL = stdout */
    char *data;
    size_t len;
    bool owned_bytes;
    bool newline; /* write a final '\n' after data */
    quire_bytes bytes;
} cli_out_item;

struct cli_outputs {
    cli_out_item items[16];
    size_t n;
    bool failed;
};

cli_outputs *cli_out_new(void) {
    cli_outputs *o = calloc(1, sizeof *o);
    return o;
}

static cli_out_item *out_slot(cli_outputs *o, const char *path) {
    if (!o || o->n == 16) { if (o) o->failed = true; return NULL; }
    cli_out_item *it = &o->items[o->n++];
    memset(it, 0, sizeof *it);
    if (path && strcmp(path, "-") != 0) it->path = strdup(path);
    return it;
}

void cli_out_add(cli_outputs *o, const char *path, quire_bytes *b) {
    cli_out_item *it = out_slot(o, path);
    if (!it) { quire_bytes_free(b); return; }
    it->bytes = *b;
    it->owned_bytes = true;
    it->data = b->data;
    it->len = b->len;
    b->data = NULL; b->len = 0;
}

void cli_out_add_line(cli_outputs *o, const char *path, quire_bytes *b) {
    cli_out_add(o, path, b);
    if (o && o->n && !o->failed) o->items[o->n - 1].newline = true;
}

void cli_out_add_copy(cli_outputs *o, const char *path, const char *data, size_t len) {
    cli_out_item *it = out_slot(o, path);
    if (!it) return;
    it->data = malloc(len ? len : 1);
    if (!it->data) { o->failed = true; return; }
    if (len) memcpy(it->data, data, len);
    it->len = len;
}

static void out_free(cli_outputs *o) {
    if (!o) return;
    for (size_t i = 0; i < o->n; i++) {
        cli_out_item *it = &o->items[i];
        if (it->owned_bytes) quire_bytes_free(&it->bytes);
        else free(it->data);
        free(it->path);
    }
    free(o);
}

void cli_out_discard(cli_outputs *o) { out_free(o); }

static bool write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) { if (errno == EINTR) continue; return false; }
        p += w; n -= (size_t)w;
    }
    return true;
}

char *cli_out_target(const char *path, bool *direct) {
    struct stat st;
    *direct = false;
    if (stat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode)) { *direct = true; return strdup(path); } /* tty, pipe, device */
        char *real = realpath(path, NULL); /* a symlink: replace its target, not the link */
        return real ? real : strdup(path);
    }
    if (lstat(path, &st) == 0) { *direct = true; return strdup(path); } /* a dangling link: write through it */
    return strdup(path);
}

/* Writes data (+ newline) straight to an existing non-regular file. */
static int write_direct(const char *path, const cli_out_item *it) {
    int fd = open(path, O_WRONLY | O_TRUNC);
    if (fd < 0 && errno == EINVAL) fd = open(path, O_WRONLY);
    if (fd < 0) return cli_fail("%s: %s", path, strerror(errno));
    bool ok = write_all(fd, it->data, it->len) && (!it->newline || write_all(fd, "\n", 1));
    int en = errno;
    if (close(fd) != 0 && ok) { ok = false; en = errno; }
    return ok ? 0 : cli_fail("%s: write failed: %s", path, strerror(en));
}

/* The file a target names, for comparing outputs: its real path, or (not there
 * yet) its directory's real path + its name. NULL when that cannot be known or
 * for terminals, pipes and devices. */
static char *out_identity(const char *target) {
    struct stat st;
    if (stat(target, &st) == 0 && !S_ISREG(st.st_mode)) return NULL; /* /dev/null twice is fine */
    char *real = realpath(target, NULL);
    if (real) return real;
    const char *slash = strrchr(target, '/');
    char *dir = slash ? strndup(target, slash == target ? 1 : (size_t)(slash - target)) : strdup(".");
    char *rdir = dir ? realpath(dir, NULL) : NULL;
    free(dir);
    if (!rdir) return NULL;
    const char *base = slash ? slash + 1 : target;
    size_t n = strlen(rdir) + strlen(base) + 2;
    char *id = malloc(n);
    if (id) snprintf(id, n, "%s/%s", rdir, base);
    free(rdir);
    return id;
}

int cli_out_commit(cli_outputs *o) {
    if (!o) return cli_fail("out of memory");
    if (o->failed) { out_free(o); return cli_fail("out of memory"); }
    char *tmps[16] = {0}, *targets[16] = {0};
    bool direct[16] = {0};
    int rc = 0;
    /* 0: two outputs naming one file would overwrite each other: refuse before writing */
    char *ids[16] = {0};
    for (size_t i = 0; i < o->n && rc == 0; i++) {
        if (!o->items[i].path) continue;
        ids[i] = out_identity(o->items[i].path);
        for (size_t k = 0; k < i && rc == 0 && ids[i]; k++)
            if (ids[k] && strcmp(ids[k], ids[i]) == 0)
                rc = cli_fail("%s: named for two outputs (%s and %s)", o->items[i].path, o->items[k].path,
                              o->items[i].path);
    }
    for (size_t i = 0; i < o->n; i++) free(ids[i]);
    /* 1: every named regular file to a temporary sibling of its real path */
    for (size_t i = 0; i < o->n && rc == 0; i++) {
        cli_out_item *it = &o->items[i];
        if (!it->path) continue;
        targets[i] = cli_out_target(it->path, &direct[i]);
        if (!targets[i]) { rc = cli_fail("out of memory"); break; }
        if (direct[i]) continue;
        size_t pl = strlen(targets[i]);
        tmps[i] = malloc(pl + 32);
        if (!tmps[i]) { rc = cli_fail("out of memory"); break; }
        snprintf(tmps[i], pl + 32, "%s.quire-tmp-%ld-%zu", targets[i], (long)getpid(), i);
        int fd = open(tmps[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            rc = cli_fail("%s: %s", it->path, strerror(errno));
            free(tmps[i]); tmps[i] = NULL;
            break;
        }
        bool ok = write_all(fd, it->data, it->len) && (!it->newline || write_all(fd, "\n", 1));
        if (close(fd) != 0) ok = false;
        if (!ok) rc = cli_fail("%s: write failed: %s", it->path, strerror(errno));
    }
    /* 2: rename all, or remove the temporaries */
    for (size_t i = 0; i < o->n; i++) {
        if (!tmps[i]) continue;
        if (rc == 0 && rename(tmps[i], targets[i]) != 0)
            rc = cli_fail("%s: %s", o->items[i].path, strerror(errno));
        if (rc != 0) unlink(tmps[i]);
        free(tmps[i]);
    }
    /* 3: terminals, pipes and devices, written directly once everything else is in place */
    for (size_t i = 0; i < o->n; i++) {
        if (rc == 0 && direct[i]) rc = write_direct(targets[i], &o->items[i]);
        free(targets[i]);
    }
    /* 4: stdout last, after every file is in place */
    for (size_t i = 0; i < o->n && rc == 0; i++) {
        cli_out_item *it = &o->items[i];
        if (it->path) continue;
        if (fwrite(it->data, 1, it->len, stdout) != it->len || (it->newline && fputc('\n', stdout) == EOF) ||
            fflush(stdout) != 0)
            rc = cli_fail("<stdout>: write failed");
    }
    out_free(o);
    return rc;
}

/* ---- options ---- */
int cli_parse(const char *cmd, const char *help, int argc, char **argv, const cli_opt *opts, size_t nopts,
              const char **pos, int maxpos, int *npos) {
    *npos = 0;
    bool only_pos = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || strcmp(a, "-") == 0) {
            if (*npos >= maxpos) return cli_usage(cmd, "unexpected argument '%s'", a);
            pos[(*npos)++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) { only_pos = true; continue; }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { fputs(help, stdout); return 0; }
        const char *name;
        size_t nlen;
        const char *val = NULL;
        if (a[1] == '-') {
            name = a + 2;
            const char *eq = strchr(name, '=');
            nlen = eq ? (size_t)(eq - name) : strlen(name);
            if (eq) val = eq + 1;
        } else {
            name = a + 1;
            nlen = strlen(name);
        }
        const cli_opt *o = NULL;
        for (size_t k = 0; k < nopts; k++)
            if (strlen(opts[k].name) == nlen && strncmp(opts[k].name, name, nlen) == 0 &&
                ((a[1] == '-') == (nlen > 1))) { o = &opts[k]; break; }
        if (!o) return cli_usage(cmd, "unknown option '%.*s'", (int)(nlen + (a[1] == '-' ? 2 : 1)), a);
        if (o->seen) *o->seen = true;
        if (o->kind == CLI_FLAG) {
            if (val) return cli_usage(cmd, "option '--%s' takes no value", o->name);
            *(bool *)o->dest = true;
            continue;
        }
        if (!val) {
            if (i + 1 >= argc) return cli_usage(cmd, "option '%s' needs a value", a);
            val = argv[++i];
        }
        if (o->kind == CLI_STRING) {
            *(const char **)o->dest = val;
        } else {
            char *end = NULL;
            errno = 0;
            if (!*val || *val == '-') return cli_usage(cmd, "option '--%s' needs a whole number, got '%s'", o->name, val);
            unsigned long long v = strtoull(val, &end, 10);
            if (errno || !end || *end) return cli_usage(cmd, "option '--%s' needs a whole number, got '%s'", o->name, val);
            *(unsigned long long *)o->dest = v;
        }
    }
    return -1;
}
