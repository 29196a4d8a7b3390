// `spot`: the test runner of the user-world fixture repo (test/helpers/userRepo.ts), committed in that repo as
// tools/spot.mjs. It carries the traits of real runners that the factory must survive: it forces ANSI colour
// (NO_COLOR and FORCE_COLOR=0 are ignored), draws a `\r` progress line, links file names with OSC 8, names a
// failing test `✗ suite > test`, and keeps a transform cache under `<project>/node_modules/.cache/spot/` that
// it trusts on the next run. The cache's index keys each test file by its absolute path and records the
// absolute cache folder it was written from, so an index written from a folder that is gone since (a deleted
// scratch tree sharing this node_modules) makes the next run fail to load its entries; a run that hits a
// broken entry drops the index, and the run after it passes again — the behaviour users saw.
export const SPOT_RUNNER = String.raw`#!/usr/bin/env node
// spot: this repo's test runner. Usage: node tools/spot.mjs [project…] (each project holds test/*.test.js).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// Always in colour: spot decides for itself (some runners do), whatever NO_COLOR says.
const paint = (open, close) => (text) => '\x1b[' + open + 'm' + text + '\x1b[' + close + 'm';
const red = paint(31, 39);
const green = paint(32, 39);
const dim = paint(2, 22);
const bold = paint(1, 22);
const link = (file, text) => '\x1b]8;;' + pathToFileURL(file).href + '\x1b\\' + text + '\x1b]8;;\x1b\\';
const say = (line) => process.stdout.write(line + '\n');

const suites = [];
let collected = [];
globalThis.describe = (name, body) => {
  suites.push(name);
  try {
    body();
  } finally {
    suites.pop();
  }
};
globalThis.it = (name, fn) => collected.push({ name: [...suites, name].join(' > '), fn });

const sha1 = (text) => crypto.createHash('sha1').update(text).digest('hex');
const firstLines = (error) => String(error && error.message ? error.message : error).split('\n').filter((l) => l.trim() !== '').slice(0, 4);

// The transform: relative imports become absolute file URLs, so the compiled copy runs from the cache folder.
function compile(file, source) {
  return source.replace(/(from\s+|import\s*\(\s*)(['"])(\.{1,2}\/[^'"]+)\2/g, (_, lead, quote, spec) =>
    lead + quote + pathToFileURL(path.resolve(path.dirname(file), spec)).href + quote);
}

let passed = 0;
let failed = 0;

async function runProject(project) {
  const root = path.resolve(project);
  const cacheDir = path.join(root, 'node_modules', '.cache', 'spot');
  const indexFile = path.join(cacheDir, 'index.json');
  let index = { cacheDir, files: {} };
  try {
    index = JSON.parse(fs.readFileSync(indexFile, 'utf8'));
  } catch {
    // no cache yet
  }
  const files = { ...index.files };
  let broken = false;
  const testDir = path.join(root, 'test');
  for (const name of fs.readdirSync(testDir).filter((n) => n.endsWith('.test.js')).sort()) {
    const file = path.join(testDir, name);
    const shown = path.relative(process.cwd(), file);
    const source = fs.readFileSync(file, 'utf8');
    const hash = sha1(source);
    const known = index.files[file];
    let compiled;
    if (known && known.hash === hash) {
      compiled = path.join(index.cacheDir, known.compiled); // unchanged since the last run: trusted
    } else {
      const compiledName = sha1(file + '\0' + source) + '.mjs';
      fs.mkdirSync(cacheDir, { recursive: true });
      fs.writeFileSync(path.join(cacheDir, compiledName), compile(file, source));
      files[file] = { hash, compiled: compiledName };
      compiled = path.join(cacheDir, compiledName);
    }
    process.stdout.write(dim('running ' + shown + '…') + '\r\x1b[2K');
    say(' ' + dim('❯') + ' ' + link(file, shown));
    collected = [];
    try {
      await import(pathToFileURL(compiled).href);
    } catch (error) {
      failed += 1;
      say('   ' + red('✗') + ' ' + bold(shown + ' > cannot load'));
      for (const line of firstLines(error)) say('     ' + red(line));
      if (known) broken = true;
      continue;
    }
    for (const test of collected) {
      try {
        await test.fn();
        passed += 1;
        say('   ' + green('✓') + ' ' + test.name);
      } catch (error) {
        failed += 1;
        say('   ' + red('✗') + ' ' + bold(test.name));
        for (const line of firstLines(error)) say('     ' + red(line));
      }
    }
  }
  if (broken) {
    fs.rmSync(indexFile, { force: true }); // the next run rebuilds the cache
    return;
  }
  fs.mkdirSync(cacheDir, { recursive: true });
  fs.writeFileSync(indexFile, JSON.stringify({ cacheDir, files }, null, 2) + '\n');
}

for (const project of process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['.']) await runProject(project);
say('');
say(' ' + bold('Tests') + '  ' + (failed > 0 ? red(failed + ' failed') + dim(' | ') : '') + green(passed + ' passed'));
process.exitCode = failed > 0 ? 1 : 0;
`;
