import { declareDiscoveryExtension } from "@x402/extensions/bazaar";
import type { Context } from "hono";
import { type ZodType, z } from "zod";
import type { FreeReader, Payer, WalletActor } from "../../actor.ts";
import type { ServiceContext } from "../../context.ts";
import type { PriceKey } from "../../platform/payments/prices.ts";
import type { AppEnv } from "../http/env.ts";
import type { PaidRoutes, RoutePattern } from "./paid-routes.ts";

type Handler<A> = (c: Context<AppEnv>, ctx: ServiceContext<A>) => Promise<Response>;

/**
 * One route under /x402, mounted, gated when `paid`, and listed in the catalog and /llms.txt. Its
 * caller: `wallet` (paid, with an organisation), `payer` (paid, any wallet), `reader` (free: an
 * onboarding session's token, or the organisation's wallet signed in with `sign-in-with-x`).
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
  /** How a free route authenticates, for the docs and the catalog. */
  auth?: string;
} & (
  | { caller: "wallet"; handle: Handler<WalletActor> }
  | { caller: "payer"; handle: Handler<Payer> }
  | { caller: "reader"; handle: Handler<FreeReader> }
);

/** The gate's table of paid routes, each declaring the Bazaar discovery extension from its schemas. */
export function paidTable(routes: readonly X402Route[]): PaidRoutes {
  const table = {} as PaidRoutes;
  for (const route of routes) {
    if (!route.paid) continue;
    const { input, pathParams, output, outputExample, inputExample, pathParamsExample } = route.paid;
    const schemas = {
      ...(inputExample ? { input: inputExample } : {}),
      ...(pathParamsExample ? { pathParams: pathParamsExample } : {}),
      ...(input ? { inputSchema: jsonSchema(input, "input") } : {}),
      ...(pathParams ? { pathParamsSchema: jsonSchema(pathParams, "input") } : {}),
      output: { schema: jsonSchema(output, "output"), ...(outputExample ? { example: outputExample } : {}) },
    };
    const bazaar =
      route.method === "POST"
        ? declareDiscoveryExtension({ ...schemas, bodyType: "json" })
        : declareDiscoveryExtension(schemas);
    table[`${route.method} ${route.path}` as RoutePattern] = {
      price: route.paid.price,
      description: route.description,
      extensions: bazaar,
    };
  }
  return table;
}

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return withoutRedundantFormats(rest) as Record<string, unknown>;
}

/**
 * Drops `format` where a `pattern` says the same (zod emits both for uuids): the SDK validates
 * these schemas with a bare Ajv that warns about every format it does not know.
 */
function withoutRedundantFormats(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutRedundantFormats);
  if (!node || typeof node !== "object") return node;
  const entries = Object.entries(node as Record<string, unknown>);
  const hasPattern = entries.some(([key]) => key === "pattern");
  return Object.fromEntries(
    entries
      .filter(([key]) => !(key === "format" && hasPattern))
      .map(([key, value]) => [key, withoutRedundantFormats(value)]),
  );
}
