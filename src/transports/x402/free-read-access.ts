import { encodePaymentRequiredHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import type { Context } from "hono";
import type { FreeReader } from "../../actor.ts";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { resolveSessionActor } from "../../features/agent-onboarding/callers.ts";
import type { AppEnv } from "../http/env.ts";
import { problemResponse } from "../http/problem.ts";
import type { X402Route } from "./route.ts";

/**
 * The extension's name and header, the SDK's `SIGN_IN_WITH_X` (the type says so). Not imported:
 * its module brings the signature verifiers, loaded on the first sign-in rather than at start.
 */
const SIGN_IN_WITH_X: typeof import("@x402/extensions/sign-in-with-x").SIGN_IN_WITH_X = "sign-in-with-x";

/** How the free reads authenticate, as the catalog and /llms.txt say it. */
export const FREE_READ_AUTH =
  "Authorization: Bearer <session token>, or the paying wallet signed in: SIGN-IN-WITH-X";

/**
 * The caller of a free read (DESIGN §9 "Wallet reads"): the onboarding session token exactly as
 * before (spec 4D rule 1), else the paying wallet signed in with x402's `sign-in-with-x`. With
 * neither, an x402 auth-only challenge: 402 whose `PAYMENT-REQUIRED` offers nothing to pay
 * (`accepts: []`) and a SIWX challenge, which the SDK's client extension signs and sends back.
 * Without payments there is no network to sign in on, and the answer stays a plain 401.
 */
export async function freeReader(c: Context<AppEnv>, description: string): Promise<FreeReader | Response> {
  const deps = c.get("deps");
  const authorization = c.req.header("authorization");
  if (authorization !== undefined) return resolveSessionActor(deps, authorization);
  const signedIn = c.req.header(SIGN_IN_WITH_X);
  const { issueSignInChallenge, signInWallet } = await import(
    "../../features/agent-onboarding/wallet-sign-in.ts"
  );
  if (signedIn !== undefined) return signInWallet(deps, { header: signedIn, path: c.req.path });
  const challenge = await issueSignInChallenge(deps, c.req.path);
  if (!challenge) return resolveSessionActor(deps, undefined);
  const required: PaymentRequired = {
    x402Version: 2,
    error: "Sign in with the paying wallet, or send the onboarding session token; nothing to pay.",
    resource: { url: challenge.info.uri, description, mimeType: "application/json" },
    accepts: [],
    extensions: { [SIGN_IN_WITH_X]: challenge },
  };
  const error = new AppError(
    "sign_in_required",
    "This read is free for the organisation's wallet or its onboarding session. Sign the sign-in-with-x challenge in the PAYMENT-REQUIRED header with the wallet that pays (CAIP-122 / EIP-4361) and send it base64-encoded in the SIGN-IN-WITH-X header, or send Authorization: Bearer <session token>. Nothing is charged.",
    { price: "free" },
  );
  return problemResponse(c, error, {
    "payment-required": encodePaymentRequiredHeader(required),
    "cache-control": "no-store",
  });
}

/**
 * The free reads as the catalog lists them beside the paid items: each with both ways in. The
 * sign-in way names the chain to sign on; its challenge (nonce, times) comes from the route's 402.
 */
export function freeReadCatalog(deps: Pick<Deps, "config" | "payments">, routes: readonly X402Route[]) {
  const network = deps.payments.kind === "ready" ? deps.payments.network : undefined;
  const auth = [
    {
      scheme: "bearer",
      header: "Authorization",
      description: "Bearer <session token>: the token POST /x402/onboard returns once (24 hours).",
    },
    ...(network
      ? [
          {
            scheme: SIGN_IN_WITH_X,
            header: "SIGN-IN-WITH-X",
            description:
              "The paying wallet signs the CAIP-122 challenge of the route's 402 answer (extensions.sign-in-with-x); never expires.",
            supportedChains: [{ chainId: network, type: "eip191" }],
          },
        ]
      : []),
  ];
  return routes
    .filter((route) => route.caller === "reader")
    .map((route) => {
      const path = route.path.replace(/:([A-Za-z_]\w*)/g, "{$1}");
      return {
        resource: `${deps.config.baseUrl}${path}`,
        method: route.method,
        path,
        price: "free",
        description: route.description,
        auth,
      };
    });
}

export type FreeReadCatalog = ReturnType<typeof freeReadCatalog>;
