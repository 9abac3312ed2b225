// npm install hook: builds the addon with node-gyp against the headers of the running Node.
// No header download: node-gyp gets --nodedir, the prefix whose include/node/ holds node_api.h
// (Debian's nodejs/libnode-dev install them under /usr), unless npm's nodedir config names one.
'use strict';
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

function nodeGyp() {
  try {
    return require.resolve('node-gyp/bin/node-gyp.js');  // the devDependency (npm ci in this folder)
  } catch (e) { /* installed as a dependency: npm's own node-gyp */ }
  if (process.env.npm_config_node_gyp) return process.env.npm_config_node_gyp;
  return path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules',
                   'node-gyp', 'bin', 'node-gyp.js');
}

function nodeDir() {
  if (process.env.npm_config_nodedir) return process.env.npm_config_nodedir;
  for (const d of [path.resolve(process.execPath, '..', '..'), '/usr', '/usr/local']) {
    if (fs.existsSync(path.join(d, 'include', 'node', 'node_api.h'))) return d;
  }
  process.stderr.write('quire: no Node headers (include/node/node_api.h) found; install libnode-dev ' +
                       'or set npm_config_nodedir\n');
  process.exit(1);
}

const args = [nodeGyp(), 'rebuild', `--nodedir=${nodeDir()}`];
if (process.env.QUIRE_NODE_DEBUG) args.push('--debug');
const r = spawnSync(process.execPath, args, { cwd: path.resolve(__dirname, '..'), stdio: 'inherit' });
process.exit(r.status === null ? 1 : r.status);
