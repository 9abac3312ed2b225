// Type declarations of the quire Node package (CommonJS and ES module entries alike).

/** JSON given as bytes (UTF-8, passed through untouched), a JSON string, or a value (JSON.stringify). */
export type JSONInput = Uint8Array | string | JSONValue;
export type JSONValue = null | boolean | number | string | JSONValue[] | { [key: string]: JSONValue };

/** Provider-neutral request parameters (DESIGN 13, docs/params.md). */
export interface RequestParams {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop?: string[];
  seed?: number;
  toolChoice?: 'auto' | 'none' | 'required' | { tool: string };
  parallelToolCalls?: boolean;
  responseFormat?: 'text' | 'json' | { type: 'text' | 'json' } |
    { type: 'jsonSchema'; name: string; schema: Record<string, unknown>; strict?: boolean };
  reasoning?: { effort: 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' } | { budgetTokens: number };
  stream?: boolean;
  user?: string;
  providerOptions?: Record<string, Record<string, unknown>>;
}

/** A lifecycle event: an ACP SessionUpdate-shaped object (DESIGN 2.5). */
export interface SessionUpdate {
  sessionUpdate: 'reminder_emitted' | 'reminder_deduped' | 'reminder_expired' | 'reminder_dropped' |
    'transcript_compacted' | string;
  [key: string]: unknown;
}

/** A transcript message (quire.transcript/1, DESIGN 2.1). */
export interface Message {
  role: 'user' | 'assistant' | 'tool' | 'system' | 'developer';
  content: string | Array<{ type: string; [key: string]: unknown }>;
  id?: string;
  pinned?: boolean;
  meta?: unknown;
}

export interface Tool {
  name: string;
  description?: string;
  inputSchema?: JSONValue;
  [key: string]: unknown;
}

/** A session-log line of type mcp, acp, reminder or clear (DESIGN 7). */
export type ApplyLine =
  | { type: 'mcp'; server: string; message: JSONValue }
  | { type: 'acp'; message: JSONValue }
  | { type: 'reminder'; reminder: { body: string; [key: string]: unknown } }
  | { type: 'clear'; selector: { id?: string; tag?: string; dedupeKey?: string; origin?: string } };

/** The reminder state (quire.state/1). */
export interface State {
  turn: number;
  seq: number;
  servers: Record<string, unknown>;
  reminders: Array<{ id: string; body: string; [key: string]: unknown }>;
  [key: string]: unknown;
}

/** Thrown for every library failure; the fields of quire_error. */
export class QuireError extends Error {
  /** Stable status name, e.g. "QUIRE_E_REMINDER_TTL". */
  readonly code: string;
  /** Numeric quire_status. */
  readonly status: number;
  /** Byte offset in the failing input, or null. */
  readonly offset: number | null;
  /** 1-based line (0 when unknown). */
  readonly line: number;
  /** 1-based column in bytes (0 when unknown). */
  readonly column: number;
  /** JSON Pointer of the offending value, or null. */
  readonly pointer: string | null;
  /** The offending field, or null. */
  readonly field: string | null;
  /** What is wrong, one line (message adds the position and code). */
  readonly quireMessage: string;
}

export interface RenderOptions {
  provider: string;
  model?: string;
  state?: JSONInput;
  caps?: JSONInput;
  /** {systemSlot, placement, cacheBreakpoints, lossy, peerMaxSlot} */
  policy?: JSONInput;
  pretty?: boolean;
  maxTokens?: number;
  lossy?: boolean;
  /** Read a request body in this dialect instead of a transcript. */
  from?: 'anthropic' | 'openai_chat' | 'openai_responses' | 'gemini';
  /**
   * A buffer the caller reuses across renders: when the body fits, it is written there and
   * `body` is a view of its first bytes (no fresh allocation, no copy; the next render into the
   * same buffer overwrites it; the byte after the body is set to 0 when there is room). When it
   * does not fit, `body` is a new Buffer as without it and what `into` holds is unspecified.
   */
  into?: Uint8Array<ArrayBuffer>;
}

export interface RenderResult {
  body: Buffer<ArrayBuffer>;
  readonly events: SessionUpdate[];
  readonly state: State;
  stateJson: Buffer;
}

export interface CompactOptions {
  budgetTokens?: number;
  /** camelCase fields of a session-log compact event's policy. */
  policy?: JSONInput;
  summary?: string | Uint8Array;
  state?: JSONInput;
}

export interface CompactResult {
  readonly transcript: { messages: Message[]; [key: string]: unknown };
  transcriptJson: Buffer;
  readonly state: State;
  readonly events: SessionUpdate[];
  readonly report: Record<string, unknown>;
  changed: boolean;
}

export function render(transcript: JSONInput, opts: RenderOptions): RenderResult;
export function compact(transcript: JSONInput, opts?: CompactOptions): CompactResult;
export function plan(transcript: JSONInput, opts?: { budgetTokens?: number; policy?: JSONInput }): Record<string, unknown>;
export function estimate(transcript: JSONInput): number;
/** Violations ("/pointer: message"); [] when the body is valid. */
export function validate(body: JSONInput, opts: { provider: string; model?: string; caps?: JSONInput }): string[];
export function importLog(data: Uint8Array | string, opts: {
  format: 'claude-code' | 'codex' | string; liftReminders?: boolean; skipInvalid?: boolean; sidechains?: boolean;
  provider?: string;
}): { log: Buffer; report: string[] };
/** The replay's output lines: request, event, response, compacted. */
export function replay(log: Uint8Array | string, opts?: { provider?: string; model?: string; digest?: boolean }):
  Array<{ type: string; [key: string]: any }>;
export function apply(state: JSONInput | null, lines: ApplyLine | ApplyLine[] | Uint8Array | string,
  opts?: { sessionId?: string }): { state: State; events: SessionUpdate[]; responses: JSONValue[] };
export function caps(provider: string, model?: string | null): { provider: string; model: string | null; row: Record<string, any> };
export function digest(data: Uint8Array | string): string;

/** One rendered request. */
export class Request {
  /** The body, ready to POST. */
  readonly body: Buffer<ArrayBuffer>;
  /** The body as zero-copy slices, one per segment of the session's encoding. */
  readonly segments: Array<Buffer<ArrayBuffer>>;
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly events: SessionUpdate[];
  readonly turn: number;
  /** An interrupt_immediate reminder fires: skip the pending tool batch. */
  readonly interruptPending: boolean;
  readonly provider: string;
  readonly model: string | null;
  json(): any;
}

export interface SessionOptions {
  provider: string;
  model?: string;
  system?: string | Array<{ type: 'text'; text: string }>;
  tools?: Tool[];
  sessionId?: string;
  caps?: JSONInput;
  /** Render policy: {systemSlot, placement, cacheBreakpoints, lossy, peerMaxSlot}. */
  policy?: JSONValue;
  maxTokens?: number;
  compactPolicy?: JSONValue;
  limits?: {
    maxLivePerOrigin?: number; turnBudgetBytes?: number; bodyCapBytes?: number; maxOrigins?: number;
    maxPendingPerServer?: number;
  };
  /** MCP bridges to turn on, per server: {"fs": ["resources", "tools", "prompts"]}. */
  bridges?: { [server: string]: Array<'resources' | 'tools' | 'prompts'> };
}

/** A live quire session (DESIGN 11). */
export class Session {
  constructor(opts: SessionOptions);
  static restore(log: Uint8Array | string, opts?: { caps?: JSONInput }): Session;
  append(message: Message | Message[] | Uint8Array | string): void;
  apply(line: ApplyLine | ApplyLine[] | Uint8Array | string): { events: SessionUpdate[]; responses: JSONValue[] };
  /** The next request; the turn stays pending until accept(). */
  /** The next request; params are DESIGN 13's request parameters (docs/params.md). */
  /** opts.into: a reused buffer the body is written into when it fits (see RenderOptions.into). */
  render(target?: { provider?: string; model?: string } | null, params?: RequestParams | string | null,
    opts?: { into?: Uint8Array<ArrayBuffer> }): Request;
  /** Commits the pending turn with the assistant message (transcript form). */
  accept(message: Message | Uint8Array | string): void;
  /** The provider's raw answer (a whole body, or the whole stream with {stream: true}), decoded by the library. */
  acceptResponse(body: Uint8Array | string, opts?: { stream?: boolean }): { [key: string]: unknown };
  /** Resource URIs the host subscribed to (resources/subscribe lines applied with direction "out"). */
  subscriptions(server?: string | null): string[] | { [server: string]: string[] };
  toolOutcome(callId: string, outcome: 'completed' | 'failed' | 'timeout' | 'cancelled',
    content?: string | JSONValue): { answered: boolean; events: SessionUpdate[] };
  estimate(): number;
  /** Compacts the transcript; returns the report. */
  compact(opts?: { budgetTokens?: number; policy?: JSONValue; summary?: string }): Record<string, unknown>;
  plan(opts?: { budgetTokens?: number; policy?: JSONValue }): Record<string, unknown>;
  transcript(): { messages: Message[]; [key: string]: unknown };
  state(): State;
  /** The quire.session/1 log (JSONL). */
  log(): Buffer;
  /** Frees the native session now. */
  close(): void;
}

export const libraryVersion: string;
export const version: string;

declare const quire: {
  render: typeof render; compact: typeof compact; plan: typeof plan; estimate: typeof estimate;
  validate: typeof validate; importLog: typeof importLog; replay: typeof replay; apply: typeof apply;
  caps: typeof caps; digest: typeof digest; Session: typeof Session; Request: typeof Request;
  QuireError: typeof QuireError; libraryVersion: string; version: string;
};
export default quire;
