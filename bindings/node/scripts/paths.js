// Where the quire library and header are, for binding.gyp (node scripts/paths.js WHAT).
//   QUIRE_BUILD_DIR    the CMake build folder holding libquire.a (default: ../../build)
//   QUIRE_INCLUDE_DIR  the folder holding quire.h (default: ../../include)
'use strict';
const fs = require('fs');
const path = require('path');

const pkg = path.resolve(__dirname, '..');
const build = path.resolve(process.env.QUIRE_BUILD_DIR || path.join(pkg, '..', '..', 'build'));
const include = path.resolve(process.env.QUIRE_INCLUDE_DIR || path.join(pkg, '..', '..', 'include'));
const lib = path.join(build, 'libquire.a');

function sanitizer() {
  try {
    const m = /^QUIRE_SANITIZER:[^=]*=(.*)$/m.exec(fs.readFileSync(path.join(build, 'CMakeCache.txt'), 'utf8'));
    return m ? m[1].trim() : '';
  } catch (e) {
    return '';
  }
}

const what = process.argv[2];
if (what === 'include') {
  process.stdout.write(include);
} else if (what === 'lib') {
  if (!fs.existsSync(lib)) {
    process.stderr.write(`quire: ${lib} not found; run \`make\` in the repository first or set QUIRE_BUILD_DIR\n`);
    process.exit(1);
  }
  process.stdout.write(lib);
} else if (what === 'ldflags') {
  const san = sanitizer();
  process.stdout.write(san ? `-fsanitize=${san}` : '');
}
