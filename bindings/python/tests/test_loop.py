"""The real loop: quire.Session against a mock provider on 127.0.0.1 (recorded Anthropic and
OpenAI responses, JSON and SSE, fetched with urllib / http.client) with an MCP server process
pushing reminders over stdio; the loop compacts when estimate() passes a budget, and the log
it records replays to exactly the requests it sent."""
import http.client
import json
import subprocess
import sys
import urllib.request

import pytest

import quire
from decode import decode

TOOLS = [{"name": "read", "description": "List a directory",
          "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}]
TASKS = ["List src", "List docs", "List tests", "List bench", "List cli", "List core", "List session"]


class MCP:
    def __init__(self, script):
        self.p = subprocess.Popen([sys.executable, script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, bufsize=1)
        self.next_id = 0

    def call(self, method, params, on_notification):
        self.next_id += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}) + "\n")
        self.p.stdin.flush()
        while True:
            msg = json.loads(self.p.stdout.readline())
            if msg.get("id") == self.next_id:
                return msg
            on_notification(msg)

    def close(self):
        self.p.stdin.close()
        assert self.p.wait(timeout=10) == 0


def post_urllib(base, req, stream):
    headers = req.headers
    if stream:
        headers["x-mock-stream"] = "1"
    r = urllib.request.Request(base + req.path, data=req.body, headers=headers, method=req.method)
    with urllib.request.urlopen(r, timeout=10) as resp:
        return resp.read()


def post_http_client(port, req, stream):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = req.headers
    if stream:
        headers["x-mock-stream"] = "1"
    # the segments go out as they are, no joined copy
    headers["content-length"] = str(sum(len(s) for s in req.segments))
    conn.putrequest(req.method, req.path)
    for k, v in headers.items():
        conn.putheader(k, v)
    conn.endheaders()
    for seg in req.segments:
        conn.send(seg)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    assert resp.status == 200, data
    return data


def run_loop(mock, shared, provider, model, stream, budget, client):
    mcp = MCP(shared + "/mcp_server.py")
    s = quire.Session(provider=provider, model=model, system="You are a coding agent.", tools=TOOLS)
    seen_events = []

    def on_note(msg):
        events, _ = s.apply({"type": "mcp", "server": "fs-watcher", "message": msg})
        seen_events.extend(events)

    init = mcp.call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                   "clientInfo": {"name": "loop", "version": "1"}}, on_note)
    s.apply({"type": "mcp", "server": "fs-watcher", "message": init})
    sent, compactions, reports = [], 0, []
    port = mock.server.server_address[1]
    for task in TASKS:
        s.append({"role": "user", "content": task})
        while True:
            if s.estimate() > budget:
                reports.append(s.compact(budget_tokens=budget, policy={"keepLastTurns": 1, "summaryTokens": 64}))
                compactions += 1
            req = s.render()
            seen_events.extend(req.events)
            sent.append(req.body)
            data = post_urllib(mock.base_url, req, stream) if client == "urllib" else post_http_client(port, req, stream)
            msg = decode(provider, data, stream)
            s.accept(msg)
            calls = [b for b in msg["content"] if b["type"] == "toolCall"]
            if not calls:
                break
            results = []
            for c in calls:
                r = mcp.call("tools/call", {"name": c["name"], "arguments": c["input"]}, on_note)
                results.append({"type": "toolResult", "toolCallId": c["id"],
                                "content": r["result"]["content"][0]["text"]})
            s.append({"role": "tool", "content": results})
    mcp.close()
    return s, sent, compactions, reports, seen_events


@pytest.mark.parametrize("provider,model,stream,client", [
    ("anthropic", "claude-sonnet-4-5", False, "urllib"),
    ("anthropic", "claude-sonnet-4-5", True, "http.client"),
    ("openai", "gpt-4o", False, "http.client"),
    ("openai", "gpt-4o", True, "urllib"),
])
def test_loop(mock, shared, provider, model, stream, client):
    s, sent, compactions, reports, events = run_loop(mock, shared, provider, model, stream, 250, client)
    assert len(sent) == 2 * len(TASKS)
    # the mock saw exactly the bytes quire rendered
    got = [r[2] for r in mock.requests if r[2] in sent]
    assert len(got) == len(sent)
    # the model's final answers quote the MCP tool output
    last = s.transcript()["messages"][-1]
    assert last["role"] == "assistant" and "session/main.c" in last["content"][0]["text"]
    # MCP reminders reached the requests, deduped per path
    assert any(b"changed on disk" in b for b in sent)
    kinds = {e["sessionUpdate"] for e in events}
    assert {"reminder_emitted", "reminder_expired"} <= kinds
    # compaction happened, kept the preserveOnCompact reminder
    assert compactions >= 1 and all(r for r in reports)
    assert any(r["reminder"].get("dedupeKey") == "standard" for r in
               [{"reminder": x} for x in s.state()["reminders"]])
    # the recorded log replays to exactly the requests sent, byte for byte
    log = s.log()
    out = quire.replay(log, digest=True)
    reqs = [o for o in out if o["type"] == "request"]
    assert [o["digest"] for o in reqs] == [quire.digest(b) for b in sent]
    assert [o["bytes"] for o in reqs] == [len(b) for b in sent]


def test_failed_call_renders_the_same_turn(mock, shared):
    s = quire.Session(provider="anthropic", model="claude-sonnet-4-5", system="sys", tools=TOOLS)
    s.append({"role": "user", "content": "List src"})
    s.apply({"type": "reminder", "reminder": {"body": "once", "ttlTurns": 1}})
    a = s.render()
    b = s.render()  # the model call failed: render again
    assert a.body == b.body and a.turn == b.turn == 1
    assert b"once" in a.body
    s.accept({"role": "assistant", "content": "ok"})
    s.append({"role": "user", "content": "again"})
    c = s.render()
    assert c.turn == 2 and b"once" not in c.body
    assert s.state()["turn"] == 1
