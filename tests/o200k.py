#!/usr/bin/python3
"""Exact o200k_base byte-level BPE tokenizer (test helper, not part of the library).

Used to calibrate and check quire's token estimator (compact/estimate.c). Needs
Debian's python3 with the `regex` module (python3-regex) and the rank file
`o200k_base.tiktoken` (one "base64-token rank" pair per line).

    enc = O200k.load("/path/o200k_base.tiktoken")
    enc.encode("hello world")   -> [24912, 2375]
    enc.count("hello world")    -> 2

Command line:
    o200k.py --ranks FILE --verify TestPlans.txt   check every o200k_base vector
    o200k.py --ranks FILE [TEXTFILE|-]             print the token count of a file

Special tokens (<|endoftext|> and friends) are not recognised: text is encoded
as ordinary text, which is what a token estimate for transcript text needs.
"""
import base64
import heapq
import sys

import regex

# The o200k_base pre-tokenisation pattern. `\s` is spelled \p{White_Space}
# so that whitespace means the Unicode White_Space property on every regex
# engine (the reference implementation's engine defines \s that way).
_WS = r"\p{White_Space}"
_NWS = r"\P{White_Space}"
O200K_PATTERN = "|".join([
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"\p{N}{1,3}",
    r" ?[^" + _WS + r"\p{L}\p{N}]+[\r\n/]*",
    _WS + r"*[\r\n]+",
    _WS + r"+(?!" + _NWS + r")",
    _WS + r"+",
])

_INF = 1 << 62
_LONG_PIECE = 256  # above this many bytes, merge with a heap instead of linear scans


class O200k:
    def __init__(self, ranks):
        self.ranks = ranks
        self.pattern = regex.compile(O200K_PATTERN)
        self.cache = {}

    @classmethod
    def load(cls, path):
        ranks = {}
        with open(path, "rb") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                tok, rank = line.split()
                ranks[base64.b64decode(tok)] = int(rank)
        return cls(ranks)

    def pretokenize(self, text):
        return [m.group(0) for m in self.pattern.finditer(text)]

    def _merge_short(self, piece):
        """Lowest-rank adjacent pair first, leftmost on ties; O(n^2) but fast in C."""
        get = self.ranks.get
        parts = list(range(len(piece) + 1))

        def pair_rank(i):
            if i + 2 < len(parts):
                return get(piece[parts[i]:parts[i + 2]], _INF)
            return _INF

        prs = [pair_rank(i) for i in range(len(parts) - 1)]
        while len(prs) > 1:
            m = min(prs)
            if m == _INF:
                break
            i = prs.index(m)
            del parts[i + 1]
            del prs[i + 1]
            prs[i] = pair_rank(i)
            if i > 0:
                prs[i - 1] = pair_rank(i - 1)
        return [self.ranks[piece[parts[i]:parts[i + 1]]] for i in range(len(parts) - 1)]

    def _merge_long(self, piece):
        """The same merge order as _merge_short, with a heap and a linked list."""
        get = self.ranks.get
        n = len(piece)
        nxt = list(range(1, n + 1))  # nxt[start] = end of the part starting at start
        prv = [-1] + list(range(n - 1))
        alive = [True] * n
        heap = []
        for i in range(n - 1):
            r = get(piece[i:i + 2])
            if r is not None:
                heap.append((r, i, i + 2))
        heapq.heapify(heap)
        while heap:
            r, s, e = heapq.heappop(heap)
            if not alive[s]:
                continue
            mid = nxt[s]
            if mid >= n or nxt[mid] != e:
                continue  # stale entry
            # merge the part at s with the one at mid
            alive[mid] = False
            nxt[s] = e
            if e < n:
                prv[e] = s
            if e < n:
                r2 = get(piece[s:nxt[e]])
                if r2 is not None:
                    heapq.heappush(heap, (r2, s, nxt[e]))
            p = prv[s]
            if p >= 0:
                r3 = get(piece[p:e])
                if r3 is not None:
                    heapq.heappush(heap, (r3, p, e))
        out = []
        s = 0
        while s < n:
            out.append(self.ranks[piece[s:nxt[s]]])
            s = nxt[s]
        return out

    def encode_piece(self, piece):
        toks = self.cache.get(piece)
        if toks is None:
            r = self.ranks.get(piece)
            if r is not None:
                toks = [r]
            elif len(piece) > _LONG_PIECE:
                toks = self._merge_long(piece)
            else:
                toks = self._merge_short(piece)
            if len(piece) <= _LONG_PIECE:
                self.cache[piece] = toks
        return toks

    def encode(self, text):
        out = []
        for m in self.pattern.finditer(text):
            out.extend(self.encode_piece(m.group(0).encode("utf-8", "surrogatepass")))
        return out

    def count(self, text):
        n = 0
        for m in self.pattern.finditer(text):
            n += len(self.encode_piece(m.group(0).encode("utf-8", "surrogatepass")))
        return n


def read_test_plans(path, encoding="o200k_base"):
    """Yields (sample, expected token list) for every vector of `encoding`."""
    import json
    name = sample = None
    with open(path, encoding="utf-8", newline="") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("EncodingName: "):
                name = line[len("EncodingName: "):]
                sample = None
            elif line.startswith("Sample: "):
                sample = line[len("Sample: "):]
            elif line.startswith("Encoded: "):
                if name == encoding and sample is not None:
                    yield sample, json.loads(line[len("Encoded: "):])
                sample = None


def verify(enc, plans_path):
    """Returns (passed, failures) over every o200k_base vector."""
    passed, failures = 0, []
    for sample, want in read_test_plans(plans_path):
        got = enc.encode(sample)
        # exercise the heap merge on the same input as a cross-check
        long_got = []
        for piece in enc.pretokenize(sample):
            b = piece.encode("utf-8")
            long_got.extend([enc.ranks[b]] if b in enc.ranks else enc._merge_long(b))
        if got == want and long_got == want:
            passed += 1
        else:
            failures.append((sample, want, got, long_got))
    return passed, failures


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tokenizers", "o200k_base.tiktoken"))
    ap.add_argument("--verify", metavar="TESTPLANS")
    ap.add_argument("file", nargs="?")
    a = ap.parse_args(argv)
    enc = O200k.load(a.ranks)
    if a.verify:
        passed, failures = verify(enc, a.verify)
        for sample, want, got, long_got in failures:
            print("MISMATCH %r\n  want %s\n  got  %s\n  heap %s" % (sample, want, got, long_got))
        print("%d passed, %d failed" % (passed, len(failures)))
        return 1 if failures or passed == 0 else 0
    if a.file:
        data = sys.stdin.buffer.read() if a.file == "-" else open(a.file, "rb").read()
        print(enc.count(data.decode("utf-8", "replace")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
