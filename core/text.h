/* Pure text helpers for reminder bodies and compaction: strict UTF-8
 * validation, body hygiene, grapheme-safe cut points and the two cutting
 * shapes (head cut with a marker, head/tail excerpt with a marker).
 *
 * Everything here is pure: no I/O, no globals beyond const tables, all output
 * through a caller-provided qbuf (check its sticky `oom` flag once at the end).
 * Grapheme boundaries are extended grapheme clusters (UAX #29) as implemented
 * by utf8proc; every grapheme function looks only at a bounded window around
 * the cut point (QT_GRAPHEME_WINDOW bytes), so cutting a multi-MB string costs
 * the same as cutting a short one. See docs/text.md. */
#ifndef QUIRE_CORE_TEXT_H
#define QUIRE_CORE_TEXT_H

#include "core/base.h"

/* Most bytes a grapheme function scans backwards (to a resync point) or
 * forwards (to the next boundary) from a cut point. A single cluster longer
 * than this (thousands of stacked combining marks, a run of more than ~128
 * regional indicators) is cut at a code point boundary instead: the result
 * then never splits a UTF-8 sequence but may split that pathological cluster. */
#define QT_GRAPHEME_WINDOW 512u

/* True if s[0..n) is well-formed UTF-8 (Unicode Table 3-7: no overlongs, no
 * surrogates, nothing above U+10FFFF, no truncated sequence). On false, *bad
 * (if non-NULL) is the byte offset of the first byte of the first ill-formed
 * sequence: the lead byte that cannot be completed, or a stray continuation /
 * never-valid byte (C0, C1, F5..FF). */
bool qt_utf8_valid(const char *s, size_t n, size_t *bad);

/* Reminder body hygiene. Appends the cleaned body to out:
 *  - removes C0 controls except \t and \n (so \r, NUL, ESC, \v, \f ...), DEL
 *    and C1 controls U+0080..U+009F                      -> controls_removed
 *  - removes bidi embeddings/overrides/isolates U+202A..U+202E, U+2066..U+2069
 *    and the deprecated format characters U+206A..U+206F -> bidi_removed
 *  - removes Unicode tag characters U+E0000..U+E007F ("ASCII smuggling")
 *                                                        -> tag_chars_removed
 *  - neutralises every opener of the wrapper tag (qt_neutralise with
 *    "system-reminder") and chat-template control tokens -> tags_neutralised
 * Matching runs on the text after removal, so removed characters cannot be
 * used to split a tag. The result is idempotent (hygiene of a clean body is a
 * no-op). Input must be valid UTF-8 (callers check with qt_utf8_valid);
 * invalid bytes are copied through without harm. rep may be NULL; counts are
 * added to (not reset in) *rep. */
typedef struct qt_hygiene_report {
    size_t controls_removed, bidi_removed, tags_neutralised, tag_chars_removed;
} qt_hygiene_report;
void qt_hygiene(qbuf *out, const char *s, size_t n, qt_hygiene_report *rep);

/* Appends s[0..n) to out with every opener of the wrapper tag `tag` (lower-
 * case ASCII words joined by '-', e.g. "system-reminder") neutralised: an
 * opener is '<' or any character that folds to it, then optional white
 * space, optional '/', optional white space, then the tag's words, where each
 * '-' matches any run (possibly empty) of '-', '_', '.' or white space. The
 * comparison is after folding every code point: NFKC compatibility mapping,
 * case folding, combining marks and default-ignorable code points removed,
 * utf8proc's lump of dashes/spaces/angle brackets, and a small look-alike
 * table (Cyrillic, Greek, Cherokee, small capitals, dotless i, angle-bracket
 * look-alikes). The opener is replaced by the four bytes "&lt;". With
 * template_tokens, the first character of chat-template control tokens
 * ("<|", "<｜", "[INST]", "<start_of_turn>", ... see docs/text.md) is replaced
 * too ("&lt;" or "&#91;"). Returns the count neutralised. Idempotent. */
size_t qt_neutralise(qbuf *out, const char *s, size_t n, const char *tag, bool template_tokens);
/* The fold tag matching uses for one code point: up to 8 ASCII bytes in f and
 * their count (0: invisible), or -1 when it is not all ASCII. fast = false
 * skips the shortcut for letters and emoji that fold to themselves (tests
 * compare the two). */
int qt_fold_cp(int32_t cp, char f[8], bool fast);

/* Largest prefix length <= max_bytes of s[0..n) that ends on an extended
 * grapheme cluster boundary. Returns n if max_bytes >= n, 0 if no boundary fits. */
size_t qt_grapheme_prefix(const char *s, size_t n, size_t max_bytes);
/* Smallest start >= n - max_bytes such that s[start..n) begins on an extended
 * grapheme cluster boundary. Returns 0 if max_bytes >= n, n if none fits. */
size_t qt_grapheme_suffix_start(const char *s, size_t n, size_t max_bytes);

/* Head cut marker: "\n[… truncated N bytes]" (U+2026, N = decimal bytes removed).
 * 23 bytes + digits of N. */
#define QT_CUT_MARKER_FIXED 23u
/* Excerpt marker line: "\n[… N bytes omitted …]\n". 26 bytes + digits of N. */
#define QT_EXCERPT_MARKER_FIXED 26u

/* Cut a body longer than cap bytes: keeps the longest grapheme-safe prefix P
 * such that P + marker(n - P) <= cap, then appends the marker. If n <= cap,
 * appends s unchanged and returns 0. Returns bytes removed (n - P). If cap is
 * too small to hold even the marker, appends the marker alone (output then
 * exceeds cap) and returns n. */
size_t qt_cut_head(qbuf *out, const char *s, size_t n, size_t cap);

/* Head/tail excerpt: keeps the longest grapheme-safe head <= head_bytes and the
 * longest grapheme-safe tail <= tail_bytes, joined by the excerpt marker line.
 * If n <= head_bytes + tail_bytes + marker size (marker computed for
 * N = n - head_bytes - tail_bytes), appends s unchanged and returns 0.
 * Returns bytes omitted. The output is never longer than
 * head_bytes + tail_bytes + marker(N). */
size_t qt_excerpt(qbuf *out, const char *s, size_t n, size_t head_bytes, size_t tail_bytes);

/* True if s[0..n) is empty or only White_Space: \t \n \v \f \r, U+0085 and
 * general categories Zs, Zl, Zp. Invalid UTF-8 is not blank. */
bool qt_is_blank(const char *s, size_t n);
/* True if s[0..n) is empty or only invisible characters: White_Space,
 * default-ignorable code points (ZWSP, ZWJ, BOM, SHY, word joiner, variation
 * selectors, tag characters, Hangul fillers U+115F/U+1160/U+3164/U+FFA0,
 * U+180E) and U+2800 braille pattern blank. Invalid UTF-8 is not blank. */
bool qt_is_blank_visible(const char *s, size_t n);

#endif
