"""The stateless module functions, the error objects, thread safety."""
import json
import os
import subprocess
import threading

import pytest

import quire

T = {"system": "You are a coding agent.",
     "tools": [{"name": "read", "description": "Read a file", "inputSchema": {"type": "object"}}],
     "messages": [{"role": "user", "content": "List src/"},
                  {"role": "assistant", "content": [{"type": "toolCall", "id": "t1", "name": "read",
                                                     "input": {"path": "src", "n": 1.50}}]},
                  {"role": "tool", "content": [{"type": "toolResult", "toolCallId": "t1", "content": "a.c\nb.c"}]}]}
QUIRE = os.environ.get("QUIRE_BIN")


def cli(args, stdin):
    return subprocess.run([QUIRE] + args, input=stdin, capture_output=True, check=True).stdout


def test_render_is_the_cli_bytes():
    src = json.dumps(T).encode()
    for provider in ("anthropic", "openai", "openai_responses", "gemini", "bedrock", "mistral", "ollama"):
        r = quire.render(src, provider=provider)
        assert r.body == cli(["render", "--provider", provider, "-"], src).rstrip(b"\n")
        # Mistral takes tool call ids of 9 letters and digits: "t1" is sent mapped, with an event
        want = [] if provider != "mistral" else ["tool_call_id_mapped"]
        assert r.state["turn"] == 1 and [e["change"] for e in r.events] == want


def test_render_inputs_bytes_str_dict_agree():
    a = quire.render(json.dumps(T), provider="openai", model="gpt-4o").body
    b = quire.render(T, provider="openai", model="gpt-4o").body
    c = quire.render(bytearray(json.dumps(T).encode()), provider="openai", model="gpt-4o").body
    assert a == b == c
    assert b'"arguments":"{\\"path\\":\\"src\\",\\"n\\":1.5' in a  # Python's json re-wrote 1.50


def test_render_numbers_pass_through_bytes():
    src = b'{"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"toolCall","id":"t","name":"read","input":{"n":1.50e0}}]},{"role":"tool","content":[{"type":"toolResult","toolCallId":"t","content":"ok"}]}]}'
    assert b"1.50e0" in quire.render(src, provider="anthropic").body


def test_render_with_state_and_reminder():
    state, events, _ = quire.apply(None, [{"type": "reminder", "reminder": {"body": "be brief", "ttlTurns": 1}}])
    assert len(state["reminders"]) == 1 and events == []
    r = quire.render(T, provider="anthropic", state=state)
    assert b"be brief" in r.body
    assert [e["sessionUpdate"] for e in r.events] == ["reminder_emitted", "reminder_expired"]
    assert r.state["reminders"] == [] and r.state["turn"] == 1


def test_error_fields_schema():
    with pytest.raises(quire.SchemaError) as ei:
        quire.render('{"messages":[\n {"role":"usr","content":"x"}]}', provider="anthropic")
    e = ei.value
    assert isinstance(e, quire.Error)
    assert e.code == "QUIRE_E_SCHEMA" and e.pointer == "/messages/0/role"
    assert e.line == 2 and e.column > 1 and e.offset is not None
    assert "usr" in e.message or "role" in e.message


def test_error_fields_json():
    with pytest.raises(quire.JSONError) as ei:
        quire.render(b'{"messages": [}', provider="anthropic")
    assert ei.value.code == "QUIRE_E_JSON" and ei.value.line == 1 and ei.value.column == 15


def test_error_fields_reminder():
    with pytest.raises(quire.ReminderError) as ei:
        quire.apply(None, {"type": "reminder", "reminder": {"body": "x", "ttlTurns": 0}})
    assert ei.value.code == "QUIRE_E_REMINDER_TTL" and ei.value.field == "ttlTurns"


def test_unknown_provider_is_invalid():
    with pytest.raises(quire.Error) as ei:
        quire.render(T, provider="nope")
    assert ei.value.code in ("QUIRE_E_INVALID", "QUIRE_E_UNSUPPORTED")


def test_validate():
    body = quire.render(T, provider="anthropic").body
    assert quire.validate(body, provider="anthropic") == []
    bad = json.loads(body)
    bad["messages"].insert(0, {"role": "assistant", "content": "x"})
    bad["messages"].insert(0, {"role": "assistant", "content": "y"})
    v = quire.validate(json.dumps(bad), provider="anthropic")
    assert v and all(line.startswith("/") for line in v)
    with pytest.raises(quire.JSONError):
        quire.validate(b"{", provider="anthropic")


def test_compact_plan_estimate():
    msgs = []
    for i in range(30):
        msgs += [{"role": "user", "content": "task %d " % i + "word " * 50},
                 {"role": "assistant", "content": "done %d " % i + "word " * 50}]
    t = {"messages": msgs}
    n = quire.estimate(t)
    assert n > 1000
    c = quire.compact(t, budget_tokens=n // 2, policy={"summaryTokens": 64})
    assert c.changed and quire.estimate(c.transcript) <= n // 2
    assert c.report and c.events[0]["sessionUpdate"] == "transcript_compacted"
    same = quire.compact(t, budget_tokens=n * 2)
    assert not same.changed and same.transcript == t
    p = quire.plan(t, budget_tokens=n // 2)
    assert isinstance(p, dict) and p
    with pytest.raises(quire.BudgetError):
        quire.compact(t, budget_tokens=5)


def test_replay_and_import(repo):
    log = (b'{"type":"session","sessionId":"s","target":{"provider":"anthropic"}}\n'
           b'{"type":"message","message":{"role":"user","content":"hi"}}\n{"type":"render"}\n')
    out = quire.replay(log)
    assert [o["type"] for o in out] == ["request"] and out[0]["turn"] == 1
    assert quire.replay(log, provider="openai")[0]["body"]["messages"][0]["role"] == "user"
    with pytest.raises(quire.SessionError) as ei:
        quire.replay(log + b'{"type":"nope"}\n')
    assert ei.value.line == 4
    d = os.path.join(repo, "tests", "data", "corpus", "sessions", "claude-code")
    f = sorted(os.listdir(d))[0]
    data = open(os.path.join(d, f), "rb").read()
    ilog, report = quire.import_log(data, format="claude-code")
    assert ilog.startswith(b'{"type":"session"') and report[-1].startswith("summary")
    assert ilog == cli(["import", "--from", "claude-code", "-"], data)
    assert any(o["type"] == "request" for o in quire.replay(ilog))


def test_caps_and_digest():
    assert quire.caps("anthropic")["row"]["dialect"] == "anthropic_messages"
    assert len(quire.digest(b"x")) == 32 and quire.digest(b"x") != quire.digest(b"y")


def test_threads_release_the_gil_and_agree():
    src = json.dumps(T).encode()
    want = quire.render(src, provider="gemini").body
    bad, errs = [], []

    def work():
        for _ in range(200):
            if quire.render(src, provider="gemini").body != want:
                bad.append(1)
            try:
                quire.render(b"[", provider="gemini")
            except quire.JSONError:
                errs.append(1)

    ths = [threading.Thread(target=work) for _ in range(4)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    assert not bad and len(errs) == 800


def test_session_from_threads():
    s = quire.Session(provider="openai", model="gpt-4o", system="sys")

    def work(k):
        for i in range(50):
            s.append({"role": "user", "content": "t%d-%d" % (k, i)})
            s.apply({"type": "reminder", "reminder": {"body": "r%d" % k, "dedupeKey": "k%d" % k}})

    ths = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    assert len(s.transcript()["messages"]) == 200
    assert len(s.state()["reminders"]) == 4
    req = s.render()
    assert req.body == b"".join(bytes(m) for m in req.segments)
    assert req.method == "POST" and req.path == "/v1/chat/completions"
    assert req.headers["content-type"] == "application/json"


def test_session_is_the_library_session():
    from quire import _quire
    assert isinstance(quire.Session(provider="openai")._s, _quire.Session)
    s = quire.Session(provider="anthropic", system="sys")
    s.append({"role": "user", "content": "x"})
    s.render()
    s.accept({"role": "assistant", "content": "y"})
    r = quire.Session.restore(s.log())
    assert r.transcript() == s.transcript() and r.log() == s.log()


def test_session_render_params_and_envelope(tmp_path):
    s = quire.Session(provider="anthropic", model="claude-sonnet-4-5", system="sys")
    s.append({"role": "user", "content": "x"})
    params = {"maxTokens": 100, "temperature": 0.5, "stream": True}
    req = s.render(params=params)
    body = json.loads(req.body)
    assert body["max_tokens"] == 100 and body["temperature"] == 0.5 and body["stream"] is True
    assert req.method == "POST" and req.path == "/v1/messages"
    assert req.headers.get("anthropic-version") and "authorization" not in {k.lower() for k in req.headers}
    # the same bytes as the command line with --params
    t = tmp_path / "t.json"
    t.write_text(json.dumps({"system": "sys", "messages": [{"role": "user", "content": "x"}]}))
    pf = tmp_path / "p.json"
    pf.write_text(json.dumps(params))
    want = subprocess.run([QUIRE, "render", "--provider", "anthropic", "--model", "claude-sonnet-4-5",
                           "--params", str(pf), str(t)], capture_output=True, check=True).stdout
    assert req.body == want.rstrip(b"\n")
    # a parameter the target cannot carry names itself
    with pytest.raises(quire.Error) as ei:
        s.render(params={"seed": 7})
    assert "seed" in (ei.value.pointer or "") + ei.value.message
    # a failed render leaves no pending turn: render again, then accept; the log replays to
    # the request with its parameters
    assert s.render(params=params).body == req.body
    s.accept({"role": "assistant", "content": "y"})
    reqs = [o for o in quire.replay(s.log()) if o["type"] == "request"]
    assert json.loads(json.dumps(reqs[-1]["body"]))["temperature"] == 0.5


def test_session_estimate_request_and_request_budget():
    s = quire.Session(provider="anthropic", model="claude-sonnet-4-5", system="sys", tools=T["tools"])
    for i in range(20):
        s.append({"role": "user", "content": "step %d: list every function of src/mod%d.c with its arguments" % (i, i)})
        s.append({"role": "assistant", "content": "src/mod%d.c defines parse_%d(s, n) and free_%d(p)." % (i, i, i)})
    e = s.estimate_request()
    assert e["family"] == "anthropic" and e["total"] > s.estimate() > 0
    assert e["total"] == e["system"] + e["tools"] + e["messages"] + e["reminders"] + e["media"]
    assert s.estimate_request(provider="gemini")["family"] == "gemini"
    budget = e["total"] * 2 // 3
    s.compact(budget_tokens=budget, policy={"budgetScope": "request", "keepLastTurns": 2})
    assert s.estimate_request()["total"] <= budget
    with pytest.raises(quire.BudgetError):
        s.compact(budget_tokens=10, policy={"budgetScope": "request"})


def test_session_errors_are_quire_errors():
    s = quire.Session(provider="no-such-provider")
    s.append({"role": "user", "content": "x"})
    with pytest.raises(quire.Error):
        s.render()
    s = quire.Session(provider="anthropic")
    with pytest.raises(quire.Error) as ei:
        s.accept({"role": "assistant", "content": "x"})  # nothing rendered
    assert ei.value.code in ("QUIRE_E_INVALID", "QUIRE_E_SESSION")
    s.append({"role": "user", "content": "x"})
    with pytest.raises(quire.ReminderError) as ei:
        s.apply({"type": "reminder", "reminder": {"body": " "}})
    assert ei.value.code == "QUIRE_E_REMINDER_BODY" and ei.value.field == "body"


_ANTHROPIC_BODY = (b'{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",'
                   b'"content":[{"type":"text","text":"Reading."},{"type":"tool_use","id":"toolu_1","name":"read",'
                   b'"input":{"path":"a.c"}}],"stop_reason":"tool_use","stop_sequence":null,'
                   b'"usage":{"input_tokens":12,"output_tokens":5}}')
_ANTHROPIC_SSE = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant",'
    b'"model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,'
    b'"usage":{"input_tokens":20,"output_tokens":1}}}\n\n'
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Done."}}\n\n'
    b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},'
    b'"usage":{"output_tokens":3}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n')


def test_session_accepts_raw_and_streamed_responses():
    s = quire.Session(provider="anthropic", model="claude-sonnet-4-5",
                      tools=[{"name": "read", "inputSchema": {"type": "object"}}])
    s.append({"role": "user", "content": "What is in a.c?"})
    s.render()
    with pytest.raises(quire.Error) as ei:
        s.accept(response=b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')
    assert ei.value.code == "QUIRE_E_PROVIDER"
    info = s.accept(response=_ANTHROPIC_BODY)
    assert info["stopReason"] == "tool_use" and info["usage"]["outputTokens"] == 5
    msgs = s.transcript()["messages"]
    assert msgs[-1]["role"] == "assistant" and msgs[-1]["content"][1]["type"] == "toolCall"
    s.tool_outcome("toolu_1", "completed", "int main(void) {}")
    s.render()
    info = s.accept(response=_ANTHROPIC_SSE, stream=True)
    assert info["stopReason"] == "end_turn"
    assert s.transcript()["messages"][-1]["content"] in ("Done.", [{"type": "text", "text": "Done."}])
    r = quire.Session.restore(s.log())
    assert r.transcript() == s.transcript()


def test_session_push_routing_and_interrupts():
    s = quire.Session(provider="anthropic", model="claude-sonnet-4-5", bridges={"fs": ["resources"]})
    s.append({"role": "user", "content": "watch"})
    upd = {"type": "mcp", "server": "fs", "message": {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                                                      "params": {"uri": "file:///a.c"}}}
    ev, _ = s.apply(upd)
    assert [e["reason"] for e in ev] == ["not_subscribed"]
    s.apply({"type": "mcp", "server": "fs", "direction": "out",
             "message": {"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": "file:///a.c"}}})
    assert s.subscriptions("fs") == ["file:///a.c"] and s.subscriptions() == {"fs": ["file:///a.c"]}
    ev, _ = s.apply(upd)
    assert ev == []
    ev, _ = s.apply({"type": "mcp", "server": "fs", "event": "reconnected"})
    assert ev == [{"sessionUpdate": "mcp_reconnected", "server": "fs", "subscriptions": ["file:///a.c"]}]
    s.apply({"type": "reminder", "reminder": {"body": "Stop now.", "mode": "interrupt_immediate"}})
    req = s.render()
    assert req.interrupt_pending is True and b"Resource file:///a.c changed" in req.body
    s.accept({"role": "assistant", "content": "stopped"})
    s.append({"role": "user", "content": "go on"})
    assert s.render().interrupt_pending is False
    assert quire.Session.restore(s.log()).subscriptions("fs") == ["file:///a.c"]
