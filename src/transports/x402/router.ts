import { type Context, Hono } from "hono";
import type { Deps } from "../../deps.ts";
import { payerOf, resolveWalletActor } from "../../features/agent-onboarding/callers.ts";
import { onboardingAssumption } from "../../features/agent-onboarding/next-actions.ts";
import { problemAssumption } from "../../features/agent-onboarding/problem-assumption.ts";
import { loadOnce } from "../../platform/load-once.ts";
import { apiBodyLimit, requireJsonBodies } from "../http/api-guards.ts";
import type { AppEnv } from "../http/env.ts";
import { refuseUnstorableText } from "../http/unstorable-text.ts";
import { onboardingRoutes } from "./agent-onboarding/routes.ts";
import { assumedStateCheck } from "./assumed-state-check.ts";
import { buildCatalog, catalogPage, llmsTxt } from "./catalog.ts";
import { diagnosisRoutes } from "./diagnosis/routes.ts";
import { freeReadCatalog, freeReader } from "./free-read-access.ts";
import { type RoutePattern, resourceServerLoader } from "./paid-routes.ts";
import { paymentGate, paymentOf } from "./payment-gate.ts";
import { remediationRoutes } from "./remediations/routes.ts";
import type { X402Route } from "./route.ts";
import { paidTable } from "./route.ts";
import { telemetryRoutes } from "./telemetry/routes.ts";

/** Every /x402 route, from the features that own them. */
export const x402Routes: readonly X402Route[] = [
  ...onboardingRoutes,
  ...telemetryRoutes,
  ...diagnosisRoutes,
  ...remediationRoutes,
];

/** Resolves the route's caller once and hands the handler its context. */
async function dispatch(c: Context<AppEnv>, route: X402Route): Promise<Response> {
  const deps = c.get("deps");
  const ctx = { deps, channel: "x402" as const, requestId: c.get("requestId") };
  switch (route.caller) {
    case "payer":
      return route.handle(c, { ...ctx, actor: payerOf(paymentOf(c)) });
    case "wallet":
      return route.handle(c, { ...ctx, actor: await resolveWalletActor(deps, payerOf(paymentOf(c))) });
    case "reader": {
      const actor = await freeReader(c, route.description);
      return actor instanceof Response ? actor : route.handle(c, { ...ctx, actor });
    }
  }
}

/** Subjects an `x_assumed_state` may name, by kind. */
const assumptionKinds = { onboarding: onboardingAssumption, problem: problemAssumption };

/** The route patterns as the gate's table names them. */
const patternOf = (route: X402Route) => `${route.method} ${route.path}` as RoutePattern;

/**
 * The agent-facing routes (DESIGN §7): `GET /x402` (the catalog, free), then per request the
 * refusal of a route that cannot run here now, the body limit, the stale-suggestion check (both
 * before any payment), the payment gate, and the feature's handler. Mount at `/x402`; `llms`
 * serves `/llms.txt` from the same table.
 */
export function createX402Router(deps: Deps): { router: Hono<AppEnv>; llms: Hono<AppEnv> } {
  const table = paidTable(x402Routes);
  const byPattern = new Map(x402Routes.map((route) => [patternOf(route), route]));
  // Read per request: what can run depends on the deps (a model), not on the route table.
  const refusal = (route: X402Route | undefined) => route?.unavailable?.(deps);
  const loadServer = resourceServerLoader({ ...deps, routes: table });
  const startedAt = deps.clock();
  const free = freeReadCatalog(deps, x402Routes);
  const readCatalog = loadOnce(() =>
    buildCatalog({ deps, routes: table, loadServer, lastUpdated: startedAt, free }),
  );

  const router = new Hono<AppEnv>();
  router.get("/", async (c) => c.json(catalogPage(await readCatalog(), (p) => refusal(byPattern.get(p)))));
  // A route that cannot run here answers its refusal before the body, a suggestion or a payment
  // is looked at: asking for a payment it would refuse to run would only waste the agent's time.
  for (const route of x402Routes) {
    if (!route.unavailable) continue;
    router.on(route.method, route.path.slice("/x402".length), async (_c, next) => {
      const refused = refusal(route);
      if (refused) throw refused;
      await next();
    });
  }
  router.use(
    "*",
    apiBodyLimit(),
    requireJsonBodies(),
    refuseUnstorableText("json"),
    assumedStateCheck(deps, assumptionKinds),
    paymentGate({ ...deps, routes: table, baseUrl: deps.config.baseUrl, loadServer }),
  );
  for (const route of x402Routes) {
    router.on(route.method, route.path.slice("/x402".length), (c) => dispatch(c, route));
  }

  const llms = new Hono<AppEnv>();
  llms.get("/", (c) =>
    c.text(llmsTxt({ deps, routes: x402Routes, refusal }), 200, {
      "content-type": "text/markdown; charset=utf-8",
    }),
  );
  return { router, llms };
}
