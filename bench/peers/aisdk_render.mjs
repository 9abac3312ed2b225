#!/usr/bin/env node
// Peer benchmark: render a quire.transcript/1 file into a provider request body
// with the Vercel AI SDK (`ai` + `@ai-sdk/anthropic` or `@ai-sdk/openai`).
//
//   node aisdk_render.mjs [--runs N] [--warmup N] [--provider anthropic|openai]
//                         [--dump BODYFILE] [--timeout SEC] [--quire-node DIR] FILE
//
// Timed region, per run: the file's text (already in memory) -> JSON.parse ->
// AI SDK ModelMessage[] -> generateText(...) -> the request body string the
// provider hands to fetch. The custom fetch captures that string and answers
// with a canned, valid provider response: no network.
//
// --quire-node DIR (bindings/node with its addon built): in the same process,
// also times quire's Node package on the same input — quire.render() from the
// file's bytes and from the JS string, to the body Buffer — and reports it beside
// the SDK (quire_node_buffer_ms, quire_node_string_ms, quire_node_body_bytes), from the bytes
// into a reused output buffer (quire_node_into_ms), and one turn
// of a live Session holding the same transcript (quire_node_session_turn_ms; into a reused
// buffer: quire_node_session_into_ms).
import { generateText, tool, jsonSchema } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { performance } from 'node:perf_hooks';
import { writeFileSync } from 'node:fs';
import {
  parseArgs, loadText, median, mbPerS, round, emit, die, runUnderTimeout,
} from './common.mjs';

const opts = parseArgs(process.argv.slice(2), { runs: 20, warmup: 3, provider: 'anthropic', dump: '', timeout: 0, 'quire-node': '' });
const file = opts._[0];
if (!['anthropic', 'openai'].includes(opts.provider)) die(`unknown --provider ${opts.provider}`);
const PEER = opts.provider === 'anthropic' ? 'ai-sdk' : 'ai-sdk-openai-chat';

const CANNED = {
  anthropic: JSON.stringify({
    id: 'msg_bench', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5',
    content: [{ type: 'text', text: 'ok' }],
    stop_reason: 'end_turn', stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  }),
  openai: JSON.stringify({
    id: 'chatcmpl-bench', object: 'chat.completion', created: 0, model: 'gpt-4.1',
    choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  }),
};

let captured = null; // { body, t }
async function customFetch(_url, init) {
  captured = { body: init.body, t: performance.now() };
  return new Response(CANNED[opts.provider], {
    status: 200, headers: { 'content-type': 'application/json' },
  });
}

const model = opts.provider === 'anthropic'
  ? createAnthropic({ apiKey: 'x', fetch: customFetch })('claude-sonnet-4-5')
  : createOpenAI({ apiKey: 'x', fetch: customFetch }).chat('gpt-4.1');

function textOf(content) {
  if (typeof content === 'string') return content;
  return content.filter((b) => b.type === 'text').map((b) => b.text).join('');
}

// quire.transcript/1 -> { system, messages: ModelMessage[], tools }
function convert(t) {
  const names = new Map(); // toolCallId -> tool name (AI SDK tool results need it)
  const messages = [];
  for (const m of t.messages) {
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    if (m.role === 'user') {
      messages.push({
        role: 'user',
        content: blocks.filter((b) => b.type === 'text').map((b) => ({ type: 'text', text: b.text })),
      });
    } else if (m.role === 'assistant') {
      const parts = [];
      for (const b of blocks) {
        if (b.type === 'text') parts.push({ type: 'text', text: b.text });
        else if (b.type === 'toolCall') {
          names.set(b.id, b.name);
          parts.push({ type: 'tool-call', toolCallId: b.id, toolName: b.name, input: b.input });
        }
      }
      messages.push({ role: 'assistant', content: parts });
    } else if (m.role === 'tool') {
      messages.push({
        role: 'tool',
        content: blocks.filter((b) => b.type === 'toolResult').map((b) => ({
          type: 'tool-result',
          toolCallId: b.toolCallId,
          toolName: names.get(b.toolCallId),
          output: b.isError
            ? { type: 'error-text', value: textOf(b.content) }
            : { type: 'text', value: textOf(b.content) },
        })),
      });
    } else if (m.role === 'system' || m.role === 'developer') {
      messages.push({ role: 'system', content: textOf(m.content) });
    }
  }
  const tools = {};
  for (const d of t.tools ?? []) {
    tools[d.name] = tool({ description: d.description, inputSchema: jsonSchema(d.inputSchema) });
  }
  const system = t.system === undefined ? undefined : textOf(t.system);
  return { system, messages, tools };
}

// Each timed phase starts from a collected heap when node runs with --expose-gc (bench/run.py
// passes it): the garbage one phase leaves (the SDK's objects, the 200 KB Buffers of the
// fresh-body phases) is then not swept while the next phase is timed.
function settle() {
  if (typeof globalThis.gc === 'function') globalThis.gc();
}

async function once(text) {
  captured = null;
  const t0 = performance.now();
  const { system, messages, tools } = convert(JSON.parse(text));
  await generateText({
    model,
    instructions: system, // `system` is the deprecated spelling in ai 7
    messages,
    tools,
    maxOutputTokens: 4096,
    maxRetries: 0,
    allowSystemInMessages: true,
  });
  if (!captured) throw new Error('fetch was not called');
  return { ms: captured.t - t0, bodyBytes: Buffer.byteLength(captured.body) };
}

if (!runUnderTimeout(opts, PEER, file, { provider: opts.provider })) {
  const { text, size } = loadText(file);
  settle();
  for (let i = 0; i < opts.warmup; i++) await once(text);
  const times = [];
  let bodyBytes = 0;
  for (let i = 0; i < opts.runs; i++) {
    const r = await once(text);
    times.push(r.ms);
    bodyBytes = r.bodyBytes;
  }
  if (opts.dump) writeFileSync(opts.dump, captured.body);
  const med = median(times);
  const extra = {};
  if (opts['quire-node']) {
    const { createRequire } = await import('node:module');
    const quire = createRequire(import.meta.url)(opts['quire-node']);
    const target = { provider: opts.provider, model: opts.provider === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-4.1' };
    let qbytes = 0;
    // from the file's bytes (a Buffer, what a host reading a file or a socket holds) and from
    // the JS string the SDK starts from (the addon then converts UTF-16 to UTF-8 first)
    for (const [key, input] of [['quire_node_buffer_ms', Buffer.from(text, 'utf8')], ['quire_node_string_ms', text]]) {
      settle();
      for (let i = 0; i < opts.warmup; i++) quire.render(input, target);
      const qt = [];
      for (let i = 0; i < opts.runs; i++) {
        const t0 = performance.now();
        qbytes = quire.render(input, target).body.length;
        qt.push(performance.now() - t0);
      }
      extra[key] = round(median(qt), 4);
    }
    // the same from the bytes, with the body written into one buffer the host reuses
    // (render's `into` option): no fresh 200 KB of memory per call for the kernel to fault in
    {
      const input = Buffer.from(text, 'utf8');
      const into = Buffer.alloc(2 * input.length + 65536);
      settle();
      for (let i = 0; i < opts.warmup; i++) quire.render(input, { ...target, into });
      const qt = [];
      for (let i = 0; i < opts.runs; i++) {
        const t0 = performance.now();
        qbytes = quire.render(input, { ...target, into }).body.length;
        qt.push(performance.now() - t0);
      }
      extra.quire_node_into_ms = round(median(qt), 4);
    }
    extra.quire_node_body_bytes = qbytes;
    // the same transcript held by a live session (how a loop uses quire): one turn is
    // append a user message, render the request, accept the answer
    const t = JSON.parse(text);
    const sess = new quire.Session({ ...target, system: t.system, tools: t.tools });
    sess.append(t.messages);
    if (t.messages.length && t.messages[t.messages.length - 1].role !== 'user') sess.append({ role: 'user', content: 'go on' });
    sess.render();
    sess.accept({ role: 'assistant', content: 'ok' });
    const st = [];
    settle();
    for (let i = 0; i < opts.warmup + opts.runs; i++) {
      const t0 = performance.now();
      sess.append({ role: 'user', content: `next step ${i}` });
      qbytes = sess.render().body.length;
      sess.accept({ role: 'assistant', content: `done ${i}` });
      if (i >= opts.warmup) st.push(performance.now() - t0);
    }
    extra.quire_node_session_turn_ms = round(median(st), 4);
    // the same turns with the body written into one reused buffer (render's opts.into)
    const sinto = Buffer.alloc(4 * text.length + 65536);
    const si = [];
    settle();
    for (let i = 0; i < opts.warmup + opts.runs; i++) {
      const t0 = performance.now();
      sess.append({ role: 'user', content: `into step ${i}` });
      qbytes = sess.render(null, null, { into: sinto }).body.length;
      sess.accept({ role: 'assistant', content: `done ${i}` });
      if (i >= opts.warmup) si.push(performance.now() - t0);
    }
    extra.quire_node_session_into_ms = round(median(si), 4);
    extra.quire_node_session_body_bytes = qbytes;
  }
  emit({
    peer: PEER,
    provider: opts.provider,
    size,
    runs: opts.runs,
    median_ms: round(med),
    min_ms: round(Math.min(...times)),
    mb_per_s: round(mbPerS(size, med), 2),
    body_bytes: bodyBytes,
    ...extra,
  });
}
