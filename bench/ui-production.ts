// Imported first by the benchmarks that render the cockpit: the CLI loads React's production build (see
// importUi in src/cli.tsx), so P3 measures that build unless NODE_ENV says otherwise.
process.env.NODE_ENV ??= 'production';
export {};
