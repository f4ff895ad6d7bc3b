import { x402HTTPResourceServer } from "@x402/core/server";
import type { Logger } from "../../platform/logging/logger.ts";
import type { Payments } from "../../platform/payments/payments.ts";
import { type PaidRoutes, toX402Routes } from "./paid-routes.ts";
import { facilitatorUnavailable, paymentsUnavailable } from "./payment-responses.ts";

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
  let server: Promise<x402HTTPResourceServer> | undefined;
  return () => {
    const payments = args.payments;
    if (payments.kind !== "ready") return Promise.reject(paymentsUnavailable());
    server ??= (async () => {
      const http = new x402HTTPResourceServer(payments.resourceServer, toX402Routes(args.routes, payments));
      // Routes that declare Bazaar discovery get the SDK's extension, as `@x402/hono` would do.
      if (Object.values(args.routes).some((route) => route?.extensions?.bazaar !== undefined)) {
        const bazaar = await import("@x402/extensions/bazaar");
        if (!http.server.hasExtension("bazaar"))
          http.server.registerExtension(bazaar.bazaarResourceServerExtension);
        bazaar.validateBazaarRouteExtensions(http.routes);
      }
      await http.initialize();
      return http;
    })().catch((error: unknown) => {
      server = undefined;
      args.logger.error({ err: error }, "x402 resource server could not initialize");
      throw facilitatorUnavailable();
    });
    return server;
  };
}
