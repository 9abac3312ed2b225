#!/usr/bin/python3
"""Validate provider request bodies against the schemas vendored in tests/data.

Module use:
    import schemas
    schemas.set_shared_dir("/path/to/shared")        # optional, see default below
    errors = schemas.validate("openai_chat", body)   # -> list[str], empty when valid

Command line:
    schemas.py --data DIR --dialect DIALECT FILE...

Dialects and the schema each one is checked against:
    anthropic_messages  components.schemas.CreateMessageRequest of
                        anthropic/anthropic_openapi_curated.yaml (OpenAPI 3.0.3; the
                        requestBody schema of POST /messages)
    openai_chat         components.schemas.CreateChatCompletionRequest of openai/openapi.json
    openai_responses    components.schemas.CreateResponse of openai/openapi.json
    gemini              field names of the v1beta .proto files (content.proto and
                        generative_service.proto), walked message by message from
                        GenerateContentRequest

The OpenAPI documents are translated to JSON Schema draft 2020-12 once per process
(only the components reachable from the request schema) and the compiled validator is
cached. See docs/testing.md for the list of OpenAPI constructs that are translated and
the known defects of the published schemas that are patched here.
"""

import argparse
import copy
import json
import os
import re
import sys
import threading

DIALECTS = ("anthropic_messages", "openai_chat", "openai_responses", "gemini")

_HERE = os.path.dirname(os.path.abspath(__file__))
_shared_dir = os.environ.get("QUIRE_DATA") or os.path.normpath(
    os.path.join(_HERE, "data"))
_cache = {}
_lock = threading.Lock()
_validate_lock = threading.Lock()


def set_shared_dir(path):
    """Point the module at a shared folder; drops any cached validators."""
    global _shared_dir
    with _lock:
        _shared_dir = os.path.abspath(path)
        _cache.clear()


def shared_dir():
    return _shared_dir


# --------------------------------------------------------------------------------------
# JSON Pointer helpers

def _ptr_escape(token):
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer(path):
    return "".join("/" + _ptr_escape(p) for p in path)


# --------------------------------------------------------------------------------------
# OpenAPI -> JSON Schema 2020-12

# Keywords that only annotate; dropped to keep the translated schema small.
_ANNOTATIONS = {"description", "example", "examples", "title", "deprecated", "readOnly",
                "writeOnly", "externalDocs", "xml", "default", "$comment"}
# Keywords whose value is one schema.
_ONE_SCHEMA = {"items", "not", "if", "then", "else", "contains", "propertyNames",
               "additionalProperties", "unevaluatedProperties", "unevaluatedItems",
               "additionalItems"}
# Keywords whose value is a list of schemas.
_SCHEMA_LIST = {"allOf", "anyOf", "oneOf", "prefixItems"}
# Keywords whose value maps names to schemas.
_SCHEMA_MAP = {"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"}

_REF_PREFIX = "#/components/schemas/"


class _Translator:
    """Translates the components of one OpenAPI document.

    Constructs handled:
      - nullable: true            -> "null" added to type (and to enum), or anyOf [.., null]
      - exclusiveMinimum: bool    -> draft 2020-12 numeric form (OpenAPI 3.0 style)
      - $recursiveRef: "#"        -> $ref to the enclosing component
      - discriminator             -> if/then dispatch on the discriminator property (see
                                     _discriminate); oneOf without a discriminator is kept
      - type beside oneOf/anyOf whose branches declare other types -> outer type dropped
      - x-* extensions and annotations -> dropped
    """

    def __init__(self, components):
        self.src = components
        self.out = {}
        self.discriminated = []   # (node, component) pairs to rewrite in the second pass
        self.notes = set()

    def closure(self, roots):
        todo = list(roots)
        while todo:
            name = todo.pop()
            if name in self.out:
                continue
            if name not in self.src:
                raise KeyError("schema component not found: " + name)
            self.out[name] = None   # mark before descending (cycles)
            self.out[name] = self.node(self.src[name], name, todo)
        # Second pass: discriminators need every reachable component translated first.
        plans = [(n, self._plan(n)) for n, _ in self.discriminated]
        for n, plan in plans:
            self._apply(n, plan)
        return self.out

    def node(self, s, comp, todo):
        if not isinstance(s, dict):
            return s   # boolean schemas
        out = {}
        for k, v in s.items():
            if k in _ANNOTATIONS or k.startswith("x-") or k == "nullable":
                continue
            if k == "$ref":
                if not v.startswith(_REF_PREFIX):
                    raise ValueError("unsupported $ref " + v)
                todo.append(v[len(_REF_PREFIX):])
                out[k] = v
            elif k == "$recursiveRef":
                out["$ref"] = _REF_PREFIX + comp
                self.notes.add("$recursiveRef")
            elif k in _ONE_SCHEMA:
                out[k] = self.node(v, comp, todo)
            elif k in _SCHEMA_LIST:
                out[k] = [self.node(x, comp, todo) for x in v]
            elif k in _SCHEMA_MAP:
                out[k] = {name: self.node(x, comp, todo) for name, x in v.items()}
            elif k == "discriminator":
                out[k] = v   # rewritten in the second pass
            else:
                out[k] = copy.deepcopy(v)
        # OpenAPI 3.0 boolean exclusive bounds.
        for ex, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if isinstance(out.get(ex), bool):
                if out[ex] and bound in out:
                    out[ex] = out.pop(bound)
                else:
                    del out[ex]
                self.notes.add("boolean " + ex)
        # A type next to oneOf/anyOf whose branches declare other types (e.g. the curated
        # Anthropic spec's `system: {type: string, oneOf: [string, array]}`) would reject
        # every non-string branch; the branches are authoritative.
        if isinstance(out.get("type"), str):
            for key in ("oneOf", "anyOf"):
                types = {b.get("type") for b in out.get(key, []) if isinstance(b, dict)}
                types.discard(None)
                if types and types != {out["type"]}:
                    del out["type"]
                    self.notes.add("type beside " + key)
                    break
        if isinstance(out.get("discriminator"), dict):
            self.discriminated.append((out, comp))
        else:
            out.pop("discriminator", None)
        if s.get("nullable") is True:
            self.notes.add("nullable")
            t = out.get("type")
            if isinstance(t, str):
                out["type"] = [t, "null"]
                if "enum" in out and None not in out["enum"]:
                    out["enum"] = list(out["enum"]) + [None]
            elif isinstance(t, list):
                if "null" not in t:
                    out["type"] = t + ["null"]
            else:
                out = {"anyOf": [out, {"type": "null"}]}
        return out

    # -- discriminators ----------------------------------------------------------------

    def _values(self, s, prop, seen=frozenset()):
        """The discriminator values a branch accepts, or None if it accepts any."""
        if not isinstance(s, dict):
            return None
        if "$ref" in s:
            name = s["$ref"][len(_REF_PREFIX):]
            if name in seen:
                return None
            return self._values(self.out.get(name), prop, seen | {name})
        p = s.get("properties", {}).get(prop)
        if p is not None:
            v = self._enum_of(p, seen)
            if v is not None:
                return v
        for key in ("allOf",):
            for sub in s.get(key, []):
                v = self._values(sub, prop, seen)
                if v is not None:
                    return v
        for key in ("oneOf", "anyOf"):
            if key in s:
                acc = set()
                for sub in s[key]:
                    if isinstance(sub, dict) and sub.get("type") == "null":
                        continue
                    v = self._values(sub, prop, seen)
                    if v is None:
                        return None
                    acc |= v
                return acc
        return None

    def _enum_of(self, p, seen):
        if not isinstance(p, dict):
            return None
        if "$ref" in p:
            name = p["$ref"][len(_REF_PREFIX):]
            if name in seen:
                return None
            return self._enum_of(self.out.get(name), seen | {name})
        if "const" in p:
            return {p["const"]}
        if "enum" in p:
            return {x for x in p["enum"] if x is not None}
        for key in ("anyOf", "oneOf"):
            if key in p:
                acc = set()
                for sub in p[key]:
                    if isinstance(sub, dict) and sub.get("type") == "null":
                        continue
                    v = self._enum_of(sub, seen)
                    if v is None:
                        return None
                    acc |= v
                return acc
        return None

    def _plan(self, n):
        d = n["discriminator"]
        prop = d.get("propertyName")
        branches = n.get("oneOf") or n.get("anyOf")
        if not prop or not branches:
            return None
        by_ref = {}
        for key, target in (d.get("mapping") or {}).items():
            by_ref.setdefault(target, set()).add(key)
        table = {}        # value -> list of branch indices
        wild = []         # branches accepting any value
        for i, b in enumerate(branches):
            vals = self._values(b, prop)
            if isinstance(b, dict) and b.get("$ref") in by_ref:
                vals = (vals or set()) | by_ref[b["$ref"]]
            if vals is None:
                wild.append(i)
                continue
            for v in vals:
                table.setdefault(v, []).append(i)
        optional = [i for i, b in enumerate(branches) if not self._requires(b, prop)]
        return prop, branches, table, wild, optional

    def _requires(self, s, prop, seen=frozenset()):
        """True if every instance valid against s must have the property."""
        if not isinstance(s, dict):
            return False
        if prop in s.get("required", ()):
            return True
        if "$ref" in s:
            name = s["$ref"][len(_REF_PREFIX):]
            if name not in seen and self._requires(self.out.get(name), prop, seen | {name}):
                return True
        if any(self._requires(x, prop, seen) for x in s.get("allOf", ())):
            return True
        for key in ("oneOf", "anyOf"):
            if s.get(key) and all(self._requires(x, prop, seen) for x in s[key]):
                return True
        return False

    def _apply(self, n, plan):
        del n["discriminator"]
        if plan is None:
            return
        prop, branches, table, wild, optional = plan
        self.notes.add("discriminator")

        def pick(idx):
            idx = sorted(set(idx))
            if len(idx) == 1:
                return branches[idx[0]]
            return {"anyOf": [branches[i] for i in idx]}

        cases = []
        for value in sorted(table, key=str):
            cases.append({"if": {"properties": {prop: {"const": value}}},
                          "then": pick(table[value] + wild)})
        known = sorted(table, key=str)
        if wild:
            cases.append({"if": {"properties": {prop: {"not": {"enum": known}}}},
                          "then": pick(wild)})
        else:
            cases.append({"properties": {prop: {"enum": known}}})
        dispatch = {"if": {"type": "object", "required": [prop]},
                    "then": {"allOf": cases},
                    "else": pick(optional) if optional
                    else {"required": [prop]}}
        # Without the property, any branch that leaves it optional may match (several
        # do in these specs), so oneOf's exclusivity is relaxed to anyOf.
        n.pop("oneOf", None)
        n.pop("anyOf", None)
        n.setdefault("allOf", []).append(dispatch)


def _patch_anthropic(comps):
    """Known defects of the curated Anthropic spec, fixed against the public API docs."""
    cc = comps.get("CacheControlEphemeral", {}).get("properties", {})
    if "ttl" in cc:
        # The spec says integer; the API takes the strings "5m" and "1h".
        cc["ttl"] = {"type": "string", "enum": ["5m", "1h"]}


def _compile_openapi(doc, root, patch=None):
    from jsonschema import Draft202012Validator
    tr = _Translator(doc["components"]["schemas"])
    comps = tr.closure([root])
    if patch:
        patch(comps)
    schema = {"$ref": _REF_PREFIX + root, "components": {"schemas": comps}}
    return Draft202012Validator(schema), sorted(tr.notes)


def _load_openai(which):
    doc = _cache.get("openai-doc")
    if doc is None:
        path = os.path.join(_shared_dir, "schemas", "openai", "openapi.json")
        with open(path, "rb") as f:
            doc = _cache["openai-doc"] = json.load(f)
    return _compile_openapi(doc, which)


def _load_anthropic():
    import yaml
    path = os.path.join(_shared_dir, "schemas", "anthropic", "anthropic_openapi_curated.yaml")
    with open(path, "rb") as f:
        doc = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    # The request schema of POST /messages.
    body = doc["paths"]["/messages"]["post"]["requestBody"]["content"]["application/json"]
    ref = body["schema"]["$ref"]
    return _compile_openapi(doc, ref[len(_REF_PREFIX):], _patch_anthropic)


def _leaf_errors(err, comps):
    """The specific errors under a failed oneOf/anyOf. The intended branch is guessed:
    its type matches the instance, it declares most of the instance's members, its tags
    (an enum or const on a direct member, like `role` or `type`) match, and it got
    deepest into the instance. The errors of the best branches (ties, at most three)
    are reported."""
    if not err.context:
        return [err]
    groups = {}
    for e in err.context:
        groups.setdefault(e.relative_schema_path[0], []).append(e)
    branches = err.schema.get(err.validator) if isinstance(err.schema, dict) else None
    inst = err.instance

    def score(item):
        idx, group = item
        type_miss = any(e.validator == "type" and not e.relative_path for e in group)
        tag_miss = any(e.validator in ("enum", "const") and len(e.relative_path) == 1
                       for e in group)
        overlap = 0
        if isinstance(inst, dict) and isinstance(branches, list) and isinstance(idx, int) \
                and idx < len(branches):
            overlap = len(set(inst) & _declared(branches[idx], comps, frozenset()))
        return (not type_miss, overlap, not tag_miss, max(_depth(e) for e in group))

    ranked = sorted(groups.items(), key=score, reverse=True)
    top = score(ranked[0])
    out = []
    for item in ranked[:3]:
        if score(item) != top:
            break
        for e in item[1]:
            out.extend(_leaf_errors(e, comps))
    return out


def _declared(s, comps, seen):
    """Property names a schema declares, through $ref and combinators."""
    if not isinstance(s, dict):
        return set()
    names = set(s.get("properties", ()))
    ref = s.get("$ref")
    if ref and ref.startswith(_REF_PREFIX) and ref not in seen:
        names |= _declared(comps.get(ref[len(_REF_PREFIX):]), comps, seen | {ref})
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in s.get(key, ()):
            names |= _declared(sub, comps, seen)
    for key in ("then", "else"):
        if key in s:
            names |= _declared(s[key], comps, seen)
    return names


def _depth(err):
    d = len(err.absolute_path)
    for sub in err.context or ():
        d = max(d, _depth(sub))
    return d


def _schema_errors(validator, obj):
    out = []
    comps = validator.schema.get("components", {}).get("schemas", {})
    for err in validator.iter_errors(obj):
        for leaf in _leaf_errors(err, comps):
            path = pointer(leaf.absolute_path) or "/"
            out.append((list(map(str, leaf.absolute_path)), "%s: %s" % (path, leaf.message)))
    out.sort(key=lambda e: e[0])
    seen = set()
    res = []
    for _, m in out:
        if m not in seen:
            seen.add(m)
            res.append(m)
    return res


# --------------------------------------------------------------------------------------
# Gemini: field names from the .proto files

_SCALARS = {"double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64",
            "fixed32", "fixed64", "sfixed32", "sfixed64", "bool", "string", "bytes"}
# Free-form JSON: nothing below these is checked.
_FREEFORM_TYPES = {"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue",
                   "Schema"}
# Keys exempt anywhere when the walk has lost track of the message type.
_FREEFORM_KEYS = {"args", "response", "parameters", "parametersJsonSchema", "responseSchema",
                  "responseJsonSchema"}
_GEMINI_ROLES = ("user", "model")
# Messages of google/type/*.proto that the Gemini protos import (JSON names).
_GOOGLE_TYPE_FIELDS = {"Interval": {"startTime", "endTime"},
                       "LatLng": {"latitude", "longitude"}}


def snake_to_lower_camel(name):
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _strip_proto(text):
    text = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)       # string literals
    text = re.sub(r"//[^\n]*", "", text)                      # line comments
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)         # block comments
    text = re.sub(r"\[[^\]]*\]", "", text)                    # field options
    return text


_FIELD = re.compile(r"^\s*(?:optional\s+|repeated\s+|required\s+)?"
                    r"(map\s*<\s*[\w.]+\s*,\s*[\w.]+\s*>|[\w.]+)\s+(\w+)\s*=\s*\d+\s*$")


def parse_proto(text):
    """Returns {message full name: {jsonName: (type, repeated, is_map)}}, enum names."""
    text = _strip_proto(text)
    messages, enums = {}, set()
    stack = []   # (kind, name)
    pending = ("other", None)
    for tok in re.split(r"([{};])", text):
        if tok == "{":
            stack.append(pending)
            if pending[0] == "message":
                messages.setdefault(pending[1], {})
            elif pending[0] == "enum":
                enums.add(pending[1])
            continue
        if tok == "}":
            if stack:
                stack.pop()
            pending = ("other", None)
            continue
        if tok == ";":
            continue
        stmt = " ".join(tok.split())
        scope = next((n for k, n in reversed(stack) if k == "message"), "")
        m = re.match(r"^(message|enum|oneof|service|rpc)\s+(\w+)", stmt)
        if m and m.group(1) in ("message", "enum"):
            full = scope + "." + m.group(2) if scope else m.group(2)
            pending = (m.group(1), full)
            continue
        if m:
            pending = (m.group(1), m.group(2))
            continue
        pending = ("other", None)
        inner = [k for k, _ in stack]
        if not inner or inner[-1] not in ("message", "oneof") or "message" not in inner:
            continue
        f = _FIELD.match(stmt)
        if not f or f.group(1) in ("option", "reserved", "extensions"):
            continue
        typ, name = f.group(1), f.group(2)
        repeated = stmt.startswith("repeated ")
        is_map = typ.startswith("map")
        if is_map:
            typ = re.sub(r"\s", "", typ)[4:-1].split(",")[1]
        messages[scope][snake_to_lower_camel(name)] = (typ, repeated, is_map)
    return messages, enums


class _Gemini:
    PACKAGE = "google.ai.generativelanguage.v1beta."

    def __init__(self, files, legacy=None):
        # legacy: components.schemas of the older Gemini OpenAPI conversion, consulted
        # only for message types the two .proto files import from elsewhere
        # (SafetySetting from safety.proto, google.type.LatLng, ...).
        self.legacy = legacy or {}
        self.messages, self.enums = {}, set()
        for path in files:
            with open(path, encoding="utf-8") as f:
                msgs, enums = parse_proto(f.read())
            self.messages.update(msgs)
            self.enums |= enums
        self.all_fields = set()
        for fields in self.messages.values():
            self.all_fields |= set(fields)
        self.freeform_keys = set(_FREEFORM_KEYS)
        for fields in self.messages.values():
            for name, (typ, _, is_map) in fields.items():
                if self._freeform(typ) or is_map:
                    self.freeform_keys.add(name)

    def _freeform(self, typ):
        return typ in _FREEFORM_TYPES or typ.rsplit(".", 1)[-1] == "Schema" or \
            typ.startswith("google.protobuf.")

    def resolve(self, typ, scope):
        """Full message name for a field type seen inside message `scope`, or a marker."""
        if typ.startswith(self.PACKAGE):
            typ = typ[len(self.PACKAGE):]
        if self._freeform(typ):
            return "freeform"
        if typ in _SCALARS:
            return "scalar"
        parts = scope.split(".") if scope else []
        while True:
            cand = ".".join(parts + [typ])
            if cand in self.messages:
                return cand
            if cand in self.enums:
                return "scalar"
            if not parts:
                return "ext:" + typ.rsplit(".", 1)[-1]   # defined in a file we do not have
            parts.pop()

    def check(self, obj):
        errs = []
        if not isinstance(obj, dict):
            return ["/: request body is not an object"]
        self._walk(obj, "GenerateContentRequest", [], errs)
        contents = obj.get("contents")
        if isinstance(contents, list):
            for i, c in enumerate(contents):
                if isinstance(c, dict) and "role" in c and c["role"] not in _GEMINI_ROLES:
                    errs.append("%s: role %s is not one of %s" % (
                        pointer(["contents", i, "role"]), json.dumps(c["role"]),
                        json.dumps(list(_GEMINI_ROLES))))
        return errs

    def _walk(self, obj, msg, path, errs):
        """obj is a JSON object of message type msg (None when the type is unknown)."""
        if not isinstance(obj, dict):
            errs.append("%s: expected an object (%s)" % (pointer(path) or "/", msg or "message"))
            return
        fields = self.messages.get(msg) if msg else None
        if msg and msg.startswith("ext:"):
            props = self.legacy.get(msg[4:], {}).get("properties") or \
                _GOOGLE_TYPE_FIELDS.get(msg[4:])
            if props is not None:
                for key, val in obj.items():
                    if key not in props:
                        errs.append("%s: unknown field %s in %s" % (
                            pointer(path + [key]), json.dumps(key), msg[4:]))
                    elif key not in self.freeform_keys:
                        self._walk_any(val, path + [key], errs)
                return
        for key, val in obj.items():
            p = path + [key]
            if fields is None:
                # Unknown message type: fall back to the set of all field names.
                if key not in self.all_fields:
                    errs.append("%s: unknown field %s" % (pointer(p), json.dumps(key)))
                    continue
                if key in self.freeform_keys:
                    continue
                self._walk_any(val, p, errs)
                continue
            if key not in fields:
                errs.append("%s: unknown field %s in %s" % (pointer(p), json.dumps(key), msg))
                continue
            typ, repeated, is_map = fields[key]
            target = self.resolve(typ, msg)
            if target in ("freeform", "scalar"):
                if target == "scalar" and isinstance(val, (dict, list)) and not repeated:
                    errs.append("%s: expected a %s value" % (pointer(p), typ))
                continue
            if is_map:
                if not isinstance(val, dict):
                    errs.append("%s: expected an object (map)" % pointer(p))
                    continue
                for k2, v2 in val.items():
                    self._walk(v2, target, p + [k2], errs)
            elif repeated:
                if not isinstance(val, list):
                    errs.append("%s: expected an array of %s" % (pointer(p), target or typ))
                    continue
                for i, item in enumerate(val):
                    self._walk(item, target, p + [i], errs)
            else:
                self._walk(val, target, p, errs)

    def _walk_any(self, val, path, errs):
        if isinstance(val, dict):
            self._walk(val, None, path, errs)
        elif isinstance(val, list):
            for i, item in enumerate(val):
                self._walk_any(item, path + [i], errs)


def _load_gemini():
    d = os.path.join(_shared_dir, "schemas", "gemini")
    legacy = {}
    try:
        with open(os.path.join(d, "generativelanguage-openapi-20241016.json"), "rb") as f:
            legacy = json.load(f)["components"]["schemas"]
    except (OSError, KeyError, ValueError):
        pass
    return _Gemini([os.path.join(d, "v1beta.content.proto"),
                    os.path.join(d, "v1beta.generative_service.proto")], legacy)


# --------------------------------------------------------------------------------------
# Public API

def _get(dialect):
    with _lock:
        v = _cache.get(dialect)
        if v is None:
            if dialect == "openai_chat":
                v = _load_openai("CreateChatCompletionRequest")
            elif dialect == "openai_responses":
                v = _load_openai("CreateResponse")
            elif dialect == "anthropic_messages":
                v = _load_anthropic()
            elif dialect == "gemini":
                v = (_load_gemini(), [])
            else:
                raise ValueError("unknown dialect %r (one of %s)" % (dialect, ", ".join(DIALECTS)))
            _cache[dialect] = v
            if all(d in _cache for d in ("openai_chat", "openai_responses")):
                _cache.pop("openai-doc", None)
        return v


def validate(dialect, obj):
    """Errors in request body `obj` for `dialect`, each "/json/pointer: message"."""
    v = _get(dialect)[0]
    # A compiled validator keeps a resolution-scope stack: one caller at a time.
    with _validate_lock:
        if dialect == "gemini":
            return v.check(obj)
        return _schema_errors(v, obj)


def notes(dialect):
    """OpenAPI constructs that were translated for this dialect (for docs and debugging)."""
    return list(_get(dialect)[1])


def _load_docs(path):
    """A file holds one JSON document, or JSON Lines (one request per line)."""
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as f:
            data = f.read()
    text = data.decode("utf-8")
    try:
        return [(None, json.loads(text))]
    except json.JSONDecodeError as first:
        lines = [l for l in text.split("\n")]
        docs = []
        for n, line in enumerate(lines, 1):
            if line.strip():
                try:
                    docs.append((n, json.loads(line)))
                except json.JSONDecodeError:
                    raise first
        if len(docs) < 2:
            raise first
        return docs


def main(argv=None):
    ap = argparse.ArgumentParser(description="Validate provider request bodies.")
    ap.add_argument("--data", help="the shared folder (default: ../shared beside the checkout)")
    ap.add_argument("--dialect", required=True, choices=DIALECTS)
    ap.add_argument("files", nargs="+", metavar="FILE", help="request body (JSON or JSONL), - for stdin")
    args = ap.parse_args(argv)
    if args.data:
        set_shared_dir(args.data)
    bad = 0
    for path in args.files:
        try:
            docs = _load_docs(path)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            print("%s: cannot read: %s" % (path, e), file=sys.stderr)
            bad += 1
            continue
        for line, doc in docs:
            where = path if line is None else "%s:%d" % (path, line)
            errs = validate(args.dialect, doc)
            for e in errs:
                print("%s: %s" % (where, e))
            if errs:
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
