"""quire: render LLM agent transcripts and system reminders into provider requests, compact
transcripts and replay logged sessions — the Python package over the C library.

Stateless functions (values in, values out): render, compact, plan, estimate, validate,
import_log, replay, apply, caps. The live form is Session (DESIGN 11): append, apply, render,
accept, compact, log. Every library failure raises a quire.Error subclass carrying code,
line, column, pointer, field and message. Library calls release the GIL.

JSON inputs may be given as bytes (UTF-8 JSON, passed through untouched), str, or Python
values (dict/list, serialised compactly). Outputs that are JSON documents come back parsed;
request bodies stay bytes, exactly as quire produced them.
"""
import json as _json

from . import _quire
from ._errors import (BudgetError, Error, InvalidError, JSONError, LimitError, MismatchError,
                      ReminderError, SchemaError, SessionError, UnsupportedError, ValidationError,
                      make_error as _make_error)
from ._session import Request, Session

_quire._set_error_factory(_make_error)

__version__ = "0.2.0"
library_version = _quire.library_version

__all__ = [
    "render", "compact", "plan", "estimate", "validate", "import_log", "replay", "apply", "caps", "digest",
    "Session", "Request", "RenderResult", "CompactResult",
    "Error", "JSONError", "LimitError", "SchemaError", "UnsupportedError", "ReminderError",
    "InvalidError", "BudgetError", "SessionError", "MismatchError", "ValidationError",
]


def _b(value):
    """bytes-like -> as is; str -> UTF-8; anything else -> compact JSON."""
    if value is None or isinstance(value, (bytes, bytearray, memoryview)):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return _json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _jsonl(data):
    return [_json.loads(line) for line in data.splitlines() if line.strip()]


class RenderResult:
    """What render() returns: the request body (bytes), the events (list of dicts) and the
    reminder state after this model call (dict; pass it to the next render)."""
    __slots__ = ("body", "_events", "_state")

    def __init__(self, body, events, state):
        self.body = body
        self._events = events
        self._state = state

    @property
    def events(self):
        return _jsonl(self._events)

    @property
    def state(self):
        return _json.loads(self._state)

    @property
    def state_json(self):
        return self._state

    def json(self):
        """The body parsed."""
        return _json.loads(self.body)


class CompactResult:
    """What compact() returns: transcript (dict), state (dict), events (list), report (dict),
    changed (False when the transcript was already under budget)."""
    __slots__ = ("transcript_json", "state_json", "_events", "_report", "changed")

    def __init__(self, transcript, state, events, report, changed):
        self.transcript_json = transcript
        self.state_json = state
        self._events = events
        self._report = report
        self.changed = changed

    @property
    def transcript(self):
        return _json.loads(self.transcript_json)

    @property
    def state(self):
        return _json.loads(self.state_json)

    @property
    def events(self):
        return _jsonl(self._events)

    @property
    def report(self):
        return _json.loads(self._report) if self._report else {}


def render(transcript, *, provider, model=None, state=None, caps=None, policy=None, pretty=False,
           max_tokens=0, lossy=False, from_dialect=None):
    """Render a quire.transcript/1 transcript (or, with from_dialect="anthropic" |
    "openai_chat" | "openai_responses" | "gemini", a request body in that shape) into the
    request body for provider/model. state is a quire.state/1 value (None = no reminders);
    caps are capability override rows; policy is a render policy object (DESIGN 5)."""
    body, events, st = _quire.render(_b(transcript), provider, model, _b(state), _b(caps), _b(policy),
                                     bool(pretty), int(max_tokens), bool(lossy), from_dialect)
    return RenderResult(body, events, st)


def compact(transcript, *, budget_tokens=0, policy=None, summary=None, state=None):
    """Compact a transcript to budget_tokens (DESIGN 6). policy takes the camelCase fields of
    a session-log compact event; summary is a model-written summary of the selected span."""
    t, s, ev, rep, changed = _quire.compact(_b(transcript), _b(policy), int(budget_tokens),
                                            _b(summary), _b(state))
    return CompactResult(t, s, ev, rep, changed)


def plan(transcript, *, budget_tokens=0, policy=None):
    """The compaction plan: report, the span a summary replaces, a summarisation transcript."""
    return _json.loads(_quire.plan(_b(transcript), _b(policy), int(budget_tokens)))


def estimate(transcript):
    """Estimated tokens of a transcript (quire's per-script estimator)."""
    return _quire.estimate(_b(transcript))


def validate(body, *, provider, model=None, caps=None):
    """Check a request body against its provider's rules. Returns the list of violations
    ("/pointer: message"), empty when the body is valid. Raises JSONError when it is not JSON."""
    rep = _quire.validate(_b(body), provider, model, _b(caps))
    return [line for line in rep.decode("utf-8", "replace").splitlines() if line]


def import_log(data, *, format, lift_reminders=False, skip_invalid=False, sidechains=False,
               provider=None):
    """Turn an agent log (claude-code, codex, gemini-cli, cline, swe-agent) into a
    quire.session/1 log. Returns (log bytes, report lines)."""
    flags = ((_quire.IMPORT_LIFT_REMINDERS if lift_reminders else 0)
             | (_quire.IMPORT_SKIP_INVALID if skip_invalid else 0)
             | (_quire.IMPORT_SIDECHAINS if sidechains else 0))
    log, report = _quire.import_log(_b(data), format, flags, provider)
    return log, [line for line in report.decode("utf-8", "replace").splitlines() if line]


def replay(log, *, provider=None, model=None, digest=False):
    """Replay a quire.session/1 log: the list of output lines (request, event, response,
    compacted) as dicts, in order (DESIGN 7)."""
    return _jsonl(_quire.replay(_b(log), provider, model, bool(digest)))


def apply(state, lines, *, session_id=None):
    """Apply session-log lines of types mcp/acp/reminder/clear (a list, JSONL or one line) to
    a reminder state (None = a fresh one). Returns (state dict, events, JSON-RPC responses)."""
    if isinstance(lines, dict):
        lines = [lines]
    s, ev, resp = _quire.state_apply(_b(state), _b(lines), session_id)
    return _json.loads(s), _jsonl(ev), _jsonl(resp)


def digest(data):
    """The 128-bit FNV-1a digest of bytes, as `quire replay --digest` writes it (32 hex digits)."""
    return _quire.digest(_b(data))


def caps(provider, model=None):
    """The resolved capability row of provider/model (DESIGN 5.1)."""
    return _json.loads(_quire.caps(provider, model))
