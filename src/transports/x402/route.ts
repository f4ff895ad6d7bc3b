import type { Context } from "hono";
import { type ZodType, z } from "zod";
import type { FreeReader, Payer, WalletActor } from "../../actor.ts";
import type { ServiceContext } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import type { AppError } from "../../errors.ts";
import type { PriceKey } from "../../platform/payments/prices.ts";
import type { AppEnv } from "../http/env.ts";
import { loadedBazaar } from "./bazaar.ts";
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
    /**
     * An answer the output schema accepts. Required: the SDK's Bazaar extension publishes the
     * output schema only beside an example, so a route without one would list its input alone.
     */
    outputExample: Record<string, unknown>;
    /** An input the schema accepts; needed when it has required fields (the SDK checks it). */
    inputExample?: Record<string, unknown>;
    /** Values the path parameters take: the catalog's challenge is asked for that path. */
    pathParamsExample?: Record<string, unknown>;
  };
  /**
   * Why the route cannot run on this server now, or undefined when it can (e.g. no model for a
   * run). While it cannot, a call is refused with that error before any payment is asked for,
   * and the catalog, /llms.txt and the start-up banner say so.
   */
  unavailable?: (deps: Deps) => AppError | undefined;
  /** How a free route authenticates, for the docs and the catalog. */
  auth?: string;
} & (
  | { caller: "wallet"; handle: Handler<WalletActor> }
  | { caller: "payer"; handle: Handler<Payer> }
  | { caller: "reader"; handle: Handler<FreeReader> }
);

/**
 * The gate's table of paid routes, each declaring the Bazaar discovery extension from its schemas.
 * The extension (JSON Schemas generated from zod, ~35 ms for the table) is made when first read:
 * by the first paid request or the catalog, not by every start.
 */
export function paidTable(routes: readonly X402Route[]): PaidRoutes {
  const table = {} as PaidRoutes;
  for (const route of routes) {
    if (!route.paid) continue;
    const paid = route.paid;
    const { pathParamsExample } = paid;
    let bazaar: Record<string, unknown> | undefined;
    const entry = {
      price: paid.price,
      description: route.description,
      ...(pathParamsExample
        ? {
            examplePath: route.path.replace(/:(\w+)/g, (param, name: string) =>
              encodeURIComponent(String(pathParamsExample[name] ?? param)),
            ),
          }
        : {}),
    };
    Object.defineProperty(entry, "extensions", {
      enumerable: true,
      get: () => {
        bazaar ??= discoveryExtension(route.method, paid);
        return bazaar;
      },
    });
    table[`${route.method} ${route.path}` as RoutePattern] = entry;
  }
  return table;
}

function discoveryExtension(method: X402Route["method"], paid: NonNullable<X402Route["paid"]>) {
  const { input, pathParams, output, outputExample, inputExample, pathParamsExample } = paid;
  const schemas = {
    ...(inputExample ? { input: inputExample } : {}),
    ...(pathParamsExample ? { pathParams: pathParamsExample } : {}),
    ...(input ? { inputSchema: jsonSchema(input, "input") } : {}),
    ...(pathParams ? { pathParamsSchema: jsonSchema(pathParams, "input") } : {}),
    output: { schema: jsonSchema(output, "output"), example: outputExample },
  };
  const { declareDiscoveryExtension } = loadedBazaar();
  return method === "POST"
    ? declareDiscoveryExtension({ ...schemas, bodyType: "json" })
    : declareDiscoveryExtension(schemas);
}

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return withoutFormats(rest) as Record<string, unknown>;
}

/** RFC 3986: a URI starts with its scheme; what `format: "uri"` asks, as a pattern. */
const URI_PATTERN = "^[A-Za-z][A-Za-z0-9+.-]*:[^\\s]*$";

/**
 * The SDK validates these schemas with a bare Ajv that warns (on the console, at every start and
 * at every facilitator) about each `format` it does not know, which is all of them. So `format`
 * goes: where a `pattern` says the same (zod emits both for uuids and timestamps) it is dropped,
 * and a URI's becomes the pattern of one.
 */
function withoutFormats(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutFormats);
  if (!node || typeof node !== "object") return node;
  const entries = Object.entries(node as Record<string, unknown>);
  const hasPattern = entries.some(([key]) => key === "pattern");
  return Object.fromEntries(
    entries
      .filter(([key]) => key !== "format" || !hasPattern)
      .map(([key, value]) =>
        key === "format" && value === "uri" ? ["pattern", URI_PATTERN] : [key, withoutFormats(value)],
      ),
  );
}
