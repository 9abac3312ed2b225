// The TypeScript loop of README.md: type-checked against index.d.ts with tsc --strict, compiled,
// and run against the mock provider.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const { REPO, startMock } = require('./helpers');

const PKG = path.resolve(__dirname, '..');

test('README TypeScript loop compiles under --strict and runs', async () => {
  const text = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
  const blocks = [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.equal(blocks.length, 1);
  const loop = blocks[0].trim().split('\n');
  assert.ok(loop.length <= 18, `${loop.length} lines`); // the import, the session and a 15-line loop
  const dir = fs.mkdtempSync(path.join(PKG, 'test', '.readme-'));
  try {
    const src = path.join(dir, 'loop.mts');
    fs.writeFileSync(src, [
      "const BASE_URL = process.env.QUIRE_BASE_URL ?? '';",
      "const tools: Array<{ name: string; input: unknown }> = [];",
      "function runTool(c: { name: string; input: unknown }): string { tools.push(c); return 'src/main.c\\nsrc/util.c'; }",
      blocks[0],
      'console.log(JSON.stringify({ transcript: s.transcript(), tools }));',
    ].join('\n'));
    const tsc = path.join(PKG, 'node_modules', 'typescript', 'bin', 'tsc');
    execFileSync(process.execPath, [tsc, '--strict', '--noUnusedLocals', '--module', 'nodenext', '--moduleResolution', 'nodenext',
      '--target', 'es2022', '--types', 'node', '--rootDir', dir, '--outDir', dir, src], { cwd: PKG, stdio: 'inherit' });
    const mock = await startMock();
    try {
      const out = await new Promise((resolve, reject) => {
        const { execFile } = require('child_process');
        execFile(process.execPath, [path.join(dir, 'loop.mjs')], { env: { ...process.env, QUIRE_BASE_URL: mock.base } },
          (err, stdout) => (err ? reject(err) : resolve(stdout)));
      });
      const r = JSON.parse(out);
      assert.deepEqual(r.tools.map((c) => c.input), [{ path: 'src' }]);
      assert.deepEqual(r.transcript.messages.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant']);
      assert.match(r.transcript.messages[3].content[0].text, /src\/main\.c/);
    } finally {
      mock.stop();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
