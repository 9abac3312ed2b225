#!/usr/bin/python3
"""Protocol conformance of what the reminders module emits.

    py_reminders.py --quire BIN --src SRC --data SHARED

Runs every golden case of golden/reminders with the current binary (in a temporary
copy of the case folder) and checks, independently of the recorded goldens:

  * every JSON-RPC message quire writes (ACP responses, on stdout of `quire ingest`) is
    a well-formed JSON-RPC 2.0 response (jsonrpc "2.0", an id of the request's type,
    exactly one of result/error, an error with an integer code and a string message,
    nothing else) and validates against the ACP schema's agent-message branch
    (tests/data/schemas/acp/v1.schema.json); reminder errors are -32602 with
    data {code: "QUIRE_E_...", field} (-32600 with id null when the request's id is unusable);
  * every lifecycle event (the --events files) follows the ACP SessionUpdate
    conventions: the schema's SessionUpdate oneOf is extended with quire's variants
    (reminder_emitted, reminder_deduped, reminder_expired, reminder_dropped; their
    shapes as in DESIGN 2.5, closed objects, `_meta` an object) and each event is
    validated inside a SessionNotification {sessionId, update} envelope, so an ACP
    agent can forward it in session/update unchanged. The discriminator values are
    snake_case and do not collide with ACP's own variants; keys are camelCase;
  * chained golden inputs are the outputs they claim to be (TTL chain, propagation).
"""

import argparse
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import jsonschema

FAILS = []


def fail(msg):
    FAILS.append(msg)


OPT_STR = {"anyOf": [{"type": "string"}, {"type": "null"}]}
META = {"type": ["object", "null"], "additionalProperties": True}


def variant(name, props, required):
    p = {"sessionUpdate": {"type": "string", "const": name}, "_meta": META}
    p.update(props)
    return {"type": "object", "properties": p, "required": ["sessionUpdate"] + required,
            "additionalProperties": False}


QUIRE_VARIANTS = [
    variant("reminder_emitted", {
        "reminderId": {"type": "string", "minLength": 1},
        "body": {"type": "string", "minLength": 1},
        "tags": {"type": "array", "items": {"type": "string", "minLength": 1}, "uniqueItems": True},
        "dedupeKey": OPT_STR,
        "source": {"enum": ["host", "provider", "hook", "bridge", "inherited"]},
        "firedAtTurn": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]},
        "_meta": {"type": "object", "required": ["quire"], "properties": {"quire": {
            "type": "object", "required": ["slot", "requestedSlot", "reason"],
            "properties": {"slot": {"type": "string"}, "requestedSlot": {"type": "string"},
                           "reason": {"type": "string"}, "turn": {"type": "integer", "minimum": 1},
                           "origin": {"type": "string"}, "mode": {"type": "string"}}}}},
    }, ["reminderId", "body", "tags", "dedupeKey", "source", "firedAtTurn", "_meta"]),
    variant("reminder_deduped", {
        "reminderId": {"type": "string", "minLength": 1},
        "dedupeKey": OPT_STR,
        "droppedReminderIds": {"type": "array", "minItems": 1, "items": {"type": "string"}},
    }, ["reminderId", "dedupeKey", "droppedReminderIds"]),
    variant("reminder_expired", {
        "reminderId": {"type": "string", "minLength": 1},
        "phase": {"enum": ["ttl_expired", "cleared", "compacted_out"]},
        "expiredAtTurn": {"type": "integer", "minimum": 0},
    }, ["reminderId", "phase", "expiredAtTurn"]),
    variant("reminder_dropped", {
        "reminderId": {"type": "string"},
        "reason": {"enum": ["invalid", "capability_not_declared", "budget", "not_renderable", "not_subscribed", "queue_full"]},
        "detail": {"type": "string", "minLength": 1},
    }, ["reason", "detail"]),
    variant("mcp_reconnected", {
        "server": {"type": "string", "minLength": 1},
        "subscriptions": {"type": "array", "items": {"type": "string", "minLength": 1}},
    }, ["server", "subscriptions"]),
]

RPC_RESPONSE = {
    "type": "object",
    "properties": {
        "jsonrpc": {"const": "2.0"},
        "id": {"type": ["string", "integer", "null"]},
        "result": {"type": "object", "required": ["reminderId", "dedupedCount"], "additionalProperties": False,
                   "properties": {"reminderId": {"type": "string", "minLength": 1},
                                  "dedupedCount": {"type": "integer", "minimum": 0}}},
        "error": {"type": "object", "required": ["code", "message"], "additionalProperties": False,
                  "properties": {"code": {"enum": [-32602, -32600]}, "message": {"type": "string", "minLength": 1},
                                 "data": {"type": "object", "required": ["code", "field"],
                                          "additionalProperties": False,
                                          "properties": {"code": {"type": "string", "pattern": "^QUIRE_E_[A-Z_]+$"},
                                                         "field": {"type": "string"}}}}},
    },
    "required": ["jsonrpc", "id"],
    "oneOf": [{"required": ["result"]}, {"required": ["error"]}],
    # -32600 (invalid request: the id itself was unusable) is answered with id null
    "if": {"required": ["error"], "properties": {"error": {"properties": {"code": {"const": -32600}}}}},
    "then": {"properties": {"id": {"type": "null"}}},
    "additionalProperties": False,
}


def load_acp(shared):
    with open(os.path.join(shared, "schemas", "acp", "v1.schema.json")) as f:
        acp = json.load(f)
    existing = [v["properties"]["sessionUpdate"]["const"] for v in acp["$defs"]["SessionUpdate"]["oneOf"]]
    for name in existing:
        if not re.fullmatch(r"[a-z]+(_[a-z]+)*", name):
            fail("ACP's own variant %r is not snake_case: the convention check is wrong" % name)
    ours = [v["properties"]["sessionUpdate"]["const"] for v in QUIRE_VARIANTS]
    for name in ours:
        if name in existing:
            fail("quire variant %s collides with an ACP SessionUpdate variant" % name)
        if not re.fullmatch(r"[a-z]+(_[a-z]+)*", name):
            fail("quire variant %s is not snake_case" % name)
    ext = copy.deepcopy(acp)
    ext["$defs"]["SessionUpdate"]["oneOf"].extend(QUIRE_VARIANTS)
    ext.pop("anyOf")
    ext["$ref"] = "#/$defs/SessionNotification"
    notif = jsonschema.Draft202012Validator(ext)
    agent = copy.deepcopy(acp)
    agent["anyOf"] = [acp["anyOf"][0]]  # messages the agent sends (responses among them)
    agent_v = jsonschema.Draft202012Validator(agent)
    return notif, agent_v, jsonschema.Draft202012Validator(RPC_RESPONSE)


def camel_keys(v, where):
    if isinstance(v, dict):
        for k, x in v.items():
            if k != "_meta" and not re.fullmatch(r"[a-z][A-Za-z0-9]*", k):
                fail("%s: key %r is not camelCase" % (where, k))
            if k != "_meta":
                camel_keys(x, where)


def check_events(path, notif, label):
    with open(path, "rb") as f:
        data = f.read().decode("utf-8")
    n = 0
    for i, line in enumerate(data.split("\n")):
        if not line:
            continue
        n += 1
        where = "%s: events line %d" % (label, i + 1)
        try:
            ev = json.loads(line)
        except ValueError as e:
            fail("%s: not JSON: %s" % (where, e))
            continue
        camel_keys(ev, where)
        errs = sorted(notif.iter_errors({"sessionId": "s1", "update": ev}), key=lambda e: list(e.path))
        if errs:
            # oneOf failures: report the branch of our own variant
            name = ev.get("sessionUpdate")
            mine = [v for v in QUIRE_VARIANTS if v["properties"]["sessionUpdate"]["const"] == name]
            detail = ""
            if mine:
                sub = list(jsonschema.Draft202012Validator(mine[0]).iter_errors(ev))
                detail = "; ".join(e.message for e in sub[:3])
            fail("%s: not a valid SessionUpdate: %s %s" % (where, errs[0].message[:200], detail))
    if data and not data.endswith("\n"):
        fail("%s: events file does not end with a newline" % label)
    return n


def check_responses(data, agent_v, rpc_v, label):
    n = 0
    for i, line in enumerate(data.decode("utf-8").split("\n")):
        if not line:
            continue
        n += 1
        where = "%s: stdout line %d" % (label, i + 1)
        try:
            msg = json.loads(line)
        except ValueError as e:
            fail("%s: not JSON: %s" % (where, e))
            continue
        for e in rpc_v.iter_errors(msg):
            fail("%s: not a JSON-RPC 2.0 reminder response: %s" % (where, e.message[:200]))
        for e in agent_v.iter_errors(msg):
            fail("%s: not an ACP agent message: %s" % (where, e.message[:200]))
        if isinstance(msg, dict) and isinstance(msg.get("id"), float):
            fail("%s: fractional id" % where)
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--data", required=True)
    o = ap.parse_args()
    o.quire = os.path.abspath(o.quire)
    notif, agent_v, rpc_v = load_acp(o.data)
    root = os.path.join(o.src, "golden", "reminders")
    cases = sorted(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "case.json")))
    nev = nresp = 0
    kinds = set()
    for name in cases:
        cdir = os.path.join(root, name)
        with open(os.path.join(cdir, "case.json")) as f:
            spec = json.load(f)
        args = [a.replace("@DATA@", o.data) for a in spec["args"]]
        with tempfile.TemporaryDirectory() as tmp:
            work = os.path.join(tmp, name)
            shutil.copytree(cdir, work, ignore=lambda d, n: [x for x in n if x.startswith("expected")])
            stdin = b""
            if spec.get("stdin"):
                with open(os.path.join(work, spec["stdin"]), "rb") as f:
                    stdin = f.read()
            p = subprocess.run([o.quire] + args, cwd=work, input=stdin, capture_output=True)
            if args[0] == "ingest" and p.returncode == 0 and "--propagate" not in args and "--help" not in args:
                nresp += check_responses(p.stdout, agent_v, rpc_v, name)
            for fn in spec.get("files", []):
                path = os.path.join(work, fn)
                if fn.endswith(".jsonl") and os.path.isfile(path):
                    nev += check_events(path, notif, name)
                    with open(path) as f:
                        kinds.update(json.loads(l)["sessionUpdate"] for l in f if l.strip())
    for k in ("reminder_emitted", "reminder_deduped", "reminder_expired", "reminder_dropped"):
        if k not in kinds:
            fail("no golden case produced a %s event: the check is incomplete" % k)
    if nresp < 10:
        fail("only %d JSON-RPC responses checked" % nresp)

    # chained inputs are the outputs they claim to be
    def same(a, b):
        with open(os.path.join(root, a), "rb") as f1, open(os.path.join(root, b), "rb") as f2:
            if f1.read() != f2.read():
                fail("chain broken: %s differs from %s" % (a, b))
    same("ttl_turn1/expected/state-out.json", "ttl_turn2/state.json")
    same("ttl_turn2/expected/state-out.json", "ttl_turn3/state.json")
    same("propagate_gen1/expected/child.json", "propagate_gen2/child.json")
    same("propagate_gen1/expected/child.json", "propagate_render/child.json")

    for f in FAILS:
        print("FAIL " + f)
    print("%d events and %d JSON-RPC responses checked over %d cases; %d failures" % (
        nev, nresp, len(cases), len(FAILS)))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
