// The spec's scope as its words and the primer's plan give it (src/bon/harvest/scope.ts, pure): an arm's files beyond it
// are named, never guessed from a spec that names no file.
import { describe, expect, it } from 'vitest';
import { beyondLine, beyondScope, specScope } from '../../src/bon/harvest/scope.js';

const ZUSTAND_LIKE = `# Fix the shallow compare of Maps

Make \`shallow\` in src/vanilla/shallow.ts compare Map entries by key (see https://github.com/pmndrs/zustand/issues/1.2).
Tests live in tests/shallow.test.tsx; run them with npm run test:spec.

## Out of scope

- docs/ and CONTRIBUTING.md
- any other file
`;

describe('specScope and beyondScope', () => {
  it('names what the spec names and what it puts out of scope; a URL and a version are not paths', () => {
    const scope = specScope(ZUSTAND_LIKE);
    expect([...scope.files].sort()).toEqual(['src/vanilla/shallow.ts', 'tests/shallow.test.tsx']);
    expect(scope.outside.sort()).toEqual(['CONTRIBUTING.md', 'docs/']);
  });

  it('flags the files beyond it: out of scope, or named nowhere; tests of a named file and the plan are in', () => {
    const scope = specScope(
      ZUSTAND_LIKE,
      'Plan: change src/vanilla/shallow.ts and src/shallow.ts; add a case to tests/shallow.test.tsx.',
    );
    expect(beyondScope(['src/vanilla/shallow.ts', 'tests/shallow.test.tsx', 'src/shallow.ts'], scope)).toEqual([]);
    expect(beyondScope(['src/vanilla/shallow.ts', 'CONTRIBUTING.md', 'docs/guide.md', 'src/react.ts'], scope)).toEqual([
      'CONTRIBUTING.md',
      'docs/guide.md',
      'src/react.ts',
    ]);
    expect(beyondScope(['tests/vanilla/shallow.spec.ts'], scope)).toEqual([]);
  });

  it('an out-of-scope line ending in a colon holds until the next blank line; a line that says it holds for itself', () => {
    const scope = specScope(
      'Add src/a.js.\n\nDo not touch:\n- README.md\n- LICENSE.txt\n\nThen test/a.test.js passes. Out of scope: package.json\n',
    );
    expect(scope.outside.sort()).toEqual(['LICENSE.txt', 'README.md', 'package.json']);
    expect([...scope.files].sort()).toEqual(['src/a.js', 'test/a.test.js']);
  });

  it('a spec that names no file flags nothing but what it puts out of scope; a named manifest takes its lock file', () => {
    expect(beyondScope(['anything.js', 'README.md'], specScope('Make the greeting friendlier.\n'))).toEqual([]);
    expect(beyondScope(['README.md'], specScope('Make it friendlier. Out of scope: README.md\n'))).toEqual([
      'README.md',
    ]);
    expect(
      beyondScope(
        ['package.json', 'package-lock.json', 'yarn.lock'],
        specScope('Bump the dependency in package.json.\n'),
      ),
    ).toEqual([]);
  });

  it('says the files in one bounded line', () => {
    expect(beyondLine(['a', 'b'])).toBe('beyond the spec: a, b');
    expect(beyondLine(['a', 'b', 'c', 'd', 'e'])).toBe('beyond the spec: a, b, c (+2 more)');
    expect(beyondLine([])).toBeUndefined();
  });
});
