// The custom entry a factory extension appends when it makes a model call of its own (the compaction narrator):
// pi counts only its turns' assistant messages in the stream, so the cockpit reads these to make the figures add up
// (src/pi/stream.ts). Data: { what, tokens, cost, input, output, cacheRead, cacheWrite }.
export const USAGE_ENTRY = 'factory-usage';
