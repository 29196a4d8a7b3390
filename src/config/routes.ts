// Model routes: the roster (and `--model`) speak registry ids (`z-ai/glm-5.3`, the names a gateway's catalogue
// uses); pi wants `<provider>/<id>`. The gateway prefix is a dialect detail added here and nowhere else — never
// written in YAML, never in scripts. Pure: no I/O, no imports, cheap at start-up.

export interface RouteOptions {
  /** The roster's gateway provider (`openrouter`); empty or absent = every id is already a pi route. */
  gateway?: string;
  /**
   * A direct profile (a subscription plan or a provider's native API): its ids are already pi routes
   * (`zai/glm-5.3`, `deepseek/deepseek-chat`) and leave as written. The route lives in the profile, not in the
   * name: `deepseek/…` is both an author on a gateway and a native provider, so the name alone cannot tell.
   */
  direct?: boolean;
}

/** `provider/id`: at least one slash, no blanks. Registry ids and pi routes share this shape. */
const MODEL_ID_PATTERN = /^[^\s/]+\/\S+$/;

export function isModelId(value: string): boolean {
  return MODEL_ID_PATTERN.test(value);
}

/**
 * The pi route of a model id: `gateway/id` through the gateway, the id unchanged for a direct profile or when
 * there is no gateway. An id that already starts with `<gateway>/` is not prefixed twice (so a route copied
 * from `pi --list-models` into the roster still works).
 */
export function route(modelId: string, opts: RouteOptions = {}): string {
  const gateway = (opts.gateway ?? '').trim();
  if (opts.direct || gateway === '' || modelId.startsWith(`${gateway}/`)) return modelId;
  return `${gateway}/${modelId}`;
}

/**
 * `--model` from the command line: same language as the roster, so the same route. It replaces the model of
 * the role it is given for and inherits that role's `direct` flag (a direct role's ids are pi routes).
 * Returns a one-line motif instead of a route when the value is not `provider/id`.
 */
export function routeModelFlag(value: string, opts: RouteOptions = {}): { route: string } | { motif: string } {
  const trimmed = value.trim();
  if (!isModelId(trimmed)) return { motif: `--model must be provider/id (got ${JSON.stringify(value)})` };
  return { route: route(trimmed, opts) };
}
