import { decodePaymentRequiredHeader } from "@x402/core/http";
import type { HTTPAdapter, x402HTTPResourceServer } from "@x402/core/server";
import type { Deps } from "../../deps.ts";
import { formatUsd } from "../../platform/payments/prices.ts";
import type { PaidRoutes } from "./paid-routes.ts";

export type Catalog = Awaited<ReturnType<typeof buildCatalog>>;

/**
 * The catalog of `GET /x402`: each paid route in the Bazaar `/discovery/resources` item format,
 * plus `method`, `path` and `price` for readers that do not decode payment requirements. Each
 * item's `accepts` and `extensions` come from the very 402 challenge the route answers an unpaid
 * call with (the SDK builds both), so they cannot drift. Templated paths are listed with `{name}`
 * placeholders.
 */
export async function buildCatalog(args: {
  deps: Pick<Deps, "config" | "payments">;
  routes: PaidRoutes;
  loadServer: () => Promise<x402HTTPResourceServer>;
  lastUpdated: Date;
}) {
  const { deps } = args;
  const server = deps.payments.kind === "ready" ? await args.loadServer() : undefined;
  const items = [];
  for (const [pattern, route] of Object.entries(args.routes)) {
    if (!route) continue;
    const [method = "GET", template = ""] = pattern.split(" ");
    const path = template.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");
    const challenge = server ? await challengeFor(server, deps.config.baseUrl, method, path) : undefined;
    const extensions = challenge?.extensions ?? route.extensions;
    items.push({
      resource: `${deps.config.baseUrl}${path}`,
      type: "http",
      x402Version: challenge?.x402Version ?? 2,
      accepts: challenge?.accepts ?? [],
      lastUpdated: args.lastUpdated.toISOString(),
      description: route.description,
      mimeType: route.mimeType ?? "application/json",
      serviceName: "patchbay",
      ...(extensions ? { extensions } : {}),
      method,
      path,
      price: formatUsd(deps.payments.prices[route.price]),
    });
  }
  return {
    x402Version: 2 as const,
    items,
    pagination: { limit: items.length, offset: 0, total: items.length },
    paymentsAvailable: server !== undefined,
  };
}

async function challengeFor(server: x402HTTPResourceServer, baseUrl: string, method: string, path: string) {
  const adapter: HTTPAdapter = {
    getHeader: () => undefined,
    getMethod: () => method,
    getPath: () => path,
    getUrl: () => `${baseUrl}${path}`,
    getAcceptHeader: () => "application/json",
    getUserAgent: () => "patchbay-catalog",
    getQueryParams: () => ({}),
    getQueryParam: () => undefined,
    getBody: async () => undefined,
  };
  const result = await server.processHTTPRequest({ adapter, path, method });
  if (result.type !== "payment-error") throw new Error(`x402: ${method} ${path} required no payment`);
  const header = Object.entries(result.response.headers).find(
    ([name]) => name.toLowerCase() === "payment-required",
  );
  if (!header) throw new Error(`x402: ${method} ${path} answered without PAYMENT-REQUIRED`);
  return decodePaymentRequiredHeader(header[1]);
}
