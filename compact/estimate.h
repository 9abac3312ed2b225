/* Token estimates for compaction budgets (DESIGN section 6).
 *
 * qc_estimate_tokens() approximates how many tokens a byte-level BPE
 * tokenizer of the o200k_base family produces for a UTF-8 text. It splits the
 * text into runs the way that tokenizer's pre-tokeniser does (words with their
 * leading space or punctuation character, digit groups, punctuation runs,
 * whitespace), classifies every code point with utf8proc's general categories
 * plus script blocks, and charges each run a calibrated fixed-point weight.
 * The weights, how they were fitted and the measured error are documented in
 * docs/compaction.md ("Token estimates"); tests/py_estimator.py checks them.
 *
 * Pure: no allocation, no globals besides const tables; deterministic on
 * every platform (integer arithmetic only). Invalid UTF-8 is counted
 * conservatively (one token per invalid byte). A host that has the exact
 * tokenizer for its model can supply its own counter instead. */
#ifndef QUIRE_COMPACT_ESTIMATE_H
#define QUIRE_COMPACT_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>

/* Estimated token count of the n bytes at s (s may be NULL when n == 0). */
size_t qc_estimate_tokens(const char *s, size_t n);

/* ---- calibration view: the runs behind an estimate ---- */

/* Run kinds. */
enum { QC_RUN_WORD = 0, QC_RUN_DIGITS = 1, QC_RUN_SPACE = 2, QC_RUN_PUNCT = 3 };

/* Code point groups, the per-character features of runs that hold non-ASCII
 * text (and of ASCII punctuation inside such runs). Each counts code points,
 * except QC_G_THIN, QC_G_RARE and QC_G_OTHER, which count UTF-8 bytes. */
enum {
    QC_G_ALPHA = 0,  /* ASCII letter */
    QC_G_LATIN,      /* Latin letters beyond ASCII (accented, extended, IPA) */
    QC_G_GREEK,
    QC_G_CYRILLIC,
    QC_G_HEBREW,
    QC_G_ARABIC,     /* Arabic and its supplements and presentation forms */
    QC_G_INDIC,      /* Devanagari, Bengali, Gujarati, Tamil, Telugu, Kannada, Malayalam */
    QC_G_INDIC2,     /* Gurmukhi, Sinhala: fewer merges */
    QC_G_ORIYA,      /* Oriya: fewer still */
    QC_G_SEASIAN,    /* Thai, Lao, Myanmar, Khmer */
    QC_G_HAN,        /* CJK ideographs and radicals */
    QC_G_KANA,       /* hiragana, katakana, half-width katakana */
    QC_G_HANGUL,
    QC_G_OTHERL,     /* Armenian, Georgian */
    QC_G_THIN,       /* Tibetan, Lao, Ethiopic: few merges; counted per UTF-8 byte */
    QC_G_RARE,       /* letters of other scripts (Thaana, Cherokee, Syriac, NKo, syllabics,
                        unassigned blocks...): next to no merges; counted per UTF-8 byte */
    QC_G_MARK,       /* combining marks outside the script blocks above */
    QC_G_EMOJI,      /* pictographs from U+1F000: emoji, regional indicators, skin tones */
    QC_G_DINGBAT,    /* miscellaneous symbols and dingbats (U+2600-27BF, 2B00-2BFF) */
    QC_G_BOX,        /* box drawing and block elements (U+2500-259F) */
    QC_G_JOINER,     /* ZWJ, ZWNJ, variation selectors, tag characters, keycap */
    QC_G_SYMBOL,     /* other non-ASCII punctuation and symbols (dashes, arrows, boxes) */
    QC_G_WIDE,       /* CJK symbols and punctuation, full-width forms */
    QC_G_DIGIT,      /* digits and numbers outside ASCII */
    QC_G_PUNCT,      /* ASCII punctuation and controls */
    QC_G_NEWLINE,    /* CR or LF taken into a punctuation run */
    QC_G_BAD,        /* a byte that is not part of valid UTF-8 */
    QC_G_OTHER,      /* anything else (private use, unassigned); counted per UTF-8 byte */
    QC_G_COUNT
};

/* Bases of the linear model used by runs that hold non-ASCII code points. */
enum {
    QC_B_WORD = 0,      /* word without prefix */
    QC_B_WORD_SPACE,    /* word with its leading space */
    QC_B_WORD_PREFIX,   /* word with a leading punctuation/symbol/other-space char */
    QC_B_PUNCT,         /* punctuation/symbol run */
    QC_B_PUNCT_SPACE,   /* punctuation/symbol run with its leading space */
    QC_B_DIGITS,        /* number run with non-ASCII digits */
    QC_B_SPACE,         /* whitespace run with non-ASCII spaces */
    QC_B_COUNT
};

typedef struct qc_est_run {
    size_t start, end;   /* byte range in the input */
    int kind;            /* QC_RUN_* */
    int table;           /* >= 0: cell of the ASCII tables (see estimate.c); -1: linear */
    int base;            /* QC_B_* when table < 0 */
    uint32_t len;        /* code points (letters for words, without the prefix) */
    uint32_t extra;      /* code points beyond the last table column (table runs) */
    size_t lstart, lend; /* ASCII words: the letters, without prefix and contraction */
    uint32_t groups[QC_G_COUNT]; /* per-group code point counts (linear runs) */
    uint32_t cost_q8;    /* the run's estimate, in 1/256 token */
} qc_est_run;

typedef void (*qc_est_visit)(void *ctx, const qc_est_run *run);

/* Walks the runs of s, calling visit (if not NULL) for each; returns the sum
 * of their costs in 1/256 token. qc_estimate_tokens() rounds this sum. */
uint64_t qc_estimate_scan(const char *s, size_t n, qc_est_visit visit, void *ctx);

/* Table geometry, for the calibration tools. An ASCII word costs its cell
 * plus, for each pair of adjacent letters (case-folded), the calibrated
 * chance that the tokenizer splits the word between them. Every run costs at
 * least one token (a pre-token never encodes to fewer). */
#define QC_WORD_MAXLEN 16   /* word lengths 1..16 have their own column */
#define QC_PUNCT_MAXLEN 12
#define QC_SPACE_MAXLEN 16
/* Table cells: words [prefix 3][shape 4][len 0..16], then punctuation
 * [space 2][newline 2][len 0..12], then whitespace [newline 2][len 0..16],
 * then the ASCII digit group. */
#define QC_CELL_WORD 0
#define QC_CELL_PUNCT (QC_CELL_WORD + 3 * 4 * (QC_WORD_MAXLEN + 1))
#define QC_CELL_SPACE (QC_CELL_PUNCT + 2 * 2 * (QC_PUNCT_MAXLEN + 1))
#define QC_CELL_DIGIT3 (QC_CELL_SPACE + 2 * (QC_SPACE_MAXLEN + 1))
#define QC_CELL_COUNT (QC_CELL_DIGIT3 + 1)

#endif
