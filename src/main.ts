import type { Server } from "node:http";
import type { ServerType } from "@hono/node-server";
import { serve } from "@hono/node-server";
import { createApp } from "./app.ts";
import type { Config } from "./config.ts";
import { sweepSignInNonces } from "./features/agent-onboarding/sweep-sign-in-nonces.ts";
import { sweepOAuthModels } from "./features/oauth/adapter.ts";
import { registerRemediationWorker } from "./features/remediations/run-step.ts";
import { watchMergedFixes } from "./features/remediations/watch-fix.ts";
import { registerTaskWorker } from "./features/tasks/task-queue.ts";
import { sweepWebSessions } from "./features/web-sessions/sweep-web-sessions.ts";
import { registerWebhookWorker } from "./features/webhooks/index.ts";
import { sweepIdempotencyKeys } from "./platform/db/claim.ts";
import type { Db } from "./platform/db/client.ts";
import type { PgliteOpening } from "./platform/db/pglite-open.ts";
import { createLogger } from "./platform/logging/logger.ts";
import { devChainBanner } from "./platform/payments/payments.ts";
import { prepareToServe } from "./serve-early.ts";
import { buildDeps, type DemoTenant } from "./startup.ts";
import { cliCommand } from "./transports/cli/invocation.ts";
import { drainable } from "./transports/http/drain.ts";
import { paidRoutesBanner } from "./transports/x402/catalog.ts";
import { sweepX402Payments } from "./transports/x402/payment-lock.ts";
import { x402Routes } from "./transports/x402/router.ts";

/**
 * `patchbay serve`: config → deps → HTTP → background sweeps; drains on SIGTERM/SIGINT.
 * `opening` is what `prepareToServe(config)` started, when the caller ran it before loading this.
 */
export async function runServer(
  config: Config,
  opening: PgliteOpening | undefined = prepareToServe(config),
): Promise<void> {
  const logger = createLogger({
    level: config.logLevel,
    pretty: config.nodeEnv === "development" && process.stdout.isTTY,
  });
  // A promise rejected with nobody listening (a library's background work, typically a lost
  // connection) would end the process by default; the service logs it and keeps serving. The
  // fault suite fails on any such line.
  process.on("unhandledRejection", (reason) => logger.error({ err: reason }, "unhandled promise rejection"));
  const deps = await buildDeps(config, logger, opening);
  await registerTaskWorker(deps);
  await registerRemediationWorker(deps);
  const stopWebhookDispatch = await registerWebhookWorker(deps);
  const app = createApp(deps);

  const server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, () => resolve(s));
  });
  const drain = drainable(server as Server);
  // The sweeps' timers, once set.
  const timers: NodeJS.Timeout[] = [];
  // From here on a signal drains and stops, also while the job queue is still starting.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down: no new connections, finishing in-flight requests");
    for (const timer of timers) clearInterval(timer);
    // Stop accepting, let in-flight requests finish (bounded), then close the database.
    await drain({ settleMs: 250, timeoutMs: 10_000 });
    stopWebhookDispatch();
    await deps.jobs.stop({ timeoutMs: 10_000 });
    await deps.telemetry.close();
    await deps.egress.close();
    await deps.payments.close();
    await deps.database.close();
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  // The job queue starts once the service listens: a request that enqueues meanwhile waits for it
  // (jobs.send). pg-boss creates its schema and queues at start; two instances doing so at once
  // can deadlock inside PostgreSQL, so that is serialised under the migrations' advisory lock.
  await deps.database.withStartupLock(() => deps.jobs.start());
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  const baseUrl = config.baseUrl.replace(`:${config.port}`, `:${port}`);
  logger.info({ baseUrl, database: deps.database.kind }, "patchbay is serving");
  printBanner(baseUrl, deps.demo);
  if (deps.payments.kind === "unavailable") {
    logger.info({ reason: deps.payments.reason }, "x402 payments unavailable: paid routes answer 503");
  }
  const paidRoutes = paidRoutesBanner({
    deps,
    routes: x402Routes,
    refusal: (route) => route.unavailable?.(deps),
  });
  const chainBanner = devChainBanner(deps.payments, baseUrl, paidRoutes);
  if (chainBanner.length > 0) process.stdout.write(`\n${chainBanner.join("\n")}\n`);

  const sweeps: [string, (db: Db, now: Date) => Promise<unknown>][] = [
    ["idempotency", sweepIdempotencyKeys],
    ["x402 payment", sweepX402Payments],
    ["x402 sign-in challenge", sweepSignInNonces],
    ["web session", sweepWebSessions],
    ["OAuth state", sweepOAuthModels],
  ];
  const sweep = setInterval(
    () => {
      for (const [name, run] of sweeps) {
        run(deps.db, deps.clock()).catch((err: unknown) => logger.warn({ err }, `${name} sweep failed`));
      }
    },
    60 * 60 * 1000,
  );
  sweep.unref();
  timers.push(sweep);
  // Merged fixes whose problem nobody reads still get their verdict (regressed, or fixed).
  const watch = setInterval(
    () => void watchMergedFixes(deps).catch((err: unknown) => logger.warn({ err }, "fix watch failed")),
    10 * 60 * 1000,
  );
  watch.unref();
  timers.push(watch);
}

/**
 * Printed on every start: where the service answers. The first start of an empty database adds
 * the demo organisation's ids and one-time secrets (never shown again).
 */
function printBanner(baseUrl: string, demo: DemoTenant | undefined) {
  const cli = cliCommand();
  const first = demo
    ? [
        "  patchbay is ready (first run: a demo organisation was created)",
        `  Base URL:        ${baseUrl}`,
        `  Organisation:    ${demo.organizationId}`,
        `  Environment:     ${demo.environmentId} (production)`,
        `  Owner API key:   ${demo.apiKey}   (shown once — store it now)`,
        `  Web UI:          ${baseUrl}/login`,
        `  Owner sign-in:   ${demo.email} / ${demo.password}   (shown once; change it with`,
        `                   ${cli} admin set-password --email ${demo.email})`,
      ]
    : [
        "  patchbay is ready",
        `  Base URL:        ${baseUrl}`,
        `  Web UI:          ${baseUrl}/login`,
        `  Set a password:  ${cli} admin set-password --email <email>`,
      ];
  process.stdout.write(
    [
      "",
      ...first,
      "",
      `  CLI:             ${cli} login --base-url ${baseUrl}   (approve in the browser)`,
      `  MCP clients:     ${baseUrl}/mcp   (they sign in by themselves: OAuth 2.1)`,
      ...(demo ? [`  Try: curl -H "Authorization: Bearer ${demo.apiKey}" ${baseUrl}/api/v1/me`] : []),
      `  API reference:   ${baseUrl}/api/v1/docs`,
      "",
    ].join("\n"),
  );
}
