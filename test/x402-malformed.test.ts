import { describe, expect } from "./fixtures.ts";
import { payingFetch } from "./lib/dev-chain.ts";
import { jsonPost, paidTest as test } from "./lib/paid-app.ts";

/**
 * Every paid x402 route, paid for and sent malformed input: broken path parameters, nonsense
 * queries, invalid JSON and bodies of the wrong shape. Whatever the input: never a 500, every
 * refusal is problem+json with a code, and only answers below 400 are charged — the wallet loses
 * exactly the prices of the calls that succeeded.
 */
const GARBAGE_PATH = ["%00", "%ZZ", "a".repeat(3_000), "..%2F..", "null", "%F0%9F%98%80"];
const GARBAGE_QUERY = [
  "pageSize=-1",
  "pageSize=abc",
  "from=soon&to=%FF",
  "window=forever",
  "cursor=%00",
  "q=%00",
];
const BAD_BODIES = [
  "{",
  "null",
  "[]",
  '"text"',
  "1",
  '{"__proto__":{"x":1}}',
  '{"description":123}',
  '{"problemId":[]}',
  '{"service":"checkout","repository":"../../etc/passwd"}',
  '{"service":"checkout","repository":"rep_%00"}',
];

const atomic = (price: string) => BigInt(Math.round(Number(price.replace("$", "")) * 1_000_000));

describe("malformed input on paid x402 routes", () => {
  test("never a 500; refusals are free problem documents", async ({ paid, chain }) => {
    const payer = await chain.fundedPayer(7, "50");
    const pay = payingFetch(paid.app, chain.payments, payer.privateKey);
    expect((await pay(`${paid.base}/x402/signup`, jsonPost({}))).status).toBe(201);

    const catalog = (await (await paid.app.request("/x402")).json()) as {
      items: { method: string; path: string; price: string }[];
    };
    const failures: string[] = [];
    let charged = 0n;
    let refusals = 0;
    const before = await chain.balanceOf(payer.address);
    const send = async (price: string, method: string, path: string, body?: string) => {
      const res = await pay(`${paid.base}${path}`, {
        method,
        ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body }),
      });
      const label = `${res.status} ${method} ${path.slice(0, 80)} ${body?.slice(0, 40) ?? ""}`;
      if (res.status < 400) {
        charged += atomic(price);
        await res.body?.cancel();
        return;
      }
      refusals++;
      const type = res.headers.get("content-type") ?? "";
      const problem = type.includes("json") ? ((await res.json()) as { code?: unknown }) : null;
      if (res.status === 500 || problem?.code === "internal") failures.push(label);
      else if (typeof problem?.code !== "string") failures.push(`no code: ${label}`);
    };

    for (const route of catalog.items.filter((r) => r.path !== "/x402/signup")) {
      const params = route.path.match(/\{(\w+)\}/g) ?? [];
      for (const value of params.length > 0 ? GARBAGE_PATH : []) {
        await send(
          route.price,
          route.method,
          route.path.replace(/\{\w+\}/g, value),
          route.method === "POST" ? "{}" : undefined,
        );
      }
      const path = route.path.replace(/\{\w+\}/g, () => crypto.randomUUID());
      if (route.method === "GET") {
        for (const query of GARBAGE_QUERY) await send(route.price, "GET", `${path}?${query}`);
      } else {
        for (const body of BAD_BODIES) await send(route.price, "POST", path, body);
      }
    }
    expect(failures).toEqual([]);
    expect(refusals).toBeGreaterThan(40);
    expect(await chain.balanceOf(payer.address)).toBe(before - charged);
  });
});
