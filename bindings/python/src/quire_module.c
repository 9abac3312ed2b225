/*
 * quire._quire — the CPython extension over include/quire.h.
 *
 * Thin by design: every function takes bytes-like inputs (the Python layer in
 * quire/__init__.py turns str/dict/list into UTF-8 JSON), releases the GIL for
 * the library call and returns bytes. Errors become quire.Error subclasses
 * built by the factory the Python layer registers (_set_error_factory), with
 * the quire_error fields (code, offset, line, column, pointer, field, message).
 * The library is pure and its objects are values, so module functions are safe
 * from any thread; a Session serialises its own calls with a lock.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

#include <stdint.h>
#include <string.h>

#include "quire.h"

static PyObject *g_error_factory; /* callable(status, name, offset, line, column, pointer, field, message) */

static PyObject *text_or_none(const char *s) {
    if (!s || !*s) Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

/* Raises the quire.Error subclass for (st, e); returns NULL. */
static PyObject *raise_quire(quire_status st, const quire_error *e) {
    if (st == QUIRE_E_NOMEM) return PyErr_NoMemory();
    PyObject *off = e->offset == SIZE_MAX ? (Py_INCREF(Py_None), Py_None) : PyLong_FromSize_t(e->offset);
    PyObject *args = Py_BuildValue("(isNIINNN)", (int)st, quire_status_name(st), off, (unsigned)e->line,
                                   (unsigned)e->column, text_or_none(e->pointer), text_or_none(e->field),
                                   PyUnicode_DecodeUTF8(e->message, (Py_ssize_t)strlen(e->message), "replace"));
    if (!args) return NULL;
    if (!g_error_factory) {
        PyErr_SetObject(PyExc_RuntimeError, args);
        Py_DECREF(args);
        return NULL;
    }
    PyObject *exc = PyObject_CallObject(g_error_factory, args);
    Py_DECREF(args);
    if (!exc) return NULL;
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return NULL;
}

/* Argument errors raised by the binding itself (not the library). */
static PyObject *raise_invalid(const char *msg) {
    quire_error e;
    memset(&e, 0, sizeof e);
    e.code = QUIRE_E_INVALID;
    e.offset = SIZE_MAX;
    snprintf(e.message, sizeof e.message, "%s", msg);
    return raise_quire(QUIRE_E_INVALID, &e);
}

/* quire_bytes -> Python bytes (frees the buffer). */
static PyObject *take_bytes(quire_bytes *b) {
    PyObject *o = PyBytes_FromStringAndSize(b->data ? b->data : "", (Py_ssize_t)b->len);
    quire_bytes_free(b);
    return o;
}

static PyObject *state_bytes(const quire_state *s) {
    quire_bytes b = {0};
    quire_error e;
    quire_status st = quire_state_write(s, 0, &b, &e);
    if (st) return raise_quire(st, &e);
    return take_bytes(&b);
}

/* An optional bytes-like argument (None = absent). */
typedef struct { Py_buffer view; int have; } optbuf;
static int optbuf_conv(PyObject *o, void *p) {
    optbuf *b = p;
    if (o == NULL) { /* cleanup call */
        if (b->have) PyBuffer_Release(&b->view);
        b->have = 0;
        return 1;
    }
    if (o == Py_None) { b->have = 0; return 1; }
    if (PyObject_GetBuffer(o, &b->view, PyBUF_SIMPLE) < 0) return 0;
    b->have = 1;
    return Py_CLEANUP_SUPPORTED;
}
static void optbuf_release(optbuf *b) {
    if (b->have) PyBuffer_Release(&b->view);
    b->have = 0;
}

/* A state from optional JSON bytes (NULL when absent). Needs the GIL only on error. */
static int load_state(optbuf *sb, const char *session_id, quire_state **out) {
    quire_error e;
    quire_status st;
    *out = NULL;
    Py_BEGIN_ALLOW_THREADS
    if (sb->have) st = quire_state_parse(sb->view.buf, (size_t)sb->view.len, NULL, out, &e);
    else st = session_id ? quire_state_new(session_id, NULL, out, &e) : QUIRE_OK;
    Py_END_ALLOW_THREADS
    if (st) { raise_quire(st, &e); return -1; }
    return 0;
}

static int load_caps(optbuf *cb, quire_caps **out) {
    quire_error e;
    quire_status st = QUIRE_OK;
    *out = NULL;
    if (!cb->have) return 0;
    Py_BEGIN_ALLOW_THREADS
    st = quire_caps_parse(cb->view.buf, (size_t)cb->view.len, NULL, out, &e);
    Py_END_ALLOW_THREADS
    if (st) { raise_quire(st, &e); return -1; }
    return 0;
}

/* ------------------------------------------------------------------------ */

PyDoc_STRVAR(render_doc, "render(transcript, provider, model, state, caps, policy, pretty, max_tokens, lossy, dialect)\n"
             "-> (body, events, state): bytes each.");
static PyObject *py_render(PyObject *self, PyObject *args, PyObject *kw) {
    (void)self;
    static char *kwlist[] = {"transcript", "provider", "model", "state", "caps", "policy",
                             "pretty", "max_tokens", "lossy", "dialect", NULL};
    Py_buffer tb;
    const char *provider, *model = NULL, *dialect = NULL;
    optbuf sb = {0}, cb = {0}, pb = {0};
    int pretty = 0, lossy = 0;
    unsigned long max_tokens = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*s|zO&O&O&pkpz", kwlist, &tb, &provider, &model,
                                     optbuf_conv, &sb, optbuf_conv, &cb, optbuf_conv, &pb, &pretty,
                                     &max_tokens, &lossy, &dialect))
        return NULL;
    PyObject *ret = NULL;
    quire_state *state = NULL;
    quire_caps *caps = NULL;
    quire_transcript *t = NULL;
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    quire_render_result res;
    quire_error e;
    quire_status st = QUIRE_OK;
    if (max_tokens > UINT32_MAX) { raise_invalid("max_tokens is too large"); goto done; }
    if (load_state(&sb, NULL, &state) || load_caps(&cb, &caps)) goto done;
    ro.provider = provider;
    ro.model = model;
    ro.pretty = pretty;
    ro.max_tokens = (uint32_t)max_tokens;
    ro.caps = caps;
    if (pb.have && (st = quire_render_policy_apply(pb.view.buf, (size_t)pb.view.len, &ro, &e))) {
        raise_quire(st, &e);
        goto done;
    }
    if (lossy) ro.lossy = 1;
    Py_BEGIN_ALLOW_THREADS
    quire_options o = QUIRE_OPTIONS_INIT;
    o.flags = QUIRE_PARSE_BORROW;
    st = dialect ? quire_transcript_parse_dialect(dialect, tb.buf, (size_t)tb.len, &o, &t, &e)
                 : quire_transcript_parse(tb.buf, (size_t)tb.len, &o, &t, &e);
    if (!st) st = quire_render(t, state, &ro, &o, &res, &e);
    Py_END_ALLOW_THREADS
    if (st) { raise_quire(st, &e); goto done; }
    PyObject *sbytes = state_bytes(res.state);
    if (sbytes) ret = Py_BuildValue("(NNN)", take_bytes(&res.request), take_bytes(&res.events), sbytes);
    quire_render_result_free(&res);
done:
    quire_transcript_free(t);
    quire_state_free(state);
    quire_caps_free(caps);
    optbuf_release(&sb);
    optbuf_release(&cb);
    optbuf_release(&pb);
    PyBuffer_Release(&tb);
    return ret;
}

static int load_policy(optbuf *pb, unsigned long long budget, quire_compact_policy *p) {
    quire_error e;
    quire_status st;
    if (pb->have && (st = quire_compact_policy_parse(pb->view.buf, (size_t)pb->view.len, p, &e))) {
        raise_quire(st, &e);
        return -1;
    }
    if (budget) p->budget_tokens = budget;
    return 0;
}

PyDoc_STRVAR(compact_doc, "compact(transcript, policy, budget_tokens, summary, state)\n"
             "-> (transcript, state, events, report, changed).");
static PyObject *py_compact(PyObject *self, PyObject *args, PyObject *kw) {
    (void)self;
    static char *kwlist[] = {"transcript", "policy", "budget_tokens", "summary", "state", NULL};
    Py_buffer tb;
    optbuf pb = {0}, sumb = {0}, sb = {0};
    unsigned long long budget = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*|O&KO&O&", kwlist, &tb, optbuf_conv, &pb, &budget,
                                     optbuf_conv, &sumb, optbuf_conv, &sb))
        return NULL;
    PyObject *ret = NULL;
    quire_state *state = NULL;
    quire_transcript *t = NULL;
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    quire_compact_result res;
    quire_bytes tw = {0};
    quire_error e;
    quire_status st;
    if (load_policy(&pb, budget, &p) || load_state(&sb, NULL, &state)) goto done;
    Py_BEGIN_ALLOW_THREADS
    quire_options o = QUIRE_OPTIONS_INIT;
    o.flags = QUIRE_PARSE_BORROW;
    st = quire_transcript_parse(tb.buf, (size_t)tb.len, &o, &t, &e);
    if (!st) st = quire_compact(t, state, &p, sumb.have ? sumb.view.buf : NULL, sumb.have ? (size_t)sumb.view.len : 0,
                                &o, &res, &e);
    if (!st) {
        st = quire_transcript_write(res.transcript, 0, &tw, &e);
        if (st) quire_compact_result_free(&res);
    }
    Py_END_ALLOW_THREADS
    if (st) { raise_quire(st, &e); goto done; }
    PyObject *sbytes = state_bytes(res.state);
    if (sbytes)
        ret = Py_BuildValue("(NNNNO)", take_bytes(&tw), sbytes, take_bytes(&res.events), take_bytes(&res.report),
                            res.changed ? Py_True : Py_False);
    else
        quire_bytes_free(&tw);
    quire_compact_result_free(&res);
done:
    quire_transcript_free(t);
    quire_state_free(state);
    optbuf_release(&pb);
    optbuf_release(&sumb);
    optbuf_release(&sb);
    PyBuffer_Release(&tb);
    return ret;
}

PyDoc_STRVAR(plan_doc, "plan(transcript, policy, budget_tokens) -> plan JSON bytes.");
static PyObject *py_plan(PyObject *self, PyObject *args, PyObject *kw) {
    (void)self;
    static char *kwlist[] = {"transcript", "policy", "budget_tokens", NULL};
    Py_buffer tb;
    optbuf pb = {0};
    unsigned long long budget = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*|O&K", kwlist, &tb, optbuf_conv, &pb, &budget)) return NULL;
    PyObject *ret = NULL;
    quire_transcript *t = NULL;
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    quire_bytes out = {0};
    quire_error e;
    quire_status st;
    if (load_policy(&pb, budget, &p)) goto done;
    Py_BEGIN_ALLOW_THREADS
    quire_options o = QUIRE_OPTIONS_INIT;
    o.flags = QUIRE_PARSE_BORROW;
    st = quire_transcript_parse(tb.buf, (size_t)tb.len, &o, &t, &e);
    if (!st) st = quire_compact_plan(t, &p, 0, &o, &out, &e);
    Py_END_ALLOW_THREADS
    if (st) raise_quire(st, &e);
    else ret = take_bytes(&out);
done:
    quire_transcript_free(t);
    optbuf_release(&pb);
    PyBuffer_Release(&tb);
    return ret;
}

PyDoc_STRVAR(estimate_doc, "estimate(transcript) -> int: estimated tokens (quire's estimator).");
static PyObject *py_estimate(PyObject *self, PyObject *args, PyObject *kw) {
    (void)self;
    static char *kwlist[] = {"transcript", NULL};
    Py_buffer tb;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*", kwlist, &tb)) return NULL;
    quire_transcript *t = NULL;
    quire_compact_policy p = QUIRE_COMPACT_POLICY_INIT;
    quire_error e;
    quire_status st;
    uint64_t n = 0;
    Py_BEGIN_ALLOW_THREADS
    quire_options o = QUIRE_OPTIONS_INIT;
    o.flags = QUIRE_PARSE_BORROW;
    st = quire_transcript_parse(tb.buf, (size_t)tb.len, &o, &t, &e);
    if (!st) n = quire_compact_estimate(t, &p);
    quire_transcript_free(t);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&tb);
    if (st) return raise_quire(st, &e);
    return PyLong_FromUnsignedLongLong(n);
}

PyDoc_STRVAR(validate_doc, "validate(body, provider, model, caps) -> report bytes (empty when valid).");
static PyObject *py_validate(PyObject *self, PyObject *args, PyObject *kw) {
    (void)self;
    static char *kwlist[] = {"body", "provider", "model", "caps", NULL};
    Py_buffer bb;
    const char *provider, *model = NULL;
    optbuf cb = {0};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*s|zO&", kwlist, &bb, &provider, &model, optbuf_conv, &cb))
        return NULL;
    PyObject *ret = NULL;
    quire_caps *caps = NULL;
    quire_bytes rep = {0};
    quire_error e;
    quire_status st;
    if (load_caps(&cb, &caps)) goto done;
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = provider;
    ro.model = model;
    ro.caps = caps;
    Py_BEGIN_ALLOW_THREADS
    st = quire_validate(bb.buf, (size_t)bb.len, &ro, NULL, &rep, &e);
    Py_END_ALLOW_THREADS
    if (st == QUIRE_OK || st == QUIRE_E_VALIDATE) ret = take_bytes(&rep);
    else raise_quire(st, &e);
done:
    quire_caps_free(caps);
    optbuf_release(&cb);
    PyBuffer_Release(&bb);
    return ret;
}

PyDoc_STRVAR(import_doc, "import_log(data, format, flags, provider) -> (log, report) bytes.");
static PyObject *py_import(PyObject *self, PyObject *args, PyObject *kw) {
    (void)self;
    static char *kwlist[] = {"data", "format", "flags", "provider", NULL};
    Py_buffer db;
    const char *format, *provider = NULL;
    unsigned int flags = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*s|Iz", kwlist, &db, &format, &flags, &provider)) return NULL;
    quire_import_options io = QUIRE_IMPORT_OPTIONS_INIT;
    io.format = format;
    io.flags = flags;
    io.provider = provider;
    quire_bytes log = {0}, rep = {0};
    quire_error e;
    quire_status st;
    Py_BEGIN_ALLOW_THREADS
    st = quire_import(db.buf, (size_t)db.len, &io, NULL, &log, &rep, &e);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&db);
    if (st) return raise_quire(st, &e);
    return Py_BuildValue("(NN)", take_bytes(&log), take_bytes(&rep));
}

PyDoc_STRVAR(replay_doc, "replay(log, provider, model, digest) -> JSONL bytes (DESIGN 7).");
static PyObject *py_replay(PyObject *self, PyObject *args, PyObject *kw) {
    (void)self;
    static char *kwlist[] = {"log", "provider", "model", "digest", NULL};
    Py_buffer lb;
    const char *provider = NULL, *model = NULL;
    int digest = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*|zzp", kwlist, &lb, &provider, &model, &digest)) return NULL;
    quire_replay_options ro = QUIRE_REPLAY_OPTIONS_INIT;
    ro.provider = provider;
    ro.model = model;
    if (digest) ro.flags |= QUIRE_REPLAY_DIGEST;
    quire_bytes out = {0};
    quire_error e;
    quire_status st;
    Py_BEGIN_ALLOW_THREADS
    quire_options o = QUIRE_OPTIONS_INIT;
    o.flags = QUIRE_PARSE_BORROW;
    st = quire_replay_run(lb.buf, (size_t)lb.len, &ro, &o, &out, &e);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&lb);
    if (st) return raise_quire(st, &e);
    return take_bytes(&out);
}


/* One row per rendered request of a replay: its digest, size and the bytes it
 * shares with the previous request's prefix (what a prompt cache can reuse). */
typedef struct replay_row {
    char digest[33];
    size_t bytes, shared;
} replay_row;

static size_t common_prefix(const char *a, size_t an, const char *b, size_t bn) {
    size_t n = an < bn ? an : bn, i = 0;
    while (i + 64 <= n && memcmp(a + i, b + i, 64) == 0) i += 64;
    while (i < n && a[i] == b[i]) i++;
    return i;
}

PyDoc_STRVAR(replay_summary_doc,
             "replay_summary(log, provider, model) -> [(digest, bytes, shared_prefix), ...]\n"
             "Replays a quire.session/1 log and returns one row per rendered request without\n"
             "building the request lines: what fleet replay records per log.");
static PyObject *py_replay_summary(PyObject *self, PyObject *args, PyObject *kw) {
    (void)self;
    static char *kwlist[] = {"log", "provider", "model", NULL};
    Py_buffer lb;
    const char *provider = NULL, *model = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*|zz", kwlist, &lb, &provider, &model)) return NULL;
    quire_replay_options ro = QUIRE_REPLAY_OPTIONS_INIT;
    ro.provider = provider;
    ro.model = model;
    quire_error e;
    quire_status st = QUIRE_OK;
    replay_row *rows = NULL;
    size_t n = 0, cap = 0;
    char *prev = NULL;
    size_t prev_n = 0;
    int oom = 0;
    Py_BEGIN_ALLOW_THREADS
    quire_options o = QUIRE_OPTIONS_INIT;
    o.flags = QUIRE_PARSE_BORROW;
    quire_replay *r = NULL;
    st = quire_replay_open(lb.buf, (size_t)lb.len, &ro, &o, &r, &e);
    while (!st && !oom) {
        quire_replay_step step;
        int done = 0;
        if ((st = quire_replay_next(r, &step, &done, &e)) || done) break;
        if (!step.request) continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            replay_row *nr = realloc(rows, nc * sizeof *nr);
            if (!nr) { oom = 1; break; }
            rows = nr;
            cap = nc;
        }
        replay_row *row = &rows[n++];
        quire_digest128(step.request, step.request_len, row->digest);
        row->bytes = step.request_len;
        row->shared = prev ? common_prefix(prev, prev_n, step.request, step.request_len) : 0;
        char *np = realloc(prev, step.request_len ? step.request_len : 1);
        if (!np) { oom = 1; break; }
        prev = np;
        memcpy(prev, step.request, step.request_len);
        prev_n = step.request_len;
    }
    quire_replay_free(r);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&lb);
    free(prev);
    if (st) { free(rows); return raise_quire(st, &e); }
    if (oom) { free(rows); return PyErr_NoMemory(); }
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *t = Py_BuildValue("(snn)", rows[i].digest, (Py_ssize_t)rows[i].bytes, (Py_ssize_t)rows[i].shared);
        if (!t) { Py_CLEAR(list); break; }
        PyList_SET_ITEM(list, (Py_ssize_t)i, t);
    }
    free(rows);
    return list;
}

PyDoc_STRVAR(apply_doc, "state_apply(state, lines, session_id) -> (state, events, responses) bytes.\n"
             "Applies session-log lines (mcp/acp/reminder/clear, JSONL or a JSON array) to a state.");
static PyObject *py_state_apply(PyObject *self, PyObject *args, PyObject *kw) {
    (void)self;
    static char *kwlist[] = {"state", "lines", "session_id", NULL};
    optbuf sb = {0};
    Py_buffer lb;
    const char *sid = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&y*|z", kwlist, optbuf_conv, &sb, &lb, &sid)) return NULL;
    PyObject *ret = NULL;
    quire_state *s = NULL, *next = NULL;
    quire_bytes ev = {0}, resp = {0};
    quire_error e;
    quire_status st;
    if (load_state(&sb, sid ? sid : "", &s)) goto done;
    Py_BEGIN_ALLOW_THREADS
    st = quire_state_apply_lines(s, lb.buf, (size_t)lb.len, NULL, &next, &ev, &resp, &e);
    Py_END_ALLOW_THREADS
    if (st) { raise_quire(st, &e); goto done; }
    PyObject *sbytes = state_bytes(next);
    if (sbytes) ret = Py_BuildValue("(NNN)", sbytes, take_bytes(&ev), take_bytes(&resp));
    else { quire_bytes_free(&ev); quire_bytes_free(&resp); }
done:
    quire_state_free(s);
    quire_state_free(next);
    optbuf_release(&sb);
    PyBuffer_Release(&lb);
    return ret;
}

PyDoc_STRVAR(caps_doc, "caps(provider, model) -> the resolved capability row, JSON bytes.");
static PyObject *py_caps(PyObject *self, PyObject *args, PyObject *kw) {
    (void)self;
    static char *kwlist[] = {"provider", "model", NULL};
    const char *provider, *model = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|z", kwlist, &provider, &model)) return NULL;
    quire_bytes out = {0};
    quire_error e;
    quire_status st = quire_caps_resolve(NULL, provider, model, 0, &out, &e);
    if (st) return raise_quire(st, &e);
    return take_bytes(&out);
}

PyDoc_STRVAR(digest_doc, "digest(data) -> str: the 128-bit FNV-1a digest `quire replay --digest` prints.");
static PyObject *py_digest(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0) return NULL;
    char out[33];
    Py_BEGIN_ALLOW_THREADS
    quire_digest128(b.buf, (size_t)b.len, out);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&b);
    return PyUnicode_FromStringAndSize(out, 32);
}

static PyObject *py_set_error_factory(PyObject *self, PyObject *f) {
    (void)self;
    if (!PyCallable_Check(f)) return PyErr_Format(PyExc_TypeError, "the error factory must be callable");
    Py_INCREF(f);
    Py_XSETREF(g_error_factory, f);
    Py_RETURN_NONE;
}

static PyObject *py_status_name(PyObject *self, PyObject *arg) {
    (void)self;
    long v = PyLong_AsLong(arg);
    if (v == -1 && PyErr_Occurred()) return NULL;
    if (v < 0 || v >= QUIRE_STATUS_COUNT_) return PyErr_Format(PyExc_ValueError, "no quire status %ld", v);
    return PyUnicode_FromString(quire_status_name((quire_status)v));
}

#include "session.inc"

static PyMethodDef k_methods[] = {
    {"render", (PyCFunction)(void (*)(void))py_render, METH_VARARGS | METH_KEYWORDS, render_doc},
    {"compact", (PyCFunction)(void (*)(void))py_compact, METH_VARARGS | METH_KEYWORDS, compact_doc},
    {"plan", (PyCFunction)(void (*)(void))py_plan, METH_VARARGS | METH_KEYWORDS, plan_doc},
    {"estimate", (PyCFunction)(void (*)(void))py_estimate, METH_VARARGS | METH_KEYWORDS, estimate_doc},
    {"validate", (PyCFunction)(void (*)(void))py_validate, METH_VARARGS | METH_KEYWORDS, validate_doc},
    {"import_log", (PyCFunction)(void (*)(void))py_import, METH_VARARGS | METH_KEYWORDS, import_doc},
    {"replay", (PyCFunction)(void (*)(void))py_replay, METH_VARARGS | METH_KEYWORDS, replay_doc},
    {"replay_summary", (PyCFunction)(void (*)(void))py_replay_summary, METH_VARARGS | METH_KEYWORDS,
     replay_summary_doc},
    {"state_apply", (PyCFunction)(void (*)(void))py_state_apply, METH_VARARGS | METH_KEYWORDS, apply_doc},
    {"caps", (PyCFunction)(void (*)(void))py_caps, METH_VARARGS | METH_KEYWORDS, caps_doc},
    {"digest", py_digest, METH_O, digest_doc},
    {"_set_error_factory", py_set_error_factory, METH_O, "Registers the callable that builds quire.Error objects."},
    {"status_name", py_status_name, METH_O, "Stable name of a quire status code."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef k_module = {
    PyModuleDef_HEAD_INIT, "quire._quire", "The C extension of the quire package (see quire/__init__.py).", -1,
    k_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__quire(void);
PyMODINIT_FUNC PyInit__quire(void) {
    PyObject *m = PyModule_Create(&k_module);
    if (!m) return NULL;
    if (PyModule_AddStringConstant(m, "library_version", quire_version()) < 0 ||
        PyModule_AddIntConstant(m, "IMPORT_LIFT_REMINDERS", QUIRE_IMPORT_LIFT_REMINDERS) < 0 ||
        PyModule_AddIntConstant(m, "IMPORT_SKIP_INVALID", QUIRE_IMPORT_SKIP_INVALID) < 0 ||
        PyModule_AddIntConstant(m, "IMPORT_SIDECHAINS", QUIRE_IMPORT_SIDECHAINS) < 0 ||
        session_init(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
