// One table of exit codes (issue 40, point 3): src/contract/exit.ts. The README's table is that table, and no source
// file spells one of the cockpit's exit codes as a number (a child process's own exit code — git's, pi's — is not one).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, exitKindOf, exitTable } from '../../src/contract/exit.js';
import {
  FactoryError,
  HarnessError,
  InfrastructureError,
  InterruptedError,
  PhaseFailure,
  UsageError,
} from '../../src/contract/errors.js';
import { RosterError } from '../../src/config/roster.js';
import { GitError } from '../../src/process/git.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TABLE_FILE = 'src/contract/exit.ts';

function sources(dir: string): string[] {
  return fs
    .readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));
}

/** The cockpit's own exit codes spelled as numbers: in a comparison with or an assignment to `exit`, a process exit, a run's finish. */
const LITERAL = [
  /\bexit\s*(?:===|!==|==|!=|:|=)\s*\d+\b/,
  /process\.exitCode\s*=\s*\d/,
  /process\.exit\)?\(\s*\d/,
  /\bfinish\(\s*\d/,
  /\b130\b/,
];

describe('the exit codes', () => {
  it('are one table, which the README prints as it is', () => {
    expect(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')).toContain(exitTable());
    expect(Object.values(EXIT)).toEqual([0, 1, 2, 3, 130]);
    expect([0, 1, 2, 3, 130, 7].map(exitKindOf)).toEqual([
      'green',
      'failed',
      'infrastructure',
      'budget',
      'interrupted',
      'failed',
    ]);
  });

  it('every error raised on purpose carries its kind and exit code from one root', () => {
    const cases: Array<[FactoryError, number]> = [
      [new UsageError('bad flag'), EXIT.infrastructure],
      [new RosterError('unknown role'), EXIT.infrastructure],
      [new InfrastructureError('pi missing'), EXIT.infrastructure],
      [new InterruptedError('Ctrl-C'), EXIT.interrupted],
      [new PhaseFailure('red gate', undefined, 'gate'), EXIT.failed],
      [new PhaseFailure('cap', undefined, 'budget'), EXIT.budget],
      [new HarnessError('no key', 's', { kind: 'auth' }), EXIT.infrastructure],
      [new GitError('no repo'), EXIT.infrastructure],
    ];
    for (const [error, code] of cases)
      expect({ name: error.name, code: error.exitCode }).toEqual({ name: error.name, code });
  });

  it('no source file spells one as a number but the table', () => {
    const found: string[] = [];
    for (const file of ['src', 'state', 'components', 'adws'].flatMap(sources)) {
      if (file === TABLE_FILE || file.startsWith('src/scripted/')) continue;
      fs.readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const code = line
            .replace(/\/\*.*?\*\//g, '')
            .replace(/\/\/.*$/, '')
            .replace(/^\s*\/?\*.*$/, '');
          if (LITERAL.some((re) => re.test(code))) found.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });
});
