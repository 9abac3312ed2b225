#!/usr/bin/python3
"""Deterministic provider responses for the decode benchmark (bench_respond,
peers/aisdk_decode.mjs).

    bench/gen_responses.py --out-dir bench/data [--size 65536]

Writes, for about --size bytes of assistant output (thinking, markdown text
with Latin, CJK, emoji and escapes, three tool calls whose inputs hold file
contents), the same answer as each provider sends it:
  anthropic.json / anthropic.sse         Messages API body / SSE events
  openai_chat.json / openai_chat.sse     Chat Completions body / chunk SSE
  openai_responses.json                  Responses API body
  gemini.json                            generateContent body
Stream deltas are cut the way providers cut them: a few words of text per
event, tens of bytes of tool-call arguments per fragment. Standard library
only; the bytes depend only on the arguments (a fixed-seed splitmix64)."""
import argparse, json, os, sys

MASK = (1 << 64) - 1


class Rng:
    def __init__(self, seed):
        self.s = seed & MASK

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & MASK
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, n):
        return self.next() % n


WORDS = ("the function returns a value when its argument is valid and otherwise raises an error "
         "so we check every caller before changing it 関数 を 変更 する 前 に 確認 します "
         "données été fichier résultat 🚀 ✅ 👩‍💻 🇫🇷").split()


def text(rng, n):
    out, size = [], 0
    while size < n:
        w = WORDS[rng.below(len(WORDS))]
        if rng.below(12) == 0:
            w += ".\n\n" if rng.below(3) == 0 else ","
        if rng.below(40) == 0:
            w = "`" + w + "`"
        if rng.below(60) == 0:
            w = '"' + w + '"\t\\'
        out.append(w)
        size += len(w.encode()) + 1
    return " ".join(out)


def code(rng, n):
    lines, size = [], 0
    while size < n:
        d = rng.below(4)
        line = "    " * d + ("if (x->%s) { return \"%s\\n\"; }" % (WORDS[rng.below(20)], WORDS[rng.below(len(WORDS))]))
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines) + "\n"


def answer(size, seed):
    rng = Rng(seed)
    thinking = text(rng, size // 8)
    body = text(rng, size // 4)
    calls = [{"id": "call_%d" % i, "name": ["read_file", "write_file", "bash"][i],
              "input": {"path": "src/mod%d.c" % i, "content": code(rng, size // 6)}} for i in range(3)]
    return thinking, body, calls


def chunks(s, rng, lo, hi):
    i, out = 0, []
    while i < len(s):
        n = lo + rng.below(hi - lo + 1)
        out.append(s[i:i + n])
        i += n
    return out


def sse(events):
    return "".join("event: %s\ndata: %s\n\n" % (name, json.dumps(data, ensure_ascii=False, separators=(",", ":")))
                   for name, data in events)


def dumps(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--size", type=int, default=65536)
    ap.add_argument("--seed", type=int, default=20261125)
    a = ap.parse_args(argv)
    th, tx, calls = answer(a.size, a.seed)
    rng = Rng(a.seed + 1)
    sig = "EqQBCkYIBxgCKkDV" * 8
    files = {}
    # Anthropic Messages
    content = [{"type": "thinking", "thinking": th, "signature": sig}, {"type": "text", "text": tx}]
    content += [{"type": "tool_use", "id": "toolu_" + c["id"], "name": c["name"], "input": c["input"]} for c in calls]
    usage = {"input_tokens": 1200, "output_tokens": 9000, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 800}
    files["anthropic.json"] = dumps({"id": "msg_bench", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                                     "content": content, "stop_reason": "tool_use", "stop_sequence": None, "usage": usage})
    ev = [("message_start", {"type": "message_start", "message": {"id": "msg_bench", "type": "message", "role": "assistant",
                                                                   "model": "claude-sonnet-4-5", "content": [], "stop_reason": None,
                                                                   "stop_sequence": None, "usage": dict(usage, output_tokens=1)}})]
    ev.append(("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
    ev += [("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": p}}) for p in chunks(th, rng, 8, 60)]
    ev.append(("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": sig}}))
    ev.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    ev.append(("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}))
    ev += [("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": p}}) for p in chunks(tx, rng, 8, 60)]
    ev.append(("content_block_stop", {"type": "content_block_stop", "index": 1}))
    for k, c in enumerate(calls):
        i = k + 2
        ev.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": "toolu_" + c["id"], "name": c["name"], "input": {}}}))
        ev += [("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": p}}) for p in chunks(dumps(c["input"]), rng, 20, 80)]
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    ev.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 9000}}))
    ev.append(("message_stop", {"type": "message_stop"}))
    files["anthropic.sse"] = sse(ev)
    # OpenAI Chat Completions
    tcs = [{"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": dumps(c["input"])}} for c in calls]
    cu = {"prompt_tokens": 1200, "completion_tokens": 9000, "total_tokens": 10200}
    files["openai_chat.json"] = dumps({"id": "chatcmpl-bench", "object": "chat.completion", "created": 1764000000, "model": "gpt-4o",
                                       "choices": [{"index": 0, "message": {"role": "assistant", "content": tx, "tool_calls": tcs},
                                                    "finish_reason": "tool_calls"}], "usage": cu})
    base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1764000000, "model": "gpt-4o"}
    out = [dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])]
    out += [dict(base, choices=[{"index": 0, "delta": {"content": p}, "finish_reason": None}]) for p in chunks(tx, rng, 8, 60)]
    for k, c in enumerate(calls):
        out.append(dict(base, choices=[{"index": 0, "delta": {"tool_calls": [{"index": k, "id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": ""}}]}, "finish_reason": None}]))
        out += [dict(base, choices=[{"index": 0, "delta": {"tool_calls": [{"index": k, "function": {"arguments": p}}]}, "finish_reason": None}]) for p in chunks(dumps(c["input"]), rng, 20, 80)]
    out.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]))
    out.append(dict(base, choices=[], usage=cu))
    files["openai_chat.sse"] = "".join("data: %s\n\n" % dumps(o) for o in out) + "data: [DONE]\n\n"
    # OpenAI Responses
    items = [{"type": "reasoning", "id": "rs_bench", "summary": [{"type": "summary_text", "text": th}], "encrypted_content": sig},
             {"type": "message", "id": "msg_bench", "status": "completed", "role": "assistant",
              "content": [{"type": "output_text", "text": tx, "annotations": []}]}]
    items += [{"type": "function_call", "id": "fc_" + c["id"], "call_id": c["id"], "name": c["name"],
               "arguments": dumps(c["input"]), "status": "completed"} for c in calls]
    files["openai_responses.json"] = dumps({"id": "resp_bench", "object": "response", "created_at": 1764000000, "status": "completed",
                                            "model": "gpt-5", "output": items,
                                            "usage": {"input_tokens": 1200, "output_tokens": 9000,
                                                      "input_tokens_details": {"cached_tokens": 800},
                                                      "output_tokens_details": {"reasoning_tokens": 2000}, "total_tokens": 10200}})
    # Gemini generateContent
    parts = [{"text": th, "thought": True}, {"text": tx, "thoughtSignature": sig}]
    parts += [{"functionCall": {"name": c["name"], "args": c["input"]}} for c in calls]
    files["gemini.json"] = dumps({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                                  "usageMetadata": {"promptTokenCount": 1200, "candidatesTokenCount": 7000, "thoughtsTokenCount": 2000,
                                                    "totalTokenCount": 10200}, "modelVersion": "gemini-2.5-pro"})
    os.makedirs(a.out_dir, exist_ok=True)
    for name, s in files.items():
        with open(os.path.join(a.out_dir, "response-" + name), "w", encoding="utf-8", newline="") as f:
            f.write(s)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
