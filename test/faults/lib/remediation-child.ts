// One patchbay instance for the remediation fault scenario, in its own process so the test can
// SIGKILL it (spawned by `spawnRemediationInstance`; `node test/faults/lib/remediation-child.ts`).
// It is `patchbay serve` as src/main.ts builds it — `buildDeps`, the HTTP app, the real remediation
// worker registration, jobs started under the start-up lock — with three seams a spawned server
// has no setting for:
// - the model: the scripted conversation of remediation-instance.ts, answering from where the
//   conversation is, so an instance that takes a run over continues it;
// - the evidence: the fixture problem, whose `search_logs` (HELD_TOOL) never returns on the first
//   instance to call it (FAULTS_HOLD_FILE, created exclusively), so the kill lands mid-step;
// - the job queue: the remediation queue expires a run after FAULTS_JOB_EXPIRY_SECONDS, polled
//   every 0.5 s with maintenance every second, as the other queue tests do. The service's queue
//   gives a step 65 minutes (a whole agent loop is one step) and runs maintenance every minute.
import { writeFileSync } from "node:fs";
import { serve } from "@hono/node-server";
import { createApp } from "../../../src/app.ts";
import { loadConfig } from "../../../src/config.ts";
import type { Deps } from "../../../src/deps.ts";
import type { RemediationEvidence } from "../../../src/features/remediations/evidence.ts";
import { registerRemediationWorker } from "../../../src/features/remediations/run-step.ts";
import { jobQueues, REMEDIATION_QUEUE } from "../../../src/features/tasks/task-queue.ts";
import { createLogger } from "../../../src/platform/logging/logger.ts";
import { createJobs, type Jobs } from "../../../src/platform/queue/queue.ts";
import { buildDeps } from "../../../src/startup.ts";
import { fixtureEvidence } from "../../lib/remediation.ts";
import { conversationTurn, scriptedModel } from "../../lib/scripted-model.ts";
import { HELD_TOOL, remediationScript, reportFaultEvent } from "./remediation-instance.ts";

const environmentId = required("FAULTS_ENVIRONMENT_ID");
const holdFile = required("FAULTS_HOLD_FILE");
const expireInSeconds = Number(required("FAULTS_JOB_EXPIRY_SECONDS"));

const config = loadConfig(process.env);
if (config.database.kind !== "postgres") throw new Error("the fault suite runs on PostgreSQL");
const logger = createLogger({ level: config.logLevel, pretty: false });
process.on("unhandledRejection", (reason) => logger.error({ err: reason }, "unhandled promise rejection"));
const base = await buildDeps(config, logger);

/** Only the first instance to get here holds its call: the file is created exclusively. */
const takeHold = (): boolean => {
  try {
    writeFileSync(holdFile, String(process.pid), { flag: "wx" });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
};
const fixture = fixtureEvidence(environmentId);
const evidence: RemediationEvidence = {
  getProblem: (scope, id) => fixture.getProblem(scope, id),
  async getTrace(scope, traceId) {
    reportFaultEvent({ event: "evidence", tool: "get_trace" });
    return fixture.getTrace(scope, traceId);
  },
  async searchLogs(scope, query) {
    reportFaultEvent({ event: "evidence", tool: "search_logs" });
    if (takeHold()) {
      reportFaultEvent({ event: "held", tool: HELD_TOOL });
      // Never settles: the step stays in flight, uncommitted, until the test kills this process.
      return new Promise(() => {});
    }
    return fixture.searchLogs(scope, query);
  },
};

const jobs = createJobs({
  database: base.database,
  postgresUrl: config.database.url,
  logger,
  queues: { ...jobQueues, [REMEDIATION_QUEUE]: { ...jobQueues[REMEDIATION_QUEUE], expireInSeconds } },
  pollingIntervalSeconds: 0.5,
  maintenanceIntervalSeconds: 1,
});
/** The queue, reporting each remediation job this instance starts. */
const reportingJobs: Jobs = {
  ...jobs,
  work: (queue, handler, opts) =>
    jobs.work(
      queue,
      async (job) => {
        reportFaultEvent({ event: "job", stepSeq: job.data.stepSeq });
        await handler(job);
      },
      opts,
    ),
};
const model = scriptedModel(
  remediationScript().map((turn) => (options: Parameters<typeof turn>[0]) => {
    reportFaultEvent({ event: "turn", turn: conversationTurn(options) });
    return turn(options);
  }),
  { turnOf: conversationTurn },
).model;
const deps: Deps = {
  ...base,
  jobs: reportingJobs,
  languageModel: model,
  remediation: { ...base.remediation, evidence },
};

await registerRemediationWorker(deps);
await deps.database.withStartupLock(() => deps.jobs.start());
const server = serve({ fetch: createApp(deps).fetch, port: config.port, hostname: config.host });

process.on("SIGTERM", () => {
  void (async () => {
    server.close();
    await deps.jobs.stop({ timeoutMs: 5_000 });
    await deps.database.close();
    process.exit(0);
  })();
});

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}
