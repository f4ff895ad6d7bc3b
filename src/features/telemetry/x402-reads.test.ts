import { decodePaymentResponseHeader } from "@x402/core/http";
import { eq } from "drizzle-orm";
import type { Hex } from "viem";
import { describe, expect } from "../../../test/fixtures.ts";
import { appFetch, payingFetch, signedPayment, type TestChain } from "../../../test/lib/dev-chain.ts";
import { jsonPost, type PaidApp, paidTest, withModel } from "../../../test/lib/paid-app.ts";
import { hexId, jsonSpan, jsonTraces } from "../../../test/lib/telemetry.ts";
import { eventually } from "../../../test/lib/wait.ts";
import { problems } from "../../platform/db/schema/problems.ts";

const READ = 10_000n; // $0.01

type Paid = PaidApp;
const test = paidTest;
const json = jsonPost;

/** An exception event as the OpenTelemetry SDK records one (`span.recordException`). */
const exception = (type: string, message: string) => ({
  name: "exception",
  timeUnixNano: (BigInt(Date.now()) * 1_000_000n).toString(),
  attributes: [
    { key: "exception.type", value: { stringValue: type } },
    { key: "exception.message", value: { stringValue: message } },
    {
      key: "exception.stacktrace",
      value: {
        stringValue: `${type}: ${message}\n    at findOrder (/app/src/orders.ts:12:11)\n    at route (/app/src/server.ts:20:5)`,
      },
    },
  ],
});

async function signedUpAgent(paid: Paid, chain: TestChain, index: number, usd = "1") {
  const payer = await chain.fundedPayer(index, usd);
  const pay = payingFetch(paid.app, chain.payments, payer.privateKey as Hex);
  const signup = await (await pay(`${paid.base}/x402/signup`, json({}))).json();
  return { payer, pay, signup };
}

describe("paid telemetry reads (/x402/services, logs, traces, problems)", () => {
  test("an agent reads health, problems, one problem and its trace; each call costs exactly the read price", async ({
    paid,
    chain,
  }) => {
    const { payer, pay, signup } = await signedUpAgent(paid, chain, 13);
    const auth = {
      "content-type": "application/json",
      authorization: signup.telemetry.headers.authorization,
    };

    // Before any telemetry: health is empty and the next action is to send some.
    const empty = await (await pay(`${paid.base}/x402/services`)).json();
    expect(empty.items).toEqual([]);
    expect(empty.next_actions[0].action).toBe("send_telemetry");

    const traceId = hexId(16);
    const spans = [
      jsonSpan({
        traceId,
        status: { code: 2 },
        events: [exception("OrderNotFoundError", "order ord_8812 not found")],
      }),
      jsonSpan({ events: [exception("OrderNotFoundError", "order ord_19 not found")], status: { code: 2 } }),
      jsonSpan(),
    ];
    expect(
      (
        await paid.app.request("/v1/traces", {
          method: "POST",
          headers: auth,
          body: JSON.stringify(jsonTraces(spans)),
        })
      ).status,
    ).toBe(200);

    const before = await chain.balanceOf(payer.address);
    const health = await eventually(async () => {
      const body = await (await pay(`${paid.base}/x402/services?window=1h`)).json();
      return body.items.length > 0 ? body : undefined;
    });
    expect(health.items[0]).toMatchObject({ service: "checkout", requestCount: 3, errorCount: 2 });
    expect(health.next_actions[0].action).toBe("list_problems");

    const problems = await eventually(async () => {
      const body = await (await pay(health.next_actions[0].href)).json();
      return body.items.length > 0 ? body : undefined;
    });
    expect(problems.items).toHaveLength(1);
    expect(problems.items[0]).toMatchObject({
      exceptionType: "OrderNotFoundError",
      count: 2,
      status: "open",
    });
    const inspect = problems.next_actions[0];
    expect(inspect.action).toBe("inspect_problem");

    const res = await pay(inspect.href);
    expect(res.status).toBe(200);
    expect(decodePaymentResponseHeader(res.headers.get("payment-response") ?? "").success).toBe(true);
    const problem = await res.json();
    expect(problem.sampleTraceIds).toContain(traceId);
    // No model on this server: a remediation could not start, so none is suggested (see below).
    expect(problem.next_actions.map((a: { action: string }) => a.action)).toEqual(["get_trace"]);

    const trace = await (await pay(`${paid.base}/x402/traces/${traceId}`)).json();
    expect(trace.traceId).toBe(traceId);
    expect(trace.spanCount).toBe(1);

    const logs = await pay(`${paid.base}/x402/logs?severity=error`);
    expect(logs.status).toBe(200);
    expect((await logs.json()).items).toEqual(expect.any(Array));

    // Naming the environment, in any spelling, reads it and links it as stored.
    const environmentId = signup.environment.id as string;
    const named = await (
      await pay(`${paid.base}/x402/services?environmentId=${environmentId.toUpperCase()}`)
    ).json();
    expect(named.items[0]).toMatchObject({ service: "checkout" });
    expect(named.next_actions[0].href).toBe(`${paid.base}/x402/problems?environmentId=${environmentId}`);

    // health ×n (polling) + problems ×m + problem + trace + logs + health: every call paid exactly $0.01.
    const spent = before - (await chain.balanceOf(payer.address));
    expect(spent % READ).toBe(0n);
    expect(spent).toBeGreaterThanOrEqual(READ * 6n);
  });

  test("tenancy: another wallet's problem and environment are not_found, and cost nothing", async ({
    paid,
    chain,
  }) => {
    const owner = await signedUpAgent(paid, chain, 14);
    const auth = {
      "content-type": "application/json",
      authorization: owner.signup.telemetry.headers.authorization,
    };
    const traceId = hexId(16);
    await paid.app.request("/v1/traces", {
      method: "POST",
      headers: auth,
      body: JSON.stringify(
        jsonTraces([jsonSpan({ traceId, events: [exception("TypeError", "x is undefined")] })]),
      ),
    });
    const mine = await eventually(async () => {
      const body = await (await owner.pay(`${paid.base}/x402/problems`)).json();
      return body.items[0];
    });

    const other = await signedUpAgent(paid, chain, 15);
    const before = await chain.balanceOf(other.payer.address);
    for (const path of [
      `/x402/problems/${mine.id}`,
      `/x402/traces/${traceId}`,
      `/x402/problems?environmentId=${owner.signup.environment.id}`,
    ]) {
      const res = await other.pay(`${paid.base}${path}`);
      expect(res.status, path).toBe(404);
      expect((await res.json()).code).toBe("not_found");
    }
    expect(await chain.balanceOf(other.payer.address)).toBe(before);
  });

  test("without signup the reads are signup_required and free; bad queries are 400 and free", async ({
    paid,
    chain,
  }) => {
    const payer = await chain.fundedPayer(16, "1");
    const pay = payingFetch(paid.app, chain.payments, payer.privateKey as Hex);
    const before = await chain.balanceOf(payer.address);
    const res = await pay(`${paid.base}/x402/problems`);
    expect(res.status).toBe(409);
    expect((await res.json()).code).toBe("signup_required");
    await pay(`${paid.base}/x402/signup`, json({}));
    const afterSignup = await chain.balanceOf(payer.address);
    expect(afterSignup).toBe(before - 50_000n);
    for (const path of [
      "/x402/services?window=forever",
      "/x402/logs?severity=loud",
      "/x402/traces/not-hex",
    ]) {
      const bad = await pay(`${paid.base}${path}`);
      expect(bad.status, path).toBe(400);
      expect((await bad.json()).code).toBe("invalid_request");
    }
    expect(await chain.balanceOf(payer.address)).toBe(afterSignup);
    // Unpaid: a 402 challenge, as for every paid route.
    expect((await appFetch(paid.app)(`${paid.base}/x402/services`)).status).toBe(402);
  });
});

describe("remediation routes on x402", () => {
  test("with a model a problem suggests remediate with x_assumed_state; without one it does not, and a start is refused before payment; polling needs a session token", async ({
    paid: plain,
    chain,
  }) => {
    const paid = withModel(plain);
    const { payer, pay, signup } = await signedUpAgent(paid, chain, 17, "10");
    const auth = {
      "content-type": "application/json",
      authorization: signup.telemetry.headers.authorization,
    };
    await paid.app.request("/v1/traces", {
      method: "POST",
      headers: auth,
      body: JSON.stringify(
        jsonTraces([jsonSpan({ status: { code: 2 }, events: [exception("RangeError", "bad qty -1")] })]),
      ),
    });
    const listed = await eventually(async () => {
      const body = await (await pay(`${paid.base}/x402/problems`)).json();
      return body.items[0] ? body : undefined;
    });
    const problem = await (await pay(listed.next_actions[0].href)).json();
    const remediate = problem.next_actions[0];
    expect(remediate).toMatchObject({
      action: "remediate",
      method: "POST",
      href: `${paid.base}/x402/problems/${problem.id}/remediations`,
      price: "$5.00",
    });
    expect(remediate.x_assumed_state).toEqual(expect.any(String));

    // The same server without a model: no remediate suggested; calling it anyway, even with a
    // payment signed for it, is refused before the payment is looked at, and nothing moves.
    const payPlain = payingFetch(plain.app, chain.payments, payer.privateKey as Hex);
    const unsuggested = await (await payPlain(listed.next_actions[0].href)).json();
    expect(unsuggested.next_actions.map((a: { action: string }) => a.action)).toEqual(["get_trace"]);
    const call = {
      method: "POST",
      headers: { "content-type": "application/json", "x-assumed-state": remediate.x_assumed_state },
      body: JSON.stringify(remediate.body),
    };
    const payment = await signedPayment(
      paid.app,
      chain.payments,
      payer.privateKey as Hex,
      remediate.href,
      call,
    );
    const before = await chain.balanceOf(payer.address);
    const res = await appFetch(plain.app)(remediate.href, {
      ...call,
      headers: { ...call.headers, "payment-signature": payment },
    });
    expect(res.status).toBe(503);
    expect(res.headers.get("payment-required")).toBeNull();
    expect(res.headers.get("payment-response")).toBeNull();
    expect((await res.json()).code).toBe("model_not_configured");
    expect(await chain.balanceOf(payer.address)).toBe(before);

    // Resolving the problem makes the suggestion stale: refused before payment.
    await paid.deps.db.update(problems).set({ status: "resolved" }).where(eq(problems.id, problem.id));
    const stale = await appFetch(paid.app)(remediate.href, {
      method: "POST",
      headers: { "content-type": "application/json", "x-assumed-state": remediate.x_assumed_state },
      body: JSON.stringify(remediate.body),
    });
    expect(stale.status).toBe(409);
    const fresh = await stale.json();
    expect(fresh.code).toBe("stale_assumed_state");
    expect(fresh.next_actions[0].action).toBe("inspect_problem");

    // Polling is free but needs the onboarding session token (or the wallet signed in).
    expect((await paid.app.request("/x402/remediations/rem_nope")).status).toBe(402);
    const session = await (await pay(`${paid.base}/x402/onboard`, json({}))).json();
    const poll = await paid.app.request("/x402/remediations/rem_nope", {
      headers: { authorization: `Bearer ${session.sessionToken}` },
    });
    expect(poll.status).toBe(404);
  });
});
