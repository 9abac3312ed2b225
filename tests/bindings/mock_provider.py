#!/usr/bin/python3
"""A mock model provider on 127.0.0.1 for the binding loop tests (Python, Node, serve).

It answers POST /v1/messages (Anthropic Messages) and POST /v1/chat/completions (OpenAI Chat
Completions) with the recorded responses in responses/ (JSON, or the SSE stream when the request
body says "stream": true or the header x-mock-stream is 1). The script of every task: the first
request after a user message gets a `read` tool call for the path named in the user's
"List <path>" text; a request whose last message answers a tool call gets the final text, which
quotes the tool output. Placeholders in the recorded files: {{N}} (request number), {{PATH}},
{{FILES}}. Requests that break the provider's basic shape get a 400 with the provider's error body.

Used in-process (MockProvider().start()) or as a script: prints the port on stdout, serves until
stdin closes.
"""
import http.server
import json
import os
import re
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
RESPONSES = os.path.join(HERE, "responses")


def _esc(s):
    return json.dumps(s, ensure_ascii=False)[1:-1]


def _texts(content):
    if isinstance(content, str):
        return [content]
    out = []
    for b in content or []:
        if isinstance(b, dict) and isinstance(b.get("text"), str):
            out.append(b["text"])
    return out


def _is_reminder(text):
    return text.lstrip().startswith("<system-reminder>") or text.startswith("System reminder:")


def _plan_anthropic(body):
    msgs = body["messages"]
    last = msgs[-1]
    assert last["role"] == "user", "the last Anthropic message must be a user message"
    results = [b for b in last["content"] if isinstance(b, dict) and b.get("type") == "tool_result"] \
        if isinstance(last["content"], list) else []
    ask = None
    for m in msgs:
        if m["role"] == "user":
            for t in _texts(m["content"]):
                r = re.search(r"List (\S+)", t)
                if r and not _is_reminder(t):
                    ask = r.group(1)
    if results:
        c = results[-1].get("content")
        files = ", ".join("".join(_texts(c)).split("\n")) if c is not None else ""
        return "text", ask, files
    return "tool", ask, ""


def _plan_openai(body):
    msgs = body["messages"]
    ask = None
    for m in msgs:
        if m["role"] == "user":
            for t in _texts(m.get("content")):
                r = re.search(r"List (\S+)", t)
                if r and not _is_reminder(t):
                    ask = r.group(1)
    for m in reversed(msgs):
        if m["role"] in ("system", "developer"):
            continue
        if m["role"] == "user" and all(_is_reminder(t) for t in _texts(m.get("content"))):
            continue
        if m["role"] == "tool":
            return "text", ask, ", ".join(str(m.get("content", "")).split("\n"))
        return "tool", ask, ""
    return "tool", ask, ""


ROUTES = {"/v1/messages": ("anthropic", _plan_anthropic), "/v1/chat/completions": ("openai", _plan_openai)}


class MockProvider:
    def __init__(self):
        self.requests = []  # (path, headers dict, body bytes)
        self.lock = threading.Lock()
        self.server = None

    def start(self):
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                n = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(n)
                with owner.lock:
                    owner.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, raw))
                    num = len(owner.requests)
                route = ROUTES.get(self.path)
                if route is None:
                    return self._send(404, "application/json", b'{"error":{"message":"no such path"}}')
                dialect, plan = route
                try:
                    if not self.headers.get("content-type", "").startswith("application/json"):
                        raise ValueError("content-type must be application/json")
                    if dialect == "anthropic" and not self.headers.get("anthropic-version"):
                        raise ValueError("anthropic-version header required")
                    body = json.loads(raw)
                    kind, ask, files = plan(body)
                except Exception as e:  # the provider's error body
                    err = ({"type": "error", "error": {"type": "invalid_request_error", "message": str(e)}}
                           if dialect == "anthropic" else
                           {"error": {"message": str(e), "type": "invalid_request_error", "code": None}})
                    return self._send(400, "application/json", json.dumps(err).encode())
                stream = body.get("stream") is True or self.headers.get("x-mock-stream") == "1"
                fn = os.path.join(RESPONSES, "%s_%s.%s" % (dialect, kind, "sse" if stream else "json"))
                text = open(fn, encoding="utf-8").read()
                text = (text.replace("{{N}}", str(num)).replace("{{PATH}}", _esc(ask or "."))
                        .replace("{{FILES}}", _esc(files)))
                self._send(200, "text/event-stream" if stream else "application/json", text.encode("utf-8"))

            def _send(self, code, ctype, data):
                self.send_response(code)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self.server.server_address[1]

    @property
    def base_url(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()


if __name__ == "__main__":
    mp = MockProvider()
    port = mp.start()
    print(port, flush=True)
    sys.stdin.read()  # serve until the parent closes our stdin
    mp.stop()
