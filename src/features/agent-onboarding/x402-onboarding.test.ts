import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { validateDiscoveryExtension } from "@x402/extensions/bazaar";
import { and, count, eq } from "drizzle-orm";
import type { Hex } from "viem";
import { describe, expect, newTenant } from "../../../test/fixtures.ts";
import { appFetch, payingFetch, signedPayment, type TestChain } from "../../../test/lib/dev-chain.ts";
import { makeGitRepo } from "../../../test/lib/git-repo.ts";
import { keyFor } from "../../../test/lib/members.ts";
import { jsonPost, type PaidApp, paidTest } from "../../../test/lib/paid-app.ts";
import { hexId, jsonSpan, jsonTraces } from "../../../test/lib/telemetry.ts";
import { eventually } from "../../../test/lib/wait.ts";
import { givePassword, TEST_PASSWORD, webClient } from "../../../test/web.ts";
import { auditLog } from "../../platform/db/schema/audit-log.ts";
import { organizations } from "../../platform/db/schema/organizations.ts";
import { x402Payments } from "../../platform/db/schema/x402-payments.ts";
import { paidTable } from "../../transports/x402/route.ts";
import { x402Routes } from "../../transports/x402/router.ts";

const SIGNUP = 50_000n; // $0.05
const ONBOARD = 50_000n;

type Paid = PaidApp;
const test = paidTest;
const json = jsonPost;

async function signUp(paid: Paid, chain: TestChain, key: Hex, body: unknown = {}) {
  return payingFetch(paid.app, chain.payments, key)(`${paid.base}/x402/signup`, json(body));
}

describe("POST /x402/signup", () => {
  test("unpaid: 402 with a payable challenge; paid: the organisation, a working publishable key, exactly the price moved", async ({
    paid,
    chain,
  }) => {
    const unpaid = await appFetch(paid.app)(`${paid.base}/x402/signup`, json({}));
    expect(unpaid.status).toBe(402);
    const challenge = decodePaymentRequiredHeader(unpaid.headers.get("payment-required") ?? "");
    expect(challenge.accepts[0]?.amount).toBe(SIGNUP.toString());
    expect((await unpaid.json()).code).toBe("payment_required");

    const payer = await chain.fundedPayer(3, "1");
    const payTo = chain.payments.payTo;
    const [before, payToBefore] = [await chain.balanceOf(payer.address), await chain.balanceOf(payTo)];
    const res = await signUp(paid, chain, payer.privateKey, { organizationName: "Agent Co" });
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toContain("no-store");
    expect(decodePaymentResponseHeader(res.headers.get("payment-response") ?? "").success).toBe(true);
    const body = await res.json();
    expect(body.organization).toMatchObject({
      name: "Agent Co",
      wallet: { address: payer.address.toLowerCase(), network: chain.payments.network },
    });
    expect(body.publishableKey.key).toMatch(/^pk_/);
    expect(body.telemetry.headers.authorization).toBe(`Bearer ${body.publishableKey.key}`);
    expect(body.next_actions.map((a: { action: string }) => a.action)).toEqual([
      "start_onboarding",
      "send_telemetry",
    ]);
    expect(body.next_actions[0].x_assumed_state).toEqual(expect.any(String));
    expect(await chain.balanceOf(payer.address)).toBe(before - SIGNUP);
    expect(await chain.balanceOf(payTo)).toBe(payToBefore + SIGNUP);

    // The publishable key works for telemetry.
    const ingest = await paid.app.request("/v1/traces", {
      ...json(jsonTraces([jsonSpan()])),
      headers: { "content-type": "application/json", authorization: `Bearer ${body.publishableKey.key}` },
    });
    expect(ingest.status).toBe(200);
  });

  test("a second signup by the same wallet is 409 already_signed_up with next actions, and costs nothing", async ({
    paid,
    chain,
  }) => {
    const payer = await chain.fundedPayer(4, "1");
    expect((await signUp(paid, chain, payer.privateKey)).status).toBe(201);
    const before = await chain.balanceOf(payer.address);
    const again = await signUp(paid, chain, payer.privateKey);
    expect(again.status).toBe(409);
    const problem = await again.json();
    expect(problem.code).toBe("already_signed_up");
    expect(problem.next_actions[0].action).toBe("start_onboarding");
    expect(again.headers.get("payment-response")).toBeNull();
    expect(await chain.balanceOf(payer.address)).toBe(before);
  });

  test("a refused body (handler failure) moves nothing and creates nothing", async ({ paid, chain }) => {
    const payer = await chain.fundedPayer(5, "1");
    const before = await chain.balanceOf(payer.address);
    const res = await signUp(paid, chain, payer.privateKey, { organizationName: "bad\u0000name" });
    expect(res.status).toBe(400);
    expect((await res.json()).code).toBe("invalid_request");
    expect(await chain.balanceOf(payer.address)).toBe(before);
    const [orgs] = await paid.deps.db
      .select({ n: count() })
      .from(organizations)
      .where(eq(organizations.walletAddress, payer.address.toLowerCase()));
    expect(orgs?.n).toBe(0);
  });

  test("the same payment sent 20 times at once: one organisation, one transfer, identical answers", async ({
    paid,
    chain,
  }) => {
    const payer = await chain.fundedPayer(6, "1");
    const before = await chain.balanceOf(payer.address);
    const url = `${paid.base}/x402/signup`;
    const payment = await signedPayment(paid.app, chain.payments, payer.privateKey, url, json({}));
    const send = () =>
      appFetch(paid.app)(url, {
        ...json({}),
        headers: { "content-type": "application/json", "payment-signature": payment },
      });
    const answers = await Promise.all(Array.from({ length: 20 }, send));
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(201));
    const bodies = await Promise.all(answers.map((r) => r.text()));
    expect(new Set(bodies).size).toBe(1);
    expect(await chain.balanceOf(payer.address)).toBe(before - SIGNUP);
    const address = payer.address.toLowerCase();
    const signups = await paid.deps.db
      .select({ n: count() })
      .from(auditLog)
      .where(and(eq(auditLog.action, "organization.signed_up"), eq(auditLog.actorId, address)));
    expect(signups[0]?.n).toBe(1);
    // The stored answer (it holds the publishable key) is sealed, not kept in clear.
    const [row] = await paid.deps.db
      .select({ body: x402Payments.responseBody })
      .from(x402Payments)
      .where(eq(x402Payments.payer, address));
    const key = JSON.parse(bodies[0] ?? "{}").publishableKey.key as string;
    expect(row?.body).toMatch(/^sealed:/);
    expect(row?.body).not.toContain(key);
  });
});

describe("onboarding sessions", () => {
  test("onboard → poll for free → telemetry → operator approval link → claimed → ready", async ({
    paid,
    chain,
  }) => {
    const payer = await chain.fundedPayer(7, "1");
    const signup = await (await signUp(paid, chain, payer.privateKey)).json();
    const start = signup.next_actions[0];
    const pay = payingFetch(paid.app, chain.payments, payer.privateKey);
    const before = await chain.balanceOf(payer.address);
    const res = await pay(start.href, {
      ...json(start.body),
      headers: { "content-type": "application/json", "x-assumed-state": start.x_assumed_state },
    });
    expect(res.status).toBe(201);
    expect(await chain.balanceOf(payer.address)).toBe(before - ONBOARD);
    const session = await res.json();
    expect(session).toMatchObject({ state: "awaiting-telemetry", environmentId: signup.environment.id });
    expect(session.sessionToken).toMatch(/^obt_/);
    expect(session.next_actions.map((a: { action: string }) => a.action)).toEqual([
      "send_telemetry",
      "poll_onboarding",
    ]);

    const poll = (token?: string) =>
      paid.app.request(`/x402/onboard/${session.sessionId}`, {
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
    // No credentials: the auth-only challenge for the paying wallet (wallet-sign-in.test.ts).
    expect((await poll()).status).toBe(402);
    const unknown = await poll("obt_not-the-token");
    expect(unknown.status).toBe(401);
    expect((await unknown.json()).code).toBe("unauthorized");
    const polled = await poll(session.sessionToken);
    expect(polled.status).toBe(200);
    expect(polled.headers.get("payment-response")).toBeNull();
    expect((await polled.json()).state).toBe("awaiting-telemetry");

    const ingest = await paid.app.request("/v1/traces", {
      ...json(jsonTraces([jsonSpan({ traceId: hexId(16) })])),
      headers: { "content-type": "application/json", authorization: signup.telemetry.headers.authorization },
    });
    expect(ingest.status).toBe(200);
    const operator = await eventually(async () => {
      const view = await (await poll(session.sessionToken)).json();
      return view.state === "awaiting-operator" ? view : undefined;
    });
    expect(operator.approvalUrl).toMatch(new RegExp(`^${paid.base}/approve\\?token=`));
    expect(operator.next_actions[0]).toMatchObject({
      action: "request_operator_approval",
      href: operator.approvalUrl,
    });

    // A human opens the link in the web UI, signs in, and claims the organisation.
    const link = new URL(operator.approvalUrl);
    const human = await newTenant(paid.deps, paid.app, "operator@example.com");
    await givePassword(paid.deps, "operator@example.com");
    const browser = webClient(paid.app);
    const signedOut = await browser.get(`${link.pathname}${link.search}`);
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get("location")).toContain("/login?next=");
    await browser.signIn("operator@example.com", TEST_PASSWORD);
    const page = await browser.page(`${link.pathname}${link.search}`);
    expect(page).toContain(signup.organization.id);
    const claimed = await browser.post("/approve", { token: link.searchParams.get("token") ?? "" });
    expect(claimed.status).toBe(303);
    expect(claimed.headers.get("location")).toBe(`${link.pathname}${link.search}`);
    // The link claims once; afterwards it shows its owner the step that is left.
    const again = await browser.post("/approve", { token: link.searchParams.get("token") ?? "" });
    expect(again.status).toBe(409);
    const next = await browser.page(`${link.pathname}${link.search}`);
    expect(next).toContain("Connect a repository");
    expect(next).toContain(
      `/orgs/${signup.organization.id}/environments/${signup.environment.id}/repositories`,
    );
    const connecting = await (await poll(session.sessionToken)).json();
    expect(connecting).toMatchObject({
      state: "awaiting-operator",
      approvalUrl: operator.approvalUrl,
      operatorSteps: [
        { step: "claim_organization", done: true },
        { step: "connect_repository", done: false },
      ],
    });
    expect(connecting.next_actions[0].description).toContain("connect a repository");
    // Someone who is not its owner or admin learns only that it was claimed.
    await newTenant(paid.deps, paid.app, "bystander@example.com");
    await givePassword(paid.deps, "bystander@example.com");
    const bystander = webClient(paid.app);
    await bystander.signIn("bystander@example.com", TEST_PASSWORD);
    expect((await bystander.get(`${link.pathname}${link.search}`)).status).toBe(409);

    const registered = await (
      await keyFor(paid.deps, paid.app, {
        organizationId: signup.organization.id,
        userId: human.userId,
      })
    ).post(`/environments/${signup.environment.id}/repositories`, {
      provider: "local-git",
      path: makeGitRepo({ "README.md": "shop\n" }).path,
      defaultBranch: "main",
      testCommand: "true",
      services: ["shop"],
    });
    expect(registered.status, await registered.clone().text()).toBe(201);
    expect(await browser.page(`${link.pathname}${link.search}`)).toContain("is set up");
    const ready = await (await poll(session.sessionToken)).json();
    expect(ready.state).toBe("ready");
    expect(ready.approvalUrl).toBeUndefined();
    expect(new Date(ready.stateChangedAt).getTime()).toBeGreaterThan(
      new Date(session.stateChangedAt).getTime(),
    );
  });

  test("a stale x_assumed_state is refused with fresh next_actions before any payment", async ({
    paid,
    chain,
  }) => {
    const payer = await chain.fundedPayer(8, "1");
    const signup = await (await signUp(paid, chain, payer.privateKey)).json();
    const start = signup.next_actions[0];
    const pay = payingFetch(paid.app, chain.payments, payer.privateKey);
    const first = await pay(start.href, json({ ...start.body, x_assumed_state: start.x_assumed_state }));
    expect(first.status).toBe(201);
    const before = await chain.balanceOf(payer.address);

    // The same suggestion again: a session now exists, so its assumption is stale.
    const stale = await pay(start.href, json({ ...start.body, x_assumed_state: start.x_assumed_state }));
    expect(stale.status).toBe(409);
    const problem = await stale.json();
    expect(problem.code).toBe("stale_assumed_state");
    expect(problem.next_actions[0].action).toBe("poll_onboarding");
    expect(stale.headers.get("payment-response")).toBeNull();
    // Also as a header, and also without paying at all: refused before the gate.
    const unpaid = await appFetch(paid.app)(start.href, {
      ...json(start.body),
      headers: { "content-type": "application/json", "x-assumed-state": start.x_assumed_state },
    });
    expect(unpaid.status).toBe(409);
    expect(await chain.balanceOf(payer.address)).toBe(before);

    const forged = await appFetch(paid.app)(start.href, {
      ...json(start.body),
      headers: { "content-type": "application/json", "x-assumed-state": `${start.x_assumed_state}x` },
    });
    expect(forged.status).toBe(400);
    expect((await forged.json()).code).toBe("invalid_assumed_state");
  });

  test("a session token never pays, and reads only its own session", async ({ paid, chain }) => {
    const payer = await chain.fundedPayer(9, "1");
    await signUp(paid, chain, payer.privateKey);
    const pay = payingFetch(paid.app, chain.payments, payer.privateKey);
    const session = await (await pay(`${paid.base}/x402/onboard`, json({}))).json();
    const res = await appFetch(paid.app)(`${paid.base}/x402/onboard`, {
      ...json({}),
      headers: { "content-type": "application/json", authorization: `Bearer ${session.sessionToken}` },
    });
    expect(res.status).toBe(402);
    expect((await res.json()).code).toBe("payment_required");

    // A valid token of another session (even of the same organisation) does not open this one.
    const other = await (await pay(`${paid.base}/x402/onboard`, json({}))).json();
    const read = (id: string, token: string) =>
      paid.app.request(`/x402/onboard/${id}`, { headers: { authorization: `Bearer ${token}` } });
    expect((await read(other.sessionId, other.sessionToken)).status).toBe(200);
    const crossed = await read(session.sessionId, other.sessionToken);
    expect(crossed.status).toBe(404);
    expect((await crossed.json()).code).toBe("not_found");
  });

  test("onboarding without an organisation is signup_required and costs nothing", async ({ paid, chain }) => {
    const payer = await chain.fundedPayer(10, "1");
    const before = await chain.balanceOf(payer.address);
    const res = await payingFetch(
      paid.app,
      chain.payments,
      payer.privateKey,
    )(`${paid.base}/x402/onboard`, json({}));
    expect(res.status).toBe(409);
    const problem = await res.json();
    expect(problem.code).toBe("signup_required");
    expect(problem.next_actions[0]).toMatchObject({ action: "sign_up", href: `${paid.base}/x402/signup` });
    expect(await chain.balanceOf(payer.address)).toBe(before);
  });
});

describe("catalog and llms.txt", () => {
  test("GET /x402 lists every paid route as Bazaar items whose accepts equal the 402 challenges", async ({
    paid,
  }) => {
    const res = await paid.app.request("/x402");
    expect(res.status).toBe(200);
    const catalog = await res.json();
    expect(catalog.x402Version).toBe(2);
    expect(
      catalog.items.map((i: { method: string; path: string }) => `${i.method} ${i.path}`).sort(),
    ).toEqual([
      "GET /x402/logs",
      "GET /x402/problems",
      "GET /x402/problems/{id}",
      "GET /x402/services",
      "GET /x402/traces/{traceId}",
      "POST /x402/diagnose",
      "POST /x402/instrumentation/pr",
      "POST /x402/onboard",
      "POST /x402/problems/{id}/remediations",
      "POST /x402/resolve",
      "POST /x402/signup",
    ]);
    for (const item of catalog.items) {
      const challenge = await appFetch(paid.app)(item.resource, { method: item.method });
      expect(challenge.status).toBe(402);
      const required = decodePaymentRequiredHeader(challenge.headers.get("payment-required") ?? "");
      expect(item.accepts).toEqual(required.accepts);
      expect(item.extensions.bazaar.info.input.method).toBe(item.method);
      expect(item.extensions.bazaar.schema).toBeTruthy();
      expect(item.price).toMatch(/^\$\d/);
    }
  });

  test("every paid route's declared discovery extension passes the SDK's validation (examples match schemas)", () => {
    for (const [route, entry] of Object.entries(paidTable(x402Routes))) {
      // As the SDK enriches it for a request: the HTTP method joins the declared input.
      const extensions = entry?.extensions as { bazaar: { info: { input: object } } };
      const { bazaar } = extensions;
      const method = route.split(" ")[0];
      const enriched = { ...bazaar, info: { ...bazaar.info, input: { ...bazaar.info.input, method } } };
      expect(validateDiscoveryExtension(enriched as never), route).toEqual({ valid: true });
    }
  });

  test("without payments the catalog still lists the routes, and paid routes answer 503", async ({ app }) => {
    const catalog = await (await app.request("/x402")).json();
    expect(catalog.paymentsAvailable).toBe(false);
    expect(catalog.items).toHaveLength(11);
    const res = await app.request("/x402/signup", json({}));
    expect(res.status).toBe(503);
    expect((await res.json()).code).toBe("payments_unavailable");
  });

  test("/llms.txt explains the flow with the routes and prices", async ({ paid }) => {
    const res = await paid.app.request("/llms.txt");
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain("POST /x402/signup` — $0.05");
    expect(text).toContain("x_assumed_state");
    expect(text).toContain("GET /x402/onboard/{sessionId}` — free");
  });
});
