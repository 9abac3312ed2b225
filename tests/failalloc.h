/* A quire_allocator for hardening tests: counts calls, fails the N-th one
 * (malloc or realloc; 0 = never), tracks live blocks and checks the sized-free
 * contract (the size handed to free_fn/realloc_fn is the size allocated). Each
 * block carries a 16-byte header holding its size and a tag, so a free of a
 * pointer the allocator never returned, a double free or a wrong size is
 * caught even without ASan. */
#ifndef QUIRE_TESTS_FAILALLOC_H
#define QUIRE_TESTS_FAILALLOC_H

#include "quire.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct failalloc {
    long calls;        /* malloc + realloc calls so far */
    long fail_at;      /* fail this call (1-based); 0 = never */
    int fail_all_after;/* when set, every call from fail_at on fails */
    int failed;        /* the failure was injected */
    long live;         /* blocks currently allocated */
    size_t live_bytes, peak_bytes;
    long bad_size;     /* free/realloc with a size other than the allocated one */
    long bad_ptr;      /* free/realloc of a block not ours (or already freed) */
    size_t first_bad_given, first_bad_actual;
} failalloc;

#define FA_HDR 16u
#define FA_TAG 0x51554952u /* "QUIR" */
#define FA_DEAD 0xDEADu

static int fa_should_fail(failalloc *f) {
    f->calls++;
    if (f->fail_at && (f->calls == f->fail_at || (f->fail_all_after && f->calls > f->fail_at))) {
        f->failed = 1;
        return 1;
    }
    return 0;
}

static void *fa_wrap(failalloc *f, unsigned char *raw, size_t n) {
    if (!raw) return NULL;
    uint64_t sz = n, tag = FA_TAG;
    memcpy(raw, &sz, 8);
    memcpy(raw + 8, &tag, 8);
    f->live++;
    f->live_bytes += n;
    if (f->live_bytes > f->peak_bytes) f->peak_bytes = f->live_bytes;
    return raw + FA_HDR;
}

/* Checks the header of p; returns the raw block or NULL when not ours. */
static unsigned char *fa_check(failalloc *f, void *p, size_t given) {
    unsigned char *raw = (unsigned char *)p - FA_HDR;
    uint64_t sz, tag;
    memcpy(&sz, raw, 8);
    memcpy(&tag, raw + 8, 8);
    if (tag != FA_TAG) { f->bad_ptr++; return NULL; }
    if (sz != given) {
        if (!f->bad_size) { f->first_bad_given = given; f->first_bad_actual = (size_t)sz; }
        f->bad_size++;
    }
    return raw;
}

static void *fa_malloc(size_t n, void *ud) {
    failalloc *f = ud;
    if (fa_should_fail(f)) return NULL;
    return fa_wrap(f, malloc(n + FA_HDR), n);
}

static void *fa_realloc(void *p, size_t old_n, size_t new_n, void *ud) {
    failalloc *f = ud;
    if (!p) return fa_malloc(new_n, ud);
    if (fa_should_fail(f)) return NULL;
    unsigned char *raw = fa_check(f, p, old_n);
    if (!raw) return NULL;
    uint64_t sz;
    memcpy(&sz, raw, 8);
    unsigned char *nr = realloc(raw, new_n + FA_HDR);
    if (!nr) return NULL;
    f->live--;
    f->live_bytes -= (size_t)sz;
    return fa_wrap(f, nr, new_n);
}

static void fa_free(void *p, size_t n, void *ud) {
    failalloc *f = ud;
    if (!p) return;
    unsigned char *raw = fa_check(f, p, n);
    if (!raw) return;
    uint64_t sz, dead = FA_DEAD;
    memcpy(&sz, raw, 8);
    memcpy(raw + 8, &dead, 8);
    f->live--;
    f->live_bytes -= (size_t)sz;
    free(raw);
}

static void fa_reset(failalloc *f, long fail_at) {
    memset(f, 0, sizeof *f);
    f->fail_at = fail_at;
}

static quire_allocator fa_allocator(failalloc *f) {
    quire_allocator a = {fa_malloc, fa_realloc, fa_free, f};
    return a;
}

#endif
