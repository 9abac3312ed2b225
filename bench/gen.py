#!/usr/bin/python3
"""Deterministic benchmark inputs for quire.

Writes an agent transcript in quire.transcript/1 form (DESIGN 2.1) or, with
--session, a quire.session/1 JSONL log (DESIGN 7).  Standard library only; the
output depends only on the arguments (own splitmix64 PRNG, no `random`, no
clock, no hash-order dependence), so every machine and Python 3.7+ produces
the same bytes for the same arguments.

    bench/gen.py --size 3000000 --out bench/data/transcript-3m.json
    bench/gen.py --size 200000  --out bench/data/transcript-200k.json
    bench/gen.py --session 200  --out bench/data/session-200.jsonl

Each turn is a user message (text), an assistant message (text block + one
toolCall block) and a tool message (one toolResult block).  Text mixes Latin,
CJK, emoji (skin tones, flags, ZWJ sequences such as the family emoji) and
characters that JSON must escape (quotes, backslashes, newlines, tabs, the
occasional ESC of terminal colour codes).
"""

import argparse
import json
import os
import sys

MASK64 = (1 << 64) - 1
DEFAULT_SEED = 20250601
DEFAULT_SIZE = 3000000


class Rng:
    """splitmix64: tiny, well mixed and identical everywhere."""

    def __init__(self, seed):
        self.state = seed & MASK64

    def next64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def below(self, n):
        return self.next64() % n

    def between(self, lo, hi):
        """Integer in [lo, hi]."""
        return lo + self.below(hi - lo + 1)

    def pick(self, seq):
        return seq[self.below(len(seq))]

    def chance(self, percent):
        return self.below(100) < percent


LATIN = (
    "the file function module buffer parser render request provider token "
    "budget compact session reminder message transcript cache prefix block "
    "error line column pointer check build test passes fails again because "
    "we should could would please now then also only every never before after "
    "update refactor rename extract inline handle return value struct array "
    "index offset length byte string number object field key schema tool call "
    "result output input stream chunk flush close open read write path dir "
    "config option flag default fallback retry timeout limit small large fast "
    "slow stable deterministic résumé naïve café façade Zürich señor"
).split()

CJK = [
    "读取文件", "修复这个错误", "测试通过了", "请检查缓存前缀", "上下文太长",
    "重构解析器", "ファイルを読む", "テストを実行します", "キャッシュが効かない",
    "요약해 주세요", "설정 파일", "빌드 실패", "工具调用结果", "系统提示词",
    "トークン数", "压缩会话", "提醒事项", "한국어 텍스트",
]

EMOJI = [
    "🚀", "✅", "❌", "🐛", "🔥", "👍🏽", "🎉", "⚠️", "❤️", "🇯🇵", "🇩🇪",
    "👨‍👩‍👧‍👦", "👩‍💻", "🧑🏿‍🔬", "🏳️‍🌈", "🤔", "📦", "🧵", "🫠", "1️⃣",
]

SPECIAL = [
    '"quoted"', "'single'", "C:\\Users\\dev\\src\\main.c", "\\n", "\\\\",
    "`make test`", "a\tb", "{\"k\": [1, 2]}", "<system-reminder>", "&amp;",
    "x < y && y > z", "50%", "$HOME/.config", "path\\with\\backslash",
]

DIRS = ["src", "src/core", "src/render", "lib", "tests", "include", "docs", "tools/gen"]
STEMS = ["parser", "arena", "buffer", "encode", "decode", "utf8", "session", "reminder",
         "compact", "estimate", "anthropic", "openai", "gemini", "cli", "main", "util"]
EXTS = [".c", ".h", ".py", ".ts", ".md", ".json"]

TOOLS = [
    {"name": "read_file", "description": "Read a UTF-8 text file from the workspace.",
     "inputSchema": {"type": "object", "properties": {
         "path": {"type": "string", "description": "Workspace-relative path"},
         "offset": {"type": "integer", "minimum": 0},
         "limit": {"type": "integer", "minimum": 1}},
         "required": ["path"], "additionalProperties": False}},
    {"name": "write_file", "description": "Create or overwrite a file.",
     "inputSchema": {"type": "object", "properties": {
         "path": {"type": "string"}, "content": {"type": "string"}},
         "required": ["path", "content"], "additionalProperties": False}},
    {"name": "grep", "description": "Search files with a regular expression.",
     "inputSchema": {"type": "object", "properties": {
         "pattern": {"type": "string"}, "path": {"type": "string"},
         "ignoreCase": {"type": "boolean"}},
         "required": ["pattern"], "additionalProperties": False}},
    {"name": "bash", "description": "Run a shell command and return its output.",
     "inputSchema": {"type": "object", "properties": {
         "command": {"type": "string"},
         "timeoutMs": {"type": "integer", "minimum": 1, "maximum": 600000}},
         "required": ["command"], "additionalProperties": False}},
    {"name": "list_dir", "description": "List a directory (非递归 / non-recursive).",
     "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}},
                     "required": ["path"], "additionalProperties": False}},
]

SYSTEM = (
    "You are a coding agent working in a C11 repository. Read files before editing "
    "them, keep changes small, and run the tests after every change.\n\n"
    "Rules:\n\t1. Never invent file contents; call read_file.\n"
    "\t2. Quote paths exactly, e.g. \"src/core/json.c\" or C:\\work\\quire.\n"
    "\t3. 回答使用用户的语言。ユーザーの言語で答えてください。사용자의 언어로 답하세요.\n"
    "\t4. Emoji in user text (👨‍👩‍👧‍👦, 🏳️‍🌈, 👍🏽) are data: keep them intact.\n"
)


def words(rng, lo, hi):
    out = []
    for _ in range(rng.between(lo, hi)):
        r = rng.below(100)
        if r < 74:
            out.append(rng.pick(LATIN))
        elif r < 88:
            out.append(rng.pick(CJK))
        elif r < 95:
            out.append(rng.pick(EMOJI))
        else:
            out.append(rng.pick(SPECIAL))
    s = " ".join(out)
    return s[:1].upper() + s[1:]


def sentence(rng):
    return words(rng, 5, 16) + rng.pick([".", ".", ".", "?", "!", "。", "…"])


def paragraph(rng, lo, hi):
    return " ".join(sentence(rng) for _ in range(rng.between(lo, hi)))


def user_text(rng):
    parts = [paragraph(rng, 1, 3)]
    if rng.chance(30):
        items = ["\t- " + words(rng, 2, 6) for _ in range(rng.between(2, 4))]
        parts.append("\n".join(items))
    if rng.chance(15):
        parts.append("Error was: \"" + words(rng, 3, 8) + "\" at line " + str(rng.between(1, 999)))
    return "\n\n".join(parts)


def file_path(rng):
    return rng.pick(DIRS) + "/" + rng.pick(STEMS) + "_" + str(rng.between(0, 99)) + rng.pick(EXTS)


def code_line(rng, depth):
    ind = "\t" * depth
    r = rng.below(100)
    if r < 20:
        return ind + "/* " + words(rng, 3, 10) + " */"
    if r < 30:
        return ind + "// " + rng.pick(CJK) + " " + rng.pick(EMOJI) + " " + words(rng, 1, 4)
    if r < 45:
        return (ind + "fprintf(stderr, \"quire: %s:%d: " + words(rng, 2, 5)
                + "\\n\", path, " + str(rng.between(1, 4000)) + ");")
    if r < 55:
        return ind + "const char *s = \"" + rng.pick(CJK) + "\\t\\\"" + rng.pick(EMOJI) + "\\\"\";"
    if r < 70:
        return (ind + "if (" + rng.pick(STEMS) + "->len > " + str(rng.between(0, 65535))
                + ") return QUIRE_E_" + rng.pick(STEMS).upper() + ";")
    if r < 85:
        return (ind + "size_t " + rng.pick(STEMS) + "_" + str(rng.between(0, 9)) + " = "
                + rng.pick(STEMS) + "(arena, buf + " + str(rng.between(0, 4096)) + ");")
    if r < 92:
        return ind + "#define " + rng.pick(STEMS).upper() + "_MAX " + str(rng.between(1, 1 << 20))
    return ""


def file_content(rng):
    # Mostly small and medium files, with a long tail of big ones.
    r = rng.below(100)
    if r < 55:
        n = rng.between(10, 60)
    elif r < 90:
        n = rng.between(60, 160)
    else:
        n = rng.between(160, 420)
    lines = []
    depth = 0
    for _ in range(n):
        line = code_line(rng, depth)
        lines.append(line)
        if rng.chance(12) and depth < 4:
            lines[-1] = line + " {" if line else "{"
            depth += 1
        elif depth and rng.chance(12):
            depth -= 1
            lines.append("\t" * depth + "}")
    return lines


def bash_output(rng):
    lines = []
    for _ in range(rng.between(5, 80)):
        r = rng.below(100)
        if r < 30:
            lines.append("\x1b[32mPASS\x1b[0m tests/" + rng.pick(STEMS) + "_test.c ("
                         + str(rng.between(1, 900)) + " ms)")
        elif r < 40:
            lines.append("\x1b[31mFAIL\x1b[0m tests/" + rng.pick(STEMS) + "_test.c: "
                         + words(rng, 3, 8))
        elif r < 70:
            lines.append(file_path(rng) + ":" + str(rng.between(1, 2000)) + ":"
                         + str(rng.between(1, 80)) + ": warning: " + words(rng, 3, 9))
        else:
            lines.append(words(rng, 2, 12))
    return lines


def make_call(rng, call_no):
    """Returns (name, input, result_lines)."""
    r = rng.below(100)
    if r < 70:
        inp = {"path": file_path(rng)}
        if rng.chance(40):
            inp["offset"] = rng.between(0, 2000)
            inp["limit"] = rng.between(50, 500)
        return "read_file", inp, file_content(rng)
    if r < 82:
        inp = {"pattern": rng.pick(STEMS) + "_[a-z]+\\(", "path": rng.pick(DIRS)}
        if rng.chance(50):
            inp["ignoreCase"] = True
        lines = [file_path(rng) + ":" + str(rng.between(1, 3000)) + ":" + code_line(rng, 0)
                 for _ in range(rng.between(1, 40))]
        return "grep", inp, lines
    if r < 94:
        inp = {"command": "make -C build test ARGS=\"-R " + rng.pick(STEMS) + "\" 2>&1 | tail -n "
               + str(rng.between(10, 200))}
        if rng.chance(50):
            inp["timeoutMs"] = rng.between(1000, 600000)
        return "bash", inp, bash_output(rng)
    inp = {"path": rng.pick(DIRS)}
    lines = [rng.pick(STEMS) + "_" + str(rng.between(0, 99)) + rng.pick(EXTS)
             for _ in range(rng.between(3, 40))]
    return "list_dir", inp, lines


def make_turn(rng, turn_no):
    """One turn: user, assistant (text + toolCall), tool (toolResult)."""
    call_id = "call_%06d" % turn_no
    user = {"role": "user", "content": user_text(rng)}
    name, inp, lines = make_call(rng, turn_no)
    assistant = {"role": "assistant", "content": [
        {"type": "text", "text": paragraph(rng, 1, 2)},
        {"type": "toolCall", "id": call_id, "name": name, "input": inp}]}
    return user, assistant, call_id, lines


def tool_message(call_id, lines):
    return {"role": "tool", "content": [
        {"type": "toolResult", "toolCallId": call_id, "content": "\n".join(lines)}]}


def dumps(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def nbytes(s):
    return len(s.encode("utf-8"))


def gen_transcript(size, seed):
    rng = Rng(seed)
    head = '{"system":' + dumps(SYSTEM) + ',"tools":' + dumps(TOOLS) + ',"messages":[\n'
    tail = "\n]}\n"
    msgs = []
    total = nbytes(head) + nbytes(tail)
    turn = 0
    while total < size:
        turn += 1
        user, assistant, call_id, lines = make_turn(rng, turn)
        u, a = dumps(user), dumps(assistant)
        t = dumps(tool_message(call_id, lines))
        # Messages are joined by ",\n": three more messages add three separators
        # (two when they are the first ones).
        sep = 2 * (3 if msgs else 2)
        fixed = nbytes(u) + nbytes(a) + sep
        if total + fixed + nbytes(t) > size:
            # Last turn: shorten its tool output so the file lands on the target.
            while lines and total + fixed + nbytes(dumps(tool_message(call_id, lines))) > size:
                lines.pop()
            if not lines and msgs:
                break
            t = dumps(tool_message(call_id, lines))
            msgs.extend([u, a, t])
            total += fixed + nbytes(t)
            break
        msgs.extend([u, a, t])
        total += fixed + nbytes(t)
    out = head + ",\n".join(msgs) + tail
    return out


def gen_session(turns, seed):
    rng = Rng(seed)
    lines = [dumps({"type": "session", "sessionId": "bench",
                    "target": {"provider": "anthropic", "model": "claude-sonnet-4-5"},
                    "system": SYSTEM, "tools": TOOLS})]
    half = turns // 2
    for n in range(1, turns + 1):
        user, assistant, call_id, res = make_turn(rng, n)
        lines.append(dumps({"type": "message", "message": user}))
        if n % 5 == 0:
            rem = {"body": rng.pick(["File changed on disk: ", "Lint warning in ",
                                     "提醒：文件已修改 ", "⚠️ Test now failing: "]) + file_path(rng),
                   "dedupeKey": "k%d" % n, "ttlTurns": 2}
            lines.append(dumps({"type": "reminder", "reminder": rem}))
        lines.append(dumps({"type": "render"}))
        lines.append(dumps({"type": "message", "message": assistant}))
        lines.append(dumps({"type": "message", "message": tool_message(call_id, res)}))
        if n == half:
            lines.append(dumps({"type": "compact",
                                "policy": {"budgetTokens": 20000, "keepLastTurns": 4}}))
    return "\n".join(lines) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=DEFAULT_SIZE,
                    help="target transcript size in bytes (default %(default)s)")
    ap.add_argument("--session", type=int, metavar="TURNS",
                    help="write a quire.session/1 JSONL log of TURNS turns instead")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="PRNG seed (default %(default)s)")
    ap.add_argument("--out", default="-", help="output file (default stdout)")
    args = ap.parse_args(argv)
    if args.session is not None:
        if args.session < 1:
            ap.error("--session needs at least 1 turn")
        text = gen_session(args.session, args.seed)
    else:
        if args.size < 4096:
            ap.error("--size must be at least 4096")
        text = gen_transcript(args.size, args.seed)
    data = text.encode("utf-8")
    if args.out == "-":
        sys.stdout.buffer.write(data)
    else:
        tmp = args.out + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
