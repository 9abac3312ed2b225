/* A tiny unit-test harness: CHECK records a failure with file:line and goes on;
 * main() returns nonzero when any check failed and prints "N passed, N failed". */
#ifndef QUIRE_TESTS_UNIT_H
#define QUIRE_TESTS_UNIT_H
#include <stdio.h>
#include <string.h>

static int t_pass, t_fail;
#define CHECK(cond) do { if (cond) t_pass++; else { t_fail++; \
    fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_MSG(cond, ...) do { if (cond) t_pass++; else { t_fail++; \
    fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define CHECK_STR(a, b) do { const char *a_ = (a), *b_ = (b); \
    if (a_ && b_ && strcmp(a_, b_) == 0) t_pass++; else { t_fail++; \
    fprintf(stderr, "%s:%d: strings differ:\n  got:  %s\n  want: %s\n", __FILE__, __LINE__, \
            a_ ? a_ : "(null)", b_ ? b_ : "(null)"); } } while (0)
#define CHECK_INT(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); \
    if (a_ == b_) t_pass++; else { t_fail++; \
    fprintf(stderr, "%s:%d: %s == %lld, want %lld\n", __FILE__, __LINE__, #a, a_, b_); } } while (0)
#define TEST_MAIN_END() do { printf("%d passed, %d failed\n", t_pass, t_fail); \
    return t_fail ? 1 : 0; } while (0)
#endif
