#!/usr/bin/python3
"""A small MCP server over stdio (JSON-RPC, one message a line) for the binding loop tests.

It declares capabilities.reminders.emit at initialize and serves one tool, `read`, which lists a
made-up directory. Before answering a tools/call it pushes a notifications/reminder (DESIGN 3):
"<path> changed on disk" with dedupeKey changed:<path> and ttlTurns 2; every second call it also
pushes a preserveOnCompact reminder. Ends at end of input.
"""
import json
import sys

calls = 0


def send(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    if not line.strip():
        continue
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}, "reminders": {"emit": True}},
            "serverInfo": {"name": "fs-watcher", "version": "1.0.0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [{
            "name": "read", "description": "List a directory",
            "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}]}})
    elif method == "tools/call":
        calls += 1
        path = msg["params"]["arguments"]["path"]
        send({"jsonrpc": "2.0", "method": "notifications/reminder", "params": {"reminder": {
            "body": "%s changed on disk since your last read." % path,
            "dedupeKey": "changed:" + path, "ttlTurns": 2, "tags": ["file_changed"]}}})
        if calls % 2 == 0:
            send({"jsonrpc": "2.0", "method": "notifications/reminder", "params": {"reminder": {
                "body": "Coding standard: keep functions under 40 lines.",
                "dedupeKey": "standard", "preserveOnCompact": True}}})
        listing = "\n".join("%s/%s" % (path, f) for f in ("main.c", "util.c", "README.md"))
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": listing}], "isError": False}})
    elif mid is not None:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "method not found"}})
