#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_POPULATE */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- input ---- */
unsigned long long cli_max_input = CLI_MAX_INPUT_DEFAULT;

static bool too_large(const char *name) {
    cli_fail("%s: input larger than %llu bytes (the --max-input limit)", name, cli_max_input);
    return false;
}

bool cli_read(const char *path, cli_file *out) {
    memset(out, 0, sizeof *out);
    bool is_stdin = strcmp(path, "-") == 0;
    out->name = is_stdin ? "<stdin>" : path;
    int fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) { cli_fail("%s: %s", path, strerror(errno)); return false; }
    struct stat st;
    size_t cap = 65536;
    /* every read stops at the limit: at most limit + 1 bytes are ever held,
     * the extra byte telling "exactly the limit" from "more" */
    size_t limit = cli_max_input >= (unsigned long long)(SIZE_MAX / 2) ? SIZE_MAX / 2 : (size_t)cli_max_input;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (!is_stdin) close(fd);
        cli_fail("%s: is a directory", path);
        return false;
    }
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        if ((unsigned long long)st.st_size > (unsigned long long)limit) {
            if (!is_stdin) close(fd);
            return too_large(out->name);
        }
        cap = (size_t)st.st_size + 1;
    }
    if (cap > limit + 1) cap = limit + 1;
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
        if (len > limit) { /* one byte past the limit: stop reading */
            free(buf);
            if (!is_stdin) close(fd);
            return too_large(out->name);
        }
        if (len == cap) {
            size_t nc = cap > (limit + 1) / 2 ? limit + 1 : cap * 2;
            char *nb = realloc(buf, nc);
            if (!nb) { free(buf); buf = NULL; continue; }
            buf = nb; cap = nc;
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

bool cli_map(const char *path, cli_file *out) {
#if defined(MAP_POPULATE)
    if (strcmp(path, "-") != 0) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 65536 &&
            (unsigned long long)st.st_size <= cli_max_input && (unsigned long long)st.st_size <= SIZE_MAX / 2) {
            size_t n = (size_t)st.st_size;
            /* every page mapped in one call, from the page cache */
            void *m = mmap(NULL, n, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
            close(fd);
            if (m != MAP_FAILED) {
                memset(out, 0, sizeof *out);
                out->name = path;
                out->data = m;
                out->len = n;
                out->mapped = n;
                return true;
            }
        } else if (fd >= 0) {
            close(fd);
        }
    }
#endif
    return cli_read(path, out); /* stdin, small or special files, limits, errors */
}

void cli_file_free(cli_file *f) {
    if (f->mapped) munmap(f->data, f->mapped);
    else free(f->data);
    f->data = NULL; f->len = 0; f->mapped = 0;
}

bool cli_load_caps_policy(const char *caps_file, const char *policy_file, quire_render_options *ro,
                          quire_caps **caps) {
    *caps = NULL;
    quire_error e;
    cli_file cf = {0};
    bool ok = true;
    if (caps_file && (ok = cli_read(caps_file, &cf)) && quire_caps_parse(cf.data, cf.len, NULL, caps, &e)) {
        cli_report(cf.name, &e);
        ok = false;
    }
    cli_file_free(&cf);
    if (ok && policy_file && (ok = cli_read(policy_file, &cf)) && quire_render_policy_apply(cf.data, cf.len, ro, &e)) {
        cli_report(cf.name, &e);
        ok = false;
    }
    cli_file_free(&cf);
    if (!ok) { quire_caps_free(*caps); *caps = NULL; }
    return ok;
}

size_t cli_count_by_bytes(const char *text, size_t len, void *ud) {
    (void)text;
    size_t per = *(const size_t *)ud;
    return (len + per - 1) / per;
}

/* s on stderr with its control characters escaped: a report is one line
 * whatever a file name or a pointer (decoded keys) holds. */
static void put_line_safe(const char *s) {
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\n') fputs("\\n", stderr);
        else if (c == '\t') fputs("\\t", stderr);
        else if (c < 0x20 || c == 0x7F) fprintf(stderr, "\\x%02x", c);
        else fputc(c, stderr);
    }
}

void cli_report(const char *file, const quire_error *e) {
    fputs("quire: ", stderr);
    if (file) {
        put_line_safe(file);
        if (e->line) fprintf(stderr, ":%u:%u", e->line, e->column);
        fputs(": ", stderr);
    }
    if (e->pointer[0]) { put_line_safe(e->pointer); fputs(": ", stderr); }
    put_line_safe(e->message[0] ? e->message : quire_status_name(e->code));
    fputc('\n', stderr);
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

/* The descriptor a path names: /dev/stdin|stdout|stderr, /dev/fd/N,
 * /proc/self/fd/N, /proc/thread-self/fd/N, /proc/PID/fd/N of this process. */
static int fd_path(const char *p) {
    if (strcmp(p, "/dev/stdin") == 0) return 0;
    if (strcmp(p, "/dev/stdout") == 0) return 1;
    if (strcmp(p, "/dev/stderr") == 0) return 2;
    const char *n = NULL;
    char own[64];
    snprintf(own, sizeof own, "/proc/%ld/fd/", (long)getpid());
    static const char *const pre[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"};
    for (size_t i = 0; i < 3 && !n; i++)
        if (strncmp(p, pre[i], strlen(pre[i])) == 0) n = p + strlen(pre[i]);
    if (!n && strncmp(p, own, strlen(own)) == 0) n = p + strlen(own);
    if (!n || *n < '0' || *n > '9') return -1;
    long v = 0;
    for (; *n >= '0' && *n <= '9'; n++) {
        v = v * 10 + (*n - '0');
        if (v > 1000000) return -1;
    }
    return *n ? -1 : (int)v;
}

/* dir/name, or name when it is absolute. */
static char *join(const char *dir, size_t dlen, const char *name) {
    if (name[0] == '/') return strdup(name);
    size_t n = dlen + strlen(name) + 2;
    char *r = malloc(n);
    if (r) snprintf(r, n, "%.*s/%s", (int)dlen, dir, name);
    return r;
}

bool cli_target_resolve(const char *path, cli_target *t) {
    memset(t, 0, sizeof *t);
    t->fd = -1;
    if (!path || strcmp(path, "-") == 0) { t->kind = CLI_T_STDOUT; t->fd = 1; return true; }
    t->name = path;
    char *cur = strdup(path);
    if (!cur) { cli_fail("out of memory"); return false; }
    /* follow the symlink chain by hand, so that a dangling link is written
     * through (its final target gets created) and a link to a descriptor
     * reaches the descriptor */
    for (int hop = 0;; hop++) {
        int fd = fd_path(cur);
        if (fd >= 0) {
            free(cur);
            if (fcntl(fd, F_GETFL) < 0) { cli_fail("%s: %s", path, strerror(EBADF)); return false; }
            t->kind = CLI_T_FD;
            t->fd = fd;
            return true;
        }
        if (hop == 40) { free(cur); cli_fail("%s: %s", path, strerror(ELOOP)); return false; }
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) break;
        char link[4096];
        ssize_t k = readlink(cur, link, sizeof link - 1);
        if (k < 0) break;
        link[k] = '\0';
        const char *slash = strrchr(cur, '/');
        char *next = slash ? join(cur, (size_t)(slash - cur), link) : strdup(link);
        free(cur);
        if (!next) { cli_fail("out of memory"); return false; }
        cur = next;
    }
    struct stat st;
    if (stat(cur, &st) == 0) {
        if (S_ISDIR(st.st_mode)) { free(cur); cli_fail("%s: is a directory", path); return false; }
        if (!S_ISREG(st.st_mode)) { t->kind = CLI_T_DEVICE; t->path = cur; return true; } /* tty, FIFO, device */
        t->exists = true;
        t->st = st;
        char *real = realpath(cur, NULL);
        if (real) { free(cur); cur = real; }
        t->kind = CLI_T_FILE;
        t->path = cur;
        return true;
    }
    /* not there yet: its directory's real path + its name */
    const char *slash = strrchr(cur, '/');
    char *dir = slash ? strndup(cur, slash == cur ? 1 : (size_t)(slash - cur)) : strdup(".");
    char *rdir = dir ? realpath(dir, NULL) : NULL;
    int en = errno;
    free(dir);
    if (!rdir) { free(cur); cli_fail("%s: %s", path, strerror(en)); return false; }
    char *full = join(rdir, strlen(rdir), slash ? slash + 1 : cur);
    free(rdir);
    free(cur);
    if (!full) { cli_fail("out of memory"); return false; }
    t->kind = CLI_T_FILE;
    t->path = full;
    return true;
}

void cli_target_free(cli_target *t) {
    free(t->path);
    t->path = NULL;
}

int cli_tmp_open(const cli_target *t, char **tmp) {
    *tmp = NULL;
    const char *slash = strrchr(t->path, '/'); /* t->path is absolute */
    size_t dl = (size_t)(slash - t->path);
    size_t n = strlen(t->path) + 32;
    char *name = malloc(n);
    if (!name) { cli_fail("out of memory"); return -1; }
    /* a hidden sibling; mkstemp creates it O_CREAT|O_EXCL (never through a
     * planted link or into a pre-created file), mode 0600 until it is ready */
    snprintf(name, n, "%.*s/.%s.quire-XXXXXX", (int)dl, t->path, slash + 1);
    int fd = mkstemp(name);
    if (fd < 0) { int en = errno; free(name); cli_fail("%s: %s", t->name, strerror(en)); return -1; }
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    /* an existing file keeps its mode (and, for root, its owner); a new one
     * gets 0666 less the umask, like any file the shell creates */
    mode_t mode;
    if (t->exists) {
        if (geteuid() == 0 && fchown(fd, t->st.st_uid, t->st.st_gid) != 0) {
            int en = errno;
            close(fd); unlink(name); free(name);
            cli_fail("%s: %s", t->name, strerror(en));
            return -1;
        }
        mode = t->st.st_mode & 07777;
    } else {
        mode_t um = umask(0);
        umask(um);
        mode = 0666 & ~um;
    }
    if (fchmod(fd, mode) != 0) {
        int en = errno;
        close(fd); unlink(name); free(name);
        cli_fail("%s: %s", t->name, strerror(en));
        return -1;
    }
    *tmp = name;
    return fd;
}

/* Writes data (+ newline) to an output that is not a regular file. */
static int write_stream(const cli_target *t, const cli_out_item *it) {
    if (t->kind == CLI_T_STDOUT) {
        if (fwrite(it->data, 1, it->len, stdout) != it->len || (it->newline && fputc('\n', stdout) == EOF) ||
            fflush(stdout) != 0)
            return cli_fail("<stdout>: write failed: %s", strerror(errno));
        return 0;
    }
    if (t->kind == CLI_T_FD) {
        /* the open descriptor itself, at its offset (appending when it was
         * opened for append): never a new file in its place */
        if (t->fd == 1 && fflush(stdout) != 0) return cli_fail("%s: write failed: %s", t->name, strerror(errno));
        if (t->fd == 2) fflush(stderr);
        if (!write_all(t->fd, it->data, it->len) || (it->newline && !write_all(t->fd, "\n", 1)))
            return cli_fail("%s: write failed: %s", t->name, strerror(errno));
        return 0;
    }
    int fd = open(t->path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0 && errno == EINVAL) fd = open(t->path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return cli_fail("%s: %s", t->name, strerror(errno));
    bool ok = write_all(fd, it->data, it->len) && (!it->newline || write_all(fd, "\n", 1));
    int en = errno;
    if (close(fd) != 0 && ok) { ok = false; en = errno; }
    return ok ? 0 : cli_fail("%s: write failed: %s", t->name, strerror(en));
}

int cli_out_commit(cli_outputs *o) {
    if (!o) return cli_fail("out of memory");
    if (o->failed) { out_free(o); return cli_fail("out of memory"); }
    cli_target tg[16];
    char *tmps[16] = {0};
    size_t nt = 0;
    int rc = 0;
    /* 0: where each output goes; two outputs naming one file would overwrite
     * each other (also through a link, dangling or not): refuse before writing */
    for (size_t i = 0; i < o->n && rc == 0; i++) {
        if (!cli_target_resolve(o->items[i].path, &tg[i])) { rc = 1; break; }
        nt = i + 1;
        for (size_t k = 0; k < i && rc == 0; k++)
            if (tg[i].kind == CLI_T_FILE && tg[k].kind == CLI_T_FILE && strcmp(tg[i].path, tg[k].path) == 0)
                rc = cli_fail("%s: named for two outputs (%s and %s)", o->items[i].path, o->items[k].path,
                              o->items[i].path);
    }
    /* 1: every regular file to a new temporary sibling of its real path */
    for (size_t i = 0; i < o->n && rc == 0; i++) {
        cli_out_item *it = &o->items[i];
        if (tg[i].kind != CLI_T_FILE) continue;
        int fd = cli_tmp_open(&tg[i], &tmps[i]);
        if (fd < 0) { rc = 1; break; }
        bool ok = write_all(fd, it->data, it->len) && (!it->newline || write_all(fd, "\n", 1));
        int en = errno;
        if (close(fd) != 0 && ok) { ok = false; en = errno; }
        if (!ok) rc = cli_fail("%s: write failed: %s", it->path, strerror(en));
    }
    /* 2: standard output, descriptors, terminals, pipes and devices, in order */
    for (size_t i = 0; i < o->n && rc == 0; i++)
        if (tg[i].kind != CLI_T_FILE) rc = write_stream(&tg[i], &o->items[i]);
    /* 3: only when every output was written: rename the files into place;
     * otherwise no named file changes */
    for (size_t i = 0; i < o->n; i++) {
        if (!tmps[i]) continue;
        if (rc == 0 && rename(tmps[i], tg[i].path) != 0) rc = cli_fail("%s: %s", o->items[i].path, strerror(errno));
        if (rc != 0) unlink(tmps[i]);
        free(tmps[i]);
    }
    for (size_t i = 0; i < nt; i++) cli_target_free(&tg[i]);
    out_free(o);
    return rc;
}

/* ---- options ---- */
static const char k_common_help[] =
    "\n"
    "Every command also takes:\n"
    "  --max-input N    read at most N bytes of any input; a larger input is an error\n"
    "                   (default 1073741824, 1 GiB)\n";

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
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(help, stdout);
            fputs(k_common_help, stdout);
            return 0;
        }
        if (strncmp(a, "--max-input", 11) == 0 && (a[11] == '\0' || a[11] == '=')) { /* every command */
            const char *v = a[11] == '=' ? a + 12 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v) return cli_usage(cmd, "option '--max-input' needs a value");
            char *end = NULL;
            errno = 0;
            unsigned long long n = (*v >= '0' && *v <= '9') ? strtoull(v, &end, 10) : 0;
            if (errno || !end || *end || n == 0)
                return cli_usage(cmd, "option '--max-input' needs a whole number of bytes from 1, got '%s'", v);
            cli_max_input = n;
            continue;
        }
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
