import { describe, expect, it } from 'vitest';
import { isModelId, route, routeModelFlag } from '../../src/config/routes.js';

describe('route', () => {
  it('prefixes a registry id with the gateway', () => {
    expect(route('z-ai/glm-5.3', { gateway: 'openrouter' })).toBe('openrouter/z-ai/glm-5.3');
    expect(route('anthropic/claude-sonnet-4.5', { gateway: 'openrouter' })).toBe(
      'openrouter/anthropic/claude-sonnet-4.5',
    );
    expect(route('deepseek/deepseek-v3.2', { gateway: 'vercel-ai-gateway' })).toBe(
      'vercel-ai-gateway/deepseek/deepseek-v3.2',
    );
  });

  it('a direct profile sends the id as is, even with a gateway', () => {
    expect(route('zai/glm-5.3', { gateway: 'openrouter', direct: true })).toBe('zai/glm-5.3');
    expect(route('deepseek/deepseek-chat', { gateway: 'openrouter', direct: true })).toBe('deepseek/deepseek-chat');
  });

  it('no gateway (empty, blank or absent): the id is already a pi route', () => {
    expect(route('scripted/alpha', { gateway: '' })).toBe('scripted/alpha');
    expect(route('scripted/alpha', { gateway: '  ' })).toBe('scripted/alpha');
    expect(route('scripted/alpha')).toBe('scripted/alpha');
  });

  it('never prefixes twice, but a mere name prefix is not the gateway', () => {
    expect(route('openrouter/z-ai/glm-5.3', { gateway: 'openrouter' })).toBe('openrouter/z-ai/glm-5.3');
    expect(route('openrouterx/foo', { gateway: 'openrouter' })).toBe('openrouter/openrouterx/foo');
  });
});

describe('--model', () => {
  it("is routed like a roster id, inheriting the role's direct flag", () => {
    expect(routeModelFlag('z-ai/glm-5.3', { gateway: 'openrouter' })).toEqual({ route: 'openrouter/z-ai/glm-5.3' });
    expect(routeModelFlag(' zai/glm-5.3 ', { gateway: 'openrouter', direct: true })).toEqual({ route: 'zai/glm-5.3' });
    expect(routeModelFlag('scripted/alpha', { gateway: '' })).toEqual({ route: 'scripted/alpha' });
  });

  it('refuses what is not provider/id with a one-line motif', () => {
    for (const bad of ['glm-5', '/glm', 'a b/c', '', 'openrouter/']) {
      const result = routeModelFlag(bad, { gateway: 'openrouter' });
      expect(result).toEqual({ motif: `--model must be provider/id (got ${JSON.stringify(bad)})` });
      expect(isModelId(bad)).toBe(false);
    }
    expect(isModelId('openrouter/z-ai/glm-5.3')).toBe(true);
  });
});
