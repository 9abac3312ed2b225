"""quire.Session: the live session of DESIGN 11, and the Request that render() returns."""
import json as _json
import threading as _threading

from . import _quire

_SEP = (",", ":")


def _dumps(value):
    return _json.dumps(value, ensure_ascii=False, separators=_SEP).encode("utf-8")


def _obj(value):
    """A JSON value given as bytes/str/Python -> Python."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _json.loads(bytes(value))
    if isinstance(value, str):
        return _json.loads(value)
    return value


def _jsonl(data):
    return [_json.loads(line) for line in bytes(data).splitlines() if line.strip()]


class Request:
    """One rendered model request.

    body      the request body (bytes, ready to POST)
    segments  the body as a list of memoryviews whose concatenation is body (borrowing the
              session's encodings when the library provides them)
    method    "POST"
    path      the provider path, e.g. "/v1/messages"
    headers   dict of the headers the request needs (never credentials or a host)
    events    lifecycle events of this render (list of ACP SessionUpdate dicts)
    turn      the turn this request renders (1-based)
    """
    __slots__ = ("_body", "_segments", "method", "path", "_headers", "_events", "turn", "interrupt_pending")

    def __init__(self, body, segments, method, path, headers, events, turn, interrupt_pending=False):
        self._body = body
        self._segments = segments
        self.method = method
        self.path = path
        self._headers = headers
        self._events = events
        self.turn = turn
        self.interrupt_pending = interrupt_pending

    @property
    def body(self):
        if self._body is None:
            self._body = b"".join(self._segments)
        return self._body

    @property
    def segments(self):
        if self._segments is None:
            return [memoryview(self._body)]
        return [memoryview(s) for s in self._segments]

    @property
    def headers(self):
        h = self._headers
        if isinstance(h, (bytes, bytearray)):
            h = self._headers = _json.loads(h) if h else {}
        return dict(h)

    @property
    def events(self):
        ev = self._events
        if isinstance(ev, (bytes, bytearray)):
            ev = self._events = _jsonl(ev)
        return list(ev)

    def json(self):
        """The body parsed."""
        return _json.loads(self.body)

    def __repr__(self):
        return "<quire.Request %s %s turn=%d %d bytes>" % (self.method, self.path, self.turn, len(self.body))


# Where each wire dialect is POSTed and what it needs besides the body (DESIGN 13). Used only
# until the library's envelope (quire_render params/envelope) is available to the binding.
_ENVELOPE = {
    "anthropic_messages": ("/v1/messages", {"content-type": "application/json", "anthropic-version": "2023-06-01"}),
    "openai_chat": ("/v1/chat/completions", {"content-type": "application/json"}),
    "openai_responses": ("/v1/responses", {"content-type": "application/json"}),
    "gemini": ("/v1beta/models/{model}:generateContent", {"content-type": "application/json"}),
    "bedrock_converse": ("/model/{model}/converse", {"content-type": "application/json"}),
    "mistral": ("/v1/chat/completions", {"content-type": "application/json"}),
    "ollama": ("/api/chat", {"content-type": "application/json"}),
}


class Session:
    """A live quire session (DESIGN 11): target, system, tools, transcript, reminder state.

        s = quire.Session(provider="anthropic", model="claude-sonnet-4-5", system="...", tools=[...])
        s.append({"role": "user", "content": "List src/"})
        s.apply({"type": "mcp", "server": "fs", "message": {...}})   # reminders in
        req = s.render()                                               # req.body, req.path, ...
        s.accept({"role": "assistant", "content": [...]})              # the model's answer
        s.log()                                                        # replays to the same requests

    render() leaves the turn pending: render again after a failed call and the same request
    comes back; accept() commits it (reminder TTLs count down only then). Every method is
    safe to call from several threads (calls are serialised). Errors raise quire.Error.
    """

    def __init__(self, provider, model=None, system=None, tools=None, session_id="session",
                 caps=None, policy=None, max_tokens=0):
        self._lock = _threading.Lock()
        self._provider = provider
        self._model = model
        self._session_id = session_id
        self._caps = None if caps is None else _dumps(_obj(caps))
        self._policy = None if policy is None else _dumps(_obj(policy))
        self._max_tokens = int(max_tokens)
        head = {}
        if system is not None:  # a str is the system text itself
            head["system"] = system if isinstance(system, str) else _obj(system)
        if tools is not None:
            head["tools"] = _obj(tools)
        self._head = _dumps(head)[:-1]  # '{' + fields, closed when the transcript is built
        self._messages = []
        self._state = None
        self._pending = None  # (provider, model, state after the pending turn)
        target = {"provider": provider}
        if model is not None:
            target["model"] = model
        line = {"type": "session", "sessionId": session_id, "target": target}
        line.update(head)
        self._log = [_dumps(line)]
        _quire.caps(provider, model)  # an unknown provider fails here, not at the first render

    # -- values ---------------------------------------------------------------------------
    def _transcript_bytes(self):
        sep = b"," if len(self._head) > 1 else b""
        return self._head + sep + b'"messages":[' + b",".join(self._messages) + b"]}"

    def transcript(self):
        """The transcript (quire.transcript/1) as a dict."""
        with self._lock:
            return _json.loads(self._transcript_bytes())

    def state(self):
        """The reminder state (quire.state/1) as a dict."""
        with self._lock:
            if self._state is None:
                return _json.loads(_quire.state_apply(None, b"[]", self._session_id)[0])
            return _json.loads(self._state)

    def log(self):
        """The quire.session/1 log (bytes, JSONL) that replays to every request rendered."""
        with self._lock:
            return b"\n".join(self._log) + b"\n"

    # -- calls ----------------------------------------------------------------------------
    def append(self, message):
        """Append one transcript message (dict, JSON str or bytes)."""
        m = _dumps(_obj(message))
        with self._lock:
            self._messages.append(m)
            self._log.append(b'{"type":"message","message":' + m + b"}")

    def apply(self, line):
        """Apply one session-log line of type mcp, acp, reminder or clear (DESIGN 7).
        Returns (events, responses): lists of dicts (responses: JSON-RPC replies to ACP)."""
        b = _dumps(_obj(line))
        with self._lock:
            st, ev, resp = _quire.state_apply(self._state, b, self._session_id)
            self._state = st
            self._pending = None
            self._log.append(b)
        return _jsonl(ev), _jsonl(resp)

    def render(self, provider=None, model=None):
        """Render the next request (the turn stays pending until accept())."""
        with self._lock:
            p = provider or self._provider
            m = model if (provider or model) else self._model
            t = self._transcript_bytes()
            body, ev, st = _quire.render(t, p, m, self._state, self._caps, self._policy, False,
                                         self._max_tokens, False, None)
            self._pending = (provider, model, st)
            turn = _json.loads(st).get("turn", 0)
        row = _json.loads(_quire.caps(p, m))
        path, headers = _ENVELOPE.get(row["row"]["dialect"], ("/", {"content-type": "application/json"}))
        if "{model}" in path:
            path = path.replace("{model}", m or row.get("model") or "")
        return Request(body, None, "POST", path, dict(headers), ev, turn)

    def accept(self, message=None, *, response=None, stream=None):
        """Commit the pending turn and append the assistant message. Give the message in
        transcript form (dict). Decoding a raw provider response needs the library's decoder."""
        if message is None:
            raise _make_unsupported("accept(response=...) needs the library's response decoder; "
                                    "pass the assistant message in transcript form")
        m = _dumps(_obj(message))
        with self._lock:
            if self._pending is None:
                raise _make_session("accept() without a pending render()")
            provider, model, st = self._pending
            render = {"type": "render"}
            if provider or model:
                target = {"provider": provider or self._provider}
                if model:
                    target["model"] = model
                render["target"] = target
            self._log.append(_dumps(render))
            self._state = st
            self._pending = None
            self._messages.append(m)
            self._log.append(b'{"type":"message","message":' + m + b"}")

    def estimate(self):
        """Estimated tokens of the transcript."""
        with self._lock:
            return _quire.estimate(self._transcript_bytes())

    def compact(self, budget_tokens=0, policy=None, summary=None):
        """Compact the transcript (DESIGN 6); returns the report (dict)."""
        pol = dict(_obj(policy) or {})
        if budget_tokens:
            pol["budgetTokens"] = int(budget_tokens)
        pb = _dumps(pol)
        sb = None if summary is None else summary.encode("utf-8")
        with self._lock:
            t, st, ev, rep, changed = _quire.compact(self._transcript_bytes(), pb, 0, sb, self._state)
            line = {"type": "compact", "policy": pol}
            if summary is not None:
                line["summary"] = summary
            self._log.append(_dumps(line))
            if changed:
                self._messages = [_dumps(x) for x in _json.loads(t)["messages"]]
                self._state = st
            self._pending = None
        return _json.loads(rep) if rep else {}


def _make_unsupported(msg):
    from ._errors import make_error
    return make_error(4, "QUIRE_E_UNSUPPORTED", None, 0, 0, None, None, msg)


def _make_session(msg):
    from ._errors import make_error
    return make_error(13, "QUIRE_E_SESSION", None, 0, 0, None, None, msg)
