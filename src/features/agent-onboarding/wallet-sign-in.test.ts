import { decodePaymentRequiredHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import {
  createSIWxPayload,
  encodeSIWxHeader,
  type SIWxExtension,
  type SIWxPayload,
} from "@x402/extensions/sign-in-with-x";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { vi } from "vitest";
import { describe, expect } from "../../../test/fixtures.ts";
import { appFetch, payingFetch, signingInFetch, type TestChain } from "../../../test/lib/dev-chain.ts";
import { jsonPost, type PaidApp, paidTest as test } from "../../../test/lib/paid-app.ts";
import { createApp } from "../../app.ts";
import { newId } from "../../ids.ts";
import { remediationEvents, remediations } from "../../platform/db/schema/remediations.ts";
import { deriveDevAccount } from "../../platform/payments/dev-chain-deploy.ts";
import { DEFAULT_REMEDIATION_BUDGETS } from "../remediations/schemas.ts";

// The first test also starts the file's chain and pays for two wallets' signups.
vi.setConfig({ testTimeout: 120_000 });

type Wallet = {
  privateKey: Hex;
  organizationId: string;
  environmentId: string;
  sessionId: string;
  sessionToken: string;
};

/** A wallet that paid: signed up and started onboarding (its session token is kept for comparison). */
async function payingWallet(paid: PaidApp, chain: TestChain, index: number): Promise<Wallet> {
  const payer = await chain.fundedPayer(index, "1");
  const pay = payingFetch(paid.app, chain.payments, payer.privateKey);
  const signup = await (await pay(`${paid.base}/x402/signup`, jsonPost({}))).json();
  const session = await (await pay(`${paid.base}/x402/onboard`, jsonPost({}))).json();
  return {
    privateKey: payer.privateKey,
    organizationId: signup.organization.id,
    environmentId: signup.environment.id,
    sessionId: session.sessionId,
    sessionToken: session.sessionToken,
  };
}

/** A run of the wallet's organisation with a few progress events, as a worker would leave it. */
async function runOf(paid: PaidApp, wallet: Wallet, events = 3): Promise<string> {
  const id = newId("rem");
  const now = new Date();
  await paid.deps.db.insert(remediations).values({
    id,
    organizationId: wallet.organizationId,
    environmentId: wallet.environmentId,
    kind: "instrumentation",
    service: "checkout",
    status: "investigating",
    requestedBy: "wallet:test",
    budgets: DEFAULT_REMEDIATION_BUDGETS,
    createdAt: now,
    updatedAt: now,
  });
  await paid.deps.db.insert(remediationEvents).values(
    Array.from({ length: events }, (_, i) => ({
      remediationId: id,
      at: new Date(now.getTime() + i),
      type: i === 0 ? "created" : "agent_step",
      status: i === 0 ? ("queued" as const) : null,
      message: i === 0 ? "Requested." : `Step ${i}: read_file(src/orders.js)`,
    })),
  );
  return id;
}

const signingIn = (paid: PaidApp, chain: TestChain, privateKey: Hex) =>
  signingInFetch(paid.app, chain.payments, privateKey);

/** The route's 402 challenge and the chain it offers. */
async function challengeOf(paid: PaidApp, url: string) {
  const res = await appFetch(paid.app)(url);
  expect(res.status).toBe(402);
  const required: PaymentRequired = decodePaymentRequiredHeader(res.headers.get("payment-required") ?? "");
  const siwx = required.extensions?.["sign-in-with-x"] as SIWxExtension;
  const chain = siwx.supportedChains[0];
  if (!chain) throw new Error("no chain offered");
  return { required, siwx, info: { ...siwx.info, chainId: chain.chainId, type: chain.type } };
}

/** A signature over `info` by the wallet, as the SDK's client helper makes it. */
const signed = (info: Parameters<typeof createSIWxPayload>[0], privateKey: Hex, url = info.uri) =>
  createSIWxPayload(info, privateKeyToAccount(privateKey), url);

const withSignIn = (payload: SIWxPayload): RequestInit => ({
  headers: { "sign-in-with-x": encodeSIWxHeader(payload) },
});

describe("free reads with the paying wallet signed in (x402 sign-in-with-x)", () => {
  test("without credentials: 402 with an auth-only challenge bound to this server, this URL and the payment network", async ({
    paid,
    chain,
  }) => {
    const wallet = await payingWallet(paid, chain, 12);
    const run = await runOf(paid, wallet);
    const url = `${paid.base}/x402/remediations/${run}`;
    const res = await appFetch(paid.app)(url);
    expect(res.status).toBe(402);
    expect(await res.json()).toMatchObject({ code: "sign_in_required", price: "free" });
    const { required, siwx } = await challengeOf(paid, url);
    expect(required.accepts).toEqual([]);
    expect(siwx.supportedChains).toEqual([{ chainId: chain.payments.network, type: "eip191" }]);
    expect(siwx.info).toMatchObject({ domain: new URL(paid.base).host, uri: url, version: "1" });
    expect(siwx.info.nonce).toMatch(/^[0-9a-f]{32}$/);
    const ttl = Date.parse(siwx.info.expirationTime ?? "") - Date.parse(siwx.info.issuedAt);
    expect(ttl).toBe(5 * 60_000);
  });

  test("the wallet that paid reads its run, the run's thread and its onboarding session for free", async ({
    paid,
    chain,
  }) => {
    const wallet = await payingWallet(paid, chain, 13);
    const run = await runOf(paid, wallet, 5);
    const address = privateKeyToAccount(wallet.privateKey).address;
    const before = await chain.balanceOf(address);
    const fetchAsWallet = signingIn(paid, chain, wallet.privateKey);

    const polled = await fetchAsWallet(`${paid.base}/x402/remediations/${run}`);
    expect(polled.status, await polled.clone().text()).toBe(200);
    expect(polled.headers.get("payment-response")).toBeNull();
    const view = await polled.json();
    expect(view).toMatchObject({
      remediationId: run,
      status: "investigating",
      problem: null,
      threadUrl: `${paid.base}/remediations/${run}`,
      threadApiUrl: `${paid.base}/x402/remediations/${run}/thread`,
    });
    // The organisation is unclaimed, so a human step comes first; polling follows it.
    const poll = view.next_actions.find((a: { action: string }) => a.action === "poll_remediation");
    expect(poll).toMatchObject({ price: "free" });
    expect(poll.description).toContain("SIGN-IN-WITH-X");
    expect(poll.description).toContain("Authorization: Bearer <session token>");

    const thread = await (await fetchAsWallet(view.threadApiUrl)).json();
    expect(thread.messages.map((m: { from: string; text: string }) => [m.from, m.text])).toEqual([
      ["patchbay", "Requested."],
      ["agent", "Step 1: read_file(src/orders.js)"],
      ["agent", "Step 2: read_file(src/orders.js)"],
      ["agent", "Step 3: read_file(src/orders.js)"],
      ["agent", "Step 4: read_file(src/orders.js)"],
    ]);
    expect(thread.hasMore).toBe(false);
    // Paging: two at a time, then only what is newer than the last message read.
    const page = await (await fetchAsWallet(`${view.threadApiUrl}?limit=2`)).json();
    expect(page.messages).toHaveLength(2);
    expect(page.hasMore).toBe(true);
    expect(page.next_actions[0]).toMatchObject({
      action: "read_thread",
      href: `${view.threadApiUrl}?after=${page.messages[1].id}`,
    });
    const rest = await (await fetchAsWallet(page.next_actions[0].href)).json();
    expect(rest.messages.map((m: { text: string }) => m.text)).toEqual(
      thread.messages.slice(2).map((m: { text: string }) => m.text),
    );
    expect(rest.next_actions.map((a: { action: string }) => a.action)).toEqual([
      "poll_remediation",
      "read_thread",
    ]);

    const session = await fetchAsWallet(`${paid.base}/x402/onboard/${wallet.sessionId}`);
    expect(session.status).toBe(200);
    expect(await session.json()).toMatchObject({ sessionId: wallet.sessionId, state: "awaiting-telemetry" });
    expect(await chain.balanceOf(address)).toBe(before);

    // The session token still opens the same reads, exactly as before.
    const byToken = await paid.app.request(`/x402/remediations/${run}/thread`, {
      headers: { authorization: `Bearer ${wallet.sessionToken}` },
    });
    expect(byToken.status).toBe(200);
    expect((await byToken.json()).messages).toHaveLength(5);
  });

  test("tenancy: a signed-in wallet never reads another organisation's run, thread or session", async ({
    paid,
    chain,
  }) => {
    const owner = await payingWallet(paid, chain, 14);
    const other = await payingWallet(paid, chain, 15);
    const run = await runOf(paid, owner);
    const asOther = signingIn(paid, chain, other.privateKey);
    for (const path of [
      `/x402/remediations/${run}`,
      `/x402/remediations/${run}/thread`,
      `/x402/onboard/${owner.sessionId}`,
    ]) {
      const res = await asOther(`${paid.base}${path}`);
      expect(res.status, path).toBe(404);
      expect((await res.json()).code).toBe("not_found");
    }
    // The owner's own wallet reads it.
    expect(
      (await signingIn(paid, chain, owner.privateKey)(`${paid.base}/x402/remediations/${run}`)).status,
    ).toBe(200);
  });

  test("a signed challenge signs in once: the replay is refused", async ({ paid, chain }) => {
    const wallet = await payingWallet(paid, chain, 16);
    const run = await runOf(paid, wallet);
    const url = `${paid.base}/x402/remediations/${run}`;
    const { info } = await challengeOf(paid, url);
    const proof = withSignIn(await signed(info, wallet.privateKey));
    expect((await appFetch(paid.app)(url, proof)).status).toBe(200);
    const replay = await appFetch(paid.app)(url, proof);
    expect(replay.status).toBe(401);
    expect(await replay.json()).toMatchObject({ code: "sign_in_invalid", reason: "invalid_siwx_nonce" });
  });

  test("an expired challenge is refused, even with a valid signature", async ({ paid, chain }) => {
    const wallet = await payingWallet(paid, chain, 17);
    const run = await runOf(paid, wallet);
    const url = `${paid.base}/x402/remediations/${run}`;
    const { info } = await challengeOf(paid, url);
    const proof = withSignIn(await signed(info, wallet.privateKey));
    // The same database six minutes later.
    const later = createApp({ ...paid.deps, clock: () => new Date(Date.now() + 6 * 60_000) });
    const res = await appFetch(later)(url, proof);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: "sign_in_invalid", reason: "invalid_siwx_expired" });
  });

  test("a wrong domain, URI or chain, or a tampered signature, is refused, and leaves the challenge to its wallet", async ({
    paid,
    chain,
  }) => {
    const wallet = await payingWallet(paid, chain, 18);
    const run = await runOf(paid, wallet);
    const url = `${paid.base}/x402/remediations/${run}`;
    const { info } = await challengeOf(paid, url);
    const refusedWith = async (init: RequestInit, target = url) => {
      const res = await appFetch(paid.app)(target, init);
      expect(res.status).toBe(401);
      const body = await res.json();
      expect(body.code).toBe("sign_in_invalid");
      return body.reason;
    };

    const elsewhere = {
      ...info,
      domain: "evil.example",
      uri: `http://evil.example/x402/remediations/${run}`,
    };
    expect(await refusedWith(withSignIn(await signed(elsewhere, wallet.privateKey)))).toBe(
      "invalid_siwx_domain_mismatch",
    );
    // Signed for this run, sent to read another.
    const second = await runOf(paid, wallet);
    expect(
      await refusedWith(
        withSignIn(await signed(info, wallet.privateKey)),
        `${paid.base}/x402/remediations/${second}`,
      ),
    ).toBe("invalid_siwx_uri_mismatch");
    const mainnet = { ...info, chainId: "eip155:1" };
    expect(await refusedWith(withSignIn(await signed(mainnet, wallet.privateKey)))).toBe(
      "invalid_siwx_unsupported_chain",
    );
    const genuine = await signed(info, wallet.privateKey);
    const flipped = `${genuine.signature.slice(0, -4)}${genuine.signature.slice(-4) === "1b1b" ? "1c1c" : "1b1b"}`;
    expect(await refusedWith(withSignIn({ ...genuine, signature: flipped }))).toBe("invalid_siwx_signature");
    // Not even a signature: a refusal too, never mistaken for the chain being away.
    expect(await refusedWith(withSignIn({ ...genuine, signature: "0x1234" }))).toBe("invalid_siwx_signature");
    // Another wallet's signature over this challenge, claiming to be this wallet.
    const impostor = await signed(info, deriveDevAccount(19).privateKey);
    const claimed = { ...impostor, address: genuine.address };
    expect(await refusedWith(withSignIn(claimed))).toBe("invalid_siwx_signature");
    expect(await refusedWith({ headers: { "sign-in-with-x": "not base64 json" } })).toBe(
      "invalid_siwx_payload",
    );

    // None of that spent the nonce: the wallet's own signature still signs in.
    expect((await appFetch(paid.app)(url, withSignIn(genuine))).status).toBe(200);
  });

  test("a wallet without an organisation is told to sign up; a sign-in never pays for a paid route", async ({
    paid,
    chain,
  }) => {
    const stranger = deriveDevAccount(19);
    const onboarding = `${paid.base}/x402/onboard/obs_unknown`;
    const { info } = await challengeOf(paid, onboarding);
    const res = await appFetch(paid.app)(onboarding, withSignIn(await signed(info, stranger.privateKey)));
    expect(res.status).toBe(409);
    expect((await res.json()).code).toBe("signup_required");

    const wallet = await payingWallet(paid, chain, 20);
    const problemsUrl = `${paid.base}/x402/problems`;
    const { info: forRun } = await challengeOf(
      paid,
      `${paid.base}/x402/remediations/${await runOf(paid, wallet)}`,
    );
    const paidRead = await appFetch(paid.app)(problemsUrl, {
      headers: { "sign-in-with-x": encodeSIWxHeader(await signed(forRun, wallet.privateKey, problemsUrl)) },
    });
    expect(paidRead.status).toBe(402);
    expect((await paidRead.json()).code).toBe("payment_required");
  });
});

describe("free reads without payments", () => {
  test("no network to sign in on: no challenge, the session token's 401 as before", async ({ app }) => {
    const res = await app.request("/x402/remediations/rem_nope");
    expect(res.status).toBe(401);
    expect(res.headers.get("payment-required")).toBeNull();
    expect((await res.json()).code).toBe("unauthorized");
  });
});
