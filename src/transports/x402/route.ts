import type { Context } from "hono";
import type { ZodType } from "zod";
import type { PriceKey } from "../../platform/payments/prices.ts";
import type { AppEnv } from "../http/env.ts";

/**
 * One route under /x402, declared by its feature (like an MCP tool in `tools.ts`): the x402
 * router mounts it, gates it when `paid`, and lists it in the catalog and /llms.txt.
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
  handle(c: Context<AppEnv>): Promise<Response>;
};
