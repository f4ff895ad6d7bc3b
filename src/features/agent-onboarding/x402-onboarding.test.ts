import { x402HTTPClient } from "@x402/core/client";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  decodePaymentSignatureHeader,
} from "@x402/core/http";
import {
  type DiscoveryExtension,
  extractDiscoveryInfo,
  extractDiscoveryInfoFromExtension,
  validateDiscoveryExtension,
} from "@x402/extensions/bazaar";
import { and, count, eq } from "drizzle-orm";
import type { Hex } from "viem";
import { vi } from "vitest";
import { z } from "zod";
import { describe, expect, newTenant } from "../../../test/fixtures.ts";
import {
  agentClient,
  appFetch,
  payingFetch,
  signedPayment,
  type TestChain,
} from "../../../test/lib/dev-chain.ts";
import { makeGitRepo } from "../../../test/lib/git-repo.ts";
import {
  FULL_NAME,
  INSTALLATION_ID,
  INSTALLER_CODE,
  replaySettings,
  startGithubReplay,
} from "../../../test/lib/github-replay.ts";
import { keyFor } from "../../../test/lib/members.ts";
import { jsonPost, type PaidApp, paidTest, withModel } from "../../../test/lib/paid-app.ts";
import { hexId, jsonSpan, jsonTraces } from "../../../test/lib/telemetry.ts";
import { eventually } from "../../../test/lib/wait.ts";
import { givePassword, signedInBrowser, TEST_PASSWORD, webClient } from "../../../test/web.ts";
import { createApp } from "../../app.ts";
import type { Deps } from "../../deps.ts";
import { auditLog } from "../../platform/db/schema/audit-log.ts";
import { organizations } from "../../platform/db/schema/organizations.ts";
import { x402Payments } from "../../platform/db/schema/x402-payments.ts";
import { loadBazaar } from "../../transports/x402/bazaar.ts";
import { paidRoutesBanner } from "../../transports/x402/catalog.ts";
import { paidTable } from "../../transports/x402/route.ts";
import { x402Routes } from "../../transports/x402/router.ts";
import { githubIntegration } from "../source-hosting/github/github-app.ts";

type JsonObject = { properties?: Record<string, unknown> };

const SIGNUP = 50_000n; // $0.05
const ONBOARD = 50_000n;

type Paid = PaidApp;
type StepView = { operatorSteps: { step: string; status: string }[] };
const stepStates = (view: StepView) => view.operatorSteps.map((s) => [s.step, s.status]);
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
    // Each human step on its own; the first one left is the one to do now, with its link.
    expect(stepStates(operator)).toEqual([
      ["claim_organization", "pending"],
      ["install_app", "not_needed"],
      ["select_repositories", "upcoming"],
    ]);
    expect(operator.operatorSteps[0]).toMatchObject({ done: false, url: operator.approvalUrl });
    expect(operator.operatorSteps[2].url).toBeUndefined();
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
    expect(next).toMatch(/data-step="claim_organization" data-status="done"/);
    expect(next).toMatch(/data-step="install_app" data-status="not_needed"/);
    expect(next).toMatch(/data-step="select_repositories" data-status="pending"/);
    const register = `${paid.base}/orgs/${signup.organization.id}/environments/${signup.environment.id}/repositories/new`;
    expect(next).toContain(`href="${register}"`);
    const connecting = await (await poll(session.sessionToken)).json();
    expect(connecting).toMatchObject({ state: "awaiting-operator", approvalUrl: operator.approvalUrl });
    expect(stepStates(connecting)).toEqual([
      ["claim_organization", "done"],
      ["install_app", "not_needed"],
      ["select_repositories", "pending"],
    ]);
    expect(connecting.operatorSteps[2]).toMatchObject({ done: false, url: register });
    expect(connecting.next_actions[0]).toMatchObject({ action: "request_operator_approval", href: register });
    expect(connecting.next_actions[0].description).toContain("select_repositories");
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

  test("with a GitHub App each human step has its own state and link as the operator takes it: claim → install → select", async ({
    paid,
    chain,
  }) => {
    const replay = await startGithubReplay({ repoPath: "/nonexistent" });
    try {
      const github = githubIntegration(replaySettings(replay));
      const deps: Deps = { ...paid.deps, remediation: { ...paid.deps.remediation, github } };
      const app = createApp(deps);
      const payer = await chain.fundedPayer(12, "1");
      const pay = payingFetch(app, chain.payments, payer.privateKey);
      const signup = await (await pay(`${paid.base}/x402/signup`, json({}))).json();
      const session = await (await pay(`${paid.base}/x402/onboard`, json({}))).json();
      const ingest = await app.request("/v1/traces", {
        ...json(jsonTraces([jsonSpan()])),
        headers: {
          "content-type": "application/json",
          authorization: signup.telemetry.headers.authorization,
        },
      });
      expect(ingest.status).toBe(200);
      const poll = async () =>
        (
          await app.request(`/x402/onboard/${session.sessionId}`, {
            headers: { authorization: `Bearer ${session.sessionToken}` },
          })
        ).json();

      // Nobody owns the organisation: installing can only wait (GitHub's callback needs an owner).
      const unclaimed = await eventually(async () => {
        const view = await poll();
        return view.state === "awaiting-operator" ? view : undefined;
      });
      expect(stepStates(unclaimed)).toEqual([
        ["claim_organization", "pending"],
        ["install_app", "upcoming"],
        ["select_repositories", "upcoming"],
      ]);
      expect(unclaimed.operatorSteps[1].url).toBeUndefined();

      const human = await newTenant(deps, app, "github-operator@example.com");
      const browser = await signedInBrowser(app, deps, human.userId);
      const link = new URL(unclaimed.approvalUrl);
      const token = link.searchParams.get("token") ?? "";
      expect(await browser.page(`${link.pathname}${link.search}`)).toContain("Claim and become owner");
      expect((await browser.post("/approve", { token })).status).toBe(303);
      const claimed = await poll();
      expect(stepStates(claimed)).toEqual([
        ["claim_organization", "done"],
        ["install_app", "pending"],
        ["select_repositories", "upcoming"],
      ]);
      const install = new URL(claimed.operatorSteps[1].url);
      expect(`${install.origin}${install.pathname}`).toBe(
        "https://github.com/apps/patchbay-test/installations/new",
      );
      expect(claimed.next_actions[0]).toMatchObject({
        action: "request_operator_approval",
        href: install.toString(),
      });
      const page = await browser.page(`${link.pathname}${link.search}`);
      expect(page).toMatch(/data-step="install_app" data-status="pending"/);
      expect(page).toContain("https://github.com/apps/patchbay-test/installations/new?state=");

      // The human installs the App through the link the agent handed over; GitHub sends them back.
      const callback = await browser.get(
        `/integrations/github/callback?${new URLSearchParams({
          code: INSTALLER_CODE,
          installation_id: String(INSTALLATION_ID),
          setup_action: "install",
          state: install.searchParams.get("state") ?? "",
        })}`,
      );
      expect(callback.status, await callback.clone().text()).toBe(200);
      const installed = await poll();
      expect(stepStates(installed)).toEqual([
        ["claim_organization", "done"],
        ["install_app", "done"],
        ["select_repositories", "pending"],
      ]);
      expect(installed.operatorSteps[1].url).toBeUndefined();
      const select = new URL(installed.operatorSteps[2].url);
      expect(select.pathname).toBe(
        `/orgs/${signup.organization.id}/environments/${signup.environment.id}/repositories/new`,
      );
      expect(installed.next_actions[0].href).toBe(select.toString());
      // The page it opens has the installation filled in.
      expect(await browser.page(`${select.pathname}${select.search}`)).toContain(
        `value="${INSTALLATION_ID}"`,
      );

      const api = await keyFor(deps, app, { organizationId: signup.organization.id, userId: human.userId });
      const registered = await api.post(`/environments/${signup.environment.id}/repositories`, {
        provider: "github",
        installationId: INSTALLATION_ID,
        fullName: FULL_NAME,
        testCommand: "node --test",
        services: ["checkout"],
      });
      expect(registered.status, await registered.clone().text()).toBe(201);
      const ready = await poll();
      expect(ready.state).toBe("ready");
      expect(ready.operatorSteps).toBeUndefined();
      expect(await browser.page(`${link.pathname}${link.search}`)).toMatch(
        /data-step="select_repositories" data-status="done"/,
      );
    } finally {
      await replay.close();
    }
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

/** A catalog item as `GET /x402` lists it (a Bazaar item with patchbay's additions). */
type Item = {
  resource: string;
  method: "GET" | "POST";
  path: string;
  price: string;
  accepts: unknown[];
  extensions: { bazaar: DiscoveryExtension };
  available: boolean;
  unavailableCode?: string;
  unavailableReason?: string;
};
type Catalog = { x402Version: number; items: Item[]; paymentsAvailable: boolean };

const readCatalog = async (app: Paid["app"], base: string) =>
  (await (await appFetch(app)(`${base}/x402`)).json()) as Catalog;

/** The route behind an item: its schemas are what the item's must say. */
function routeOf(item: Item) {
  const route = x402Routes.find(
    (r) => r.method === item.method && r.path.replace(/:(\w+)/g, "{$1}") === item.path,
  );
  if (!route?.paid) throw new Error(`no paid route for ${item.method} ${item.path}`);
  return route.paid;
}

const jsonSchemaOf = (schema: z.ZodType, io: "input" | "output") =>
  z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonObject;

/** A template's placeholders filled with values its pattern takes. */
const concrete = (path: string) =>
  path.replace("{traceId}", "4bf92f3577b34da6a3ce929d0e0e4736").replace(/\{\w+\}/g, "prb_example");

const RUN_STARTS = [
  "POST /x402/instrumentation/pr",
  "POST /x402/problems/{id}/remediations",
  "POST /x402/resolve",
];

describe("catalog and llms.txt", () => {
  test("as a Bazaar client reads GET /x402: every item has input and output schemas, an example answer its schema accepts, and an availability flag", async ({
    paid,
  }) => {
    const catalog = await readCatalog(paid.app, paid.base);
    expect(catalog.x402Version).toBe(2);
    expect(catalog.items.map((i) => `${i.method} ${i.path}`).sort()).toEqual([
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
      const label = `${item.method} ${item.path}`;
      const { bazaar } = item.extensions;
      // What a facilitator checks before it lists a resource, on the console-free path.
      const warnings = vi.spyOn(console, "warn");
      expect(validateDiscoveryExtension(bazaar), label).toEqual({ valid: true });
      expect(warnings, label).not.toHaveBeenCalled();
      warnings.mockRestore();
      const info = extractDiscoveryInfoFromExtension(bazaar);
      const schema = bazaar.schema as { properties: Record<string, { properties: Record<string, unknown> }> };
      const route = routeOf(item);

      // Input: the schema of the body (POST) or the query (GET), and an example it accepts.
      const input = schema.properties.input?.properties ?? {};
      const inputSchema = (item.method === "POST" ? input.body : input.queryParams) as {
        properties?: Record<string, unknown>;
      };
      expect(Object.keys(inputSchema.properties ?? {}), label).toEqual(
        Object.keys(jsonSchemaOf(route.input ?? z.object({}), "input").properties ?? {}),
      );
      const given = info.input as { body?: unknown; queryParams?: unknown };
      const inputExample = item.method === "POST" ? given.body : given.queryParams;
      expect(route.input?.safeParse(inputExample ?? {}).success ?? true, label).toBe(true);

      // Output: the schema of the answer, and an example answer it (and the route's zod) accepts.
      const outputSchema = schema.properties.output?.properties.example as JsonObject;
      expect(Object.keys(outputSchema.properties ?? {}), label).toEqual(
        Object.keys(jsonSchemaOf(route.output, "output").properties ?? {}),
      );
      expect(info.output?.example, label).toBeTypeOf("object");
      expect(route.output.safeParse(info.output?.example).error, label).toBeUndefined();

      expect(item.available, label).toBeTypeOf("boolean");
      expect(item.price).toMatch(/^\$\d/);
    }
  });

  test("as a client meets them, the 402 challenges carry the catalog's accepts and Bazaar extension, which a facilitator takes from the payment", async ({
    paid,
    chain,
  }) => {
    const payer = await chain.fundedPayer(11, "1");
    const client = new x402HTTPClient(agentClient(chain.payments, payer.privateKey));
    const catalog = await readCatalog(paid.app, paid.base);
    for (const item of catalog.items.filter((i) => i.available)) {
      const label = `${item.method} ${item.path}`;
      const res = await appFetch(paid.app)(concrete(item.resource), {
        method: item.method,
        ...(item.method === "POST" ? json({}) : {}),
      });
      expect(res.status, label).toBe(402);
      const required = decodePaymentRequiredHeader(res.headers.get("payment-required") ?? "");
      expect(required.accepts, label).toEqual(item.accepts);
      const bazaar = required.extensions?.bazaar as DiscoveryExtension;
      expect(bazaar.schema, label).toEqual(item.extensions.bazaar.schema);
      expect(bazaar.info.output, label).toEqual(item.extensions.bazaar.info.output);

      // What a Bazaar facilitator catalogues from a payment: the client echoes the extensions.
      const payment = decodePaymentSignatureHeader(
        client.encodePaymentSignatureHeader(await client.createPaymentPayload(required))[
          "PAYMENT-SIGNATURE"
        ] ?? "",
      );
      const discovered = extractDiscoveryInfo(payment, payment.accepted);
      expect(discovered && "method" in discovered && discovered.method, label).toBe(item.method);
      expect(discovered?.discoveryInfo.output?.example, label).toEqual(bazaar.info.output?.example);
    }
  });

  test("every paid route's output example is accepted by its output schema, and its input example by its input schema", async () => {
    for (const route of x402Routes) {
      if (!route.paid) continue;
      const label = `${route.method} ${route.path}`;
      const { input, output, inputExample, outputExample, pathParams, pathParamsExample } = route.paid;
      expect(output.safeParse(outputExample).error, label).toBeUndefined();
      if (inputExample) expect(input?.safeParse(inputExample).error, label).toBeUndefined();
      if (pathParamsExample) expect(pathParams?.safeParse(pathParamsExample).error, label).toBeUndefined();
    }
    await loadBazaar();
    for (const [route, entry] of Object.entries(paidTable(x402Routes))) {
      // As the SDK enriches it for a request: the HTTP method joins the declared input.
      const { bazaar } = entry.extensions as { bazaar: DiscoveryExtension };
      const method = route.split(" ")[0];
      const enriched = { ...bazaar, info: { ...bazaar.info, input: { ...bazaar.info.input, method } } };
      expect(validateDiscoveryExtension(enriched as never), route).toEqual({ valid: true });
      expect(bazaar.info.output?.example, route).toBeTypeOf("object");
    }
  });

  test("without a model: the routes that start runs are listed as unavailable with the reason, refused with 503 before any payment, and /llms.txt says why", async ({
    paid,
  }) => {
    const catalog = await readCatalog(paid.app, paid.base);
    expect(catalog.paymentsAvailable).toBe(true);
    for (const item of catalog.items) {
      const label = `${item.method} ${item.path}`;
      if (!RUN_STARTS.includes(label)) {
        expect(item, label).toMatchObject({ available: true });
        expect(item.unavailableCode, label).toBeUndefined();
        continue;
      }
      expect(item, label).toMatchObject({
        available: false,
        unavailableCode: "model_not_configured",
        unavailableReason: expect.stringContaining("PATCHBAY_MODEL"),
        accepts: [],
      });
      // Still there, and honest: no challenge to pay, the code the catalog gave.
      const res = await appFetch(paid.app)(concrete(item.resource), json({}));
      expect(res.status, label).toBe(503);
      expect(res.headers.get("payment-required"), label).toBeNull();
      expect((await res.json()).code, label).toBe("model_not_configured");
    }

    const text = await (await paid.app.request("/llms.txt")).text();
    for (const route of RUN_STARTS) {
      const line = text.split("\n").find((l) => l.startsWith(`- \`${route}\``));
      expect(line, route).toContain("**Unavailable on this server**: No model is configured");
      expect(line, route).toContain("503 `model_not_configured` before any payment");
    }
    expect(text).toContain("POST /x402/signup` — $0.05: Create");
  });

  test("with a model configured: every route is available, asks for payment, and /llms.txt marks none unavailable", async ({
    paid,
  }) => {
    const modelled = withModel(paid);
    const catalog = await readCatalog(modelled.app, modelled.base);
    expect(catalog.items.every((i) => i.available && i.unavailableCode === undefined)).toBe(true);
    for (const item of catalog.items.filter((i) => RUN_STARTS.includes(`${i.method} ${i.path}`))) {
      expect(item.accepts).toHaveLength(1);
      const res = await appFetch(modelled.app)(concrete(item.resource), json({}));
      expect(res.status).toBe(402);
    }
    expect(await (await modelled.app.request("/llms.txt")).text()).not.toContain("Unavailable");
  });

  test("without payments the catalog still lists the routes, each unavailable with payments_unavailable, and paid routes answer 503", async ({
    app,
  }) => {
    const catalog = (await (await app.request("/x402")).json()) as Catalog;
    expect(catalog.paymentsAvailable).toBe(false);
    expect(catalog.items).toHaveLength(11);
    for (const item of catalog.items) {
      // A route that cannot run for its own reason says that one: it is what calling it answers.
      const code = RUN_STARTS.includes(`${item.method} ${item.path}`)
        ? "model_not_configured"
        : "payments_unavailable";
      expect(item).toMatchObject({ available: false, unavailableCode: code, accepts: [] });
    }
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

describe("start-up banner", () => {
  test("lists every paid route with its configured price, and why one cannot run", ({ paid }) => {
    const lines = paidRoutesBanner({
      deps: paid.deps,
      routes: x402Routes,
      refusal: (route) => route.unavailable?.(paid.deps),
    });
    const paidRoutes = x402Routes.filter((r) => r.paid);
    expect(lines.slice(0, paidRoutes.length).map((l) => l.trim().split(/\s+/).slice(0, 3))).toEqual(
      paidRoutes.map((r) => [
        r.method,
        r.path.replace(/:(\w+)/g, "{$1}"),
        `$${paid.deps.payments.prices[r.paid?.price ?? "read"].usd}`,
      ]),
    );
    expect(lines.find((l) => l.includes("/x402/resolve"))).toContain("unavailable: model_not_configured");
    expect(lines.at(-1)).toContain("model_not_configured: No model is configured");
  });
});
