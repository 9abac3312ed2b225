// The real loop from Node: new Session() against the mock provider on 127.0.0.1 (recorded
// Anthropic and OpenAI responses, JSON and SSE) with fetch, an MCP server process pushing
// reminders over stdio, compaction when estimate() passes a budget, and a log that replays to
// exactly the requests sent.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const quire = require('..');
const { startMock, Mcp, decode } = require('./helpers');

const TOOLS = [{ name: 'read', description: 'List a directory',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }];
const TASKS = ['List src', 'List docs', 'List tests', 'List bench', 'List cli', 'List core', 'List session'];

async function runLoop(base, provider, model, stream, budget) {
  const mcp = new Mcp();
  const s = new quire.Session({ provider, model, system: 'You are a coding agent.', tools: TOOLS });
  const events = [];
  const onNote = (msg) => events.push(...s.apply({ type: 'mcp', server: 'fs-watcher', message: msg }).events);
  const init = await mcp.call('initialize', { protocolVersion: '2025-11-25', capabilities: {},
    clientInfo: { name: 'loop', version: '1' } }, onNote);
  s.apply({ type: 'mcp', server: 'fs-watcher', message: init });
  const sent = [];
  let compactions = 0;
  try {
    for (const task of TASKS) {
      s.append({ role: 'user', content: task });
      for (;;) {
        if (s.estimate() > budget) {
          const report = s.compact({ budgetTokens: budget, policy: { keepLastTurns: 1, summaryTokens: 64 } });
          assert.ok(report && Object.keys(report).length > 0);
          compactions++;
        }
        const req = s.render();
        events.push(...req.events);
        sent.push(req.body);
        const headers = { ...req.headers };
        if (stream) headers['x-mock-stream'] = '1';
        const res = await fetch(base + req.path, { method: req.method, headers, body: req.body });
        const text = await res.text();
        assert.equal(res.status, 200, text);
        const msg = decode(provider, text, stream);
        s.accept(msg);
        const calls = msg.content.filter((b) => b.type === 'toolCall');
        if (!calls.length) break;
        const results = [];
        for (const c of calls) {
          const r = await mcp.call('tools/call', { name: c.name, arguments: c.input }, onNote);
          results.push({ type: 'toolResult', toolCallId: c.id, content: r.result.content[0].text });
        }
        s.append({ role: 'tool', content: results });
      }
    }
  } catch (e) {
    mcp.p.kill(); // a failed loop must not leave the server process holding the test open
    throw e;
  }
  assert.equal(await mcp.close(), 0);
  return { s, sent, compactions, events };
}

for (const [provider, model, stream] of [['anthropic', 'claude-sonnet-4-5', false], ['anthropic', 'claude-sonnet-4-5', true],
  ['openai', 'gpt-4o', false], ['openai', 'gpt-4o', true]]) {
  test(`loop ${provider} ${stream ? 'SSE' : 'JSON'}`, async () => {
    const mock = await startMock();
    try {
      const { s, sent, compactions, events } = await runLoop(mock.base, provider, model, stream, 250);
      assert.equal(sent.length, 2 * TASKS.length);
      const msgs = s.transcript().messages;
      const last = msgs[msgs.length - 1];
      assert.equal(last.role, 'assistant');
      assert.match(last.content[0].text, /session\/main\.c/);
      assert.ok(sent.some((b) => b.includes('changed on disk')));
      const kinds = new Set(events.map((e) => e.sessionUpdate));
      assert.ok(kinds.has('reminder_emitted') && kinds.has('reminder_expired'));
      assert.ok(compactions >= 1);
      assert.ok(s.state().reminders.some((r) => r.dedupeKey === 'standard'), 'preserveOnCompact kept');
      const reqs = quire.replay(s.log(), { digest: true }).filter((o) => o.type === 'request');
      assert.deepEqual(reqs.map((o) => o.digest), sent.map((b) => quire.digest(b)));
      assert.deepEqual(reqs.map((o) => o.bytes), sent.map((b) => b.length));
    } finally {
      mock.stop();
    }
  });
}
