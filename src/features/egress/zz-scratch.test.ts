import { test } from "vitest";
import { createEgress } from "./egress-fetch.ts";
import { devPolicy, makeTestCa, startHttpsServer } from "./test-servers.ts";
test("timing", async () => {
  const ca = await makeTestCa();
  const stalled = await startHttpsServer(ca, () => {});
  const egress = createEgress(devPolicy(ca, [stalled.port], { headersTimeoutMs: 150, connectTimeoutMs: 150 }), { resolve: () => new Promise(() => {}) });
  let t = Date.now();
  await egress.fetch(`${stalled.origin}/`).catch((e) => console.log(e.code, e.details));
  console.log("headers", Date.now() - t);
  t = Date.now();
  await egress.fetch(`https://x.example.com:${stalled.port}/`).catch((e) => console.log(e.code, e.details));
  console.log("dns", Date.now() - t);
  t = Date.now(); await egress.close(); console.log("close", Date.now() - t);
  t = Date.now(); await stalled.close(); console.log("sclose", Date.now() - t);
});
