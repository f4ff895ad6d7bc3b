import { type RouteConfig, type RoutesConfig, x402HTTPResourceServer } from "@x402/core/server";
import type { Price as X402Price } from "@x402/core/types";
import { loadOnce } from "../../platform/load-once.ts";
import type { Logger } from "../../platform/logging/logger.ts";
import type { Payments } from "../../platform/payments/payments.ts";
import { formatUsd, type PriceKey } from "../../platform/payments/prices.ts";
import { patternOf } from "../http/allowed-methods.ts";
import { loadBazaar } from "./bazaar.ts";
import { facilitatorUnavailable, paymentsUnavailable } from "./payment-responses.ts";

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** `"POST /x402/signup"`, `"GET /x402/problems/:id"`: literal segments and `:name` parameters. */
export type RoutePattern = `${Method} /x402/${string}`;

/** What a paid route declares; the price comes from configuration by class. */
export type PaidRoute = {
  price: PriceKey;
  description: string;
  /** x402 extensions declared on the route, e.g. `{ bazaar: declareDiscoveryExtension(…) }`. */
  extensions?: Record<string, unknown>;
  /**
   * A path of the route with its parameters' examples (`/x402/traces/4bf9…`), which the catalog
   * asks the challenge for: the SDK takes the path parameters from the path it is given.
   */
  examplePath?: string;
};

export type PaidRoutes = Record<RoutePattern, PaidRoute>;

export type MatchedRoute = { pattern: RoutePattern; route: PaidRoute };

/** How long a signed payment stays valid for our routes (the client picks within it). */
const MAX_TIMEOUT_SECONDS = 300;

/**
 * Finds the paid route for a request. HEAD is matched as GET: Hono answers HEAD with the GET
 * handler, so an unpaid HEAD must not run it.
 */
export function compileRoutes(
  routes: PaidRoutes,
): (method: string, path: string) => MatchedRoute | undefined {
  const compiled = Object.entries(routes).map(([pattern, route]) => {
    const [method, path = ""] = pattern.split(" ");
    return { method, regex: patternOf(path), match: { pattern: pattern as RoutePattern, route } };
  });
  return (method, path) => {
    const verb = method === "HEAD" ? "GET" : method;
    return compiled.find((c) => c.method === verb && c.regex.test(path))?.match;
  };
}

/** The SDK's route table: one `exact` payment option per route, priced from configuration. */
function toX402Routes(routes: PaidRoutes, payments: Extract<Payments, { kind: "ready" }>): RoutesConfig {
  const table: Record<string, RouteConfig> = {};
  for (const [pattern, route] of Object.entries(routes)) {
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
      mimeType: "application/json",
      serviceName: "patchbay",
      ...(route.extensions ? { extensions: route.extensions } : {}),
    };
  }
  return table;
}

/**
 * The SDK's HTTP resource server for `routes`, built on first use (initializing asks the
 * facilitator what it supports). A failure is 503 `payments_unavailable` and is retried on the
 * next call. The gate and the catalog share one, so the catalog lists exactly the challenges.
 */
export function resourceServerLoader(args: {
  payments: Payments;
  routes: PaidRoutes;
  logger: Logger;
}): () => Promise<x402HTTPResourceServer> {
  const payments = args.payments;
  if (payments.kind !== "ready") return () => Promise.reject(paymentsUnavailable());
  return loadOnce(async () => {
    try {
      const bazaar = await loadBazaar();
      const http = new x402HTTPResourceServer(payments.resourceServer, toX402Routes(args.routes, payments));
      // Routes that declare Bazaar discovery get the SDK's extension, as `@x402/hono` would do.
      if (Object.values(args.routes).some((route) => route.extensions?.bazaar !== undefined)) {
        if (!http.server.hasExtension("bazaar"))
          http.server.registerExtension(bazaar.bazaarResourceServerExtension);
        bazaar.validateBazaarRouteExtensions(http.routes);
      }
      await http.initialize();
      return http;
    } catch (error) {
      args.logger.error({ err: error }, "x402 resource server could not initialize");
      throw facilitatorUnavailable();
    }
  });
}
