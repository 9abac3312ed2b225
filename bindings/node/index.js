// quire — Node bindings of the quire C library (CommonJS entry; index.mjs is the ES module).
//
// Stateless functions: render, compact, plan, estimate, validate, importLog, replay, apply, caps,
// digest. The live form: new Session({provider, model, system, tools}) with append, apply,
// render, accept, compact, log (DESIGN 11). Every library failure throws a QuireError carrying
// code, status, offset, line, column, pointer, field and message.
//
// JSON inputs may be Buffers/Uint8Arrays (UTF-8 JSON, passed through untouched), strings, or
// values (serialised with JSON.stringify). Request bodies come back as Buffers, exactly as quire
// produced them; JSON documents come back parsed.
'use strict';

const path = require('path');

const addon = require(path.join(__dirname, 'build', process.env.QUIRE_NODE_DEBUG ? 'Debug' : 'Release', 'quire.node'));

class QuireError extends Error {
  constructor(f) {
    let where = '';
    if (f.line) where = `${f.line}:${f.column}: `;
    if (f.pointer) where += `${f.pointer}: `;
    super(`${where}${f.message} (${f.code})`);
    this.name = 'QuireError';
    this.code = f.code;
    this.status = f.status;
    this.offset = f.offset;
    this.line = f.line;
    this.column = f.column;
    this.pointer = f.pointer;
    this.field = f.field;
    this.quireMessage = f.message;
  }
}
addon.setErrorClass(QuireError);

function invalid(message) {
  return new QuireError({ status: 11, code: 'QUIRE_E_INVALID', offset: null, line: 0, column: 0,
                          pointer: null, field: null, message });
}

function bytes(v) {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string' || v instanceof Uint8Array) return v;
  return JSON.stringify(v);
}

function jsonl(b) {
  const s = typeof b === 'string' ? b : b.toString('utf8');
  const out = [];
  for (const line of s.split('\n')) if (line.trim()) out.push(JSON.parse(line));
  return out;
}

function lines(b) {
  return b.toString('utf8').split('\n').filter((l) => l.length > 0);
}

const NO_EVENTS = Buffer.alloc(0);

/**
 * Renders a transcript into the request body for a provider (DESIGN 5). The body is a new
 * Buffer (one copy of the library's bytes) unless opts.into is given and large enough: then
 * it is a view of into's first bytes, overwritten by whatever next writes into that buffer.
 * Events and state are parsed only when read.
 */
function render(transcript, opts = {}) {
  const r = addon.render(typeof transcript === 'string' || transcript instanceof Uint8Array ? transcript : bytes(transcript),
    opts.provider, opts.model, bytes(opts.state), bytes(opts.caps), bytes(opts.policy), !!opts.pretty,
    opts.maxTokens, !!opts.lossy, opts.from, opts.into);
  let body = r[0];
  if (typeof body === 'number') {  // written into opts.into: a view of its first bytes
    const into = opts.into;
    body = Buffer.isBuffer(into) ? into.subarray(0, body) : Buffer.from(into.buffer, into.byteOffset, body);
  }
  return new RenderResult(body, r[1], r[2] === undefined ? NO_EVENTS : r[2]);
}

class RenderResult {
  constructor(body, stateJson, events) {
    this.body = body;
    this.stateJson = stateJson;
    this._events = events;
  }
  get events() { return jsonl(this._events); }
  get state() { return JSON.parse(this.stateJson); }
}

/** Compacts a transcript to a token budget (DESIGN 6). */
function compact(transcript, opts = {}) {
  const r = addon.compact(bytes(transcript), {
    policy: bytes(opts.policy), budgetTokens: opts.budgetTokens, summary: bytes(opts.summary),
    state: bytes(opts.state),
  });
  return {
    get transcript() { return JSON.parse(r.transcript); },
    transcriptJson: r.transcript,
    get state() { return JSON.parse(r.state); },
    get events() { return jsonl(r.events); },
    get report() { return r.report.length ? JSON.parse(r.report) : {}; },
    changed: r.changed,
  };
}

/** The compaction plan (report, span, summarisation transcript). */
function plan(transcript, opts = {}) {
  return JSON.parse(addon.plan(bytes(transcript), { policy: bytes(opts.policy), budgetTokens: opts.budgetTokens }));
}

/** Estimated tokens of a transcript. */
function estimate(transcript) {
  return addon.estimate(bytes(transcript));
}

/** Violations of a request body ("/pointer: message"), [] when valid. */
function validate(body, opts = {}) {
  return lines(addon.validate(bytes(body), { provider: opts.provider, model: opts.model, caps: bytes(opts.caps) }));
}

/** A Claude Code or Codex log -> {log: Buffer (quire.session/1), report: string[]}. */
function importLog(data, opts = {}) {
  const flags = (opts.liftReminders ? addon.IMPORT_LIFT_REMINDERS : 0) |
    (opts.skipInvalid ? addon.IMPORT_SKIP_INVALID : 0) | (opts.sidechains ? addon.IMPORT_SIDECHAINS : 0);
  const r = addon.importLog(bytes(data), { format: opts.format, flags, provider: opts.provider });
  return { log: r.log, report: lines(r.report) };
}

/** Replays a quire.session/1 log: its output lines (request, event, response, compacted). */
function replay(log, opts = {}) {
  return jsonl(addon.replay(bytes(log), { provider: opts.provider, model: opts.model, digest: !!opts.digest }));
}

/** Applies session-log lines (mcp, acp, reminder, clear) to a reminder state (null = fresh). */
function apply(state, lineOrLines, opts = {}) {
  const l = Array.isArray(lineOrLines) || typeof lineOrLines !== 'object' || lineOrLines instanceof Uint8Array
    ? lineOrLines : [lineOrLines];
  const r = addon.stateApply(bytes(state), bytes(l), opts.sessionId || '');
  return { state: JSON.parse(r.state), events: jsonl(r.events), responses: jsonl(r.responses) };
}

/** The resolved capability row of provider/model. */
function caps(provider, model) {
  return JSON.parse(addon.caps(provider, model === undefined ? null : model));
}

/** The 128-bit FNV-1a digest `quire replay --digest` writes (32 hex digits). */
function digest(data) {
  return addon.digest(bytes(data));
}

// Where each wire dialect is POSTed and what it needs besides the body (DESIGN 13); used only
// while the library's render gives no envelope.
const ENVELOPE = {
  anthropic_messages: ['/v1/messages', { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }],
  openai_chat: ['/v1/chat/completions', { 'content-type': 'application/json' }],
  openai_responses: ['/v1/responses', { 'content-type': 'application/json' }],
  gemini: ['/v1beta/models/{model}:generateContent', { 'content-type': 'application/json' }],
  bedrock_converse: ['/model/{model}/converse', { 'content-type': 'application/json' }],
  mistral: ['/v1/chat/completions', { 'content-type': 'application/json' }],
  ollama: ['/api/chat', { 'content-type': 'application/json' }],
};
const envelopes = new Map();
function envelope(provider, model) {
  const key = `${provider}\0${model || ''}`;
  let e = envelopes.get(key);
  if (!e) {
    const row = caps(provider, model || null);
    const [p, h] = ENVELOPE[row.row.dialect] || ['/', { 'content-type': 'application/json' }];
    e = [p.replace('{model}', model || row.model || ''), h];
    envelopes.set(key, e);
  }
  return { path: e[0], headers: { ...e[1] } };
}

const OUTCOMES = { completed: 0, failed: 1, timeout: 2, cancelled: 3 };

class Request {
  constructor(r) {
    this.body = r.body;
    this.method = r.method;
    this.turn = r.turn;
    this.interruptPending = r.interruptPending;
    this.provider = r.provider;
    this.model = r.model;
    this._bounds = r.bounds;
    this._events = r.events;
    if (r.path === null) {
      const e = envelope(r.provider, r.model);
      this.path = e.path;
      this.headers = e.headers;
    } else {
      this.path = r.path;
      this.headers = JSON.parse(r.headers);
    }
  }
  /** The body as zero-copy Buffer slices, one per segment of the session's encoding. */
  get segments() {
    const out = [];
    let start = 0;
    for (const end of this._bounds) {
      out.push(this.body.subarray(start, end));
      start = end;
    }
    return out;
  }
  get events() {
    return jsonl(this._events);
  }
  json() {
    return JSON.parse(this.body);
  }
}

/**
 * A live quire session (DESIGN 11).
 *   const s = new Session({provider: 'anthropic', model: 'claude-sonnet-4-5', system, tools});
 *   s.append({role: 'user', content: 'List src/'});
 *   const req = s.render();            // {body, segments, method, path, headers, events}
 *   s.accept(assistantMessage);        // commits the turn
 *   s.log();                           // replays to the same requests
 */
class Session {
  constructor(opts = {}) {
    if (opts.log !== undefined) {
      this._s = new addon.NativeSession(null, bytes(opts.caps), bytes(opts.log));
      return;
    }
    if (!opts.provider) throw invalid('Session: provider is required');
    const target = { provider: opts.provider };
    if (opts.model) target.model = opts.model;
    const config = { sessionId: opts.sessionId || 'session', target };
    if (opts.system !== undefined) config.system = opts.system;
    if (opts.tools !== undefined) config.tools = opts.tools;
    if (opts.policy !== undefined) config.renderPolicy = opts.policy;
    if (opts.maxTokens) config.maxTokens = opts.maxTokens;
    if (opts.compactPolicy !== undefined) config.compactPolicy = opts.compactPolicy;
    if (opts.limits !== undefined) config.limits = opts.limits;
    if (opts.bridges !== undefined) config.bridges = opts.bridges;
    this._s = new addon.NativeSession(JSON.stringify(config), bytes(opts.caps));
  }

  /** The session a quire.session/1 log describes. */
  static restore(log, opts = {}) {
    return new Session({ ...opts, log });
  }

  append(message) {
    this._s.append(bytes(message));
  }

  apply(line) {
    const r = this._s.apply(bytes(line));
    return { events: jsonl(r.events), responses: jsonl(r.responses) };
  }

  /**
   * The next request; the turn stays pending until accept(). params: the request parameters of
   * DESIGN 13 (maxTokens, temperature, toolChoice, responseFormat, reasoning, stream, ...).
   * opts.into: a buffer the caller reuses; when the body fits it is written there and the
   * request's body (and segments) are views of it, overwritten by the next render into it.
   */
  render(target, params, opts) {
    const into = opts ? opts.into : undefined;
    const n = this._s.render(target ? JSON.stringify(target) : null,
      params === undefined || params === null ? null : bytes(params), into);
    if (typeof n.body === 'number') {  // written into opts.into: a view of its first bytes
      n.body = Buffer.isBuffer(into) ? into.subarray(0, n.body) : Buffer.from(into.buffer, into.byteOffset, n.body);
    }
    const r = new Request(n);
    this._target = [r.provider, r.model];
    return r;
  }

  accept(message) {
    if (message === undefined || message === null) throw invalid('accept: give the assistant message');
    this._s.acceptMessage(bytes(message));
  }

  /**
   * Commits the pending turn with the provider's answer as it came: a whole response body, or
   * with {stream: true} the whole streamed response (SSE, or JSON lines for Bedrock and Ollama).
   * Decoded by the library for the target the turn was rendered for; returns the decoded info
   * ({stopReason, usage, ...}). A provider error body throws (QUIRE_E_PROVIDER), turn still pending.
   */
  acceptResponse(body, opts = {}) {
    const b = typeof body === 'string' ? body : bytes(body);
    const t = this._target || [null, null];
    const info = this._s.acceptResponse(b, !!opts.stream, t[0], t[1]);
    return info ? JSON.parse(info.toString()) : {};
  }

  /** Resource URIs the host subscribed to: an array for one server, an object for all. */
  subscriptions(server) {
    return JSON.parse(this._s.subscriptions(server === undefined ? null : server).toString());
  }

  toolOutcome(callId, outcome, content) {
    if (!(outcome in OUTCOMES)) throw invalid(`unknown tool outcome ${outcome}`);
    const r = this._s.toolOutcome(callId, OUTCOMES[outcome], content === undefined ? null : bytes(content));
    return { answered: r.answered, events: jsonl(r.events) };
  }

  estimate() {
    return this._s.estimate();
  }

  compact(opts = {}) {
    let policy = opts.policy;
    if (opts.budgetTokens) policy = { ...(policy || {}), budgetTokens: opts.budgetTokens };
    const r = this._s.compact(policy === undefined ? null : bytes(policy), opts.summary === undefined ? null : opts.summary);
    return r.report.length ? JSON.parse(r.report) : {};
  }

  plan(opts = {}) {
    let policy = opts.policy;
    if (opts.budgetTokens) policy = { ...(policy || {}), budgetTokens: opts.budgetTokens };
    return JSON.parse(this._s.plan(policy === undefined ? null : bytes(policy)));
  }

  transcript() {
    return JSON.parse(this._s.transcript());
  }

  state() {
    return JSON.parse(this._s.state());
  }

  /** The quire.session/1 log (Buffer, JSONL). */
  log() {
    return this._s.log();
  }

  /** Frees the native session now (otherwise the garbage collector does). */
  close() {
    this._s.close();
  }
}

module.exports = {
  render, compact, plan, estimate, validate, importLog, replay, apply, caps, digest,
  Session, Request, QuireError, libraryVersion: addon.libraryVersion, version: '0.2.0',
};
