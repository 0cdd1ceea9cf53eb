// Preloaded into a server process by a test (NODE_OPTIONS=--import=…): SIGUSR2 raises an exception that nothing
// catches, as a bug in a callback would.
process.on("SIGUSR2", () => {
  setImmediate(() => {
    throw new Error("thrown by the test's SIGUSR2");
  });
});
