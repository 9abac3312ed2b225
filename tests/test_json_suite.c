/* ARGS: @DATA@/conformance/JSONTestSuite/test_parsing @SRC@/docs/json.md */
#define _POSIX_C_SOURCE 200809L
/* Runs every case of JSONTestSuite/test_parsing through quire's JSON reader:
 * y_ must be accepted, n_ rejected, i_ must not crash (the choice is printed
 * and must match docs/json.md). */
#include "core/json.h"
#include "unit.h"

#include <dirent.h>
#include <stdlib.h>

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    size_t r;
    while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) { char *nb = realloc(b, cap *= 2); if (!nb) { free(b); b = NULL; } else b = nb; }
    }
    fclose(f);
    *len = n;
    return b;
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The documented verdict of an i_ file in docs/json.md: 'a', 'r' or 0 if absent. */
static char documented(const char *doc, const char *name) {
    char pat[600];
    snprintf(pat, sizeof pat, "| `%s` | ", name);
    const char *p = doc ? strstr(doc, pat) : NULL;
    if (!p) return 0;
    p += strlen(pat);
    return strncmp(p, "accept", 6) == 0 ? 'a' : strncmp(p, "reject", 6) == 0 ? 'r' : 0;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s DIR\n", argv[0]); return 2; }
    size_t doclen = 0;
    char *doc = argc > 2 ? slurp(argv[2], &doclen) : NULL;
    if (doc) doc[doclen ? doclen - 1 : 0] = doclen ? doc[doclen - 1] : 0;
    char *docz = doc ? realloc(doc, doclen + 1) : NULL;
    if (docz) docz[doclen] = '\0';
    DIR *dir = opendir(argv[1]);
    if (!dir) { fprintf(stderr, "cannot open %s\n", argv[1]); return 2; }
    char *names[1024];
    size_t count = 0;
    struct dirent *de;
    while ((de = readdir(dir)) && count < 1024)
        if (strstr(de->d_name, ".json")) names[count++] = strdup(de->d_name);
    closedir(dir);
    qsort(names, count, sizeof names[0], cmp);
    int y = 0, yok = 0, n = 0, nok = 0, i_acc = 0, i_rej = 0;
    for (size_t k = 0; k < count; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], names[k]);
        size_t len = 0;
        char *buf = slurp(path, &len);
        CHECK_MSG(buf != NULL, "read %s", path);
        if (!buf) continue;
        qj_doc d;
        quire_error e;
        memset(&e, 0, sizeof e);
        quire_status st = qj_parse(&d, buf, len, NULL, NULL, &e);
        qj_doc_free(&d);
        if (st == QUIRE_OK) CHECK(e.code == 0);
        else CHECK_MSG(e.message[0] && e.line >= 1 && e.column >= 1, "%s: error without position", names[k]);
        if (names[k][0] == 'y') { y++; if (st == QUIRE_OK) yok++; else fprintf(stderr, "REJECTED %s: %d:%d: %s\n", names[k], e.line, e.column, e.message); CHECK(st == QUIRE_OK); }
        else if (names[k][0] == 'n') { n++; if (st != QUIRE_OK) nok++; else fprintf(stderr, "ACCEPTED %s\n", names[k]); CHECK(st != QUIRE_OK); }
        else {
            if (st == QUIRE_OK) i_acc++; else i_rej++;
            printf("%s %s\n", st == QUIRE_OK ? "accept" : "reject", names[k]);
            if (docz) {
                char want = documented(docz, names[k]);
                CHECK_MSG(want == (st == QUIRE_OK ? 'a' : 'r'), "%s: verdict differs from docs/json.md", names[k]);
            }
        }
        free(buf);
        free(names[k]);
    }
    printf("y_: %d/%d accepted; n_: %d/%d rejected; i_: %d accepted, %d rejected\n", yok, y, nok, n, i_acc, i_rej);
    CHECK(y == 95 && n == 188);
    if (argc > 2) CHECK_MSG(docz != NULL, "cannot read %s", argv[2]);
    free(docz);
    TEST_MAIN_END();
}
