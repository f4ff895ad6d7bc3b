import { decodePaymentRequiredHeader } from "@x402/core/http";
import type { HTTPAdapter, x402HTTPResourceServer } from "@x402/core/server";
import type { Deps } from "../../deps.ts";
import type { AppError } from "../../errors.ts";
import { formatUsd } from "../../platform/payments/prices.ts";
import { loadBazaar } from "./bazaar.ts";
import type { FreeReadCatalog } from "./free-read-access.ts";
import type { PaidRoutes, RoutePattern } from "./paid-routes.ts";
import { paymentsUnavailable } from "./payment-responses.ts";
import type { X402Route } from "./route.ts";

export type Catalog = Awaited<ReturnType<typeof buildCatalog>>;

/** A route path as clients read it: `/x402/problems/:id` → `/x402/problems/{id}`. */
const templated = (path: string) => path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");

/** Why a paid route cannot be called now (the error calling it answers), or undefined. */
export type Refusal = (pattern: RoutePattern) => AppError | undefined;

/**
 * The catalog of `GET /x402`: each paid route as a Bazaar `/discovery/resources` item, plus
 * `method`, `path` and `price`. `accepts` and `extensions` come from the route's own 402
 * challenge, so they cannot drift. Templated paths have `{name}` placeholders; their challenge is
 * asked for the path parameters' example, which its Bazaar extension then shows (a placeholder
 * would fail the parameters' own schema). Built once (it asks the facilitator); `catalogPage`
 * adds what can run at the time of each request. `freeRoutes` lists the free reads beside them,
 * with the two ways to call them.
 */
export async function buildCatalog(args: {
  deps: Pick<Deps, "config" | "payments">;
  routes: PaidRoutes;
  loadServer: () => Promise<x402HTTPResourceServer>;
  lastUpdated: Date;
  /** The free reads, with how to call them (session token or wallet sign-in). */
  free: FreeReadCatalog;
}) {
  const { deps } = args;
  await loadBazaar();
  const server = deps.payments.kind === "ready" ? await args.loadServer() : undefined;
  const items = [];
  for (const [pattern, route] of Object.entries(args.routes)) {
    const [method = "GET", template = ""] = pattern.split(" ");
    const path = templated(template);
    const asked = route.examplePath ?? path;
    const challenge = server ? await challengeFor(server, deps.config.baseUrl, method, asked) : undefined;
    const extensions = challenge?.extensions ?? route.extensions;
    items.push({
      pattern: pattern as RoutePattern,
      resource: `${deps.config.baseUrl}${path}`,
      type: "http",
      x402Version: challenge?.x402Version ?? 2,
      accepts: challenge?.accepts ?? [],
      lastUpdated: args.lastUpdated.toISOString(),
      description: route.description,
      mimeType: "application/json",
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
    freeRoutes: args.free,
    paymentsAvailable: server !== undefined,
  };
}

/**
 * The catalog as a client reads it now: every item says whether it can be called (`available`)
 * and, when not, the `code` and reason calling it answers with — the same error, before any
 * payment. A route that cannot be called offers no payment (`accepts: []`), as it answers no 402.
 * These are patchbay's additions to the Bazaar item, beside `method`, `path` and `price`.
 */
export function catalogPage(catalog: Catalog, refusal: Refusal) {
  const items = catalog.items.map(({ pattern, ...item }) => {
    const refused = refusal(pattern) ?? (catalog.paymentsAvailable ? undefined : paymentsUnavailable());
    if (!refused) return { ...item, available: true };
    return {
      ...item,
      accepts: [],
      available: false,
      unavailableCode: refused.code,
      unavailableReason: refused.message,
    };
  });
  return { ...catalog, items };
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

/**
 * `/llms.txt`: the agent flow of spec part 1B in plain words, with this server's routes, prices
 * and what cannot run here now. From the same route table as the gate and the catalog.
 */
export function llmsTxt(args: {
  deps: Pick<Deps, "config" | "payments">;
  routes: readonly X402Route[];
  refusal: (route: X402Route) => AppError | undefined;
}): string {
  const base = args.deps.config.baseUrl;
  const network = args.deps.payments.kind === "ready" ? args.deps.payments.network : "unavailable";
  const lines = args.routes.map((r) => {
    const price = r.paid ? formatUsd(args.deps.payments.prices[r.paid.price]) : "free";
    const auth = r.auth ? ` (${r.auth})` : "";
    const refused = args.refusal(r);
    const unavailable = refused
      ? ` **Unavailable on this server**: ${refused.message} Calling it answers ${refused.status} \`${refused.code}\` before any payment.`
      : "";
    return `- \`${r.method} ${templated(r.path)}\` — ${price}${auth}: ${r.description}${unavailable}`;
  });
  return `# patchbay

> patchbay watches production software and fixes it. Autonomous agents use it by paying per
> call with x402 (USDC, \`exact\` scheme, network ${network}) on the /x402/ routes. No account,
> no API key: your wallet is your identity.

## The flow

1. Discover: \`GET ${base}/x402\` (free) lists every paid route with its price, payment
   requirements, input and output JSON schemas with an example answer (Bazaar
   \`/discovery/resources\` items), and whether it can run on this server (\`available\`).
2. Sign up: \`POST ${base}/x402/signup\` creates an organisation owned by the paying wallet, a
   first environment and a publishable key (\`pk_…\`). One organisation per wallet.
3. Send OpenTelemetry to \`${base}/v1/traces\`, \`/v1/logs\`, \`/v1/metrics\` (OTLP/HTTP, protobuf
   or JSON, gzip welcome) with \`Authorization: Bearer pk_…\`. Sending telemetry is free.
4. Start guided onboarding with \`POST ${base}/x402/onboard\`: it returns a session token once;
   poll \`GET ${base}/x402/onboard/{sessionId}\` for free (see "Free reads"). When a human must
   act (claiming the organisation), the session is \`awaiting-operator\` and carries an
   \`approvalUrl\`: give it to your operator.
5. Read your problems (paid), start a remediation of one, then poll
   \`GET ${base}/x402/remediations/{id}\` for free until \`prUrl\` is set; its thread is JSON at
   \`threadApiUrl\` (\`GET ${base}/x402/remediations/{id}/thread\`, free).

## Free reads

Onboarding sessions, remediations and their threads are free to read for your organisation, two
ways:

- \`Authorization: Bearer <session token>\` (from \`POST /x402/onboard\`; it lasts 24 hours).
- Your paying wallet signed in, with x402's \`sign-in-with-x\` extension (it never expires): call
  the route with neither header; the 402 answer's \`PAYMENT-REQUIRED\` offers nothing to pay
  (\`accepts: []\`) and a CAIP-122 challenge in \`extensions["sign-in-with-x"]\`. Sign it (EIP-4361,
  on the chain listed) and repeat the call with the signed payload, base64 JSON, in the
  \`SIGN-IN-WITH-X\` header. Each challenge signs in once, within 5 minutes, for that URL. With
  \`@x402/fetch\`, register \`createSIWxClientExtension\` from \`@x402/extensions/sign-in-with-x\`
  on your x402 client and it does this by itself.

## Rules

- Pay with any x402 v2 client (e.g. \`@x402/fetch\`): an unpaid call answers 402 with a
  \`PAYMENT-REQUIRED\` header; repeat it with \`PAYMENT-SIGNATURE\`. You are charged only when the
  route answers below 400; the receipt is in \`PAYMENT-RESPONSE\`.
- Every answer carries \`next_actions\`, best first: follow the first unless your operator says
  otherwise. Each has \`action\`, \`method\`, \`href\`, \`price\`, \`description\` and maybe \`body\`.
- When an action has \`x_assumed_state\`, send it back unchanged on that call (header
  \`X-Assumed-State\` or body field \`x_assumed_state\`). If the state it assumed has changed, the
  call is refused with 409 \`stale_assumed_state\` and fresh \`next_actions\`, and nothing is charged.
- A session token or a wallet sign-in never pays for anything; they only open the free reads.
- Sending the same signed payment again never charges twice: you get the first answer back.
- Errors are \`application/problem+json\` with a stable \`code\` and, where useful, \`next_actions\`.
- A route this server cannot run now (for instance a remediation while no model is configured)
  is marked unavailable below and in the catalog (\`available: false\`, \`unavailableCode\`,
  \`unavailableReason\`). Calling it answers 503 with that code before any payment is asked for,
  and no \`next_actions\` suggests it.

## Routes

${lines.join("\n")}

## More

- Payments, prices, bodies, states and error codes: docs/x402.md in the patchbay repository.
- Humans use the REST API at ${base}/api/v1 (OpenAPI: ${base}/api/v1/openapi.json).
`;
}

/**
 * The start-up banner's list of paid routes, one a line: method, path and price from the same
 * table and configuration as the gate; a route that cannot run here now names its error code,
 * explained once below the list.
 */
export function paidRoutesBanner(args: {
  deps: Pick<Deps, "payments">;
  routes: readonly X402Route[];
  refusal: (route: X402Route) => AppError | undefined;
}): string[] {
  const paid = args.routes.filter((r) => r.paid !== undefined);
  const names = paid.map((r) => `${r.method.padEnd(4)} ${templated(r.path)}`);
  const width = Math.max(...names.map((n) => n.length));
  const reasons = new Map<string, string>();
  const lines = paid.map((route, i) => {
    const price = route.paid ? formatUsd(args.deps.payments.prices[route.paid.price]) : "free";
    const refused = args.refusal(route);
    if (refused) reasons.set(refused.code, refused.message);
    const line = `    ${(names[i] ?? "").padEnd(width)}  ${price.padStart(7)}`;
    return refused ? `${line}   unavailable: ${refused.code}` : line;
  });
  return [...lines, ...[...reasons].map(([code, message]) => `    ${code}: ${message}`)];
}
