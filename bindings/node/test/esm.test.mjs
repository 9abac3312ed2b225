import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import quireDefault, { render, Session, QuireError } from '../index.mjs';

const require = createRequire(import.meta.url);

test('the ES module and CommonJS entries are the same objects', () => {
  const cjs = require('..');
  assert.equal(render, cjs.render);
  assert.equal(Session, cjs.Session);
  assert.equal(QuireError, cjs.QuireError);
  assert.equal(quireDefault, cjs);
  assert.ok(render({ messages: [{ role: 'user', content: 'hi' }] }, { provider: 'gemini' }).body.length > 0);
});
