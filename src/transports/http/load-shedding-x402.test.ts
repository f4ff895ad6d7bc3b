import { decodePaymentResponseHeader } from "@x402/core/http";
import { eq } from "drizzle-orm";
import { describe, expect } from "../../../test/fixtures.ts";
import { problem } from "../../../test/http.ts";
import { signedPayment } from "../../../test/lib/dev-chain.ts";
import { heldBody, streamed } from "../../../test/lib/held-request.ts";
import { jsonPost, paidTest as test } from "../../../test/lib/paid-app.ts";
import { createApp } from "../../app.ts";
import { x402Payments } from "../../platform/db/schema/x402-payments.ts";
import { withServices } from "../../services.ts";

const SIGNUP = 50_000n; // $0.05

describe("load shedding on the paid routes", () => {
  test("a paid request shed under load is not charged; the same payment works once there is room", async ({
    paid,
    chain,
    owner,
  }) => {
    const deps = withServices({
      ...paid.deps,
      config: { ...paid.deps.config, traffic: { ...paid.deps.config.traffic, maxConcurrentRequests: 1 } },
    });
    const app = createApp(deps);
    try {
      const payer = await chain.fundedPayer(7, "1");
      const url = `${paid.base}/x402/signup`;
      const payment = await signedPayment(app, chain.payments, payer.privateKey, url, jsonPost({}));
      const before = await chain.balanceOf(payer.address);

      // The one place is taken by a REST request whose body the test holds back.
      const held = heldBody(JSON.stringify({ name: "held" }));
      const holding = app.request(
        "/api/v1/environments",
        streamed({
          method: "POST",
          headers: {
            authorization: `Bearer ${owner.apiKey}`,
            "content-type": "application/json",
            "idempotency-key": crypto.randomUUID(),
          },
          body: held.body,
        }),
      );
      await held.reading;

      const paidCall = () =>
        app.request(url, {
          ...jsonPost({}),
          headers: { "content-type": "application/json", "payment-signature": payment },
        });
      const shed = await paidCall();
      expect(shed.status).toBe(503);
      expect(shed.headers.get("retry-after")).toBe("1");
      expect(shed.headers.get("payment-response")).toBeNull();
      expect((await problem(shed)).code).toBe("overloaded");
      expect(await chain.balanceOf(payer.address)).toBe(before);
      const locks = await deps.db
        .select()
        .from(x402Payments)
        .where(eq(x402Payments.payer, payer.address.toLowerCase()));
      expect(locks).toEqual([]); // the gate never saw it

      held.release();
      expect((await holding).status).toBe(201);
      const served = await paidCall();
      expect(served.status).toBe(201);
      expect(decodePaymentResponseHeader(served.headers.get("payment-response") ?? "").success).toBe(true);
      expect(await chain.balanceOf(payer.address)).toBe(before - SIGNUP);
    } finally {
      await deps.telemetry.close();
    }
  });
});
