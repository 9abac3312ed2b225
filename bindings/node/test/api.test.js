'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const quire = require('..');
const { REPO } = require('./helpers');

const T = {
  system: 'You are a coding agent.',
  tools: [{ name: 'read', description: 'Read a file', inputSchema: { type: 'object' } }],
  messages: [
    { role: 'user', content: 'List src/' },
    { role: 'assistant', content: [{ type: 'toolCall', id: 't1', name: 'read', input: { path: 'src' } }] },
    { role: 'tool', content: [{ type: 'toolResult', toolCallId: 't1', content: 'a.c\nb.c' }] },
  ],
};
const BIN = process.env.QUIRE_BIN;

test('render equals the CLI bytes for every dialect', { skip: !BIN }, () => {
  const src = JSON.stringify(T);
  for (const provider of ['anthropic', 'openai', 'openai_responses', 'gemini', 'bedrock', 'mistral', 'ollama']) {
    const r = quire.render(src, { provider });
    const cli = execFileSync(BIN, ['render', '--provider', provider, '-'], { input: src });
    assert.ok(Buffer.isBuffer(r.body));
    assert.equal(r.body.toString(), cli.toString().replace(/\n$/, ''));
    assert.equal(r.state.turn, 1);
  }
});

test('inputs: Buffer, string and object agree; numbers in Buffers pass through', () => {
  const a = quire.render(Buffer.from(JSON.stringify(T)), { provider: 'openai', model: 'gpt-4o' }).body;
  const b = quire.render(T, { provider: 'openai', model: 'gpt-4o' }).body;
  assert.ok(a.equals(b));
  const src = '{"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"toolCall","id":"t","name":"read","input":{"n":1.50e0}}]},{"role":"tool","content":[{"type":"toolResult","toolCallId":"t","content":"ok"}]}]}';
  assert.ok(quire.render(Buffer.from(src), { provider: 'anthropic' }).body.includes('1.50e0'));
});

test('QuireError carries the quire_error fields', () => {
  assert.throws(() => quire.render('{"messages":[\n {"role":"usr","content":"x"}]}', { provider: 'anthropic' }), (e) => {
    assert.ok(e instanceof quire.QuireError && e instanceof Error);
    assert.equal(e.code, 'QUIRE_E_SCHEMA');
    assert.equal(e.pointer, '/messages/0/role');
    assert.equal(e.line, 2);
    assert.ok(e.column > 1 && e.offset > 0);
    return true;
  });
  assert.throws(() => quire.render(Buffer.from('{"messages": [}'), { provider: 'anthropic' }),
    (e) => e.code === 'QUIRE_E_JSON' && e.line === 1 && e.column === 15);
  assert.throws(() => quire.apply(null, { type: 'reminder', reminder: { body: 'x', ttlTurns: 0 } }),
    (e) => e.code === 'QUIRE_E_REMINDER_TTL' && e.field === 'ttlTurns');
  assert.throws(() => quire.render(T, {}), (e) => e.code === 'QUIRE_E_INVALID');
});

test('reminders through apply and render', () => {
  const { state } = quire.apply(null, [{ type: 'reminder', reminder: { body: 'be brief', ttlTurns: 1 } }]);
  const r = quire.render(T, { provider: 'anthropic', state });
  assert.ok(r.body.includes('be brief'));
  assert.deepEqual(r.events.map((e) => e.sessionUpdate), ['reminder_emitted', 'reminder_expired']);
  assert.deepEqual(r.state.reminders, []);
});

test('validate, compact, plan, estimate', () => {
  const body = quire.render(T, { provider: 'anthropic' }).body;
  assert.deepEqual(quire.validate(body, { provider: 'anthropic' }), []);
  const bad = JSON.parse(body);
  bad.messages.unshift({ role: 'assistant', content: 'x' }, { role: 'assistant', content: 'y' });
  const v = quire.validate(JSON.stringify(bad), { provider: 'anthropic' });
  assert.ok(v.length > 0 && v.every((l) => l.startsWith('/')));
  const msgs = [];
  for (let i = 0; i < 30; i++) {
    msgs.push({ role: 'user', content: `task ${i} ` + 'word '.repeat(50) },
      { role: 'assistant', content: `done ${i} ` + 'word '.repeat(50) });
  }
  const n = quire.estimate({ messages: msgs });
  const c = quire.compact({ messages: msgs }, { budgetTokens: Math.floor(n / 2), policy: { summaryTokens: 64 } });
  assert.ok(c.changed && quire.estimate(c.transcriptJson) <= n / 2);
  assert.equal(c.events[0].sessionUpdate, 'transcript_compacted');
  assert.ok(typeof quire.plan({ messages: msgs }, { budgetTokens: Math.floor(n / 2) }) === 'object');
  assert.throws(() => quire.compact({ messages: msgs }, { budgetTokens: 5 }), (e) => e.code === 'QUIRE_E_BUDGET');
});

test('replay, importLog, caps, digest', () => {
  const log = '{"type":"session","sessionId":"s","target":{"provider":"anthropic"}}\n' +
    '{"type":"message","message":{"role":"user","content":"hi"}}\n{"type":"render"}\n';
  const out = quire.replay(log);
  assert.deepEqual(out.map((o) => o.type), ['request']);
  assert.throws(() => quire.replay(log + '{"type":"nope"}\n'), (e) => e.code === 'QUIRE_E_SESSION' && e.line === 4);
  const dir = path.join(REPO, 'tests', 'data', 'corpus', 'sessions', 'claude-code');
  const f = fs.readdirSync(dir).sort()[0];
  const r = quire.importLog(fs.readFileSync(path.join(dir, f)), { format: 'claude-code' });
  assert.ok(r.log.toString().startsWith('{"type":"session"'));
  assert.ok(r.report[r.report.length - 1].startsWith('summary'));
  assert.equal(quire.caps('anthropic').row.dialect, 'anthropic_messages');
  assert.equal(quire.digest('x').length, 32);
});

test('Session: pending turn, segments, restore, errors', () => {
  const s = new quire.Session({ provider: 'anthropic', model: 'claude-sonnet-4-5', system: 'sys' });
  s.append({ role: 'user', content: 'List src' });
  s.apply({ type: 'reminder', reminder: { body: 'once', ttlTurns: 1 } });
  const a = s.render();
  const b = s.render();
  assert.ok(a.body.equals(b.body) && a.turn === 1 && b.turn === 1);
  assert.ok(Buffer.concat(a.segments).equals(a.body));
  assert.equal(a.method, 'POST');
  assert.equal(a.path, '/v1/messages');
  assert.ok(a.headers['anthropic-version']);
  s.accept({ role: 'assistant', content: 'ok' });
  s.append({ role: 'user', content: 'again' });
  const c = s.render();
  assert.equal(c.turn, 2);
  assert.ok(!c.body.includes('once'));
  assert.equal(s.state().turn, 1);
  const r = quire.Session.restore(s.log());
  assert.deepEqual(r.transcript(), s.transcript());
  assert.throws(() => s.apply({ type: 'reminder', reminder: { body: ' ' } }),
    (e) => e instanceof quire.QuireError && e.code === 'QUIRE_E_REMINDER_BODY' && e.field === 'body');
  const fresh = new quire.Session({ provider: 'anthropic' });
  assert.throws(() => fresh.accept({ role: 'assistant', content: 'x' }), (e) => e instanceof quire.QuireError);
  s.close();
  assert.throws(() => s.render(), (e) => e.code === 'QUIRE_E_INVALID');
});

const ANTHROPIC_BODY = JSON.stringify({
  id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'Reading.' }, { type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a.c' } }],
  stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 12, output_tokens: 5 },
});
const ANTHROPIC_SSE = [
  ['message_start', { type: 'message_start', message: { id: 'msg_2', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 20, output_tokens: 1 } } }],
  ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Done.' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 3 } }],
  ['message_stop', { type: 'message_stop' }],
].map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`).join('');

test('Session: acceptResponse with a raw body and a stream', () => {
  const s = new quire.Session({ provider: 'anthropic', model: 'claude-sonnet-4-5', tools: T.tools });
  s.append({ role: 'user', content: 'What is in a.c?' });
  s.render();
  assert.throws(() => s.acceptResponse('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'),
    (e) => e instanceof quire.QuireError && e.code === 'QUIRE_E_PROVIDER');
  const info = s.acceptResponse(Buffer.from(ANTHROPIC_BODY));
  assert.equal(info.stopReason, 'tool_use');
  s.toolOutcome('toolu_1', 'completed', JSON.stringify('int main(void) {}'));
  s.render();
  assert.equal(s.acceptResponse(ANTHROPIC_SSE, { stream: true }).stopReason, 'end_turn');
  const msgs = s.transcript().messages;
  assert.equal(msgs[msgs.length - 1].role, 'assistant');
  assert.deepEqual(quire.Session.restore(s.log()).transcript(), s.transcript());
});

test('Session: push routing and interruptPending', () => {
  const s = new quire.Session({ provider: 'anthropic', model: 'claude-sonnet-4-5', bridges: { fs: ['resources'] } });
  s.append({ role: 'user', content: 'watch' });
  const upd = { type: 'mcp', server: 'fs', message: { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'file:///a.c' } } };
  assert.equal(s.apply(upd).events[0].reason, 'not_subscribed');
  s.apply({ type: 'mcp', server: 'fs', direction: 'out', message: { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: 'file:///a.c' } } });
  assert.deepEqual(s.subscriptions('fs'), ['file:///a.c']);
  assert.deepEqual(s.subscriptions(), { fs: ['file:///a.c'] });
  assert.deepEqual(s.apply(upd).events, []);
  assert.deepEqual(s.apply({ type: 'mcp', server: 'fs', event: 'reconnected' }).events,
    [{ sessionUpdate: 'mcp_reconnected', server: 'fs', subscriptions: ['file:///a.c'] }]);
  s.apply({ type: 'reminder', reminder: { body: 'Stop now.', mode: 'interrupt_immediate' } });
  const r = s.render();
  assert.equal(r.interruptPending, true);
  assert.ok(r.body.includes('Resource file:///a.c changed'));
});
