#!/usr/bin/env node
// Peer benchmark: cut a quire.transcript/1 file down to a token budget with
// LangChain.js (`@langchain/core` trimMessages).
//
//   node langchain_trim.mjs [--runs N] [--warmup N] [--budget TOKENS]
//                           [--counter length|text|codepoints] [--timeout SEC] FILE
//
// Timed region, per run: the file's text (already in memory) -> JSON.parse ->
// LangChain messages (SystemMessage, HumanMessage, AIMessage with tool_calls,
// ToolMessage) -> trimMessages(messages, {maxTokens, strategy: 'last',
// startOn: 'human', includeSystem: true, tokenCounter}) with a counter of
// content characters / 4 (the same rough estimate on both sides; no tokenizer
// cost). `trim_ms` is the median of trimMessages alone.
// trimMessages('last') drops one message at a time and re-counts the whole
// remaining list each time, so the counter runs O(n) times over O(n) messages.
// --counter picks how "content characters" are counted:
//   length      content.length (UTF-16 units; O(1) a message)      default
//   text        message.text.length (LangChain's text getter)
//   codepoints  iterate the content string (a counter that reads the text,
//               as any real estimator does) -> quadratic in bytes
//   stringify   JSON.stringify of the content (and tool calls) .length: the
//               usual "serialise the message and divide by 4" counter
// --timeout SEC runs the measurement in a child process that is killed when
// the time is up; a JSON line with "timed_out": true is printed instead.
import {
  SystemMessage, HumanMessage, AIMessage, ToolMessage, trimMessages,
} from '@langchain/core/messages';
import { performance } from 'node:perf_hooks';
import {
  parseArgs, loadText, median, mbPerS, round, emit, die, runUnderTimeout,
} from './common.mjs';

const PEER = 'langchain-trimMessages';
const opts = parseArgs(process.argv.slice(2), { runs: 5, warmup: 1, budget: 20000, timeout: 0, counter: 'length' });
const file = opts._[0];

function textOf(content) {
  if (typeof content === 'string') return content;
  return content.filter((b) => b.type === 'text').map((b) => b.text).join('');
}

// quire.transcript/1 -> BaseMessage[]
function convert(t) {
  const out = [];
  if (t.system !== undefined) out.push(new SystemMessage(textOf(t.system)));
  for (const m of t.messages) {
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    if (m.role === 'user') {
      out.push(new HumanMessage(textOf(blocks)));
    } else if (m.role === 'assistant') {
      const tool_calls = blocks.filter((b) => b.type === 'toolCall').map((b) => ({
        id: b.id, name: b.name, args: b.input, type: 'tool_call',
      }));
      out.push(new AIMessage({ content: textOf(blocks), tool_calls }));
    } else if (m.role === 'tool') {
      for (const b of blocks) {
        if (b.type !== 'toolResult') continue;
        out.push(new ToolMessage({
          content: textOf(b.content), tool_call_id: b.toolCallId,
          status: b.isError ? 'error' : 'success',
        }));
      }
    } else if (m.role === 'system' || m.role === 'developer') {
      out.push(new SystemMessage(textOf(m.content)));
    }
  }
  return out;
}

function contentChars(c) {
  if (typeof c === 'string') return c.length;
  let n = 0;
  for (const b of c) n += typeof b === 'string' ? b.length : (b.text ?? '').length;
  return n;
}

function codepoints(c) {
  let n = 0;
  if (typeof c === 'string') {
    for (const _ of c) n++;
    return n;
  }
  for (const b of c) n += codepoints(typeof b === 'string' ? b : (b.text ?? ''));
  return n;
}

const COUNTERS = {
  length: (m) => contentChars(m.content),
  text: (m) => m.text.length,
  codepoints: (m) => codepoints(m.content),
  stringify: (m) => JSON.stringify(m.content).length +
    (m.tool_calls && m.tool_calls.length ? JSON.stringify(m.tool_calls).length : 0),
};
const perMessage = COUNTERS[opts.counter];
if (!perMessage) die(`unknown --counter ${opts.counter}`);

// Content characters / 4, summed over the messages.
function tokenCounter(msgs) {
  let chars = 0;
  for (const m of msgs) chars += perMessage(m);
  return Math.ceil(chars / 4);
}

async function once(text) {
  const t0 = performance.now();
  const messages = convert(JSON.parse(text));
  const t1 = performance.now();
  const kept = await trimMessages(messages, {
    maxTokens: opts.budget,
    strategy: 'last',
    tokenCounter,
    startOn: 'human',
    includeSystem: true,
  });
  const t2 = performance.now();
  return { ms: t2 - t0, trimMs: t2 - t1, inMsgs: messages.length, kept: kept.length, keptTokens: tokenCounter(kept) };
}

if (!runUnderTimeout(opts, PEER, file, { counter: opts.counter, budget_tokens: opts.budget })) {
  const { text, size } = loadText(file);
  for (let i = 0; i < opts.warmup; i++) await once(text);
  const times = [];
  const trims = [];
  let last;
  for (let i = 0; i < opts.runs; i++) {
    last = await once(text);
    times.push(last.ms);
    trims.push(last.trimMs);
  }
  const med = median(times);
  emit({
    peer: PEER,
    size,
    runs: opts.runs,
    median_ms: round(med),
    min_ms: round(Math.min(...times)),
    trim_ms: round(median(trims)),
    mb_per_s: round(mbPerS(size, med), 2),
    counter: opts.counter,
    budget_tokens: opts.budget,
    messages_in: last.inMsgs,
    messages_kept: last.kept,
    tokens_kept: last.keptTokens,
  });
}
