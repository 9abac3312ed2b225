#!/usr/bin/python3
"""Builds and uses the calibration set of quire's token estimator.

The estimator (compact/estimate.c) cuts text into runs where the o200k_base
pre-tokeniser does (words, digit groups, punctuation runs, whitespace) and
prices each run from fixed-point tables (ASCII runs, plus a split chance per
pair of adjacent letters) or a linear model over code point groups (runs with
other code points). This script, with Debian's python3 (python3-regex):

  build     extracts real texts from the logged sessions in
            SHARED/corpus/sessions (Claude Code and Codex JSONL), adds
            multilingual texts (translation catalogues installed on the
            build machine, /usr/share/locale/*/LC_MESSAGES/*.mo) and
            synthetic emoji / mixed-script samples, counts every sample
            exactly with tests/o200k.py and writes
            tests/data/estimator_calibration.jsonl;
  fit       has the unit-test binary list every run of every sample
            (`test_estimator --runs FILE`), encodes each run exactly, fits
            the weights and prints the C weight block (--write puts it into
            compact/estimate.c, between BEGIN WEIGHTS and END WEIGHTS);
  report    runs the estimator (`test_estimator --print FILE`) and prints
            median / p90 / worst relative error per script family and the
            worst samples;
  crossval  replays the estimator's arithmetic in Python (checked against
            the binary) to measure the error of 5-fold held-out fits.

  calibrate_estimator.py build --data tests/data
  calibrate_estimator.py fit --tool build/tests/test_estimator --write
  (rebuild) calibrate_estimator.py report --tool build/tests/test_estimator

Everything is deterministic (seeded); rerunning build gives the same file on
a machine with the same catalogues installed.
"""
import argparse
import glob
import gettext
import hashlib
import json
import os
import random
import subprocess
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import o200k  # noqa: E402

DATA = os.path.join(HERE, "data", "estimator_calibration.jsonl")
MIN_BYTES, MAX_BYTES = 100, 20000
SESSION_BUDGET = 1_050_000     # bytes of session text kept in the committed file
LOCALE_BUDGET_PER_LANG = 12_000
SEED = 20240611


# ---------------------------------------------------------------- extraction

def _texts_of_blocks(blocks):
    for b in blocks:
        if isinstance(b, str):
            yield "text", b
        elif isinstance(b, dict):
            t = b.get("type")
            if t in ("text", "input_text", "output_text", "summary_text", "reasoning_text"):
                if isinstance(b.get("text"), str):
                    yield "text", b["text"]
            elif t == "thinking" and isinstance(b.get("thinking"), str):
                yield "thinking", b["thinking"]
            elif t == "tool_result":
                c = b.get("content")
                if isinstance(c, str):
                    yield "tool_result", c
                elif isinstance(c, list):
                    for _, s in _texts_of_blocks(c):
                        yield "tool_result", s
            elif t == "tool_use" and "input" in b:
                yield "tool_call", json.dumps(b["input"], ensure_ascii=False, separators=(",", ":"))


def claude_code_texts(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("//") or not line.strip():
                continue
            o = json.loads(line)
            if o.get("type") == "summary" and isinstance(o.get("summary"), str):
                yield "summary", o["summary"]
            m = o.get("message")
            if not isinstance(m, dict):
                continue
            c = m.get("content")
            if isinstance(c, str):
                yield m.get("role", "text"), c
            elif isinstance(c, list):
                yield from _texts_of_blocks(c)


def codex_texts(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("//") or not line.strip():
                continue
            o = json.loads(line)
            p = o.get("payload")
            if not isinstance(p, dict):
                continue
            if o.get("type") == "session_meta":
                bi = p.get("base_instructions")
                if isinstance(bi, dict) and isinstance(bi.get("text"), str):
                    yield "system", bi["text"]
                continue
            if o.get("type") != "response_item":
                continue  # event_msg lines repeat response items
            t = p.get("type")
            if t == "message" and isinstance(p.get("content"), list):
                yield from _texts_of_blocks(p["content"])
            elif t == "reasoning":
                for s in p.get("summary") or []:
                    if isinstance(s, dict) and isinstance(s.get("text"), str):
                        yield "thinking", s["text"]
            elif t == "function_call" and isinstance(p.get("arguments"), str):
                yield "tool_call", p["arguments"]
            elif t == "custom_tool_call" and isinstance(p.get("input"), str):
                yield "tool_call", p["input"]
            elif t in ("function_call_output", "custom_tool_call_output"):
                out = p.get("output")
                if isinstance(out, str):
                    yield "tool_result", out
                elif isinstance(out, dict) and isinstance(out.get("content"), str):
                    yield "tool_result", out["content"]
                elif isinstance(out, list):
                    for _, s in _texts_of_blocks(out):
                        yield "tool_result", s


def _valid(s):
    try:
        s.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _chunks(text, rng):
    """Cuts text into pieces of MIN..MAX bytes at line boundaries when possible."""
    out = []
    b = text.encode("utf-8")
    if len(b) <= MAX_BYTES:
        return [text]
    lines = text.splitlines(keepends=True)
    cur, cur_len = [], 0
    target = int(10 ** rng.uniform(2.5, 4.3))
    for ln in lines:
        n = len(ln.encode("utf-8"))
        if cur and cur_len + n > target:
            out.append("".join(cur))
            cur, cur_len = [], 0
            target = int(10 ** rng.uniform(2.5, 4.3))
        cur.append(ln)
        cur_len += n
    if cur:
        out.append("".join(cur))
    # a single huge line: cut by characters
    res = []
    for c in out:
        while len(c.encode("utf-8")) > MAX_BYTES:
            res.append(c[:MAX_BYTES // 4])
            c = c[MAX_BYTES // 4:]
        res.append(c)
    return res


def session_samples(shared, rng):
    raw = []
    for path in sorted(glob.glob(os.path.join(shared, "corpus/sessions/claude-code/*.jsonl"))):
        for kind, s in claude_code_texts(path):
            raw.append(("claude-code/" + os.path.basename(path), kind, s))
    for path in sorted(glob.glob(os.path.join(shared, "corpus/sessions/codex/*.jsonl"))):
        for kind, s in codex_texts(path):
            raw.append(("codex/" + os.path.basename(path), kind, s))
    seen, samples = set(), []
    pending = {}
    for src, kind, s in raw:
        if not s.strip() or not _valid(s) or s in seen:
            continue
        seen.add(s)
        n = len(s.encode("utf-8"))
        if n < MIN_BYTES:
            key = (src, kind)
            acc = pending.setdefault(key, [])
            acc.append(s)
            joined = "\n\n".join(acc)
            if len(joined.encode("utf-8")) >= MIN_BYTES:
                samples.append((src, kind, joined))
                del pending[key]
            continue
        for c in _chunks(s, rng):
            if len(c.encode("utf-8")) >= MIN_BYTES // 2 and c.strip():
                samples.append((src, kind, c))
    # keep the committed file small: a seeded subsample, small samples favoured
    rng.shuffle(samples)
    samples.sort(key=lambda x: len(x[2].encode("utf-8")) > 8000)
    kept, total = [], 0
    for smp in samples:
        n = len(smp[2].encode("utf-8"))
        if total + n > SESSION_BUDGET:
            continue
        kept.append(smp)
        total += n
    return kept


LOCALE_LANGS = ["ja", "zh_CN", "zh_TW", "ko", "ru", "uk", "bg", "el", "ar", "fa", "he", "hi",
                "bn", "ta", "te", "ml", "gu", "kn", "or", "pa", "si", "th", "lo", "km", "my", "ka",
                "hy", "am", "ti", "dz", "chr", "iu", "dv", "vi", "tr", "pl", "cs", "de", "fr", "es",
                "pt_BR", "fi", "hu"]


def locale_samples(rng):
    """Real translated UI and CLI messages in many scripts (gettext catalogues)."""
    samples = []
    for lang in LOCALE_LANGS:
        files = sorted(glob.glob("/usr/share/locale/%s/LC_MESSAGES/*.mo" % lang))
        prose = [f for f in files if "iso_" not in os.path.basename(f)]
        files = prose or files  # some scripts only have the ISO name lists
        msgs = []
        for f in files:
            try:
                with open(f, "rb") as fh:
                    cat = gettext.GNUTranslations(fh)._catalog
            except Exception:
                continue
            for k, v in sorted(cat.items(), key=lambda kv: str(kv[0])):
                if k == "" or not isinstance(v, str) or len(v) < 8 or not _valid(v):
                    continue
                msgs.append(v)
        if not msgs:
            continue
        rng.shuffle(msgs)
        budget, i = LOCALE_BUDGET_PER_LANG, 0
        while budget > 0 and i < len(msgs):
            target = int(10 ** rng.uniform(2.2, 3.6))
            cur = []
            while i < len(msgs) and len("\n".join(cur).encode("utf-8")) < target:
                cur.append(msgs[i])
                i += 1
            text = "\n".join(cur)
            n = len(text.encode("utf-8"))
            if n >= MIN_BYTES:
                samples.append(("locale/" + lang, "ui_text", text))
                budget -= n
    return samples


# Synthetic samples: emoji sequences (ZWJ, skin tones, flags, keycaps,
# variation selectors) and mixed-script chat lines that real logs rarely hold.
_EMOJI = ["😀", "😂", "🤣", "😊", "🥲", "😍", "🤔", "🙃", "😎", "🔥", "✨", "🎉", "🚀", "👍", "👍🏽",
          "👋🏻", "🙏🏿", "❤️", "☀️", "⚠️", "✅", "❌", "📦", "🐛", "🧪", "📝", "💡", "🔧", "🇺🇸",
          "🇯🇵", "🇩🇪", "🇧🇷", "👨‍👩‍👧‍👦", "👩‍💻", "🧑‍🚀", "🏳️‍🌈", "1️⃣", "#️⃣", "🤷‍♂️", "🫠", "🪿"]
_PHRASES = {
    "latin": ["build passed", "fixed the flaky test", "shipping it now", "great work team",
              "see you tomorrow", "the deploy is green", "review please", "merged into main"],
    "cjk": ["今日はいい天気ですね", "测试已经通过了", "我们明天再讨论这个问题", "コードレビューをお願いします",
            "부탁드립니다", "배포가 완료되었습니다", "这个函数需要重构", "バグを修正しました"],
    "arabic": ["تم إصلاح الخطأ في الكود", "شكرا جزيلا على المساعدة", "سيتم النشر غدا صباحا",
               "هل يمكنك مراجعة التغييرات", "الاختبارات نجحت كلها"],
    "cyrillic": ["сборка прошла успешно", "исправил нестабильный тест", "посмотри пожалуйста",
                 "выкатываем завтра утром"],
    "indic": ["परीक्षण सफल रहा", "कृपया कोड की समीक्षा करें", "कल सुबह तैनाती होगी"],
}


def synthetic_samples(rng):
    samples = []
    for i in range(14):  # pure emoji runs
        n = rng.randint(30, 160)
        sep = rng.choice(["", "", " ", "\n"])
        samples.append(("synthetic/emoji", "emoji", sep.join(rng.choice(_EMOJI) for _ in range(n))))
    for fam, phrases in sorted(_PHRASES.items()):
        for i in range(8):  # chat lines with emoji
            lines = []
            for _ in range(rng.randint(4, 30)):
                p = rng.choice(phrases)
                e = "".join(rng.choice(_EMOJI) for _ in range(rng.randint(0, 3)))
                lines.append(rng.choice(["%s %s", "%s%s", "- %s %s", "**%s** %s"]) % (p, e))
            samples.append(("synthetic/" + fam, "chat", "\n".join(lines)))
    return samples


# ---------------------------------------------------------------- families

def script_of(ch):
    o = ord(ch)
    if o < 0x80:
        return "ascii"
    if 0x1F000 <= o <= 0x1FAFF or 0x2600 <= o <= 0x27BF or o in (0x200D, 0xFE0F):
        return "emoji"
    try:
        name = unicodedata.name(ch)
    except ValueError:
        return "other"
    for key, fam in (("CJK", "cjk"), ("HIRAGANA", "cjk"), ("KATAKANA", "cjk"),
                     ("HANGUL", "cjk"), ("FULLWIDTH", "cjk"), ("IDEOGRAPHIC", "cjk"),
                     ("CYRILLIC", "cyrillic"), ("GREEK", "greek"), ("ARABIC", "arabic"),
                     ("HEBREW", "hebrew"), ("DEVANAGARI", "indic"),
                     ("BENGALI", "indic"), ("TAMIL", "indic"), ("TELUGU", "indic"),
                     ("MALAYALAM", "indic"), ("GUJARATI", "indic"), ("SINHALA", "indic"),
                     ("KANNADA", "indic"), ("ORIYA", "indic"), ("GURMUKHI", "indic"),
                     ("THAI", "seasian"), ("KHMER", "seasian"),
                     ("MYANMAR", "seasian"), ("TIBETAN", "thin"), ("LAO ", "thin"),
                     ("ETHIOPIC", "thin"), ("THAANA", "thin"), ("CHEROKEE", "thin"),
                     ("SYLLABICS", "thin"), ("SYRIAC", "thin"), ("NKO", "thin"),
                     ("LATIN", "latin")):
        if key in name:
            return fam
    return "other"


def family_of(text):
    """The script family of a sample: ascii (code and English), latin (accented
    Latin), or the dominant non-Latin script (>= 20% of the letters)."""
    counts = {}
    letters = 0
    for ch in text:
        if ch.isspace():
            continue
        f = script_of(ch)
        counts[f] = counts.get(f, 0) + 1
        letters += 1
    if not letters:
        return "ascii"
    best = None
    for f, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        if f in ("ascii", "latin", "other"):
            continue
        if n >= 0.2 * letters:
            best = f
            break
    if best:
        return best
    if counts.get("latin", 0) >= 0.02 * letters:
        return "latin"
    if counts.get("other", 0) >= 0.2 * letters:
        return "other"
    return "ascii"


# ---------------------------------------------------------------- build

def build(shared, ranks, out_path):
    rng = random.Random(SEED)
    enc = o200k.O200k.load(ranks)
    samples = session_samples(shared, rng) + locale_samples(rng) + synthetic_samples(rng)
    rows = []
    for src, kind, text in samples:
        h = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
        rows.append({"id": h, "family": family_of(text), "source": src, "kind": kind,
                     "bytes": len(text.encode("utf-8")), "tokens": enc.count(text), "text": text})
    rows.sort(key=lambda r: (r["source"], r["kind"], r["id"]))
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "w", encoding="utf-8", newline="\n") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
    fam = {}
    for r in rows:
        a = fam.setdefault(r["family"], [0, 0, 0])
        a[0] += 1
        a[1] += r["bytes"]
        a[2] += r["tokens"]
    for k, (n, b, t) in sorted(fam.items()):
        print("%-9s %4d samples %8d bytes %7d tokens  %.2f B/tok" % (k, n, b, t, b / t))
    print("total %d samples, %d bytes on disk" % (len(rows), os.path.getsize(out_path)))


def load(path=DATA):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# ---------------------------------------------------------------- estimator I/O

def run_tool(tool, mode, path):
    out = subprocess.run([tool, mode, path], check=True, capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.strip()]


def estimates(tool, path=DATA):
    return [int(x) for x in run_tool(tool, "--print", path)]


def rel_errors(rows, est):
    return [(e - r["tokens"]) / r["tokens"] for r, e in zip(rows, est)]


def quantile(xs, q):
    xs = sorted(xs)
    if not xs:
        return 0.0
    i = min(len(xs) - 1, max(0, int(round(q * (len(xs) - 1)))))
    return xs[i]


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if not n:
        return 0.0
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def summary(rows, est):
    """{family: (n, median |err|, p90 |err|, worst |err|, signed bias of totals)}."""
    out = {}
    groups = {}
    for r, e in zip(rows, est):
        groups.setdefault(r["family"], []).append((r, e))
    groups["sessions"] = [(r, e) for r, e in zip(rows, est)
                          if r["source"].startswith(("claude-code/", "codex/"))]
    groups["ALL"] = list(zip(rows, est))
    for fam, pairs in groups.items():
        errs = [abs(e - r["tokens"]) / r["tokens"] for r, e in pairs]
        tot_t = sum(r["tokens"] for r, _ in pairs)
        tot_e = sum(e for _, e in pairs)
        out[fam] = (len(pairs), median(errs), quantile(errs, 0.9), max(errs),
                    (tot_e - tot_t) / tot_t)
    return out


def report(tool, path=DATA):
    rows = load(path)
    est = estimates(tool, path)
    s = summary(rows, est)
    print("%-9s %5s %8s %8s %8s %8s" % ("family", "n", "median", "p90", "worst", "bias"))
    for fam in sorted(s, key=lambda k: (k == "ALL", k == "sessions", k)):
        n, med, p90, worst, bias = s[fam]
        print("%-9s %5d %7.1f%% %7.1f%% %7.1f%% %+7.1f%%" % (fam, n, 100 * med, 100 * p90,
                                                          100 * worst, 100 * bias))
    errs = rel_errors(rows, est)
    worst = sorted(range(len(rows)), key=lambda i: -abs(errs[i]))[:12]
    print("worst samples:")
    for i in worst:
        r = rows[i]
        print("  %+6.1f%% %-8s %6dB %6d tok est %6d  %s %s %r" % (
            100 * errs[i], r["family"], r["bytes"], r["tokens"], est[i], r["source"][:40],
            r["kind"], r["text"][:60]))


# ---------------------------------------------------------------- fit

# Table geometry; must match compact/estimate.h.
WORD_MAXLEN, PUNCT_MAXLEN, SPACE_MAXLEN = 16, 12, 16
CELL_WORD = 0
CELL_PUNCT = CELL_WORD + 3 * 4 * (WORD_MAXLEN + 1)
CELL_SPACE = CELL_PUNCT + 2 * 2 * (PUNCT_MAXLEN + 1)
CELL_DIGIT3 = CELL_SPACE + 2 * (SPACE_MAXLEN + 1)
CELL_COUNT = CELL_DIGIT3 + 1
GROUPS = ["ALPHA", "LATIN", "GREEK", "CYRILLIC", "HEBREW", "ARABIC", "INDIC", "INDIC2", "ORIYA",
          "SEASIAN", "HAN", "KANA", "HANGUL", "OTHERL", "THIN", "RARE", "MARK", "EMOJI", "DINGBAT",
          "BOX", "JOINER", "SYMBOL", "WIDE", "DIGIT", "PUNCT", "NEWLINE", "BAD", "OTHER"]
BASES = ["WORD", "WORD_SPACE", "WORD_PREFIX", "PUNCT", "PUNCT_SPACE", "DIGITS", "SPACE"]
FIXED_GROUPS = {"BAD": 1.0, "OTHER": 1.0}  # per byte, not fitted: no merges assumed
MIN_CELL = 25                # runs needed before a cell stands on its own
BIGRAM_PRIOR = 5.0           # pseudo-occurrences pulling a rare letter pair to the mean
SESSION_WEIGHT = 1.0
SOURCE_WEIGHT = lambda r: SESSION_WEIGHT if r["source"].startswith(("claude-code/", "codex/")) else 1.0


def table_rows():
    """(first cell, columns, label) of every table row."""
    rows = []
    for p, pn in enumerate(["none", "space", "punctuation"]):
        for sh, shn in enumerate(["lower", "Capital", "UPPER", "MIXed"]):
            rows.append((CELL_WORD + (p * 4 + sh) * (WORD_MAXLEN + 1), WORD_MAXLEN + 1,
                         "words, prefix %s, %s" % (pn, shn)))
    for sp in range(2):
        for nl in range(2):
            rows.append((CELL_PUNCT + (sp * 2 + nl) * (PUNCT_MAXLEN + 1), PUNCT_MAXLEN + 1,
                         "punctuation%s%s" % (", leading space" if sp else "",
                                              ", trailing newline" if nl else "")))
    for nl in range(2):
        rows.append((CELL_SPACE + nl * (SPACE_MAXLEN + 1), SPACE_MAXLEN + 1,
                     "whitespace%s" % (" with newline" if nl else "")))
    return rows


class Run:
    __slots__ = ("sample", "start", "end", "kind", "table", "base", "len", "extra", "cost",
                 "lstart", "lend", "groups", "exact", "bounds")


def parse_runs(lines):
    for ln in lines:
        f = ln.split()
        r = Run()
        (r.sample, r.start, r.end, r.kind, r.table, r.base, r.len, r.extra, r.cost, r.lstart,
         r.lend) = (int(x) for x in f[:11])
        r.groups = [int(x) for x in f[11:]]
        yield r


def exact_runs(tool, rows, enc, path=DATA):
    """Every run of every sample with its exact token count and, for words,
    the byte offsets (within the run) where the tokenizer splits it."""
    texts = [r["text"].encode("utf-8") for r in rows]
    inv = {v: k for k, v in enc.ranks.items()}
    out = []
    for r in parse_runs(run_tool(tool, "--runs", path)):
        piece = texts[r.sample][r.start:r.end]
        toks = enc.encode(piece.decode("utf-8", "surrogateescape"))
        r.exact = len(toks)
        r.bounds = None
        if r.kind == 0 and r.table >= 0:
            pos, b = 0, set()
            for t in toks[:-1]:
                pos += len(inv[t])
                b.add(pos)
            r.bounds = b
        out.append(r)
    return out


def bigram_index(a, b):
    return ((a | 0x20) - 97) * 26 + ((b | 0x20) - 97)


def fit_bigrams(runs, texts):
    """Split chance of each case-folded letter pair inside ASCII words."""
    occ = [0] * 676
    spl = [0] * 676
    for r in runs:
        if r.bounds is None:
            continue
        s = texts[r.sample]
        for k in range(r.lstart + 1, r.lend):
            j = bigram_index(s[k - 1], s[k])
            occ[j] += 1
            if (k - r.start) in r.bounds:
                spl[j] += 1
    p0 = sum(spl) / max(1, sum(occ))
    return [(spl[j] + BIGRAM_PRIOR * p0) / (occ[j] + BIGRAM_PRIOR) for j in range(676)], occ


def _pool(sums, wts, cnts, first, ncol, col):
    n, t, w, r = cnts[first + col], sums[first + col], wts[first + col], 0
    while n < MIN_CELL and r < ncol:  # pool with neighbours in the row
        r += 1
        for c in (col - r, col + r):
            if 1 <= c < ncol:
                n += cnts[first + c]
                t += sums[first + c]
                w += wts[first + c]
    return t / w if w else None


def _solve(a, b):
    """Gaussian elimination with partial pivoting; a is n x n."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        if abs(m[p][c]) < 1e-12:
            continue
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c and m[r][c]:
                f = m[r][c] / m[c][c]
                for k in range(c, n + 1):
                    m[r][k] -= f * m[c][k]
    return [m[i][n] / m[i][i] if abs(m[i][i]) > 1e-12 else 0.0 for i in range(n)]


def _lsq(xs, ys, ws, prior, lam, fixed):
    """Weighted non-negative ridge least squares towards prior (lam is relative
    to the total weight); fixed: {index: value}."""
    k = len(prior)
    free = [j for j in range(k) if j not in fixed]
    w = list(prior)
    for j, v in fixed.items():
        w[j] = v
    while True:
        ata = [[0.0] * len(free) for _ in free]
        atb = [0.0] * len(free)
        for x, y, wt in zip(xs, ys, ws):
            r = y - sum(x[j] * fixed[j] for j in fixed if x[j])
            nz = [(i, x[j]) for i, j in enumerate(free) if x[j]]
            for i, xi in nz:
                atb[i] += wt * xi * r
                for i2, xj in nz:
                    ata[i][i2] += wt * xi * xj
        lw = lam * sum(ws)
        for i, j in enumerate(free):
            ata[i][i] += lw
            atb[i] += lw * prior[j]
        sol = _solve(ata, atb)
        neg = [free[i] for i, v in enumerate(sol) if v < 0]
        for i, j in enumerate(free):
            w[j] = sol[i]
        if not neg:
            return w
        for j in neg:
            fixed[j] = 0.0
            w[j] = 0.0
        free = [j for j in free if j not in neg]


def fit_weights(runs, rows):
    texts = [r["text"].encode("utf-8") for r in rows]
    sw = [SOURCE_WEIGHT(r) / max(1, r["tokens"]) for r in rows]
    bigram, bigram_occ = fit_bigrams(runs, texts)
    bq = [q8(p) / 256.0 for p in bigram]
    sums = [0.0] * CELL_COUNT
    wts = [0.0] * CELL_COUNT
    cnts = [0] * CELL_COUNT
    long_runs = {0: [], 1: [], 2: []}
    lin_x, lin_y, lin_w = [], [], []
    dig_t = dig_g = 0.0
    for r in runs:
        w = sw[r.sample]
        y = float(r.exact)
        if r.bounds is not None:
            s = texts[r.sample]
            y -= sum(bq[bigram_index(s[k - 1], s[k])] for k in range(r.lstart + 1, r.lend))
        if r.table == CELL_DIGIT3:
            dig_t += w * r.exact
            dig_g += w * ((r.len + 2) // 3)
        elif r.table >= 0:
            if r.extra:
                slope = 0 if r.table < CELL_PUNCT else 1 if r.table < CELL_SPACE else 2
                long_runs[slope].append((r.table, r.extra, y, w))
            else:
                sums[r.table] += w * y
                wts[r.table] += w
                cnts[r.table] += 1
        else:
            x = [0.0] * (len(BASES) + len(GROUPS))
            x[r.base] = 1.0
            for g, c in enumerate(r.groups):
                x[len(BASES) + g] = float(c)
            lin_x.append(x)
            lin_y.append(y)
            lin_w.append(w)
    cells = [None] * CELL_COUNT
    trows = table_rows()
    for first, ncol, label in trows:
        for col in range(1, ncol):
            cells[first + col] = _pool(sums, wts, cnts, first, ncol, col)
    # rows without data borrow from the lower-case row of the same prefix, then
    # from the space-prefixed lower-case row
    for first, ncol, label in trows:
        for col in range(1, ncol):
            if cells[first + col] is None:
                alts = []
                if first < CELL_PUNCT:
                    p = (first - CELL_WORD) // (4 * (WORD_MAXLEN + 1))
                    alts = [CELL_WORD + p * 4 * (WORD_MAXLEN + 1), CELL_WORD + 4 * (WORD_MAXLEN + 1)]
                v = next((cells[a + col] for a in alts if cells[a + col] is not None), None)
                cells[first + col] = v if v is not None else 1.0
        if first >= CELL_PUNCT:  # punctuation and whitespace: non-decreasing with length
            for col in range(2, ncol):
                cells[first + col] = max(cells[first + col], cells[first + col - 1])
        cells[first] = cells[first + 1]
    cells[CELL_DIGIT3] = dig_t / dig_g if dig_g else 1.0
    slopes = []
    for s in range(3):
        num = sum(w * (y - cells[t]) * e for t, e, y, w in long_runs[s])
        den = sum(w * e * e for t, e, y, w in long_runs[s])
        slopes.append(max(0.0, num / den) if den else 0.25)
    prior = [0.5] * len(BASES) + [0.5] * len(GROUPS)
    fixed = {len(BASES) + GROUPS.index(g): v for g, v in FIXED_GROUPS.items()}
    lin = _lsq(lin_x, lin_y, lin_w, prior, 1e-3, fixed)
    stats = {"cells": cnts, "long": {k: len(v) for k, v in long_runs.items()}, "linear": len(lin_x),
             "bigram_pairs": sum(bigram_occ)}
    return cells, slopes, lin[:len(BASES)], lin[len(BASES):], bigram, stats


def q8(v):
    return max(0, min(65535, int(round(v * 256))))


def sq8(v):
    return max(-32768, min(32767, int(round(v * 256))))


def weights_c(cells, slopes, bases, groups, bigram, stats, nsamples, nruns):
    out = []
    out.append("/* fitted on %d samples, %d runs */" % (nsamples, nruns))
    out.append("static const int16_t cell_q8[QC_CELL_COUNT] = {")
    for first, ncol, label in table_rows():
        n = sum(stats["cells"][first:first + ncol])
        out.append("    /* %s (%d runs) */" % (label, n))
        vals = [str(sq8(cells[first + c])) for c in range(ncol)]
        for i in range(0, ncol, 17):
            out.append("    " + ", ".join(vals[i:i + 17]) + ",")
    out.append("    /* one ASCII digit group (1-3 digits) */")
    out.append("    %d," % sq8(cells[CELL_DIGIT3]))
    out.append("};")
    out.append("/* per code point beyond the last column: words, punctuation, whitespace */")
    out.append("static const uint16_t long_q8[3] = {%s};" % ", ".join(str(q8(s)) for s in slopes))
    out.append("/* linear model (%d runs): bases QC_B_* */" % stats["linear"])
    out.append("static const uint16_t base_q8[QC_B_COUNT] = {%s};" % ", ".join(str(q8(b)) for b in bases))
    out.append("/* per code point (per byte: THIN, RARE, OTHER) of each group QC_G_*; BAD and OTHER")
    out.append(" * fixed at one token per byte */")
    out.append("static const uint16_t group_q8[QC_G_COUNT] = {")
    for i in range(0, len(groups), 6):
        out.append("    " + " ".join("%d," % q8(g) for g in groups[i:i + 6]) + "  /* " +
                   " ".join(GROUPS[i:i + 6]) + " */")
    out.append("};")
    out.append("/* split chance x 256 of each letter pair [first][second], a..z case-folded,")
    out.append(" * from %d pairs inside ASCII words" % stats["bigram_pairs"])
    out.append(" * (rows padded to 32; the last row, no previous letter, stays zero) */")
    out.append("static const uint8_t bigram_q8[27 * 32] = {")
    for a in range(26):
        out.append("    " + ",".join("%3d" % min(255, q8(bigram[a * 26 + b])) for b in range(26)) +
                   ",  0,0,0,0,0,0,  /* %s */" % chr(97 + a))
    out.append("};")
    return "\n".join(out) + "\n"


def fit(tool, ranks, path=DATA, write=None):
    rows = load(path)
    enc = o200k.O200k.load(ranks)
    runs = exact_runs(tool, rows, enc, path)
    # segmentation check: the exact counts of the runs add up to each sample's
    # exact count when the scanner reproduces the pre-tokeniser
    per = [0] * len(rows)
    for r in runs:
        per[r.sample] += r.exact
    same = sum(1 for r, p in zip(rows, per) if r["tokens"] == p)
    print("/* run segmentation reproduces the exact count on %d of %d samples (the others price"
          " a non-ASCII symbol before an ASCII word apart; %+d tokens in all) */"
          % (same, len(rows), sum(per) - sum(r["tokens"] for r in rows)))
    cells, slopes, bases, groups, bigram, stats = fit_weights(runs, rows)
    text = weights_c(cells, slopes, bases, groups, bigram, stats, len(rows), len(runs))
    print(text)
    if write:
        src = open(write, encoding="utf-8").read()
        a = src.index("/* BEGIN WEIGHTS */\n") + len("/* BEGIN WEIGHTS */\n")
        b = src.index("/* END WEIGHTS */")
        with open(write, "w", encoding="utf-8") as f:
            f.write(src[:a] + text + src[b:])
        print("/* wrote %s */" % write)


def predict(runs, texts, cells, slopes, bases, groups, bigram):
    """The estimator's arithmetic (compact/estimate.c) over parsed runs:
    {sample: estimated tokens}. Lets weights be evaluated without a rebuild."""
    cq = [sq8(c) for c in cells]
    lq = [q8(x) for x in slopes]
    bq = [q8(x) for x in bases]
    gq = [q8(x) for x in groups]
    big = [min(255, q8(x)) for x in bigram]
    tot = {}
    for r in runs:
        if r.table == CELL_DIGIT3:
            c = ((r.len + 2) // 3) * max(256, cq[CELL_DIGIT3])
        elif r.table >= 0:
            slope = 0 if r.table < CELL_PUNCT else 1 if r.table < CELL_SPACE else 2
            lv = lq[slope]
            if slope == 2:
                # the vocabulary's floor (compact/estimate.c, WS_SLOPE / NL_SLOPE): a run
                # with newlines (the second row) at least 1/16 token a code point, else 1/128
                lv = max(lv, 16 if r.table >= CELL_SPACE + SPACE_MAXLEN + 1 else 2)
            c = cq[r.table] + r.extra * lv
            # (the newlines past 16 that a punctuation run ends with also cost 1/16 each in
            # the C estimator; the runs listed here do not carry that count, so a sample
            # with such a run predicts lower here than the binary gives)
            if r.kind == 0:
                s = texts[r.sample]
                c += sum(big[bigram_index(s[k - 1], s[k])] for k in range(r.lstart + 1, r.lend))
            c = max(256, c)
        else:
            c = max(256, bq[r.base] + sum(n * w for n, w in zip(r.groups, gq)))
        tot[r.sample] = tot.get(r.sample, 0) + c
    return {k: max(1, (v + 128) >> 8) for k, v in tot.items()}


def crossval(tool, ranks, path=DATA, folds=5):
    """In-sample error of a full fit, checked against the C estimator, and the
    error on held-out samples of a k-fold fit."""
    rows = load(path)
    enc = o200k.O200k.load(ranks)
    runs = exact_runs(tool, rows, enc, path)
    texts = [r["text"].encode("utf-8") for r in rows]
    full = fit_weights(runs, rows)[:5]
    pred = predict(runs, texts, *full)
    c_est = estimates(tool, path)
    same = sum(1 for i, e in enumerate(c_est) if pred.get(i, 0) == e)
    print("python replay of the C arithmetic agrees on %d of %d samples" % (same, len(rows)))
    held = [0] * len(rows)
    fold_of = [int(r["id"], 16) % folds for r in rows]
    for f in range(folds):
        train = [r for r in runs if fold_of[r.sample] != f]
        test = [r for r in runs if fold_of[r.sample] == f]
        w = fit_weights(train, rows)[:5]
        for k, v in predict(test, texts, *w).items():
            held[k] = v
    for name, est in (("in-sample (full fit)", c_est), ("held-out (%d-fold)" % folds, held)):
        s = summary(rows, est)
        print(name)
        print("  %-9s %5s %8s %8s %8s %8s" % ("family", "n", "median", "p90", "worst", "bias"))
        for fam in sorted(s, key=lambda k: (k == "ALL", k == "sessions", k)):
            n, med, p90, worst, bias = s[fam]
            print("  %-9s %5d %7.1f%% %7.1f%% %7.1f%% %+7.1f%%" % (fam, n, 100 * med, 100 * p90,
                                                                100 * worst, 100 * bias))


def main(argv):
    ap = argparse.ArgumentParser(description="calibration of the token estimator")
    ap.add_argument("cmd", choices=["build", "fit", "report", "crossval"])
    ap.add_argument("--data", default=os.path.join(HERE, "data"))
    ap.add_argument("--ranks", default=None)
    ap.add_argument("--tool", help="path of the built tests/test_estimator binary")
    ap.add_argument("--data", default=DATA)
    ap.add_argument("--write", action="store_true", help="fit: rewrite the weights in compact/estimate.c")
    a = ap.parse_args(argv)
    ranks = a.ranks or os.path.join(a.data, "tokenizers", "o200k_base.tiktoken")
    if a.cmd == "build":
        build(a.data, ranks, a.data)
    elif a.cmd == "fit":
        fit(a.tool, ranks, a.data, os.path.join(HERE, "..", "compact", "estimate.c") if a.write else None)
    elif a.cmd == "crossval":
        crossval(a.tool, ranks, a.data)
    else:
        report(a.tool, a.data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
