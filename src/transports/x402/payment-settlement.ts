import type { x402HTTPResourceServer } from "@x402/core/server";
import { FacilitatorResponseError, withPrivateCacheControl } from "@x402/core/server";
import type { PaymentRequirements } from "@x402/core/types";
import type { Context } from "hono";
import type { StoredResponse } from "../../platform/db/claim.ts";
import type { AppEnv } from "../http/env.ts";
import { pickHeaders } from "../http/idempotency.ts";
import { requestContext } from "./http-adapter.ts";
import type { MatchedRoute } from "./paid-routes.ts";
import type { PaymentIdentity } from "./payment-identity.ts";
import type { PaymentClaim } from "./payment-lock.ts";
import {
  bodyFor,
  replayedHeaders,
  settlementFailedResponse,
  settlementUnknown,
} from "./payment-responses.ts";

/** What settling needs of the gate's request (the gate's own flow carries more). */
export type SettlementFlow = {
  c: Context<AppEnv>;
  http: x402HTTPResourceServer;
  args: { baseUrl: string };
  matched: MatchedRoute;
  identity: PaymentIdentity;
};

/** The SDK's reason for a transaction sent whose receipt did not come (`@x402/core`'s own constant is internal). */
const SETTLEMENT_PENDING = "settlement_pending";

/**
 * Settles a payment whose handler answered < 400 (`live`, or a held `response`):
 * - settled → the answer with the PAYMENT-RESPONSE receipt, stored for replays;
 * - refused → 402 `payment_failed`; the answer is held for the same payment sent again;
 * - unreachable or not confirmed (`settlement_pending`): unknown, not a refusal → held, then 503.
 * The answer is set on `c.res` (after the handler ran, Hono ignores a middleware's return value).
 */
export async function settleAndRespond(
  flow: SettlementFlow,
  args: {
    claim: PaymentClaim;
    requirements: PaymentRequirements;
    response: StoredResponse | undefined;
    live: Response | undefined;
    declaredExtensions?: Record<string, unknown> | undefined;
  },
): Promise<Response> {
  const { c, http, identity } = flow;
  const live = args.live;
  const body = live ? await live.text() : (args.response?.body ?? "");
  const response: StoredResponse = live
    ? { status: live.status, headers: pickHeaders(live.headers, replayedHeaders), body }
    : (args.response ?? { status: 200, headers: {}, body });
  const transport = {
    request: requestContext(c, flow.args.baseUrl),
    responseBody: Buffer.from(body),
    responseHeaders: response.headers,
  };
  let result: Awaited<ReturnType<typeof http.processSettlement>>;
  try {
    result = await http.processSettlement(
      identity.payload,
      args.requirements,
      args.declaredExtensions ?? flow.matched.route.extensions,
      transport,
    );
  } catch (error) {
    await args.claim.failed(response, args.requirements);
    resetResponse(c);
    if (error instanceof FacilitatorResponseError) throw settlementUnknown();
    throw error;
  }
  if (!result.success) {
    await args.claim.failed(response, args.requirements);
    if (result.errorReason === SETTLEMENT_PENDING) {
      resetResponse(c);
      throw settlementUnknown();
    }
    return respond(c, settlementFailedResponse(c, result.headers));
  }
  const receipt = result.headers;
  await args.claim.settled(
    result.transaction,
    { ...response, headers: { ...response.headers, ...lowercase(receipt) } },
    args.requirements,
  );
  const headers = new Headers(live ? live.headers : response.headers);
  headers.delete("content-length");
  headers.delete("transfer-encoding");
  for (const [name, value] of Object.entries(receipt)) headers.set(name, value);
  headers.set("cache-control", withPrivateCacheControl(headers.get("cache-control")));
  return respond(c, new Response(bodyFor(response.status, body), { status: response.status, headers }));
}

function respond(c: Context, res: Response): Response {
  resetResponse(c);
  c.res = res;
  return res;
}

/** Hono copies the previous response's headers onto a new `c.res`: keeps a handler's off a 402. */
function resetResponse(c: Context): void {
  c.res = undefined;
}

const lowercase = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
