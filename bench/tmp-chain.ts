const { startDevChain } = await import("../src/platform/payments/dev-chain.ts");
for (let i = 0; i < 3; i++) {
  const t = performance.now();
  const c = await startDevChain({ port: 0, cacheDir: "/tmp/sb/d1/cache" });
  console.log("start", (performance.now() - t) | 0);
  await c.stop();
}
