// Scratch folders in the temp folder name their owner; the sweep removes a dead owner's only (src/process/scratch.ts).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeScratch, sweepScratch } from '../../src/process/scratch.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('scratch folders', () => {
  it("removes a killed owner's, keeps a living one's and a recent one without an owner; an old ownerless one goes", () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-scratch-test-'));
    made.push(tmp);
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    }).stdout; // a pid that has ended
    const folder = (name: string, owner?: string) => {
      fs.mkdirSync(path.join(tmp, name));
      if (owner !== undefined) fs.writeFileSync(path.join(tmp, name, '.factory-owner'), `${owner}\n`);
    };
    folder('factory-apply-dead01', dead);
    folder('factory-privgit-live01', String(process.pid));
    folder('factory-check-noowner');
    folder('factory-armref-oldnoowner');
    folder('factory-demo-other', dead); // not a scratch kind: never touched
    const old = new Date(Date.now() - 2 * 24 * 3600 * 1000);
    fs.utimesSync(path.join(tmp, 'factory-armref-oldnoowner'), old, old);
    expect(sweepScratch(tmp).sort()).toEqual(['factory-apply-dead01', 'factory-armref-oldnoowner']);
    expect(fs.readdirSync(tmp).sort()).toEqual([
      'factory-check-noowner',
      'factory-demo-other',
      'factory-privgit-live01',
    ]);
    const mine = makeScratch('apply');
    made.push(mine);
    expect(fs.readFileSync(path.join(mine, '.factory-owner'), 'utf8').trim()).toBe(String(process.pid));
  });
});
