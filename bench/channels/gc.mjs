// Preloaded into the benchmark's service process (with --expose-gc): SIGUSR2 runs two full collections, so the
// benchmark reads RSS after gc without an API for it in the service. Nothing else of the service is touched.
process.on('SIGUSR2', () => {
  globalThis.gc?.();
  globalThis.gc?.();
});
