#!/usr/bin/env node
/**
 * Sizes the design keeps small (docs/development.md, "Sizes"): files over a line budget and functions
 * over a line budget, in the given folders. `node scripts/code-size.js [--file-lines N] [--function-lines N] [dirs…]`
 * prints them, longest first; exit 1 when any is over (test/architecture/sizes.test.ts runs it).
 */
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

/** Files that may be longer: the config schema is one declaration of every key, read top to bottom. */
const LONGER_FILES = new Set(['src/config/schema.ts']);

function walk(dir, out = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, out);
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

function functionsOf(source) {
  const found = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name =
        node.name && ts.isIdentifier(node.name)
          ? node.name.text
          : ts.isMethodDeclaration(node) || ts.isConstructorDeclaration(node)
            ? (node.name?.getText(source) ?? 'constructor')
            : '(anonymous)';
      found.push({ name, line: start + 1, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Files over `fileLines` and functions over `functionLines` under `dirs` (paths relative to `root`). */
function measure(root, dirs, { fileLines = 300, functionLines = 60 } = {}) {
  const files = [];
  const functions = [];
  for (const dir of dirs) {
    for (const file of walk(path.join(root, dir))) {
      const relative = path.relative(root, file).split(path.sep).join('/');
      const text = fs.readFileSync(file, 'utf8');
      const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
      if (lines > fileLines && !LONGER_FILES.has(relative)) files.push({ file: relative, lines });
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
      for (const fn of functionsOf(source)) if (fn.lines > functionLines) functions.push({ file: relative, ...fn });
    }
  }
  files.sort((a, b) => b.lines - a.lines);
  functions.sort((a, b) => b.lines - a.lines);
  return { files, functions };
}

module.exports = { measure, LONGER_FILES };

if (require.main === module) {
  const args = process.argv.slice(2);
  const option = (name, fallback) => {
    const at = args.indexOf(name);
    if (at === -1) return fallback;
    const value = Number(args[at + 1]);
    args.splice(at, 2);
    return value;
  };
  const fileLines = option('--file-lines', 300);
  const functionLines = option('--function-lines', 60);
  const dirs = args.length > 0 ? args : ['src', 'adapters'];
  const { files, functions } = measure(process.cwd(), dirs, { fileLines, functionLines });
  for (const { file, lines } of files) console.log(`file     ${String(lines).padStart(5)}  ${file}`);
  for (const { file, line, name, lines } of functions) console.log(`function ${String(lines).padStart(5)}  ${file}:${line} ${name}`);
  if (files.length === 0 && functions.length === 0) console.log(`none over ${fileLines} lines per file or ${functionLines} per function in ${dirs.join(', ')}`);
  process.exitCode = files.length + functions.length > 0 ? 1 : 0;
}
