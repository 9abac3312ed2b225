#!/usr/bin/python3
"""Self-test of tests/schemas.py: known-valid requests pass, known-invalid ones fail.

Run: py_schemas_selftest.py --quire Q --src SRC --data SHARED   (--quire is ignored)
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True   # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import schemas  # noqa: E402

# --------------------------------------------------------------------------------------
# Hand-written request bodies

VALID = {
    "anthropic_messages": [
        {"model": "claude-sonnet-4-5", "max_tokens": 1024,
         "messages": [{"role": "user", "content": "Hello"}]},
        {"model": "claude-sonnet-4-5", "max_tokens": 4096,
         "system": [{"type": "text", "text": "You are terse.",
                     "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
         "thinking": {"type": "enabled", "budget_tokens": 2048},
         "tools": [{"name": "read", "description": "Read a file",
                    "input_schema": {"type": "object",
                                     "properties": {"path": {"type": "string"}}}}],
         "messages": [
             {"role": "user", "content": [{"type": "text", "text": "Read a.txt"}]},
             {"role": "assistant", "content": [
                 {"type": "thinking", "thinking": "ok", "signature": "c2ln"},
                 {"type": "tool_use", "id": "toolu_1", "name": "read",
                  "input": {"path": "a.txt"}}]},
             {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": "toolu_1", "content": "hi",
                  "cache_control": {"type": "ephemeral"}},
                 {"type": "text", "text": "<system-reminder>\nbe brief\n</system-reminder>"}]}]},
    ],
    "openai_chat": [
        {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hello"}]},
        {"model": "o3", "max_completion_tokens": 100,
         "tools": [{"type": "function",
                    "function": {"name": "read", "parameters": {"type": "object"}}}],
         "messages": [
             {"role": "developer", "content": "Be terse."},
             {"role": "user", "content": [{"type": "text", "text": "Read a.txt"}]},
             {"role": "assistant", "content": None, "tool_calls": [
                 {"id": "call_1", "type": "function",
                  "function": {"name": "read", "arguments": "{\"path\":\"a.txt\"}"}}]},
             {"role": "tool", "tool_call_id": "call_1", "content": "hi"},
             {"role": "user", "content": "<system-reminder>\nbe brief\n</system-reminder>"}]},
    ],
    "openai_responses": [
        {"model": "gpt-5", "input": "Hello"},
        {"model": "gpt-5", "instructions": "Be terse.", "store": False,
         "include": ["reasoning.encrypted_content"],
         "tools": [{"type": "function", "name": "read", "strict": False,
                    "parameters": {"type": "object"}}],
         "input": [
             {"role": "user", "content": "Read a.txt"},
             {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "ZW5j"},
             {"type": "function_call", "call_id": "call_1", "name": "read",
              "arguments": "{\"path\":\"a.txt\"}"},
             {"type": "function_call_output", "call_id": "call_1", "output": "hi"},
             {"type": "message", "role": "developer",
              "content": [{"type": "input_text", "text": "be brief"}]}]},
    ],
    "gemini": [
        {"contents": [{"role": "user", "parts": [{"text": "Hello"}]}]},
        {"systemInstruction": {"parts": [{"text": "Be terse."}]},
         "tools": [{"functionDeclarations": [{
             "name": "read", "description": "Read a file",
             "parameters": {"type": "OBJECT",
                            "properties": {"file_path": {"type": "STRING"}}}}]}],
         "generationConfig": {"maxOutputTokens": 100,
                              "thinkingConfig": {"thinkingBudget": 512, "includeThoughts": True}},
         "contents": [
             {"role": "user", "parts": [{"text": "Read a.txt"}]},
             {"role": "model", "parts": [{"functionCall": {
                 "name": "read", "args": {"file_path": "a.txt"}}, "thoughtSignature": "c2ln"}]},
             {"role": "user", "parts": [{"functionResponse": {
                 "name": "read", "response": {"output": "hi", "free_form_key": 1}}}]},
             {"role": "user", "parts": [{"text": "<system-reminder>\nbe brief\n</system-reminder>"}]}]},
    ],
}

# (dialect, body, a substring the error list must contain)
INVALID = [
    ("anthropic_messages",
     {"model": "m", "max_tokens": 10, "messages": [{"role": "tool", "content": "x"}]},
     "/messages/0/role"),
    ("anthropic_messages",
     {"model": "m", "max_tokens": 10,
      "messages": [{"role": "user", "content": [{"type": "bogus", "text": "x"}]}]},
     "/messages/0/content/0/type"),
    ("anthropic_messages",
     {"model": "m", "messages": [{"role": "user", "content": "x"}]},
     "max_tokens"),
    ("anthropic_messages",
     {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": [
         {"type": "text", "text": "x", "cache_control": {"type": "ephemeral", "ttl": "2h"}}]}]},
     "/messages/0/content/0/cache_control/ttl"),
    ("openai_chat",
     {"model": "gpt-4o", "messages": [{"role": "robot", "content": "x"}]},
     "/messages/0/role"),
    ("openai_chat",
     {"model": "gpt-4o", "messages": [{"role": "tool", "content": "x"}]},
     "tool_call_id"),
    ("openai_chat",
     {"model": "gpt-4o", "messages": []},
     "/messages"),
    ("openai_responses",
     {"model": "gpt-5", "input": [{"type": "bogus_item", "text": "x"}]},
     "/input/0/type"),
    ("openai_responses",
     {"model": "gpt-5", "input": [{"type": "function_call", "name": "read"}]},
     "call_id"),
    ("openai_responses",
     {"model": "gpt-5", "input": [{"role": "robot", "content": "x"}]},
     "/input/0/role"),
    ("gemini",
     {"contents": [{"role": "assistant", "parts": [{"text": "x"}]}]},
     "/contents/0/role"),
    ("gemini",
     {"contents": [{"role": "user", "parts": [{"text_content": "x"}]}]},
     "/contents/0/parts/0/text_content"),
    ("gemini",
     {"contents": [{"role": "user", "parts": [{"text": "x"}]}],
      "generation_config": {"max_output_tokens": 5}},
     "/generation_config"),
    ("gemini",
     {"contents": [{"role": "user", "text": "x"}]},
     "/contents/0/text"),
]


# --------------------------------------------------------------------------------------

class Tally:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, ok, name, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL %s%s" % (name, ("\n    " + detail.replace("\n", "\n    ")) if detail else ""))


def translator_tests(t):
    """The OpenAPI translation on small synthetic documents."""
    from jsonschema import Draft202012Validator
    comps = {
        "Root": {"type": "object", "properties": {
            "a": {"type": "string", "nullable": True},
            "b": {"type": "string", "enum": ["x"], "nullable": True},
            "c": {"nullable": True, "allOf": [{"$ref": "#/components/schemas/Num"}]},
            "d": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
            "e": {"$ref": "#/components/schemas/Shape"},
            "f": {"type": "string", "oneOf": [{"type": "string"}, {"type": "array"}]},
            "g": {"$ref": "#/components/schemas/Tree"},
        }},
        "Num": {"type": "integer"},
        "Shape": {"oneOf": [{"$ref": "#/components/schemas/Circle"},
                            {"$ref": "#/components/schemas/Square"}],
                  "discriminator": {"propertyName": "kind"}},
        "Circle": {"type": "object", "required": ["r"],
                   "properties": {"kind": {"type": "string", "enum": ["circle"]},
                                  "r": {"type": "number"}}},
        "Square": {"type": "object", "required": ["kind", "side"],
                   "properties": {"kind": {"type": "string", "enum": ["square"]},
                                  "side": {"type": "number"}}},
        "Tree": {"type": "object", "properties": {"kids": {"type": "array",
                                                           "items": {"$recursiveRef": "#"}}},
                 "additionalProperties": False},
    }
    v, _ = schemas._compile_openapi({"components": {"schemas": comps}}, "Root")

    def errs(obj):
        return schemas._schema_errors(v, obj)

    good = {"a": None, "b": None, "c": None, "d": 0.5, "e": {"kind": "square", "side": 1},
            "f": [1], "g": {"kids": [{"kids": []}]}}
    t.check(errs(good) == [], "translate: valid instance", repr(errs(good)))
    t.check(errs({"e": {"r": 1}}) == [], "translate: discriminator property absent → any branch")
    for bad, where in [({"a": 1}, "/a"), ({"b": "y"}, "/b"), ({"c": "s"}, "/c"),
                       ({"d": 0}, "/d"), ({"e": {"kind": "triangle"}}, "/e/kind"),
                       ({"e": {"kind": "circle"}}, "/e"), ({"f": 3}, "/f"),
                       ({"g": {"kids": [{"leaf": 1}]}}, "/g/kids/0")]:
        e = errs(bad)
        t.check(any(x.startswith(where + ":") for x in e),
                "translate: %s rejected at %s" % (json.dumps(bad), where), repr(e))
    Draft202012Validator.check_schema(v.schema["components"]["schemas"]["Root"])
    t.check(True, "translate: output is a valid 2020-12 schema")


def proto_tests(t):
    text = '''
    syntax = "proto3";
    // message Fake { string no = 1; }
    message Outer {
      message Inner { string deep_name = 1; }
      oneof data {
        string text_value = 1 [(google.api.field_behavior) = OPTIONAL];
        Inner inner = 2;
      }
      repeated Outer children = 3
          [(google.api.field_behavior) = OPTIONAL,
           (google.api.resource_reference) = { type: "x/{y}" }];
      map<string, Inner> by_name = 4;
      enum Kind { KIND_UNSPECIFIED = 0; }
      Kind kind = 5;
    }
    service S { rpc Get(Outer) returns (Outer) { option (google.api.http) = { post: "/v1/{name=*}" }; } }
    '''
    msgs, enums = schemas.parse_proto(text)
    t.check(set(msgs) == {"Outer", "Outer.Inner"}, "proto: message names", repr(sorted(msgs)))
    t.check(set(msgs.get("Outer", {})) == {"textValue", "inner", "children", "byName", "kind"},
            "proto: fields of Outer", repr(msgs.get("Outer")))
    t.check(msgs.get("Outer", {}).get("children") == ("Outer", True, False), "proto: repeated field")
    t.check(msgs.get("Outer", {}).get("byName") == ("Inner", False, True), "proto: map field")
    t.check(enums == {"Outer.Kind"}, "proto: enums", repr(enums))
    t.check(schemas.snake_to_lower_camel("thought_signature") == "thoughtSignature",
            "proto: lowerCamelCase")


def cli_tests(t, shared):
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemas.py")
    with tempfile.TemporaryDirectory(prefix="quire-schemas-") as tmp:
        good = os.path.join(tmp, "good.json")
        with open(good, "w") as f:
            json.dump(VALID["openai_chat"][0], f)
        lines = os.path.join(tmp, "many.jsonl")
        with open(lines, "w") as f:
            f.write(json.dumps(VALID["openai_chat"][0]) + "\n")
            f.write(json.dumps({"model": "m", "messages": [{"role": "robot", "content": ""}]}) + "\n")
        base = [sys.executable, script, "--data", shared, "--dialect", "openai_chat"]
        r = subprocess.run(base + [good], capture_output=True, text=True)
        t.check(r.returncode == 0 and r.stdout == "", "cli: valid file exits 0",
                "%d %r %r" % (r.returncode, r.stdout, r.stderr))
        r = subprocess.run(base + [good, lines], capture_output=True, text=True)
        t.check(r.returncode == 1 and r.stdout.startswith(lines + ":2: /messages/0/role:"),
                "cli: JSONL line with an error exits 1 and names file:line",
                "%d %r %r" % (r.returncode, r.stdout, r.stderr))
        r = subprocess.run(base[:-2] + ["--dialect", "klingon", good], capture_output=True, text=True)
        t.check(r.returncode == 2, "cli: unknown dialect is a usage error", repr(r.returncode))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", help="ignored")
    ap.add_argument("--src", help="ignored")
    ap.add_argument("--data", required=True)
    args = ap.parse_args()
    schemas.set_shared_dir(args.data)
    t = Tally()

    for dialect, bodies in VALID.items():
        for i, body in enumerate(bodies):
            e = schemas.validate(dialect, body)
            t.check(e == [], "valid %s #%d passes" % (dialect, i), "\n".join(e))
    for i, (dialect, body, where) in enumerate(INVALID):
        e = schemas.validate(dialect, body)
        t.check(any(where in x for x in e), "invalid %s #%d fails at %s" % (dialect, i, where),
                "errors: %r" % e)

    translator_tests(t)
    proto_tests(t)
    cli_tests(t, args.data)

    print("%d passed, %d failed" % (t.passed, t.failed))
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
