#!/usr/bin/python3
"""Writes the inputs of golden/params/* (case.json + inputs): every request parameter of
DESIGN 13 against every dialect, rendered with --envelope, plus error and --lossy cases.

    /usr/bin/python3 golden/params/make_cases.py golden/params

Expected files come from QUIRE_UPDATE_GOLDEN=1 and are checked by hand against the provider
references listed in docs/params.md."""
import json, os, shutil, sys
ROOT = sys.argv[1]

def dump(o): return json.dumps(o, ensure_ascii=False, separators=(',', ':'))

def case(name, args, inputs, desc, files=None):
    d = os.path.join(ROOT, name)
    if os.path.isdir(d): shutil.rmtree(d)
    os.makedirs(d)
    c = {"description": desc, "args": args}
    if files: c["files"] = files
    with open(os.path.join(d, "case.json"), "w") as f: f.write(json.dumps(c, ensure_ascii=False) + "\n")
    for n, v in inputs.items():
        with open(os.path.join(d, n), "w", encoding="utf-8") as f:
            f.write(v if isinstance(v, str) else dump(v) + "\n")

TRANSCRIPT = {
    "system": "You are a coding agent.",
    "tools": [{"name": "read", "description": "Read a file", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}},
              {"name": "bash", "inputSchema": {"type": "object", "properties": {"cmd": {"type": "string"}}}}],
    "messages": [
        {"role": "user", "content": "List src/"},
        {"role": "assistant", "content": [{"type": "text", "text": "Looking."},
                                          {"type": "toolCall", "id": "t1", "name": "read", "input": {"path": "src"}}]},
        {"role": "tool", "content": [{"type": "toolResult", "toolCallId": "t1", "content": "a.c\nb.c"}]},
    ],
}

# provider -> dialect label used in case names
DIALECTS = [("anthropic", "anthropic"), ("openai", "openai_chat"), ("openai_responses", "openai_responses"),
            ("gemini", "gemini"), ("bedrock", "bedrock"), ("mistral", "mistral"), ("ollama", "ollama")]
SCHEMA = {"type": "object", "properties": {"files": {"type": "array", "items": {"type": "string"}}},
          "required": ["files"], "additionalProperties": False}
PARAMS = [
    ("maxTokens", {"maxTokens": 1000}),
    ("temperature", {"temperature": 0.7}),
    ("topP", {"topP": 0.9}),
    ("topK", {"topK": 40}),
    ("stop", {"stop": ["END", "STOP"]}),
    ("seed", {"seed": 42}),
    ("toolChoice-auto", {"toolChoice": "auto"}),
    ("toolChoice-none", {"toolChoice": "none"}),
    ("toolChoice-required", {"toolChoice": "required"}),
    ("toolChoice-tool", {"toolChoice": {"tool": "read"}}),
    ("parallelToolCalls", {"parallelToolCalls": False}),
    ("responseFormat-text", {"responseFormat": "text"}),
    ("responseFormat-json", {"responseFormat": "json"}),
    ("responseFormat-jsonSchema", {"responseFormat": {"type": "jsonSchema", "name": "listing", "schema": SCHEMA, "strict": True}}),
    ("reasoning-effort", {"reasoning": {"effort": "medium"}}),
    ("reasoning-budget", {"maxTokens": 8000, "reasoning": {"budgetTokens": 2048}}),
    ("stream", {"stream": True}),
    ("user", {"user": "user-1234"}),
]
PROVIDER_OPTIONS = {
    "anthropic": {"service_tier": "auto"},
    "openai": {"store": False, "prompt_cache_key": "repo-42"},
    "openai_responses": {"store": False, "truncation": "auto"},
    "gemini": {"generationConfig": {"candidateCount": 1}},
    "bedrock": {"additionalModelRequestFields": {"anthropic_beta": ["token-efficient-tools-2025-02-19"]}},
    "mistral": {"safe_prompt": True},
    "ollama": {"keep_alive": "5m"},
}
# reasoning parameters go to a reasoning model where the row is per model
REASONING_MODEL = {"openai": "gpt-5"}

for prov, label in DIALECTS:
    for pname, params in PARAMS + [("providerOptions", {"maxTokens": 1000, "providerOptions": {prov: PROVIDER_OPTIONS[prov], "other": {"x": 1}}})]:
        args = ["render", "--provider", prov]
        if pname.startswith("reasoning") and prov in REASONING_MODEL:
            args += ["--model", REASONING_MODEL[prov]]
        args += ["--params", "params.json", "--envelope", "--pretty", "transcript.json"]
        case("%s-%s" % (label, pname), args, {"transcript.json": TRANSCRIPT, "params.json": params},
             "%s: %s" % (prov, dump(params)))

# --lossy: what a target cannot carry becomes a request_adjusted event
case("lossy-openai_responses-stop-seed", ["render", "--provider", "openai_responses", "--params", "params.json", "--lossy",
     "--events", "events.jsonl", "transcript.json"],
     {"transcript.json": TRANSCRIPT, "params.json": {"stop": ["END"], "seed": 1, "temperature": 0.5}},
     "Responses has no stop or seed: with --lossy both are dropped with events, temperature is kept", files=["events.jsonl"])
case("lossy-ollama-toolChoice", ["render", "--provider", "ollama", "--params", "params.json", "--lossy",
     "--events", "events.jsonl", "transcript.json"],
     {"transcript.json": TRANSCRIPT, "params.json": {"toolChoice": "required", "user": "u1"}},
     "Ollama has no tool choice or user: dropped with events", files=["events.jsonl"])
# errors
case("error-collision", ["render", "--provider", "openai", "--params", "params.json", "transcript.json"],
     {"transcript.json": TRANSCRIPT, "params.json": {"temperature": 0.2, "providerOptions": {"openai": {"temperature": 0.3}}}},
     "a provider option that sets a field quire wrote is an error")
case("error-unknown-parameter", ["render", "--provider", "anthropic", "--params", "params.json", "transcript.json"],
     {"transcript.json": TRANSCRIPT, "params.json": "{\n  \"temperature\": 0.2,\n  \"max_tokens\": 10\n}\n"},
     "an unknown parameter names itself, with its line and column")
case("error-unknown-tool", ["render", "--provider", "openai", "--tool-choice", "write", "transcript.json"],
     {"transcript.json": TRANSCRIPT}, "a tool choice must name a tool of the transcript")
case("error-temperature-range", ["render", "--provider", "bedrock", "--temperature", "1.5", "transcript.json"],
     {"transcript.json": TRANSCRIPT}, "Converse (Claude) takes a temperature of at most 1")
case("error-flag-number", ["render", "--provider", "openai", "--temperature", "warm", "transcript.json"],
     {"transcript.json": TRANSCRIPT}, "a numeric flag that is not a JSON number is a usage error")
# single flags over --params
case("flags-over-params", ["render", "--provider", "openai", "--model", "gpt-5", "--params", "params.json", "--temperature", "0.1",
     "--stream", "--tool-choice", "bash", "--parallel-tool-calls", "true", "--reasoning-effort", "high", "--user", "u\"2",
     "--envelope", "transcript.json"],
     {"transcript.json": TRANSCRIPT, "params.json": {"temperature": 0.9, "seed": 5, "maxTokens": 300}},
     "single flags replace the same parameter of --params; the rest of the file stays")
case("envelope-no-params", ["render", "--provider", "gemini", "--model", "gemini-2.5-pro", "--envelope", "transcript.json"],
     {"transcript.json": TRANSCRIPT}, "the envelope without parameters: the non-streaming path")
