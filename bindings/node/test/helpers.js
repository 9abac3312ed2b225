// Test helpers: the shared mock provider and MCP server (tests/bindings/, Python scripts) as
// child processes, and a decoder of the mock's recorded responses into transcript messages
// (it stands in for the library's response decoder, DESIGN 12, in the loop tests).
'use strict';
const { spawn } = require('child_process');
const path = require('path');
const readline = require('readline');

const REPO = path.resolve(process.env.QUIRE_SRC || path.join(__dirname, '..', '..', '..'));
const SHARED = path.join(REPO, 'tests', 'bindings');
const PYTHON = process.env.QUIRE_PYTHON || '/usr/bin/python3';

class Lines {
  constructor(stream) {
    this.queue = [];
    this.waiters = [];
    readline.createInterface({ input: stream }).on('line', (l) => {
      const w = this.waiters.shift();
      if (w) w(l);
      else this.queue.push(l);
    });
  }
  next() {
    if (this.queue.length) return Promise.resolve(this.queue.shift());
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

async function startMock() {
  const p = spawn(PYTHON, [path.join(SHARED, 'mock_provider.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = new Lines(p.stdout);
  const port = Number(await lines.next());
  return { base: `http://127.0.0.1:${port}`, stop: () => p.stdin.end() };
}

class Mcp {
  constructor() {
    this.p = spawn(PYTHON, [path.join(SHARED, 'mcp_server.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.lines = new Lines(this.p.stdout);
    this.id = 0;
  }
  async call(method, params, onNotification) {
    const id = ++this.id;
    this.p.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    for (;;) {
      const msg = JSON.parse(await this.lines.next());
      if (msg.id === id) return msg;
      onNotification(msg);
    }
  }
  close() {
    return new Promise((resolve) => {
      this.p.on('exit', (code) => resolve(code));
      this.p.stdin.end();
    });
  }
}

function* sseData(text) {
  for (const block of text.replace(/\r\n/g, '\n').split('\n\n')) {
    const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart());
    if (data.length) yield data.join('\n');
  }
}

function decodeAnthropic(text, stream) {
  let blocks;
  if (!stream) {
    blocks = JSON.parse(text).content;
  } else {
    blocks = [];
    const partial = {};
    for (const p of sseData(text)) {
      const ev = JSON.parse(p);
      if (ev.type === 'content_block_start') {
        blocks.push({ ...ev.content_block });
        partial[ev.index] = '';
      } else if (ev.type === 'content_block_delta') {
        if (ev.delta.type === 'text_delta') blocks[ev.index].text += ev.delta.text;
        else if (ev.delta.type === 'input_json_delta') partial[ev.index] += ev.delta.partial_json;
      } else if (ev.type === 'content_block_stop' && blocks[ev.index].type === 'tool_use') {
        blocks[ev.index].input = JSON.parse(partial[ev.index] || '{}');
      }
    }
  }
  const content = [];
  for (const b of blocks) {
    if (b.type === 'text') content.push({ type: 'text', text: b.text });
    else if (b.type === 'tool_use') content.push({ type: 'toolCall', id: b.id, name: b.name, input: b.input });
  }
  return { role: 'assistant', content };
}

function decodeOpenAI(text, stream) {
  let content = null;
  let calls = [];
  if (!stream) {
    const m = JSON.parse(text).choices[0].message;
    content = m.content;
    calls = m.tool_calls || [];
  } else {
    for (const p of sseData(text)) {
      if (p === '[DONE]') break;
      const d = JSON.parse(p).choices[0].delta;
      if (d.content) content = (content || '') + d.content;
      for (const tc of d.tool_calls || []) {
        while (calls.length <= tc.index) calls.push({ id: null, function: { name: '', arguments: '' } });
        const c = calls[tc.index];
        if (tc.id) c.id = tc.id;
        c.function.name += (tc.function && tc.function.name) || '';
        c.function.arguments += (tc.function && tc.function.arguments) || '';
      }
    }
  }
  const out = [];
  if (content) out.push({ type: 'text', text: content });
  for (const c of calls) {
    out.push({ type: 'toolCall', id: c.id, name: c.function.name, input: JSON.parse(c.function.arguments || '{}') });
  }
  return { role: 'assistant', content: out };
}

function decode(provider, text, stream) {
  return provider === 'anthropic' ? decodeAnthropic(text, stream) : decodeOpenAI(text, stream);
}

module.exports = { REPO, SHARED, PYTHON, startMock, Mcp, decode };
