// The typed gate's name, shared by the envelope contract, the stream reader and the argv builder. Kept in a
// module of its own so that reading a stream never loads zod.
/** The terminal pi tool that carries the envelope (registered by .pi/extensions/factory-report.ts). */
export { REPORT_TOOL } from '../../.pi/lib/contract.js';
