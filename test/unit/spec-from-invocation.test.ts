// A spec path typed from a subfolder of the repository is the user's path, not the root's.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { specFromInvocation } from '../../src/commands/workspace.js';

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-spec-path-')));
fs.mkdirSync(path.join(root, 'specs'));
fs.mkdirSync(path.join(root, 'src'));
fs.writeFileSync(path.join(root, 'specs', 'x.md'), '# x\n');
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('specFromInvocation', () => {
  it('reads a path typed in a subfolder from that subfolder, and hands the root-relative path on', () => {
    expect(specFromInvocation({ root, invokedIn: path.join(root, 'src') }, '../specs/x.md')).toBe(
      path.join('specs', 'x.md'),
    );
  });

  it('keeps what is typed at the root, an absolute path, and a path that does not exist from the subfolder', () => {
    expect(specFromInvocation({ root, invokedIn: root }, 'specs/x.md')).toBe('specs/x.md');
    expect(specFromInvocation({ root, invokedIn: path.join(root, 'src') }, path.join(root, 'specs', 'x.md'))).toBe(
      path.join(root, 'specs', 'x.md'),
    );
    // Not there from src/: kept as typed, so the check phase says where it looked (at the root).
    expect(specFromInvocation({ root, invokedIn: path.join(root, 'src') }, 'specs/x.md')).toBe('specs/x.md');
  });
});
