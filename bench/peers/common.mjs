// Shared helpers for the peer benchmarks: argument parsing, timing, output.
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

export function parseArgs(argv, defaults) {
  const opts = { ...defaults, _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      let key, val;
      if (eq > 0) {
        key = a.slice(2, eq);
        val = a.slice(eq + 1);
      } else {
        key = a.slice(2);
        val = argv[++i];
        if (val === undefined) die(`option --${key} needs a value`);
      }
      if (!(key in defaults)) die(`unknown option --${key}`);
      opts[key] = typeof defaults[key] === 'number' ? Number(val) : val;
      if (typeof defaults[key] === 'number' && !Number.isFinite(opts[key])) {
        die(`option --${key} needs a number, got ${JSON.stringify(val)}`);
      }
    } else {
      opts._.push(a);
    }
  }
  return opts;
}

export function die(msg) {
  process.stderr.write(`${process.argv[1].split('/').pop()}: ${msg}\n`);
  process.exit(2);
}

// The file's bytes decoded once, outside the timed region: every peer and quire
// start from the transcript already in memory.
export function loadText(file) {
  if (!file) die('usage: FILE argument missing');
  const buf = readFileSync(file);
  return { text: buf.toString('utf8'), size: buf.length };
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

// MB = 10^6 bytes.
export function mbPerS(size, ms) {
  return ms > 0 ? size / 1e6 / (ms / 1e3) : null;
}

export function round(x, digits = 3) {
  if (x === null || x === undefined) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

// --timeout SEC: rerun this script in a child process and kill it when the
// time is up (a synchronous or microtask-only loop cannot be interrupted from
// inside). Returns true when the caller should stop (the child did the work).
export function runUnderTimeout(opts, peer, file, extra = {}) {
  if (!opts.timeout || process.env.QUIRE_PEER_CHILD) return false;
  const r = spawnSync(process.execPath, [...process.execArgv, process.argv[1], ...process.argv.slice(2)], {
    env: { ...process.env, QUIRE_PEER_CHILD: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: opts.timeout * 1000,
    killSignal: 'SIGKILL',
    maxBuffer: 64 << 20,
  });
  if (r.error && r.error.code !== 'ETIMEDOUT') throw r.error;
  if (r.signal || (r.error && r.error.code === 'ETIMEDOUT')) {
    let size = null;
    try { size = readFileSync(file).length; } catch { /* reported below */ }
    emit({ peer, size, runs: 0, ...extra, timed_out: true, timeout_s: opts.timeout });
    process.exitCode = 1;
    return true;
  }
  process.stdout.write(r.stdout);
  process.exitCode = r.status ?? 1;
  return true;
}
