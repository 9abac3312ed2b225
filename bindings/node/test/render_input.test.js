'use strict';
// render() from a JS string is transcoded UTF-16 -> UTF-8 inside the addon (a reused scratch);
// these pin that it gives the same bytes as the UTF-8 Buffer Node itself makes, on every shape
// of text, and that a returned body owns its bytes (later renders and GC leave it intact).
const test = require('node:test');
const assert = require('node:assert/strict');
const v8 = require('v8');
const vm = require('vm');
const quire = require('..');

function transcript(text) {
  return JSON.stringify({ messages: [{ role: 'user', content: text }] });
}

const TEXTS = {
  ascii: 'plain ascii '.repeat(40),
  latin1: 'café déjà vu — naïve ' + 'é'.repeat(37),
  bmp: '日本語のテキスト ' + 'ü€'.repeat(20) + ' end',
  pairs: '😀 emoji 🚀 pairs 𝄞 ' + '🙂'.repeat(17),
  // ASCII runs of every length around the 16-unit blocks, then a multi-byte unit
  boundaries: Array.from({ length: 40 }, (_, i) => 'x'.repeat(i) + 'é😀').join('|'),
  pairAtBlock: 'a'.repeat(15) + '😀' + 'b'.repeat(14) + '😀' + 'c'.repeat(33),
};

test('a string transcript renders to the same body as its UTF-8 bytes', () => {
  for (const [name, text] of Object.entries(TEXTS)) {
    const src = transcript(text);
    for (const provider of ['anthropic', 'openai']) {
      const fromString = quire.render(src, { provider }).body;
      const fromBytes = quire.render(Buffer.from(src, 'utf8'), { provider }).body;
      assert.ok(fromString.equals(fromBytes), `${name} / ${provider}`);
      assert.ok(fromString.toString('utf8').includes(text), name);
    }
  }
});

test('a lone surrogate becomes U+FFFD, as Node\'s own UTF-8 encoding does', () => {
  for (const text of ['a\ud800b', 'end\udc00', '\udbff', 'x'.repeat(20) + '\ud83d' + 'y'.repeat(20)]) {
    // raw in the JSON text (JSON.stringify would escape it as \udXXX)
    const src = '{"messages":[{"role":"user","content":"' + text + '"}]}';
    const a = quire.render(src, { provider: 'anthropic' }).body;
    const b = quire.render(Buffer.from(src, 'utf8'), { provider: 'anthropic' }).body;
    assert.ok(a.equals(b));
    assert.ok(a.includes('\ufffd'));
  }
});

test('a long string after a short one, and a short one after a long one (scratch reuse)', () => {
  const long = transcript('é😀 long '.repeat(50000));
  const short = transcript('short');
  const s1 = quire.render(short, { provider: 'anthropic' }).body.toString();
  const l1 = quire.render(long, { provider: 'anthropic' }).body;
  const s2 = quire.render(short, { provider: 'anthropic' }).body.toString();
  assert.equal(s1, s2);
  assert.ok(l1.equals(quire.render(Buffer.from(long), { provider: 'anthropic' }).body));
});

test('a body stays valid after later renders and after GC of everything else', () => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const src = transcript('keep me ' + '🙂'.repeat(1000));
  const body = quire.render(src, { provider: 'anthropic' }).body;  // the result object is dropped
  const copy = Buffer.from(body);
  const slice = body.subarray(10, 60);
  const sliceCopy = Buffer.from(slice);
  for (let i = 0; i < 50; i++) {
    quire.render(transcript('other ' + i + ' 😀'.repeat(500)), { provider: 'anthropic' });
    quire.render(Buffer.from(transcript('bytes ' + i)), { provider: 'openai' });
  }
  gc();
  gc();
  assert.ok(body.equals(copy));
  assert.ok(slice.equals(sliceCopy));
});

test('render results: events and state read lazily, stateJson a Buffer', () => {
  const r = quire.render(transcript('hi'), { provider: 'anthropic' });
  assert.deepEqual(r.events, []);
  assert.ok(Buffer.isBuffer(r.stateJson));
  assert.equal(r.state.turn, 1);
  // a long model name goes through whole (the addon reads short ones into a fixed buffer)
  const long = 'claude-' + 'x'.repeat(300);
  assert.ok(JSON.parse(quire.render(transcript('hi'), { provider: 'anthropic', model: long }).body).model === long);
});

test('into: the body is written into the caller\'s buffer when it fits', () => {
  const src = transcript('into me 😀 ' + 'x'.repeat(3000));
  const fresh = quire.render(src, { provider: 'anthropic' }).body;
  const into = Buffer.alloc(fresh.length + 100, 0x2a);
  const a = quire.render(src, { provider: 'anthropic', into });
  assert.ok(Buffer.isBuffer(a.body));
  assert.equal(a.body.buffer, into.buffer);
  assert.equal(a.body.byteOffset, into.byteOffset);
  assert.ok(a.body.equals(fresh));
  assert.equal(into[fresh.length], 0);  // the body's NUL, and nothing after it
  assert.equal(into[fresh.length + 1], 0x2a);
  // a plain Uint8Array works too, and a second render overwrites the first body in place
  const u8 = new Uint8Array(fresh.length + 10);
  const b1 = quire.render(transcript('one'), { provider: 'openai', into: u8 }).body;
  const one = Buffer.from(b1);
  const b2 = quire.render(transcript('two'), { provider: 'openai', into: u8 }).body;
  assert.ok(Buffer.isBuffer(b2) && b2.buffer === u8.buffer);
  assert.ok(b2.toString().includes('two') && one.toString().includes('one'));
  // too small (also: room for the body but not its NUL): a new Buffer or a copy, same bytes
  const small = Buffer.alloc(8, 0x2a);
  const c = quire.render(src, { provider: 'anthropic', into: small });
  assert.notEqual(c.body.buffer, small.buffer);
  assert.ok(c.body.equals(fresh));
  const exact = Buffer.alloc(fresh.length);
  const d = quire.render(src, { provider: 'anthropic', into: exact });
  assert.ok(d.body.equals(fresh));
  // the transcript's own bytes as `into`: read while the body is written, so never overwritten
  // before they are read
  const srcb = Buffer.from(src);
  const both = Buffer.alloc(srcb.length + fresh.length + 64);
  srcb.copy(both);
  const e = quire.render(both.subarray(0, srcb.length), { provider: 'anthropic', into: both });
  assert.ok(e.body.equals(fresh));
});

test('Session.render into a reused buffer: body and segments are views of it', () => {
  const s = new quire.Session({ provider: 'anthropic', model: 'claude-sonnet-4-5', system: 'be brief' });
  s.append({ role: 'user', content: 'hello 😀' });
  const fresh = Buffer.from(s.render().body);
  const into = Buffer.alloc(fresh.length + 64);
  const r = s.render(null, null, { into });
  assert.equal(r.body.buffer, into.buffer);
  assert.ok(r.body.equals(fresh));
  assert.ok(Buffer.concat(r.segments).equals(fresh));
  assert.equal(r.json().model, 'claude-sonnet-4-5');
  s.accept({ role: 'assistant', content: 'hi' });
  s.append({ role: 'user', content: 'more' });
  const small = Buffer.alloc(4);
  const r2 = s.render(null, null, { into: small });  // does not fit: a new Buffer
  assert.notEqual(r2.body.buffer, small.buffer);
  assert.ok(r2.body.includes('more'));
});

test('seeded random strings: the addon\'s UTF-8 equals Node\'s for every mix of units', () => {
  let seed = 12345;
  const rnd = (n) => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n; };
  const units = [0x61, 0x20, 0x7e, 0x7f, 0x80, 0xe9, 0x7ff, 0x800, 0x65e5, 0xfffd, 0xffff,
    0xd83d, 0xde00, 0xd800, 0xdfff, 0xdbff, 0xdc00];
  for (let it = 0; it < 300; it++) {
    const n = rnd(120);
    let text = '';
    for (let k = 0; k < n; k++) text += String.fromCharCode(rnd(4) ? 0x61 + rnd(26) : units[rnd(units.length)]);
    const src = '{"messages":[{"role":"user","content":"' + text + '"}]}';
    const a = quire.render(src, { provider: 'openai' }).body;
    const b = quire.render(Buffer.from(src, 'utf8'), { provider: 'openai' }).body;
    assert.ok(a.equals(b), `case ${it}`);
  }
});
