"""Test helper: a provider response (JSON or SSE) -> the assistant message in transcript form
(quire.transcript/1). Stands in for the library's response decoder (DESIGN 12) in the binding
loop tests until Session.accept(response=...) is wired to it; covers exactly the shapes the mock
provider serves (text and function tool calls)."""
import json


def _sse_events(data):
    for block in data.decode("utf-8").replace("\r\n", "\n").split("\n\n"):
        payload = [l[5:].lstrip() for l in block.split("\n") if l.startswith("data:")]
        if payload:
            yield "\n".join(payload)


def anthropic(data, stream):
    if not stream:
        msg = json.loads(data)
        blocks = msg["content"]
    else:
        blocks, partial = [], {}
        for p in _sse_events(data):
            ev = json.loads(p)
            t = ev["type"]
            if t == "content_block_start":
                blocks.append(dict(ev["content_block"]))
                partial[ev["index"]] = ""
            elif t == "content_block_delta":
                d = ev["delta"]
                if d["type"] == "text_delta":
                    blocks[ev["index"]]["text"] += d["text"]
                elif d["type"] == "input_json_delta":
                    partial[ev["index"]] += d["partial_json"]
            elif t == "content_block_stop":
                b = blocks[ev["index"]]
                if b["type"] == "tool_use":
                    b["input"] = json.loads(partial[ev["index"]] or "{}")
    out = []
    for b in blocks:
        if b["type"] == "text":
            out.append({"type": "text", "text": b["text"]})
        elif b["type"] == "tool_use":
            out.append({"type": "toolCall", "id": b["id"], "name": b["name"], "input": b["input"]})
    return {"role": "assistant", "content": out}


def openai(data, stream):
    if not stream:
        m = json.loads(data)["choices"][0]["message"]
        text, calls = m.get("content"), m.get("tool_calls") or []
    else:
        text, calls = None, []
        for p in _sse_events(data):
            if p == "[DONE]":
                break
            d = json.loads(p)["choices"][0]["delta"]
            if d.get("content"):
                text = (text or "") + d["content"]
            for tc in d.get("tool_calls") or []:
                i = tc["index"]
                while len(calls) <= i:
                    calls.append({"id": None, "function": {"name": "", "arguments": ""}})
                if tc.get("id"):
                    calls[i]["id"] = tc["id"]
                f = tc.get("function") or {}
                calls[i]["function"]["name"] += f.get("name") or ""
                calls[i]["function"]["arguments"] += f.get("arguments") or ""
    out = []
    if text:
        out.append({"type": "text", "text": text})
    for c in calls:
        out.append({"type": "toolCall", "id": c["id"], "name": c["function"]["name"],
                    "input": json.loads(c["function"]["arguments"] or "{}")})
    return {"role": "assistant", "content": out}


def decode(provider, data, stream):
    return anthropic(data, stream) if provider == "anthropic" else openai(data, stream)
