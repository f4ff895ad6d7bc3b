import type { Hex } from "viem";
import { describe, expect } from "../../../test/fixtures.ts";
import { payingFetch, type TestChain } from "../../../test/lib/dev-chain.ts";
import { jsonPost, type PaidApp, paidTest as test, withModel } from "../../../test/lib/paid-app.ts";
import { hexId, jsonLog, jsonLogs, jsonSpan, jsonTraces, nanosAgo } from "../../../test/lib/telemetry.ts";
import { eventually } from "../../../test/lib/wait.ts";
import { incidentTerms } from "./incident-terms.ts";

const DIAGNOSE = 100_000n; // $0.10

const thrown = (type: string, message: string, frame: string) => ({
  name: "exception",
  timeUnixNano: nanosAgo(2_000),
  attributes: [
    { key: "exception.type", value: { stringValue: type } },
    { key: "exception.message", value: { stringValue: message } },
    {
      key: "exception.stacktrace",
      value: { stringValue: `${type}: ${message}\n    at ${frame}\n    at route (/app/src/server.ts:20:5)` },
    },
  ],
});

async function agent(paid: PaidApp, chain: TestChain, index: number) {
  const payer = await chain.fundedPayer(index, "2");
  const pay = payingFetch(paid.app, chain.payments, payer.privateKey as Hex);
  const signup = await (await pay(`${paid.base}/x402/signup`, jsonPost({}))).json();
  const send = async (kind: "traces" | "logs", body: unknown) => {
    const res = await paid.app.request(`/v1/${kind}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: signup.telemetry.headers.authorization },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
  };
  const diagnose = (body: unknown) => pay(`${paid.base}/x402/diagnose`, jsonPost(body));
  return { payer, pay, signup, send, diagnose };
}

describe("incident terms", () => {
  test("words and identifiers, path segments split out, stop words, generic words and ids dropped", () => {
    expect(
      incidentTerms(
        "Checkout returns 500 on GET /orders/ORD-000123 since the deploy; OrderNotFoundError everywhere!",
      ),
    ).toEqual([
      "checkout",
      "returns",
      "500",
      "orders/ord-000123",
      "orders",
      "ord-000123",
      "deploy",
      "ordernotfounderror",
      "everywhere",
    ]);
    expect(incidentTerms("the app is broken, please help")).toEqual([]);
    expect(incidentTerms("x ".repeat(5_000) + "payments".repeat(2))).toEqual(["paymentspayments"]);
  });
});

describe("POST /x402/diagnose", () => {
  test("reads the description against the wallet's telemetry and suggests the cheapest next step", async ({
    paid,
    chain,
  }) => {
    // A model is configured, so a fix can be offered; without one it is not (below).
    const { payer, send, diagnose } = await agent(withModel(paid), chain, 22);
    const balance = () => chain.balanceOf(payer.address);

    // Before any telemetry: nothing to read, and the way to send some.
    const start = await balance();
    const empty = await (await diagnose({ description: "checkout is failing" })).json();
    expect(empty).toMatchObject({ confidence: "none", evidence: { problems: [], logs: [], services: [] } });
    expect(empty.summary).toContain("No telemetry");
    expect(empty.next_actions.map((a: { action: string }) => a.action)).toEqual(["send_telemetry"]);
    expect(await balance()).toBe(start - DIAGNOSE);

    const traceId = hexId(16);
    await send(
      "traces",
      jsonTraces(
        [1, 2, 3].map((n) =>
          jsonSpan({
            traceId: n === 1 ? traceId : hexId(16),
            kind: 2,
            status: { code: 2 },
            events: [
              thrown(
                "OrderNotFoundError",
                `order ord_${n}00 not found`,
                "findOrder (/app/src/orders.ts:12:11)",
              ),
            ],
          }),
        ),
        "checkout",
      ),
    );
    await send(
      "traces",
      jsonTraces(
        [
          jsonSpan({
            kind: 2,
            status: { code: 2 },
            events: [
              thrown("CardDeclinedError", "card declined by issuer", "charge (/app/src/payments.ts:40:9)"),
            ],
          }),
        ],
        "billing",
      ),
    );
    await send(
      "logs",
      jsonLogs([
        jsonLog({
          severityNumber: 17,
          severityText: "ERROR",
          body: { stringValue: "GET /orders/ORD-100 failed" },
          traceId,
        }),
      ]),
    );

    const matched = await eventually(async () => {
      const body = await (
        await diagnose({
          description: "Checkout returns 500 on GET /orders since the deploy: OrderNotFoundError",
        })
      ).json();
      return body.evidence.problems.length > 1 ? body : undefined;
    });
    expect(matched.confidence).toBe("high");
    expect(matched.evidence.problems[0]).toMatchObject({
      title: "OrderNotFoundError: order <id> not found",
      service: "checkout",
      count: 3,
      status: "open",
      remediationId: null,
      matched: expect.arrayContaining(["checkout", "orders", "ordernotfounderror"]),
    });
    expect(matched.summary).toContain('"OrderNotFoundError: order <id> not found" in checkout');
    expect(matched.evidence.logs[0]).toMatchObject({
      service: "checkout",
      traceId,
      matched: ["checkout", "orders"],
    });
    expect(matched.evidence.services.map((s: { service: string }) => s.service).sort()).toEqual([
      "billing",
      "checkout",
    ]);
    const problemId = matched.evidence.problems[0].id;
    expect(matched.next_actions.map((a: { action: string }) => a.action)).toEqual([
      "inspect_problem",
      "remediate",
    ]);
    expect(matched.next_actions[0]).toMatchObject({
      price: "$0.01",
      href: expect.stringContaining(`/x402/problems/${problemId}`),
    });
    expect(matched.next_actions[1]).toMatchObject({ price: "$5.00", x_assumed_state: expect.any(String) });

    // The same question to a server without a model: the fix it could not start is not offered.
    const withoutModel = await (
      await payingFetch(
        paid.app,
        chain.payments,
        payer.privateKey as Hex,
      )(
        `${paid.base}/x402/diagnose`,
        jsonPost({ description: "Checkout returns 500 on GET /orders since the deploy: OrderNotFoundError" }),
      )
    ).json();
    expect(withoutModel.evidence.problems[0].id).toBe(problemId);
    expect(withoutModel.next_actions.map((a: { action: string }) => a.action)).toEqual(["inspect_problem"]);

    const billing = await (
      await diagnose({ description: "customers say their cards are declined at payment" })
    ).json();
    expect(billing.evidence.problems[0].title).toBe("CardDeclinedError: card declined by issuer");

    // Nothing matches: the failing services are the lead, read cheaply.
    const vague = await (await diagnose({ description: "the moon is made of cheese", window: "1h" })).json();
    expect(vague.confidence).toBe("none");
    expect(vague.summary).toContain("failed requests");
    expect(vague.next_actions.map((a: { action: string }) => a.action)).toEqual([
      "list_problems",
      "search_logs",
    ]);

    // A service filter keeps the evidence to that service.
    const scoped = await (
      await diagnose({ description: "orders and cards fail", service: "billing" })
    ).json();
    expect(scoped.evidence.problems.map((p: { service: string }) => p.service)).toEqual(["billing"]);

    // Bad input is a 400 and never settles.
    const before = await balance();
    for (const bad of [
      {},
      { description: "x" },
      { description: "checkout down", window: "2y" },
      { description: "ok ok", extra: 1 },
    ]) {
      const res = await diagnose(bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect((await res.json()).code).toBe("invalid_request");
    }
    expect(await balance()).toBe(before);
  });

  test("tenancy: another wallet's diagnosis never sees this organisation's telemetry", async ({
    paid,
    chain,
  }) => {
    const first = await agent(paid, chain, 23);
    await first.send(
      "traces",
      jsonTraces(
        [
          jsonSpan({
            status: { code: 2 },
            events: [thrown("SecretLeakError", "tenant one", "leak (/app/a.ts:1:1)")],
          }),
        ],
        "tenant-one",
      ),
    );
    await eventually(async () => {
      const own = await (await first.diagnose({ description: "SecretLeakError in tenant-one" })).json();
      return own.evidence.problems.length === 1 ? own : undefined;
    });
    const second = await agent(paid, chain, 24);
    const other = await (await second.diagnose({ description: "SecretLeakError in tenant-one" })).json();
    expect(other.evidence).toEqual({ problems: [], logs: [], services: [] });
    const foreign = await second.diagnose({
      description: "SecretLeakError",
      environmentId: first.signup.environment.id,
    });
    expect(foreign.status).toBe(404);
  });
});
