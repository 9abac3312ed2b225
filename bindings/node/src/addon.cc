// quire — the N-API addon (node-addon-api) over include/quire.h.
//
// Thin by design, like the Python extension: inputs are Buffers or strings (index.js turns
// objects into JSON), outputs are Buffers; errors are thrown as the QuireError class that
// index.js registers (setErrorClass), carrying the quire_error fields. Calls are synchronous:
// the library does no I/O and a call costs microseconds to milliseconds, less than a thread hop.
#include <napi.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "quire.h"

namespace {

// Per-env instance data: the error class, and the scratch a JS string argument of render() is
// transcoded into (grown once to the largest input, reused by every later call on this env).
struct AddonData {
    Napi::FunctionReference errorClass;
    char16_t *u16 = nullptr;  // the string's UTF-16 code units (napi_get_value_string_utf16)
    size_t u16cap = 0;
    char *u8 = nullptr;       // their UTF-8 (at most 3 bytes per unit)
    size_t u8cap = 0;
    bool scratchBusy = false;  // a nested call (from a JS callback) takes a private copy instead
    ~AddonData() {
        std::free(u16);
        std::free(u8);
    }
};

// One UTF-16 unit (or surrogate pair) at in[*i] as UTF-8; a lone surrogate becomes U+FFFD.
inline unsigned char *PutUnit(const char16_t *in, size_t n, size_t *i, unsigned char *o) {
    uint32_t c = in[(*i)++];
    if (c < 0x80) {
        *o++ = static_cast<unsigned char>(c);
    } else if (c < 0x800) {
        *o++ = static_cast<unsigned char>(0xC0 | (c >> 6));
        *o++ = static_cast<unsigned char>(0x80 | (c & 0x3F));
    } else if (c >= 0xD800 && c <= 0xDFFF) {
        if (c <= 0xDBFF && *i < n && in[*i] >= 0xDC00 && in[*i] <= 0xDFFF) {
            uint32_t cp = 0x10000 + ((c - 0xD800) << 10) + (static_cast<uint32_t>(in[(*i)++]) - 0xDC00);
            *o++ = static_cast<unsigned char>(0xF0 | (cp >> 18));
            *o++ = static_cast<unsigned char>(0x80 | ((cp >> 12) & 0x3F));
            *o++ = static_cast<unsigned char>(0x80 | ((cp >> 6) & 0x3F));
            *o++ = static_cast<unsigned char>(0x80 | (cp & 0x3F));
        } else {
            *o++ = 0xEF;
            *o++ = 0xBF;
            *o++ = 0xBD;
        }
    } else {
        *o++ = static_cast<unsigned char>(0xE0 | (c >> 12));
        *o++ = static_cast<unsigned char>(0x80 | ((c >> 6) & 0x3F));
        *o++ = static_cast<unsigned char>(0x80 | (c & 0x3F));
    }
    return o;
}

// UTF-16 -> UTF-8, V8's way (a lone surrogate becomes U+FFFD). out holds 3 bytes per unit.
// ASCII goes 16 units at a time (SSE2 on x86-64): a block's ASCII prefix is stored packed, the
// non-ASCII run after it one unit at a time, then back to blocks. Elsewhere, 4-unit words.
size_t Utf16ToUtf8(const char16_t *in, size_t n, char *out) {
    unsigned char *o = reinterpret_cast<unsigned char *>(out);
    size_t i = 0;
#if defined(__SSE2__)
    const __m128i high = _mm_set1_epi16(static_cast<short>(0xFF80));
    while (i + 16 <= n) {
        __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(in + i));
        __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(in + i + 8));
        uint32_t m = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(a, high), _mm_setzero_si128()))) |
                     static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(b, high), _mm_setzero_si128())))
                         << 16;
        // 16 bytes fit: at least 16 units remain, and out holds 3 bytes for each
        _mm_storeu_si128(reinterpret_cast<__m128i *>(o), _mm_packus_epi16(a, b));
        if (m == 0xFFFFFFFFu) {
            o += 16;
            i += 16;
            continue;
        }
        size_t k = static_cast<size_t>(__builtin_ctz(~m)) / 2;  // the ASCII prefix
        o += k;
        i += k;
        while (i < n && in[i] >= 0x80) o = PutUnit(in, n, &i, o);
    }
#else
    while (i + 4 <= n) {
        uint64_t w;
        std::memcpy(&w, in + i, 8);
        if ((w & 0xFF80FF80FF80FF80ull) == 0) {
            for (int k = 0; k < 4; k++) o[k] = static_cast<unsigned char>(in[i + k]);
            o += 4;
            i += 4;
            continue;
        }
        o = PutUnit(in, n, &i, o);
    }
#endif
    while (i < n) o = PutUnit(in, n, &i, o);
    return static_cast<size_t>(o - reinterpret_cast<unsigned char *>(out));
}

bool Grow(void **p, size_t *cap, size_t need) {
    if (*cap >= need) return true;
    size_t c = need < 4096 ? 4096 : need + need / 4;
    void *np = std::realloc(*p, c);
    if (!np) return false;
    *p = np;
    *cap = c;
    return true;
}

// A JS string argument as UTF-8 in the env's scratch (no std::string, no second V8 pass to
// measure the UTF-8 length): one copy of the UTF-16 units, one SIMD-assisted transcode. The
// bytes stay valid until the scratch is released (the end of the call that took it).
class StringScratch {
  public:
    StringScratch(Napi::Env env, napi_value v) : env_(env) {
        ad_ = env.GetInstanceData<AddonData>();
        size_t n = 0;
        napi_status s = napi_get_value_string_utf16(env, v, nullptr, 0, &n);
        if (s != napi_ok) throw Napi::Error::New(env);
        char16_t *u16;
        char *u8;
        if (ad_ && !ad_->scratchBusy) {
            if (!Grow(reinterpret_cast<void **>(&ad_->u16), &ad_->u16cap, (n + 1) * sizeof(char16_t)) ||
                !Grow(reinterpret_cast<void **>(&ad_->u8), &ad_->u8cap, 3 * n + 1))
                throw Napi::Error::New(env, "out of memory");
            ad_->scratchBusy = true;
            owns_ = true;
            u16 = ad_->u16;
            u8 = ad_->u8;
        } else {
            priv16_.resize(n + 1);
            priv8_.resize(3 * n + 1);
            u16 = priv16_.data();
            u8 = &priv8_[0];
        }
        size_t got = 0;
        s = napi_get_value_string_utf16(env, v, u16, n + 1, &got);
        if (s != napi_ok) {
            Release();
            throw Napi::Error::New(env);
        }
        data_ = u8;
        len_ = Utf16ToUtf8(u16, got, u8);
    }
    ~StringScratch() { Release(); }
    StringScratch(const StringScratch &) = delete;
    StringScratch &operator=(const StringScratch &) = delete;
    const char *data() const { return data_; }
    size_t len() const { return len_; }

  private:
    void Release() {
        if (owns_) {
            ad_->scratchBusy = false;
            owns_ = false;
            // a one-off huge input does not pin its scratch for the life of the process
            if (ad_->u8cap > (size_t(64) << 20)) {
                std::free(ad_->u16);
                std::free(ad_->u8);
                ad_->u16 = nullptr;
                ad_->u8 = nullptr;
                ad_->u16cap = ad_->u8cap = 0;
            }
        }
    }
    Napi::Env env_;
    AddonData *ad_ = nullptr;
    bool owns_ = false;
    std::u16string priv16_;
    std::string priv8_;
    const char *data_ = "";
    size_t len_ = 0;
};

// Bytes of a Buffer / TypedArray / string argument; owns a copy only for strings.
class Input {
  public:
    Input() = default;
    explicit Input(const Napi::Value &v) { Set(v); }
    void Set(const Napi::Value &v) {
        have_ = true;
        if (v.IsBuffer() || v.IsTypedArray()) {
            auto a = v.As<Napi::Uint8Array>();
            data_ = reinterpret_cast<const char *>(a.Data());
            len_ = a.ByteLength();
        } else if (v.IsString()) {
            str_ = v.As<Napi::String>().Utf8Value();
            data_ = str_.data();
            len_ = str_.size();
        } else if (v.IsUndefined() || v.IsNull()) {
            have_ = false;
        } else {
            throw Napi::TypeError::New(v.Env(), "expected a Buffer, Uint8Array or string");
        }
    }
    bool have() const { return have_; }
    const char *data() const { return have_ ? data_ : nullptr; }
    size_t len() const { return have_ ? len_ : 0; }

  private:
    bool have_ = false;
    const char *data_ = "";
    size_t len_ = 0;
    std::string str_;
};

std::string OptString(const Napi::Object &o, const char *key, bool *have) {
    Napi::Value v = o.Get(key);
    *have = v.IsString();
    return *have ? v.As<Napi::String>().Utf8Value() : std::string();
}

Napi::Value ErrorValue(Napi::Env env, quire_status st, const quire_error &e) {
    auto *ad = env.GetInstanceData<AddonData>();
    Napi::Object f = Napi::Object::New(env);
    f.Set("status", Napi::Number::New(env, st));
    f.Set("code", Napi::String::New(env, quire_status_name(st)));
    f.Set("offset", e.offset == SIZE_MAX ? env.Null() : Napi::Number::New(env, static_cast<double>(e.offset)));
    f.Set("line", Napi::Number::New(env, e.line));
    f.Set("column", Napi::Number::New(env, e.column));
    f.Set("pointer", e.pointer[0] ? Napi::String::New(env, e.pointer) : env.Null());
    f.Set("field", e.field[0] ? Napi::String::New(env, e.field) : env.Null());
    f.Set("message", Napi::String::New(env, e.message));
    if (ad && !ad->errorClass.IsEmpty()) return ad->errorClass.New({f});
    Napi::Error err = Napi::Error::New(env, e.message);
    return err.Value();
}

[[noreturn]] void Throw(Napi::Env env, quire_status st, const quire_error &e) {
    throw Napi::Error(env, ErrorValue(env, st, e));
}

[[noreturn]] void ThrowInvalid(Napi::Env env, const char *msg) {
    quire_error e;
    std::memset(&e, 0, sizeof e);
    e.offset = SIZE_MAX;
    std::snprintf(e.message, sizeof e.message, "%s", msg);
    Throw(env, QUIRE_E_INVALID, e);
}

// quire_bytes -> Buffer (one copy; the library's buffer is freed).
Napi::Buffer<char> Take(Napi::Env env, quire_bytes *b) {
    auto buf = Napi::Buffer<char>::Copy(env, b->data ? b->data : "", b->len);
    quire_bytes_free(b);
    return buf;
}

struct Owned {  // RAII for library objects
    quire_transcript *t = nullptr;
    quire_state *s = nullptr;
    quire_caps *caps = nullptr;
    ~Owned() {
        quire_transcript_free(t);
        quire_state_free(s);
        quire_caps_free(caps);
    }
};

void LoadState(Napi::Env env, const Input &in, const char *sid, quire_state **out) {
    quire_error e;
    quire_status st = QUIRE_OK;
    if (in.have()) st = quire_state_parse(in.data(), in.len(), nullptr, out, &e);
    else if (sid) st = quire_state_new(sid, nullptr, out, &e);
    if (st) Throw(env, st, e);
}

void LoadCaps(Napi::Env env, const Input &in, quire_caps **out) {
    quire_error e;
    if (!in.have()) return;
    quire_status st = quire_caps_parse(in.data(), in.len(), nullptr, out, &e);
    if (st) Throw(env, st, e);
}

Napi::Value StateBytes(Napi::Env env, const quire_state *s) {
    quire_bytes b = {};
    quire_error e;
    quire_status st = quire_state_write(s, 0, &b, &e);
    if (st) Throw(env, st, e);
    return Take(env, &b);
}

// A string argument (provider, model, dialect) without a heap allocation when it is short;
// c() is null when the argument is not a string.
class ArgString {
  public:
    ArgString(Napi::Env env, napi_value v) {
        napi_valuetype t;
        if (napi_typeof(env, v, &t) != napi_ok || t != napi_string) return;
        size_t n = 0;
        if (napi_get_value_string_utf8(env, v, buf_, sizeof buf_, &n) != napi_ok) throw Napi::Error::New(env);
        p_ = buf_;
        if (n + 1 >= sizeof buf_) {  // maybe cut: the whole string
            big_ = Napi::String(env, v).Utf8Value();
            p_ = big_.c_str();
        }
    }
    const char *c() const { return p_; }

  private:
    char buf_[128];
    std::string big_;
    const char *p_ = nullptr;
};

// render(transcript, provider, model, state, caps, policy, pretty, maxTokens, lossy, from, into)
//   -> [body (or its length, written into `into`), stateJson, events | undefined]
// Positional, so no options object is built and read per call; the body is the library's own
// Buffer filled by one copy; a string transcript is transcoded into the env's scratch and
// parsed borrowing it (the request owns its bytes, so nothing points into the scratch after).
Napi::Value Render(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ArgString provider(env, info[1]), model(env, info[2]), from(env, info[9]);
    if (!provider.c()) ThrowInvalid(env, "render: provider is required");
    std::unique_ptr<StringScratch> str;
    Input t;
    if (info[0].IsString()) str.reset(new StringScratch(env, info[0]));
    else t.Set(info[0]);
    const char *td = str ? str->data() : t.data();
    size_t tl = str ? str->len() : t.len();
    Input sb(info[3]), cb(info[4]), pb(info[5]);
    Owned own;
    LoadState(env, sb, nullptr, &own.s);
    LoadCaps(env, cb, &own.caps);
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = provider.c();
    ro.model = model.c();
    ro.pretty = info[6].ToBoolean().Value() ? 1 : 0;
    if (info[7].IsNumber()) ro.max_tokens = info[7].As<Napi::Number>().Uint32Value();
    ro.caps = own.caps;
    quire_error e;
    quire_status st;
    if (pb.have() && (st = quire_render_policy_apply(pb.data(), pb.len(), &ro, &e))) Throw(env, st, e);
    if (info[8].ToBoolean().Value()) ro.lossy = 1;
    // into: the caller's buffer; the library writes the body straight into it when the body
    // and its NUL fit, and its length comes back instead of a Buffer
    char *dst = nullptr;
    size_t cap = 0;
    if (info.Length() > 10 && info[10].IsTypedArray()) {
        Napi::TypedArray into = info[10].As<Napi::TypedArray>();
        cap = into.ByteLength();
        dst = static_cast<char *>(into.ArrayBuffer().Data()) + into.ByteOffset();
        // the transcript is parsed borrowing its bytes: a body written over them while they
        // are read would be wrong, so an `into` that overlaps the transcript gets a copy
        bool overlap = td && tl && dst < td + tl && td < dst + cap;
        if (!overlap) {
            ro.into = dst;
            ro.into_cap = cap;
        }
    }
    quire_options qo = QUIRE_OPTIONS_INIT;
    qo.flags = QUIRE_PARSE_BORROW;
    st = from.c() ? quire_transcript_parse_dialect(from.c(), td, tl, &qo, &own.t, &e)
            : quire_transcript_parse(td, tl, &qo, &own.t, &e);
    if (st) Throw(env, st, e);
    quire_render_result res;
    st = quire_render(own.t, own.s, &ro, &qo, &res, &e);
    if (st) Throw(env, st, e);
    Napi::Array r = Napi::Array::New(env, 3);
    try {
        r.Set(1u, StateBytes(env, res.state));
        bool wrote = false;
        if (dst && res.request.data == dst) {
            r.Set(0u, Napi::Number::New(env, static_cast<double>(res.request.len)));
            wrote = true;
        } else if (dst && res.request.len <= cap) {  // exactly cap bytes: no room for the NUL
            if (res.request.len) std::memcpy(dst, res.request.data, res.request.len);
            r.Set(0u, Napi::Number::New(env, static_cast<double>(res.request.len)));
            wrote = true;
        }
        if (!wrote) r.Set(0u, Take(env, &res.request));
        if (res.events.len) r.Set(2u, Take(env, &res.events));
    } catch (...) {
        quire_render_result_free(&res);
        throw;
    }
    quire_render_result_free(&res);
    return r;
}

void LoadPolicy(Napi::Env env, const Input &pb, const Napi::Value &budget, quire_compact_policy *p) {
    quire_error e;
    quire_status st;
    if (pb.have() && (st = quire_compact_policy_parse(pb.data(), pb.len(), p, &e))) Throw(env, st, e);
    if (budget.IsNumber() && budget.As<Napi::Number>().Int64Value() > 0)
        p->budget_tokens = static_cast<uint64_t>(budget.As<Napi::Number>().Int64Value());
}

// compact(transcript, {policy, budgetTokens, summary, state}) -> {transcript, state, events, report, changed}
Napi::Value Compact(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Input t(info[0]);
    Napi::Object o = info[1].As<Napi::Object>();
    Input pb(o.Get("policy")), sum(o.Get("summary")), sb(o.Get("state"));
    Owned own;
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    LoadPolicy(env, pb, o.Get("budgetTokens"), &p);
    LoadState(env, sb, nullptr, &own.s);
    quire_error e;
    quire_options qo = QUIRE_OPTIONS_INIT;
    qo.flags = QUIRE_PARSE_BORROW;
    quire_status st = quire_transcript_parse(t.data(), t.len(), &qo, &own.t, &e);
    if (st) Throw(env, st, e);
    quire_compact_result res;
    st = quire_compact(own.t, own.s, &p, sum.data(), sum.len(), &qo, &res, &e);
    if (st) Throw(env, st, e);
    quire_bytes tw = {};
    st = quire_transcript_write(res.transcript, 0, &tw, &e);
    if (st) {
        quire_compact_result_free(&res);
        Throw(env, st, e);
    }
    Napi::Object r = Napi::Object::New(env);
    r.Set("transcript", Take(env, &tw));
    try {
        r.Set("state", StateBytes(env, res.state));
    } catch (...) {
        quire_compact_result_free(&res);
        throw;
    }
    r.Set("events", Take(env, &res.events));
    r.Set("report", Take(env, &res.report));
    r.Set("changed", Napi::Boolean::New(env, res.changed != 0));
    quire_compact_result_free(&res);
    return r;
}

Napi::Value Plan(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Input t(info[0]);
    Napi::Object o = info[1].As<Napi::Object>();
    Input pb(o.Get("policy"));
    Owned own;
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    LoadPolicy(env, pb, o.Get("budgetTokens"), &p);
    quire_error e;
    quire_options qo = QUIRE_OPTIONS_INIT;
    qo.flags = QUIRE_PARSE_BORROW;
    quire_status st = quire_transcript_parse(t.data(), t.len(), &qo, &own.t, &e);
    quire_bytes out = {};
    if (!st) st = quire_compact_plan(own.t, &p, 0, &qo, &out, &e);
    if (st) Throw(env, st, e);
    return Take(env, &out);
}

Napi::Value Estimate(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Input t(info[0]);
    Owned own;
    quire_error e;
    quire_options qo = QUIRE_OPTIONS_INIT;
    qo.flags = QUIRE_PARSE_BORROW;
    quire_status st = quire_transcript_parse(t.data(), t.len(), &qo, &own.t, &e);
    if (st) Throw(env, st, e);
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    return Napi::Number::New(env, static_cast<double>(quire_compact_estimate(own.t, &p)));
}

// validate(body, {provider, model, caps}) -> report Buffer (empty when valid)
Napi::Value Validate(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Input b(info[0]);
    Napi::Object o = info[1].As<Napi::Object>();
    bool hp, hm;
    std::string provider = OptString(o, "provider", &hp), model = OptString(o, "model", &hm);
    if (!hp) ThrowInvalid(env, "validate: provider is required");
    Input cb(o.Get("caps"));
    Owned own;
    LoadCaps(env, cb, &own.caps);
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = provider.c_str();
    ro.model = hm ? model.c_str() : nullptr;
    ro.caps = own.caps;
    quire_bytes rep = {};
    quire_error e;
    quire_status st = quire_validate(b.data(), b.len(), &ro, nullptr, &rep, &e);
    if (st != QUIRE_OK && st != QUIRE_E_VALIDATE) Throw(env, st, e);
    return Take(env, &rep);
}

// importLog(data, {format, flags, provider}) -> {log, report}
Napi::Value ImportLog(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Input d(info[0]);
    Napi::Object o = info[1].As<Napi::Object>();
    bool hf, hp;
    std::string format = OptString(o, "format", &hf), provider = OptString(o, "provider", &hp);
    if (!hf) ThrowInvalid(env, "importLog: format is required");
    quire_import_options io = QUIRE_IMPORT_OPTIONS_INIT;
    io.format = format.c_str();
    io.provider = hp ? provider.c_str() : nullptr;
    Napi::Value fl = o.Get("flags");
    if (fl.IsNumber()) io.flags = fl.As<Napi::Number>().Uint32Value();
    quire_bytes log = {}, rep = {};
    quire_error e;
    quire_status st = quire_import(d.data(), d.len(), &io, nullptr, &log, &rep, &e);
    if (st) Throw(env, st, e);
    Napi::Object r = Napi::Object::New(env);
    r.Set("log", Take(env, &log));
    r.Set("report", Take(env, &rep));
    return r;
}

// replay(log, {provider, model, digest}) -> JSONL Buffer
Napi::Value Replay(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Input l(info[0]);
    Napi::Object o = info[1].As<Napi::Object>();
    bool hp, hm;
    std::string provider = OptString(o, "provider", &hp), model = OptString(o, "model", &hm);
    quire_replay_options ro = QUIRE_REPLAY_OPTIONS_INIT;
    ro.provider = hp ? provider.c_str() : nullptr;
    ro.model = hm ? model.c_str() : nullptr;
    if (o.Get("digest").ToBoolean().Value()) ro.flags |= QUIRE_REPLAY_DIGEST;
    quire_options qo = QUIRE_OPTIONS_INIT;
    qo.flags = QUIRE_PARSE_BORROW;
    quire_bytes out = {};
    quire_error e;
    quire_status st = quire_replay_run(l.data(), l.len(), &ro, &qo, &out, &e);
    if (st) Throw(env, st, e);
    return Take(env, &out);
}

// stateApply(state|null, lines, sessionId) -> {state, events, responses}
Napi::Value StateApply(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Input sb(info[0]), lb(info[1]);
    std::string sid = info[2].IsString() ? info[2].As<Napi::String>().Utf8Value() : std::string();
    Owned own;
    LoadState(env, sb, sid.c_str(), &own.s);
    quire_state *next = nullptr;
    quire_bytes ev = {}, resp = {};
    quire_error e;
    quire_status st = quire_state_apply_lines(own.s, lb.data(), lb.len(), nullptr, &next, &ev, &resp, &e);
    if (st) Throw(env, st, e);
    Napi::Object r = Napi::Object::New(env);
    try {
        r.Set("state", StateBytes(env, next));
    } catch (...) {
        quire_state_free(next);
        quire_bytes_free(&ev);
        quire_bytes_free(&resp);
        throw;
    }
    quire_state_free(next);
    r.Set("events", Take(env, &ev));
    r.Set("responses", Take(env, &resp));
    return r;
}

Napi::Value Caps(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    std::string provider = info[0].As<Napi::String>().Utf8Value();
    std::string model = info[1].IsString() ? info[1].As<Napi::String>().Utf8Value() : std::string();
    quire_bytes out = {};
    quire_error e;
    quire_status st = quire_caps_resolve(nullptr, provider.c_str(), info[1].IsString() ? model.c_str() : nullptr, 0,
                                         &out, &e);
    if (st) Throw(env, st, e);
    return Take(env, &out);
}

Napi::Value Digest(const Napi::CallbackInfo &info) {
    Input d(info[0]);
    char out[33];
    quire_digest128(d.data(), d.len(), out);
    return Napi::String::New(info.Env(), out, 32);
}

Napi::Value SetErrorClass(const Napi::CallbackInfo &info) {
    auto *ad = info.Env().GetInstanceData<AddonData>();
    ad->errorClass = Napi::Persistent(info[0].As<Napi::Function>());
    return info.Env().Undefined();
}

}  // namespace

#include "session.inc"

Napi::Object Init(Napi::Env env, Napi::Object exports) {
    env.SetInstanceData(new AddonData());
    exports.Set("render", Napi::Function::New(env, Render, "render"));
    exports.Set("compact", Napi::Function::New(env, Compact, "compact"));
    exports.Set("plan", Napi::Function::New(env, Plan, "plan"));
    exports.Set("estimate", Napi::Function::New(env, Estimate, "estimate"));
    exports.Set("validate", Napi::Function::New(env, Validate, "validate"));
    exports.Set("importLog", Napi::Function::New(env, ImportLog, "importLog"));
    exports.Set("replay", Napi::Function::New(env, Replay, "replay"));
    exports.Set("stateApply", Napi::Function::New(env, StateApply, "stateApply"));
    exports.Set("caps", Napi::Function::New(env, Caps, "caps"));
    exports.Set("digest", Napi::Function::New(env, Digest, "digest"));
    exports.Set("setErrorClass", Napi::Function::New(env, SetErrorClass, "setErrorClass"));
    exports.Set("libraryVersion", Napi::String::New(env, quire_version()));
    exports.Set("IMPORT_LIFT_REMINDERS", Napi::Number::New(env, QUIRE_IMPORT_LIFT_REMINDERS));
    exports.Set("IMPORT_SKIP_INVALID", Napi::Number::New(env, QUIRE_IMPORT_SKIP_INVALID));
    exports.Set("IMPORT_SIDECHAINS", Napi::Number::New(env, QUIRE_IMPORT_SIDECHAINS));
    SessionInit(env, exports);
    return exports;
}

NODE_API_MODULE(quire, Init)
