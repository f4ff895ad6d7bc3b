import type { Context } from "hono";
import type { ZodType } from "zod";
import type { Payer, SessionActor, WalletActor } from "../../actor.ts";
import type { ServiceContext } from "../../context.ts";
import type { PriceKey } from "../../platform/payments/prices.ts";
import type { AppEnv } from "../http/env.ts";

type Handler<A> = (c: Context<AppEnv>, ctx: ServiceContext<A>) => Promise<Response>;

/**
 * One route under /x402: the x402 router mounts it, gates it when `paid`, resolves its caller
 * once into the context it hands the handler, and lists it in the catalog and /llms.txt.
 * - `wallet`: a paid call by a wallet with an organisation (`signup_required` otherwise);
 * - `payer`: a paid call by any wallet (signing up);
 * - `session`: a free call with an onboarding session's token.
 */
export type X402Route = {
  method: "GET" | "POST";
  /** Hono syntax: `/x402/onboard/:sessionId`. */
  path: `/x402/${string}`;
  description: string;
  /** Paid routes: the price class and the schemas the Bazaar discovery extension declares. */
  paid?: {
    price: PriceKey;
    /** The JSON body (POST) or the query parameters (GET). */
    input?: ZodType;
    pathParams?: ZodType;
    output: ZodType;
    /** An input the schema accepts; needed when it has required fields (the SDK checks it). */
    inputExample?: Record<string, unknown>;
    pathParamsExample?: Record<string, unknown>;
    outputExample?: unknown;
  };
  /** How a free route authenticates, for the docs (`Authorization: Bearer <session token>`). */
  auth?: string;
} & (
  | { caller: "wallet"; handle: Handler<WalletActor> }
  | { caller: "payer"; handle: Handler<Payer> }
  | { caller: "session"; handle: Handler<SessionActor> }
);
