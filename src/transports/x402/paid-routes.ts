import type { RouteConfig, RoutesConfig } from "@x402/core/server";
import type { Price as X402Price } from "@x402/core/types";
import type { Payments } from "../../platform/payments/payments.ts";
import { formatUsd, type PriceKey } from "../../platform/payments/prices.ts";
import { patternOf } from "../http/allowed-methods.ts";

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** `"POST /x402/signup"`, `"GET /x402/problems/:id"`: literal segments and `:name` parameters. */
export type RoutePattern = `${Method} /x402/${string}`;

/** What a paid route declares; the price comes from configuration by class. */
export type PaidRoute = {
  price: PriceKey;
  description: string;
  /** Default `application/json`. */
  mimeType?: string;
  /** x402 extensions declared on the route, e.g. `{ bazaar: declareDiscoveryExtension(…) }`. */
  extensions?: Record<string, unknown>;
};

export type PaidRoutes = Partial<Record<RoutePattern, PaidRoute>>;

export type MatchedRoute = { pattern: RoutePattern; route: PaidRoute };

/** How long a signed payment stays valid for our routes (the client picks within it). */
export const MAX_TIMEOUT_SECONDS = 300;

/**
 * Finds the paid route for a request. HEAD is matched as GET: Hono answers HEAD with the GET
 * handler, so an unpaid HEAD must not run it.
 */
export function compileRoutes(
  routes: PaidRoutes,
): (method: string, path: string) => MatchedRoute | undefined {
  const compiled = Object.entries(routes).flatMap(([pattern, route]) => {
    if (!route) return [];
    const [method, path = ""] = pattern.split(" ");
    return [{ method, regex: patternOf(path), match: { pattern: pattern as RoutePattern, route } }];
  });
  return (method, path) => {
    const verb = method === "HEAD" ? "GET" : method;
    return compiled.find((c) => c.method === verb && c.regex.test(path))?.match;
  };
}

/** The SDK's route table: one `exact` payment option per route, priced from configuration. */
export function toX402Routes(
  routes: PaidRoutes,
  payments: Extract<Payments, { kind: "ready" }>,
): RoutesConfig {
  const table: Record<string, RouteConfig> = {};
  for (const [pattern, route] of Object.entries(routes)) {
    if (!route) continue;
    const price = payments.prices[route.price];
    // A known asset is priced in its atomic units with its EIP-712 domain, so any network works;
    // without one, the SDK's default USDC of the network converts the dollar string.
    const x402Price: X402Price = payments.asset
      ? {
          asset: payments.asset.address,
          amount: price.atomic.toString(),
          extra: { name: payments.asset.name, version: payments.asset.version },
        }
      : formatUsd(price);
    table[pattern] = {
      accepts: {
        scheme: "exact",
        network: payments.network,
        payTo: payments.payTo,
        price: x402Price,
        maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
      },
      description: route.description,
      mimeType: route.mimeType ?? "application/json",
      serviceName: "patchbay",
      ...(route.extensions ? { extensions: route.extensions } : {}),
    };
  }
  return table;
}
