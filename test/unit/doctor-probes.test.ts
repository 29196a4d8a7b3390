// The doctor's pure parsers and shape checks: pi's model table, vitest's summary, the rules shape, the
// settings entry that points at the factory, and which extensions are looked at.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { extensionNames } from '../../src/doctor/checks.js';
import { pointsAtFactory, rulesProblem } from '../../src/doctor/nodeFiles.js';
import { parseModelList } from '../../src/doctor/probes.js';

describe('parseModelList', () => {
  it('reads the padded table pi prints, ignoring lines before its header and trailing blanks', () => {
    const text = [
      'Warning: something first',
      'provider    model                 context  max-out  thinking  images',
      'openrouter  z-ai/glm-5.3          200K     16.4K    yes       no    ',
      'scripted    alpha                 128K     16.4K    no        no    ',
      '',
    ].join('\n');
    expect(parseModelList(text)).toEqual([
      { provider: 'openrouter', model: 'z-ai/glm-5.3' },
      { provider: 'scripted', model: 'alpha' },
    ]);
  });

  it('gives nothing for "No models matching"', () => {
    expect(parseModelList('No models matching "zzz"\n')).toEqual([]);
  });
});

describe('rulesProblem', () => {
  it('accepts the shape damage-control reads and names the first problem otherwise', () => {
    expect(rulesProblem({ bash: { deny: ['rm -rf'], ask: [] }, paths: { protected: ['.env'] } })).toBeUndefined();
    expect(rulesProblem({})).toBeUndefined();
    expect(rulesProblem(['x'])).toBe('a mapping with bash and paths expected');
    expect(rulesProblem({ bash: {}, extra: 1 })).toBe('unknown key(s) extra');
    expect(rulesProblem({ bash: { deny: 'rm' } })).toBe('bash.deny must be a list of strings');
    expect(rulesProblem({ bash: { ask: ['(('] } })).toBe('bash.ask: invalid regular expression "(("');
    expect(rulesProblem({ paths: { protected: ['(('] } })).toBeUndefined(); // globs, not regexes
  });
});

describe('pointsAtFactory', () => {
  it('matches a local source resolving to the factory, as string or entry', () => {
    expect(pointsAtFactory(['../../factory'], '/w/app/.pi', '/w/factory')).toBe(true);
    expect(pointsAtFactory([{ source: '/w/factory/' }], '/w/app/.pi', '/w/factory')).toBe(true);
    expect(pointsAtFactory(['npm:factory', '../other'], '/w/app/.pi', '/w/factory')).toBe(false);
    expect(pointsAtFactory(undefined, '/w/app/.pi', '/w/factory')).toBe(false);
  });
});

describe('extensionNames', () => {
  it('always lists the socle (required) and other node extensions only when on disk (optional)', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'factory-ext-'));
    try {
      mkdirSync(path.join(root, '.pi', 'extensions'), { recursive: true });
      expect(extensionNames(root).every((e) => e.required)).toBe(true);
      expect(extensionNames(root).map((e) => e.name)).toContain('factory-report');
      writeFileSync(path.join(root, '.pi', 'extensions', 'factory-compact.ts'), '');
      expect(extensionNames(root).find((e) => e.name === 'factory-compact')).toEqual({ name: 'factory-compact', required: false });
      expect(extensionNames(root).find((e) => e.name === 'factory-context')).toBeUndefined();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
