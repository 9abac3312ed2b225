/* Fuzz target: the JSON reader and writer. Any bytes: parse must not crash;
 * when it accepts, compact and pretty re-serialisations must parse again and
 * the compact form must be a fixed point; the string decoder's fast paths
 * give what its portable path gives. */
#include "core/json.h"
#include "core/text.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Differential check of the reader's (vectorised) UTF-8 validation against
 * core/text's scalar validator: the bytes, made free of '"', '\\' and control
 * bytes and wrapped in quotes, parse iff they are valid UTF-8. */
static void utf8_differential(const uint8_t *data, size_t size) {
    char *s = malloc(size + 2);
    if (!s) return;
    s[0] = '"';
    for (size_t i = 0; i < size; i++) {
        uint8_t c = data[i];
        s[i + 1] = (char)((c == '"' || c == '\\' || c < 0x20) ? 'x' : c);
    }
    s[size + 1] = '"';
    qj_doc d;
    bool json_ok = qj_parse(&d, s, size + 2, NULL, NULL, NULL) == QUIRE_OK;
    qj_doc_free(&d);
    size_t bad = 0;
    if (json_ok != qt_utf8_valid(s + 1, size, &bad)) abort();
    free(s);
}

/* Differential check of the string decoder: qj_unescape (block copies, and
 * the AVX-512 VBMI2 path where the CPU has it) against qj_unescape_portable
 * on any bytes (it tolerates invalid escapes), into n bytes; and on the
 * strings of an accepted document into exactly their decoded length. */
static void unescape_same(const char *s, size_t n, size_t cap) {
    char *a = malloc(cap ? cap : 1), *b = malloc(cap ? cap : 1);
    if (!a || !b) abort();
    size_t na = qj_unescape(s, n, a), nb = qj_unescape_portable(s, n, b);
    if (na != nb || na > cap || memcmp(a, b, na) != 0) abort();
    free(a);
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    utf8_differential(data, size);
    unescape_same((const char *)data, size, size);
    qj_doc d;
    quire_error e;
    qj_opts o = {64, 0};
    if (qj_parse(&d, (const char *)data, size, &o, NULL, &e) != QUIRE_OK) {
        if (!e.message[0] || (e.offset != SIZE_MAX && e.offset > size)) abort();
        return 0;
    }
    for (uint32_t i = 0; i < d.count; i++)
        if (d.nodes[i].type == QJ_STRING && (d.nodes[i].flags & QJ_F_ESC))
            unescape_same(d.nodes[i].p, d.nodes[i].len, qj_str_decoded_len(&d, i));
    for (int pretty = 0; pretty < 2; pretty++) {
        qbuf b;
        qbuf_init(&b, NULL);
        qw w;
        qw_init(&w, &b, pretty == 1);
        qw_node(&w, &d, 0);
        qw_dispose(&w);
        if (b.oom) abort();
        qj_doc d2;
        if (qj_parse(&d2, b.data, b.len, &o, NULL, &e) != QUIRE_OK) abort();
        if (d2.count != d.count) abort();
        if (!pretty) {
            qbuf b2;
            qbuf_init(&b2, NULL);
            qw w2;
            qw_init(&w2, &b2, false);
            qw_node(&w2, &d2, 0);
            qw_dispose(&w2);
            if (b2.len != b.len || memcmp(b2.data, b.data, b.len) != 0) abort();
            qbuf_free(&b2);
        }
        /* every string decodes to valid lengths */
        for (uint32_t i = 0; i < d2.count; i++)
            if (d2.nodes[i].type == QJ_STRING && qj_str_decoded_len(&d2, i) > d2.nodes[i].len) abort();
        qj_doc_free(&d2);
        qbuf_free(&b);
    }
    qj_doc_free(&d);
    return 0;
}
