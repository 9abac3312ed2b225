#!/usr/bin/python3
"""Every golden request is valid: against the providers' real schemas and `quire validate`.

    py_render_schemas.py --quire BIN --src SRC --data SHARED

For every case of golden/render, golden/caps, golden/params and golden/rules that renders a request (a `render` command
with exit status 0), the expected request body is
  - checked with `quire validate --provider P [--model M]` (all seven dialects), and
  - validated against the real schema of its dialect (tests/schemas.py): Anthropic against
    the curated OpenAPI spec, OpenAI Chat against CreateChatCompletionRequest, Responses
    against CreateResponse, Gemini field names against the v1beta protos.
Bedrock Converse, Mistral and Ollama have no schema in tests/data; `quire validate`
covers their structural rules.

Known, documented exception: the curated Anthropic spec (Dec 2025) predates mid-conversation
system messages (beta mid-conversation-system-2026-04-07), so on rows with developer =
system_role, `{"role":"system"}` messages are checked with the rest of the request after
being taken out (and counted).
Also: golden/params cases render with --envelope; their `body` is what is checked. The curated
Anthropic spec predates tool_choice {"type": "none"}: that field is taken out (and counted)
before the schema check, `quire validate` still checks it.
The capability table dump (golden/caps/list) is also checked for every provider having a
row and every row naming a known dialect.
"""

import argparse
import json
import os
import subprocess
import sys

DIALECT_OF = {"anthropic": "anthropic_messages", "openai": "openai_chat", "openai_responses": "openai_responses",
              "gemini": "gemini", "deepseek": "openai_chat", "openai_compatible": "openai_chat"}


def arg(args, name):
    return args[args.index(name) + 1] if name in args else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quire", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.src, "tests"))
    import schemas
    schemas.set_shared_dir(a.data)

    failures = []
    checked = schema_checked = system_taken = tool_choice_none = 0
    for area in ("render", "caps", "params", "rules"):
        root = os.path.join(a.src, "golden", area)
        for name in sorted(os.listdir(root)):
            case = os.path.join(root, name)
            spec_path = os.path.join(case, "case.json")
            if not os.path.isfile(spec_path):
                continue
            spec = json.load(open(spec_path))
            args = spec["args"]
            if not args or args[0] != "render":
                continue
            try:
                exit_code = int(open(os.path.join(case, "expected.exit")).read().strip())
            except OSError:
                failures.append("%s/%s: no expected.exit (run the golden update)" % (area, name))
                continue
            if exit_code != 0:
                continue
            body_text = open(os.path.join(case, "expected.stdout")).read()
            if "--envelope" in args:
                # golden/params: {method, path, headers, body}; the body is what is checked
                envelope = json.loads(body_text)
                body_text = json.dumps(envelope["body"], ensure_ascii=False)
            provider = arg(args, "--provider") or "anthropic"
            model = arg(args, "--model")
            caps = arg(args, "--caps")
            checked += 1
            # 1. quire validate
            cmd = [a.quire, "validate", "--provider", provider]
            if model:
                cmd += ["--model", model]
            if caps:
                cmd += ["--caps", os.path.join(case, caps)]
            r = subprocess.run(cmd + ["-"], input=body_text.encode(), capture_output=True)
            if r.returncode != 0:
                failures.append("%s/%s: quire validate: %s" % (area, name, r.stderr.decode().strip()))
            # 2. the real schema
            dialect = DIALECT_OF.get(provider)
            if caps or not dialect:
                continue
            body = json.loads(body_text)
            if dialect == "anthropic_messages":
                kept = [m for m in body.get("messages", []) if m.get("role") != "system"]
                if len(kept) != len(body.get("messages", [])):
                    system_taken += 1
                    body = dict(body, messages=kept)
                tc = body.get("tool_choice")
                if isinstance(tc, dict) and tc.get("type") == "none":
                    # the curated spec predates tool_choice {"type": "none"} (current SDKs have
                    # ToolChoiceNone); quire validate checks it, the schema the rest
                    tool_choice_none += 1
                    body = {k: v for k, v in body.items() if k != "tool_choice"}
            errs = schemas.validate(dialect, body)
            schema_checked += 1
            for e in errs[:5]:
                failures.append("%s/%s: %s schema: %s" % (area, name, dialect, e))

    # the table dump
    dump_path = os.path.join(a.src, "golden", "caps", "list", "expected.stdout")
    if os.path.isfile(dump_path):
        dump = json.load(open(dump_path))
        dialects = {"anthropic_messages", "openai_chat", "openai_responses", "gemini", "bedrock_converse", "mistral",
                    "ollama"}
        providers = {r["provider"] for r in dump["rows"]}
        for p in ("anthropic", "openai", "openai_responses", "gemini", "bedrock", "mistral", "ollama", "deepseek",
                  "openai_compatible"):
            if p not in providers:
                failures.append("caps/list: no row for provider %s" % p)
        for r in dump["rows"]:
            if r["dialect"] not in dialects:
                failures.append("caps/list: row %s %s: unknown dialect %s" % (r["provider"], r["model"], r["dialect"]))
        seen = {r["dialect"] for r in dump["rows"]}
        if seen != dialects:
            failures.append("caps/list: dialects without a row: %s" % sorted(dialects - seen))

    for f in failures:
        print(f)
    print("%d requests checked with quire validate, %d against schemas (%d with mid-conversation system "
          "messages taken out, %d with Anthropic tool_choice none taken out), %d failures"
          % (checked, schema_checked, system_taken, tool_choice_none, len(failures)))
    if checked < 50:
        print("too few golden requests found: is golden/render populated?")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
