// Which environment variable holds a provider's key, as pi reads it (pi's docs/providers.md), so a missing or
// rejected key is reported with the one fix that works: the variable to put in .env. Pure.

const KEY_VARS: Readonly<Record<string, string>> = {
  anthropic: 'ANTHROPIC_API_KEY',
  openai: 'OPENAI_API_KEY',
  'azure-openai-responses': 'AZURE_OPENAI_API_KEY',
  google: 'GEMINI_API_KEY',
  'amazon-bedrock': 'AWS_BEARER_TOKEN_BEDROCK',
  'cloudflare-ai-gateway': 'CLOUDFLARE_API_KEY',
  'cloudflare-workers-ai': 'CLOUDFLARE_API_KEY',
  'vercel-ai-gateway': 'AI_GATEWAY_API_KEY',
  'zai-coding-cn': 'ZAI_CODING_CN_API_KEY',
  'opencode-go': 'OPENCODE_API_KEY',
  huggingface: 'HF_TOKEN',
  'kimi-coding': 'KIMI_API_KEY',
  'qwen-token-plan-individual': 'QWEN_TOKEN_PLAN_API_KEY',
};

/** The variable pi reads a provider's key from: pi's table, else `<PROVIDER>_API_KEY` (pi's convention). */
export function keyVariable(provider: string): string {
  return Object.hasOwn(KEY_VARS, provider)
    ? KEY_VARS[provider]!
    : `${provider.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_API_KEY`;
}

/** pi's own words when it has no key for the provider (0.85 and 1.x alike): the provider, or undefined. */
export function missingKeyProvider(stderr: string): string | undefined {
  return /No API key found for ([A-Za-z0-9._-]+?)\.?(?:\s|$)/.exec(stderr)?.[1];
}

/** Whether a provider's error says the key was refused (401/403, "invalid api key"…), never quoting it. */
export function isKeyRejection(message: string): boolean {
  return /\b(?:401|403)\b|invalid[\s_-]*(?:x-)?api[\s_-]*key|incorrect api key|unauthori[sz]ed|authentication (?:failed|error)|no auth credentials/i.test(
    message,
  );
}

/** The one-line motifs (exit 2): the provider and the variable, no value and no provider text that could quote one. */
export function missingKeyMotif(provider: string): string {
  return `no API key for ${provider}: put ${keyVariable(provider)} in .env (or in the environment), then \`factory doctor\``;
}

export function rejectedKeyMotif(provider: string, status?: string): string {
  return `the ${provider} API key was rejected${status ? ` (${status})` : ''}: check ${keyVariable(provider)} in .env, then \`factory doctor\``;
}
