"""quire.Session: the live session of DESIGN 11, and the Request that render() returns."""
import json as _json

from . import _quire

_SEP = (",", ":")


def _dumps(value):
    return _json.dumps(value, ensure_ascii=False, separators=_SEP).encode("utf-8")


def _target(provider, model):
    """A render target as JSON bytes, or None for the session's own."""
    if not (provider or model):
        return None
    t = {}
    if provider:
        t["provider"] = provider
    if model:
        t["model"] = model
    return _dumps(t)


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
        return [memoryview(s) for s in self._segments]  # _Bounds yields zero-copy slices

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
# while the session's render gives no envelope (quire_session_turn.path is NULL).
_ENVELOPE = {
    "anthropic_messages": ("/v1/messages", {"content-type": "application/json", "anthropic-version": "2023-06-01"}),
    "openai_chat": ("/v1/chat/completions", {"content-type": "application/json"}),
    "openai_responses": ("/v1/responses", {"content-type": "application/json"}),
    "gemini": ("/v1beta/models/{model}:generateContent", {"content-type": "application/json"}),
    "bedrock_converse": ("/model/{model}/converse", {"content-type": "application/json"}),
    "mistral": ("/v1/chat/completions", {"content-type": "application/json"}),
    "ollama": ("/api/chat", {"content-type": "application/json"}),
}


def _envelope(provider, model):
    row = _json.loads(_quire.caps(provider, model))
    path, headers = _ENVELOPE.get(row["row"]["dialect"], ("/", {"content-type": "application/json"}))
    if "{model}" in path:
        path = path.replace("{model}", model or row.get("model") or "")
    return path, headers


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
                 caps=None, policy=None, max_tokens=0, compact_policy=None, limits=None, bridges=None,
                 _log=None):
        self._target = (provider, model)
        if _log is not None:
            self._s = _quire.Session(caps=None if caps is None else _dumps(_obj(caps)), log=_log)
            return
        target = {"provider": provider}
        if model is not None:
            target["model"] = model
        config = {"sessionId": session_id, "target": target}
        if system is not None:
            config["system"] = system if isinstance(system, str) else _obj(system)
        if tools is not None:
            config["tools"] = _obj(tools)
        if policy is not None:
            config["renderPolicy"] = _obj(policy)
        if max_tokens:
            config["maxTokens"] = int(max_tokens)
        if compact_policy is not None:
            config["compactPolicy"] = _obj(compact_policy)
        if limits is not None:
            config["limits"] = _obj(limits)
        if bridges is not None:
            config["bridges"] = _obj(bridges)
        self._s = _quire.Session(_dumps(config), None if caps is None else _dumps(_obj(caps)))

    @classmethod
    def restore(cls, log, caps=None):
        """The session a quire.session/1 log describes (resume after a restart)."""
        return cls(None, caps=caps, _log=log if isinstance(log, (bytes, bytearray)) else str(log).encode())

    def transcript(self):
        """The transcript (quire.transcript/1) as a dict."""
        return _json.loads(self._s.transcript())

    def state(self):
        """The committed reminder state (quire.state/1) as a dict."""
        return _json.loads(self._s.state())

    def log(self):
        """The quire.session/1 log (bytes, JSONL) that replays to every accepted request."""
        return self._s.log()

    def append(self, message):
        """Append one transcript message, or a list of them (all or nothing)."""
        self._s.append(message if isinstance(message, (bytes, bytearray)) else _dumps(_obj(message)))

    def apply(self, line):
        """Apply session-log lines of type mcp, acp, reminder or clear (one dict, a list, or
        JSONL). Returns (events, responses): lists of dicts."""
        ev, resp = self._s.apply(line if isinstance(line, (bytes, bytearray)) else _dumps(_obj(line)))
        return _jsonl(ev) if ev else [], _jsonl(resp) if resp else []

    def render(self, provider=None, model=None, params=None):
        """Render the next request (the turn stays pending until accept()).

        params: the request parameters of DESIGN 13 / docs/params.md (dict or JSON), e.g.
        {"maxTokens": 1024, "temperature": 0.2, "toolChoice": "auto", "stream": True}."""
        target = _target(provider, model)
        pj = None if params is None else (params if isinstance(params, (bytes, str)) else _dumps(params))
        if isinstance(pj, str):
            pj = pj.encode("utf-8")
        body, bounds, method, path, headers, events, turn, interrupt, prov, mod = self._s.render(target, pj)
        if path is None:
            path, hd = _envelope(prov, mod)
            headers = dict(hd)
        self._target = (prov, mod)
        req = Request(body, None, method, path, headers, events, turn, interrupt)
        req._segments = _Bounds(body, bounds)
        return req

    def accept(self, message=None, *, response=None, stream=None):
        """Commit the pending turn with the model's answer. TTLs count down only now.

        accept(message)           the assistant message in transcript form (dict, str or bytes)
        accept(response=body)     the provider's raw response body (bytes), decoded for the
                                  target the pending turn was rendered for
        accept(response=body, stream=True)
                                  the whole streamed response (SSE, or JSON lines for Bedrock
                                  and Ollama) as received
        With response=, returns the decoded info (dict: stopReason, usage, ...). A provider
        error body raises quire.Error (QUIRE_E_PROVIDER) and the turn stays pending."""
        if response is not None:
            if message is not None:
                raise _make_invalid("accept() takes a message or response=, not both")
            body = response.encode("utf-8") if isinstance(response, str) else bytes(response)
            if stream:
                prov, mod = self._target
                info = self._s.accept_response(body, True, prov, mod)
            else:
                info = self._s.accept_response(body)
            return _json.loads(info) if info else {}
        if message is None:
            raise _make_invalid("accept() needs the assistant message or response=<raw body>")
        self._s.accept_message(message if isinstance(message, (bytes, bytearray)) else _dumps(_obj(message)))
        return None

    def subscriptions(self, server=None):
        """The resource URIs the host subscribed to (resources/subscribe lines applied with
        "direction": "out"): a list for one server, or a dict of lists for every server.
        Re-send them after a reconnect."""
        return _json.loads(self._s.subscriptions(server))

    def tool_outcome(self, call_id, outcome, content=None):
        """An asynchronous tool outcome ("completed" | "failed" | "timeout" | "cancelled").
        Returns (answered, events): answered is False when it became a reminder."""
        code = {"completed": _quire.TOOL_COMPLETED, "failed": _quire.TOOL_FAILED,
                "timeout": _quire.TOOL_TIMEOUT, "cancelled": _quire.TOOL_CANCELLED}.get(outcome)
        if code is None:
            raise _make_invalid("unknown tool outcome %r" % (outcome,))
        c = None if content is None else (content if isinstance(content, (bytes, bytearray)) else _dumps(content))
        answered, ev = self._s.tool_outcome(call_id, code, c)
        return answered, _jsonl(ev) if ev else []

    def estimate(self):
        """Estimated tokens of the transcript."""
        return self._s.estimate()

    def estimate_request(self, provider=None, model=None):
        """The whole next request's estimate for the target (DESIGN 6): a dict with total,
        family, system, tools, messages, reminders, media and counts."""
        target = _target(provider, model)
        return _json.loads(self._s.estimate_request(target))

    def compact(self, budget_tokens=0, policy=None, summary=None):
        """Compact the transcript (DESIGN 6); returns the report (dict).

        budget_tokens counts what estimate() counts (the transcript with system and tools);
        a policy with "budgetScope": "request" takes it for the whole request instead, as
        estimate_request() counts it."""
        pol = None
        if policy is not None or budget_tokens:
            pol = dict(_obj(policy) or {})
            if budget_tokens:
                pol["budgetTokens"] = int(budget_tokens)
            pol = _dumps(pol)
        rep, ev = self._s.compact(pol, None if summary is None else summary.encode("utf-8"))
        return _json.loads(rep) if rep else {}

    def plan(self, budget_tokens=0, policy=None):
        """The compaction plan for the current transcript."""
        pol = None
        if policy is not None or budget_tokens:
            pol = dict(_obj(policy) or {})
            if budget_tokens:
                pol["budgetTokens"] = int(budget_tokens)
            pol = _dumps(pol)
        return _json.loads(self._s.plan(pol))


class _Bounds:
    """Segments of a body as memoryviews (zero-copy slices of the body bytes)."""
    __slots__ = ("body", "bounds")

    def __init__(self, body, bounds):
        self.body = body
        self.bounds = bounds

    def __iter__(self):
        mv = memoryview(self.body)
        start = 0
        for end in self.bounds:
            yield mv[start:end]
            start = end




def _make_invalid(msg):
    from ._errors import make_error
    return make_error(11, "QUIRE_E_INVALID", None, 0, 0, None, None, msg)


def _make_unsupported(msg):
    from ._errors import make_error
    return make_error(4, "QUIRE_E_UNSUPPORTED", None, 0, 0, None, None, msg)
