import { eq } from "drizzle-orm";
import { describe, expect, type Tenant, test } from "../../../../test/fixtures.ts";
import {
  createKey,
  hexId,
  jsonAttributes,
  jsonLog,
  jsonLogs,
  jsonSpan,
  jsonTraces,
  nanosAgo,
  sendJson,
} from "../../../../test/lib/telemetry.ts";
import { problems } from "../../../platform/db/schema/problems.ts";
import { createPostgresTelemetryStore } from "../postgres-telemetry-store.ts";
import { identifyProblem } from "./fingerprint.ts";
import { DEFERRED_LOG_WAIT_MS } from "./record-problems.ts";
import type { Problem, ProblemPage } from "./schemas.ts";

function priceLine(): never {
  throw new TypeError("Cannot read properties of undefined (reading 'sku')");
}
const thrown = (fn: () => never): Error => {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
};

/** A request's failed server span with its exception, and its ERROR log on the same span. */
function failedRequest(ids = { traceId: hexId(16), spanId: hexId(8) }) {
  const error = thrown(priceLine);
  const span = jsonSpan({
    ...ids,
    status: { code: 2 },
    events: [
      {
        name: "exception",
        timeUnixNano: nanosAgo(2),
        attributes: jsonAttributes({
          "exception.type": error.name,
          "exception.message": error.message,
          "exception.stacktrace": error.stack ?? "",
        }),
      },
    ],
  });
  const log = jsonLog({
    ...ids,
    severityNumber: 17,
    severityText: "ERROR",
    body: { stringValue: "checkout failed" },
  });
  return { span, log, ...ids };
}

const listOf = async (tenant: Tenant) => {
  const res = await tenant.api.get(`/environments/${tenant.environmentId}/problems`);
  expect(res.status).toBe(200);
  return ((await res.json()) as ProblemPage).items;
};
const detail = async (tenant: Tenant, id: string) => {
  const res = await tenant.api.get(`/environments/${tenant.environmentId}/problems/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Problem;
};

/** A moment at which every deferred log has waited long enough. */
const afterTheWait = () => new Date(Date.now() + DEFERRED_LOG_WAIT_MS + 1_000);

describe("error logs of a failing span", () => {
  test("a log after its span's exception is evidence on the span's problem, not a problem", async ({
    app,
    owner,
  }) => {
    const { key } = await createKey(owner);
    const request = failedRequest();
    await sendJson(app, "traces", key, jsonTraces([request.span], "shop"));
    await sendJson(app, "logs", key, jsonLogs([request.log], "shop"));

    const items = await listOf(owner);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ exceptionType: "TypeError", count: 1 });
    const problem = await detail(owner, items[0]?.id ?? "");
    expect(problem).toMatchObject({
      logCount: 1,
      sampleLogMessage: "checkout failed",
      sampleTraceIds: [request.traceId],
      stackTrace: expect.stringContaining("at priceLine"),
    });
  });

  test("a log before its span waits for it, then becomes evidence on the span's problem", async ({
    app,
    owner,
    deps,
  }) => {
    const { key } = await createKey(owner);
    const request = failedRequest();
    await sendJson(app, "logs", key, jsonLogs([request.log], "shop"));
    // Waiting for its span: no problem of its own in the meantime.
    expect(await listOf(owner)).toEqual([]);
    await sendJson(app, "traces", key, jsonTraces([request.span], "shop"));
    const [problem] = await listOf(owner);
    expect(problem).toMatchObject({ exceptionType: "TypeError", count: 1 });

    expect(await deps.telemetry.store.groupDeferredLogs(afterTheWait())).toBeGreaterThanOrEqual(1);
    expect(await listOf(owner)).toHaveLength(1);
    expect(await detail(owner, problem?.id ?? "")).toMatchObject({ count: 1, logCount: 1 });
  });

  test("log and span ingested at once link whichever commits first", async ({ app, owner, deps }) => {
    const { key } = await createKey(owner);
    const requests = [failedRequest(), failedRequest(), failedRequest()];
    await Promise.all([
      sendJson(
        app,
        "logs",
        key,
        jsonLogs(
          requests.slice(0, 2).map((r) => r.log),
          "shop",
        ),
      ),
      sendJson(
        app,
        "traces",
        key,
        jsonTraces(
          requests.map((r) => r.span),
          "shop",
        ),
      ),
      sendJson(
        app,
        "logs",
        key,
        jsonLogs(
          requests.slice(2).map((r) => r.log),
          "shop",
        ),
      ),
    ]);
    await deps.telemetry.store.groupDeferredLogs(afterTheWait());
    const items = await listOf(owner);
    expect(items).toHaveLength(1);
    expect(await detail(owner, items[0]?.id ?? "")).toMatchObject({ count: 3, logCount: 3 });
  });

  test("two instances grouping the deferred logs group each once", async ({ app, owner, deps }) => {
    const { key } = await createKey(owner);
    const logs = Array.from({ length: 5 }, () =>
      jsonLog({
        traceId: hexId(16),
        spanId: hexId(8),
        severityNumber: 17,
        body: { stringValue: "inventory sync failed for sku 4411" },
      }),
    );
    await sendJson(app, "logs", key, jsonLogs(logs, "inventory"));
    const other = createPostgresTelemetryStore({
      database: deps.database,
      logger: deps.logger,
      clock: deps.clock,
    });
    const now = afterTheWait();
    const grouped = await Promise.all([
      deps.telemetry.store.groupDeferredLogs(now),
      other.groupDeferredLogs(now),
    ]);
    other.close();
    expect(grouped[0] + grouped[1]).toBeGreaterThanOrEqual(5);
    // The spans never had an exception: after the wait the logs group on their own, once each.
    expect(await listOf(owner)).toMatchObject([
      { exceptionType: "ERROR log", title: "ERROR log: inventory sync failed for sku <n>", count: 5 },
    ]);
    expect(await deps.telemetry.store.groupDeferredLogs(now)).toBe(0);
  });

  test("logs without trace context group on their own at once", async ({ app, owner }) => {
    const { key } = await createKey(owner);
    const request = failedRequest();
    await sendJson(app, "traces", key, jsonTraces([request.span], "shop"));
    const untraced = jsonLog({ severityNumber: 17, body: { stringValue: "checkout failed" } });
    // Another span of the same trace is another failure.
    const otherSpan = { ...request.log, spanId: hexId(8) };
    await sendJson(app, "logs", key, jsonLogs([untraced], "shop"));
    const items = await listOf(owner);
    expect(items.map((p) => [p.exceptionType, p.count]).sort()).toEqual([
      ["ERROR log", 1],
      ["TypeError", 1],
    ]);
    await sendJson(app, "logs", key, jsonLogs([otherSpan], "shop"));
    expect((await listOf(owner)).find((p) => p.exceptionType === "ERROR log")?.count).toBe(1);
  });
});

describe("problems across a change of the message masks", () => {
  test("a problem grouped by the first masks continues under the new fingerprint, status and all", async ({
    app,
    owner,
    deps,
  }) => {
    const { key } = await createKey(owner);
    const facts = (customer: string) => ({
      service: "billing",
      type: "ERROR log",
      message: `payment declined for customer ${customer}`,
    });
    const first = identifyProblem(facts("usr_4rppz2"));
    const second = identifyProblem(facts("usr_c4r1nt"));
    // As the first masks stored them: one problem per customer, one of them ignored by a person.
    const stored = (id: string, fingerprint: string, title: string, status: "ignored" | "open") => ({
      id,
      organizationId: owner.organizationId,
      environmentId: owner.environmentId,
      fingerprint,
      title,
      culprit: "billing",
      serviceName: "billing",
      exceptionType: "ERROR log",
      status,
      revision: status === "ignored" ? 2 : 1,
      count: 4,
      firstSeen: new Date(Date.now() - 3_600_000),
      lastSeen: new Date(Date.now() - 60_000),
      sampleTraceIds: [],
    });
    await deps.db
      .insert(problems)
      .values([
        stored(
          "prb_legacy_one",
          first.legacyFingerprint ?? "",
          "ERROR log: payment declined for customer usr_<n>rppz2",
          "ignored",
        ),
        stored(
          "prb_legacy_two",
          second.legacyFingerprint ?? "",
          "ERROR log: payment declined for customer usr_c4r1nt",
          "open",
        ),
      ]);

    const log = (customer: string) =>
      jsonLogs(
        [jsonLog({ severityNumber: 17, body: { stringValue: `payment declined for customer ${customer}` } })],
        "billing",
      );
    await sendJson(app, "logs", key, log("usr_4rppz2"));
    await sendJson(app, "logs", key, log("usr_c4r1nt"));
    await sendJson(app, "logs", key, log("usr_zz9k2"));

    const rows = await deps.db.select().from(problems).where(eq(problems.environmentId, owner.environmentId));
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get("prb_legacy_one")).toMatchObject({
      fingerprint: first.fingerprint,
      title: "ERROR log: payment declined for customer <id>",
      status: "ignored",
      revision: 2,
      count: 7,
    });
    // Folded into the first: it stops growing and ages out with the retention.
    expect(byId.get("prb_legacy_two")).toMatchObject({ fingerprint: second.legacyFingerprint, count: 4 });
    expect(rows).toHaveLength(2);
  });
});
