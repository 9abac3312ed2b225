/* Runs a fuzz target without libFuzzer: every file given (directories are
 * walked, sorted) is passed to LLVMFuzzerTestOneInput, and so is every prefix
 * of each file up to 8 KiB (truncation at every byte position). Each file runs
 * in a child process, so one failing seed (a crash, an abort, a sanitizer
 * report) is named and the others still run; it prints "N passed, M failed"
 * (files) and exits 1 when any failed. QUIRE_STANDALONE_NOFORK=1 runs in
 * process (for a debugger). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static long runs;

static void run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "cannot open %s\n", path); exit(2); }
    size_t cap = 1 << 16, n = 0, r;
    uint8_t *buf = malloc(cap);
    while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) { uint8_t *nb = realloc(buf, cap *= 2); if (!nb) { free(buf); buf = NULL; } else buf = nb; }
    }
    fclose(f);
    if (!buf) { fprintf(stderr, "out of memory reading %s\n", path); exit(2); }
    /* exact-size copies so ASan sees any read past the end */
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, buf, n);
    LLVMFuzzerTestOneInput(copy, n);
    free(copy);
    runs++;
    if (n <= 8192) {
        for (size_t k = 0; k < n; k++) {
            uint8_t *p = malloc(k ? k : 1);
            memcpy(p, buf, k);
            LLVMFuzzerTestOneInput(p, k);
            free(p);
            runs++;
        }
    }
    free(buf);
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static long files_passed, files_failed;
static int nofork;

static void run_file_isolated(const char *path) {
    if (nofork) { run_file(path); files_passed++; return; }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); exit(2); }
    if (pid == 0) { run_file(path); fflush(NULL); _exit(0); }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {}
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) { files_passed++; return; }
    files_failed++;
    if (WIFSIGNALED(status)) fprintf(stderr, "FAIL %s (signal %d)\n", path, WTERMSIG(status));
    else fprintf(stderr, "FAIL %s (exit %d)\n", path, WEXITSTATUS(status));
}

static void run_path(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) { fprintf(stderr, "cannot stat %s\n", path); exit(2); }
    if (!S_ISDIR(st.st_mode)) { run_file_isolated(path); return; }
    DIR *d = opendir(path);
    if (!d) { fprintf(stderr, "cannot open %s\n", path); exit(2); }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        if (n == cap) { cap = cap ? cap * 2 : 64; names = realloc(names, cap * sizeof *names); }
        names[n++] = strdup(de->d_name);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp);
    for (size_t i = 0; i < n; i++) {
        char full[4096];
        snprintf(full, sizeof full, "%s/%s", path, names[i]);
        run_path(full);
        free(names[i]);
    }
    free(names);
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s SEED_DIR_OR_FILE...\n", argv[0]); return 2; }
    const char *nf = getenv("QUIRE_STANDALONE_NOFORK");
    nofork = nf && *nf == '1';
    for (int i = 1; i < argc; i++) run_path(argv[i]);
    if (nofork) printf("%ld inputs: ", runs);
    printf("%ld passed, %ld failed\n", files_passed, files_failed);
    return files_failed ? 1 : 0;
}
