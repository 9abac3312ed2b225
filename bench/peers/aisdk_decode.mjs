#!/usr/bin/env node
// Peer benchmark: the Vercel AI SDK's own response handling on a recorded
// provider response — a JSON body through the provider's doGenerate, or an
// SSE stream through doStream read to the end, fed in --chunk-byte pieces.
//
//   node aisdk_decode.mjs [--runs N] [--warmup N] [--provider anthropic|openai]
//                         [--chunk BYTES] FILE
//
// The custom fetch answers with FILE's bytes (already in memory): no network.
// The timed region is one doGenerate / doStream call with a one-word prompt, so
// it holds the SDK's (tiny) request building as well as the response parsing,
// validation and conversion into its content parts.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { parseArgs, median, mbPerS, round, emit, die } from './common.mjs';

const opts = parseArgs(process.argv.slice(2), { runs: 100, warmup: 10, provider: 'anthropic', chunk: 0 });
const file = opts._[0];
if (!file) die('usage: FILE argument missing');
if (!['anthropic', 'openai'].includes(opts.provider)) die(`unknown --provider ${opts.provider}`);
const bytes = readFileSync(file);
const stream = opts.chunk > 0;

function respond() {
  if (!stream) return new Response(bytes, { status: 200, headers: { 'content-type': 'application/json' } });
  let off = 0;
  const body = new ReadableStream({
    pull(ctl) {
      if (off >= bytes.length) { ctl.close(); return; }
      ctl.enqueue(bytes.subarray(off, off + opts.chunk));
      off += opts.chunk;
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}
const fetch = async () => respond();
const model = opts.provider === 'anthropic'
  ? createAnthropic({ apiKey: 'x', fetch })('claude-sonnet-4-5')
  : createOpenAI({ apiKey: 'x', fetch }).chat('gpt-4o');
const call = { prompt: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }] };

async function once() {
  if (!stream) {
    const r = await model.doGenerate(call);
    return r.content.length;
  }
  const { stream: s } = await model.doStream(call);
  const reader = s.getReader();
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (value.type === 'error') throw new Error(JSON.stringify(value.error));
    n++;
  }
  return n;
}

let parts = 0;
for (let i = 0; i < opts.warmup; i++) parts = await once();
const ts = [];
for (let i = 0; i < opts.runs; i++) {
  const t0 = performance.now();
  parts = await once();
  ts.push(performance.now() - t0);
}
const ms = median(ts);
emit({ peer: 'ai-sdk', provider: opts.provider, stream, chunk: opts.chunk, size: bytes.length, runs: opts.runs,
  parts, median_ms: round(ms, 4), mb_per_s: round(mbPerS(bytes.length, ms), 1) });
