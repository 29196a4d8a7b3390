// The redactor, as the core imports it. It lives in .pi/lib/redact.ts so that factory-obs, inside pi, masks the
// harness trace with the very same code (one redactor for everything the factory writes or shows).
export {
  createRedactor,
  MIN_SECRET_LENGTH,
  redactDeep,
  redactJsonLine,
  type NamedSecret,
  type Redactor,
} from '../../.pi/lib/redact.js';
