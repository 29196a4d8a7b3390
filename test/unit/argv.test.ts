import { describe, expect, it } from 'vitest';
import { jsonModeArgs, rpcModeArgs } from '../../src/pi/argv.js';

describe('pi flag builder', () => {
  const flags = {
    sessionId: 'u-1',
    sessionDir: '/repo/adws/adw_data/sessions',
    model: 'scripted/alpha',
    thinking: 'low',
    tools: ['read', 'report_phase', 'bash'],
  };

  it('builds json mode exactly, the prompt left for stdin after --', () => {
    expect(jsonModeArgs(flags)).toEqual([
      '-p',
      '--mode',
      'json',
      '--approve',
      '--session-id',
      'u-1',
      '--session-dir',
      '/repo/adws/adw_data/sessions',
      '--no-skills',
      '--no-prompt-templates',
      '--model',
      'scripted/alpha',
      '--thinking',
      'low',
      '--tools',
      'read,bash,report_phase',
      '--',
    ]);
  });

  it('shares the same flags in rpc mode, without -p and --', () => {
    expect(rpcModeArgs(flags)).toEqual(['--mode', 'rpc', ...jsonModeArgs(flags).slice(3, -1)]);
  });

  it('leaves optional flags out and refuses a relative session dir', () => {
    expect(jsonModeArgs({ sessionId: 'x', sessionDir: '/s' })).toEqual([
      '-p',
      '--mode',
      'json',
      '--approve',
      '--session-id',
      'x',
      '--session-dir',
      '/s',
      '--no-skills',
      '--no-prompt-templates',
      '--',
    ]);
    expect(() => jsonModeArgs({ sessionId: 'x', sessionDir: 'adws/adw_data/sessions' })).toThrow(/absolute/);
  });

  it('adds --no-mcp with the other resource switches only when asked (a pi < 0.99 refuses it)', () => {
    expect(jsonModeArgs({ sessionId: 'x', sessionDir: '/s', noMcp: true })).toEqual([
      '-p',
      '--mode',
      'json',
      '--approve',
      '--session-id',
      'x',
      '--session-dir',
      '/s',
      '--no-skills',
      '--no-prompt-templates',
      '--no-mcp',
      '--',
    ]);
    expect(rpcModeArgs({ sessionId: 'x', sessionDir: '/s', noMcp: true })).toContain('--no-mcp');
    expect(rpcModeArgs({ sessionId: 'x', sessionDir: '/s', noMcp: false })).not.toContain('--no-mcp');
  });
});
