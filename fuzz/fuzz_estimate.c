/* Fuzz target: the token estimator. Input: any bytes, estimated as one text.
 * Checks: the scan without a visitor (64-byte vector windows over ASCII text
 * where the CPU has AVX-512 VBMI2) and the scan that reports every run (the
 * scalar scanner) give the same total; that total is the sum of the runs
 * reported, every run costs at least one token, and the runs tile the text;
 * the same holds for the suffixes that start within the first 8 bytes
 * (other window positions). */
#include "fuzz_common.h"

#include "compact/estimate.h"

typedef struct tally {
    uint64_t sum;
    size_t next; /* where the next run must start */
    size_t n;
} tally;

static void on_run(void *ctx, const qc_est_run *r) {
    tally *t = ctx;
    QF_ASSERT(r->start == t->next && r->end > r->start && r->end <= t->n, "run [%zu, %zu) after %zu of %zu",
              (size_t)r->start, (size_t)r->end, t->next, t->n);
    QF_ASSERT(r->cost_q8 >= 256, "run [%zu, %zu) costs %u/256 token", (size_t)r->start, (size_t)r->end,
              (unsigned)r->cost_q8);
    t->next = r->end;
    t->sum += r->cost_q8;
}

static void check_text(const char *s, size_t n) {
    tally t = {0, 0, n};
    uint64_t reported = qc_estimate_scan(s, n, on_run, &t);
    uint64_t fast = qc_estimate_scan(s, n, NULL, NULL);
    QF_ASSERT(t.next == n, "runs end at %zu of %zu", t.next, n);
    QF_ASSERT(reported == t.sum, "scan %llu, runs %llu", (unsigned long long)reported, (unsigned long long)t.sum);
    QF_ASSERT(fast == reported, "%zu bytes: %llu without a visitor, %llu with one", n, (unsigned long long)fast,
              (unsigned long long)reported);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* an exact-size copy, so a sanitizer sees reads past the end */
    char *s = malloc(size ? size : 1);
    if (!s) return 0;
    if (size) memcpy(s, data, size);
    for (size_t k = 1; k < size && k < 8; k++) check_text(s + k, size - k);
    check_text(s, size);
    free(s);
    return 0;
}
