import { count, eq } from "drizzle-orm";
import type { Address, Hex } from "viem";
import { describe, expect } from "../../../test/fixtures.ts";
import { signedPayment, type TestChain } from "../../../test/lib/dev-chain.ts";
import { jsonPost, type PaidApp, paidTest as test } from "../../../test/lib/paid-app.ts";
import { organizations } from "../../platform/db/schema/organizations.ts";
import { x402Payments } from "../../platform/db/schema/x402-payments.ts";

/**
 * PAYMENT-SIGNATURE headers that are not a well-formed EIP-3009 payment, sent to real paid
 * routes: each is the client's fault, so a 402 `payment_invalid` naming what is wrong — never a
 * 500, and never a 503 `payments_unavailable` (a client must not be able to fake an outage).
 * Nothing is charged and nothing is stored.
 */
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64");
const decode = (header: string) => JSON.parse(Buffer.from(header, "base64").toString("utf8"));

type Snapshot = { balance: bigint; payments: number; organizations: number };

async function snapshot(paid: PaidApp, chain: TestChain, payer: Address): Promise<Snapshot> {
  const [payments] = await paid.deps.db.select({ n: count() }).from(x402Payments);
  const [orgs] = await paid.deps.db
    .select({ n: count() })
    .from(organizations)
    .where(eq(organizations.walletAddress, payer.toLowerCase()));
  return { balance: await chain.balanceOf(payer), payments: payments?.n ?? 0, organizations: orgs?.n ?? 0 };
}

async function send(paid: PaidApp, path: string, header: string) {
  const init = path === "/x402/signup" ? jsonPost({}) : {};
  const res = await paid.app.request(`${paid.base}${path}`, {
    ...init,
    headers: { ...(init.headers as Record<string, string> | undefined), "payment-signature": header },
  });
  const body = (await res.json()) as { code?: string; detail?: string };
  return { status: res.status, code: body.code, detail: body.detail ?? "" };
}

/** A real signed payment for `path`, decoded, to tamper with. */
async function realPayment(paid: PaidApp, chain: TestChain, key: Hex, path: string) {
  const init = path === "/x402/signup" ? jsonPost({}) : {};
  return decode(await signedPayment(paid.app, chain.payments, key, `${paid.base}${path}`, init));
}

describe("malformed PAYMENT-SIGNATURE headers on paid routes", () => {
  test("a header that decodes to a non-object is payment_invalid, not a 500", async ({ paid, chain }) => {
    const payer = await chain.fundedPayer(3, "1");
    const before = await snapshot(paid, chain, payer.address);
    for (const value of [null, 42, [], ["x"], "text", true]) {
      const res = await send(paid, "/x402/services", encode(value));
      expect({ value, status: res.status, code: res.code }).toEqual({
        value,
        status: 402,
        code: "payment_invalid",
      });
    }
    expect(await snapshot(paid, chain, payer.address)).toEqual(before);
  });

  test("a payment holding a lone surrogate is payment_invalid on signup, not a 500", async ({
    paid,
    chain,
  }) => {
    const payer = await chain.fundedPayer(4, "1");
    const before = await snapshot(paid, chain, payer.address);
    // The report's header: an otherwise plausible payment whose JSON has "\ud800" in it.
    const reported = `{"x402Version":2,"accepted":{"asset":"x","extra":"\\ud800"},"payload":{"authorization":{"from":"0x0000000000000000000000000000000000000001","nonce":"0x${"0".repeat(64)}","validBefore":1}}}`;
    // A real signed payment with one in a field the facilitator ignores: it passes every shape
    // check, so only the canonical hash stands between it and the lock.
    const real = await realPayment(paid, chain, payer.privateKey, "/x402/signup");
    real.payload.note = "\ud800";
    for (const header of [Buffer.from(reported).toString("base64"), encode(real)]) {
      const res = await send(paid, "/x402/signup", header);
      expect(res).toMatchObject({ status: 402, code: "payment_invalid" });
    }
    expect(await snapshot(paid, chain, payer.address)).toEqual(before);
  });

  test("a malformed EIP-3009 authorization is payment_invalid naming the field, never payments_unavailable", async ({
    paid,
    chain,
  }) => {
    const payer = await chain.fundedPayer(5, "1");
    const real = await realPayment(paid, chain, payer.privateKey, "/x402/services");
    const cases: [field: string, value: unknown][] = [
      ["value", "abc"],
      ["value", "1.5"],
      ["value", "1e5"],
      ["value", "-1"],
      ["value", {}],
      ["value", 10_000],
      ["value", `1${"0".repeat(78)}`],
      ["validAfter", "abc"],
      ["validAfter", "-5"],
      ["validBefore", "soon"],
      ["validBefore", "1.5"],
      ["validBefore", null],
      ["signature", "not hex"],
      ["signature", "0xzz"],
      ["signature", 7],
      ["from", "0x123"],
      ["from", "alice"],
      ["to", "0x123"],
      ["to", "nowhere"],
      ["to", undefined],
      ["nonce", "0x01"],
      ["nonce", `0x${"g".repeat(64)}`],
      // Stored with the claim, which is taken before the SDK matches `accepted`.
      ["accepted.amount", 10_000],
      ["accepted.amount", "ten"],
      ["accepted.amount", "\u0000"],
      ["accepted.network", "x".repeat(8_000)],
      ["accepted.network", "eip155:\u0000"],
      ["accepted.asset", `0x${"a".repeat(8_000)}`],
      ["accepted.asset", "\u0000"],
    ];
    const before = await snapshot(paid, chain, payer.address);
    const wrong: unknown[] = [];
    for (const [field, value] of cases) {
      const tampered = structuredClone(real);
      if (field === "signature") tampered.payload.signature = value;
      else if (field.startsWith("accepted.")) tampered.accepted[field.slice("accepted.".length)] = value;
      else tampered.payload.authorization[field] = value;
      const res = await send(paid, "/x402/services", encode(tampered));
      const named = res.detail.includes(
        field === "signature" ? "payload.signature" : field.includes(".") ? field : `authorization.${field}`,
      );
      if (res.status !== 402 || res.code !== "payment_invalid" || !named)
        wrong.push({ field, value, ...res });
    }
    expect(wrong).toEqual([]);
    expect(await snapshot(paid, chain, payer.address)).toEqual(before);

    // The untampered payment is still good: the refusals consumed nothing. It passes the gate and
    // reaches the route, which refuses a wallet without an organisation (so nothing is settled).
    const res = await send(paid, "/x402/services", encode(real));
    expect(res).toMatchObject({ status: 409, code: "signup_required" });
  });
});
