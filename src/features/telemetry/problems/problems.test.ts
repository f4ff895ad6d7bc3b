import { and, eq } from "drizzle-orm";
import { describe, expect, newTenant, type Tenant, test } from "../../../../test/fixtures.ts";
import { client, problem } from "../../../../test/http.ts";
import {
  createKey,
  JSON_TYPE,
  jsonAttributes,
  jsonLog,
  jsonLogs,
  jsonSpan,
  jsonTraces,
  keyWith,
  nanosAgo,
  post,
  sendJson,
} from "../../../../test/lib/telemetry.ts";
import { permissions } from "../../../permissions.ts";
import { apiKeys } from "../../../platform/db/schema/api-keys.ts";
import { auditLog } from "../../../platform/db/schema/audit-log.ts";
import { problems } from "../../../platform/db/schema/problems.ts";
import { remediations } from "../../../platform/db/schema/remediations.ts";
import { memberships } from "../../../platform/db/schema/users.ts";
import { generateApiKeySecret } from "../../api-keys/key-secret.ts";
import { DEFAULT_REMEDIATION_BUDGETS } from "../../remediations/schemas.ts";
import { sweepTelemetry } from "../sweep-telemetry.ts";
import type { Problem, ProblemPage } from "./schemas.ts";

class OrderNotFound extends Error {
  override name = "OrderNotFound";
}

function loadOrder(id: number): never {
  throw new OrderNotFound(`order ${id} does not exist`);
}
function parseQuantity(raw: string): never {
  throw new TypeError(`quantity "${raw}" is not a number`);
}
const thrown = (fn: () => never): Error => {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
};

/** A failed server span carrying `error` as an exception event. */
function failedSpan(error: Error, overrides: Record<string, unknown> = {}) {
  return jsonSpan({
    kind: 2,
    status: { code: 2, message: error.message },
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
    ...overrides,
  });
}

const listOf = async (tenant: Tenant, query = "") => {
  const res = await tenant.api.get(`/environments/${tenant.environmentId}/problems${query}`);
  expect(res.status).toBe(200);
  return (await res.json()) as ProblemPage;
};

const detail = async (tenant: Tenant, id: string) => {
  const res = await tenant.api.get(`/environments/${tenant.environmentId}/problems/${id}`);
  expect(res.status).toBe(200);
  return { problem: (await res.json()) as Problem, etag: res.headers.get("etag") };
};

describe("problem detection", () => {
  test("exceptions group by fingerprint; counts grow; sample trace ids resolve to stored traces", async ({
    app,
    owner,
  }) => {
    const { key } = await createKey(owner);
    const first = failedSpan(thrown(() => loadOrder(41)));
    const second = failedSpan(thrown(() => loadOrder(42)));
    await sendJson(app, "traces", key, jsonTraces([first, second, jsonSpan()], "shop"));
    const third = failedSpan(thrown(() => loadOrder(9_000)));
    const other = failedSpan(thrown(() => parseQuantity("two")));
    await sendJson(app, "traces", key, jsonTraces([third, other], "shop"));
    // Error logs are occurrences too; without a stack their masked message groups them.
    await sendJson(
      app,
      "logs",
      key,
      jsonLogs(
        [
          jsonLog({
            severityNumber: 17,
            body: { stringValue: "payment 4242 failed for usr_2a4c6e8g0j2l4n6q" },
          }),
          jsonLog({
            severityNumber: 17,
            body: { stringValue: "payment 17 failed for usr_9z8y7x6w5v4u3t2s" },
          }),
          jsonLog({ severityNumber: 9, body: { stringValue: "all fine" } }),
        ],
        "shop",
      ),
    );

    const { items } = await listOf(owner);
    expect(items).toHaveLength(3);
    const byType = (type: string) => items.find((p) => p.exceptionType === type);
    expect(byType("OrderNotFound")).toMatchObject({
      count: 3,
      status: "open",
      service: "shop",
      title: "OrderNotFound: order <n> does not exist",
      culprit: expect.stringMatching(/^loadOrder \(problems\/problems\.test\.ts\)$/),
      revision: 1,
      remediationId: null,
      remediationState: null,
    });
    expect(byType("TypeError")).toMatchObject({
      count: 1,
      title: 'TypeError: quantity "two" is not a number',
    });
    expect(byType("ERROR log")).toMatchObject({ count: 2, title: "ERROR log: payment <n> failed for <id>" });

    const id = byType("OrderNotFound")?.id ?? "";
    expect(id).toMatch(/^prb_/);
    const { problem: order, etag } = await detail(owner, id);
    expect(etag).toBe('"1"');
    expect(order.sampleTraceIds).toHaveLength(3);
    expect(new Set(order.sampleTraceIds)).toEqual(new Set([first.traceId, second.traceId, third.traceId]));
    expect(order.sampleMessage).toBe("order 9000 does not exist");
    expect(order.stackTrace).toContain("at loadOrder");
    expect(order.frames[0]).toMatchObject({ function: "loadOrder", inApp: true });
    for (const traceId of order.sampleTraceIds) {
      const trace = await owner.api.get(`/environments/${owner.environmentId}/traces/${traceId}`);
      expect(trace.status, traceId).toBe(200);
    }
    expect(Date.parse(order.lastSeen)).toBeGreaterThanOrEqual(Date.parse(order.firstSeen));
  });

  test("a retried batch does not count its exceptions again; new spans in it do count", async ({
    app,
    owner,
    deps,
  }) => {
    const { key } = await createKey(owner);
    const stored = failedSpan(thrown(() => loadOrder(1)));
    const batch = jsonTraces([stored], "retry");
    await sendJson(app, "traces", key, batch);
    await sendJson(app, "traces", key, batch);
    const fresh = failedSpan(thrown(() => loadOrder(2)));
    // One span already stored and one new: the COPY fails on the first, the slow path keeps the second.
    await sendJson(app, "traces", key, jsonTraces([stored, fresh], "retry"));
    const { items } = await listOf(owner, "?service=retry");
    expect(items).toMatchObject([{ count: 2 }]);
    const rows = await deps.db.select().from(problems).where(eq(problems.environmentId, owner.environmentId));
    expect(rows).toHaveLength(1);
  });

  test("a person's remediation request looks the stored problem up first: 404 unknown, 503 without a model", async ({
    app,
    owner,
  }) => {
    const { key } = await createKey(owner);
    await sendJson(app, "traces", key, jsonTraces([failedSpan(thrown(() => loadOrder(9)))], "remediate"));
    const [stored] = (await listOf(owner, "?service=remediate")).items;
    const start = (problemId: string) =>
      owner.api.post(`/environments/${owner.environmentId}/problems/${problemId}/remediations`, {});
    // The lookup reads through the telemetry store's own handle: on PGlite (one connection) it
    // must not run inside the run's transaction, or it would wait for it forever.
    const known = await start(String(stored?.id));
    expect(known.status).toBe(503);
    expect((await problem(known)).code).toBe("model_not_configured");
    const unknown = await start("prb_nope");
    expect(unknown.status).toBe(404);
    expect((await problem(unknown)).code).toBe("not_found");
  });

  test("refused requests and refused spans leave no problem behind", async ({ app, owner }) => {
    const { key } = await createKey(owner);
    const text = JSON.stringify(jsonTraces([failedSpan(thrown(() => loadOrder(3)))], "strict"));
    const truncated = await post(app, "/v1/traces", key, text.slice(0, text.length - 20), JSON_TYPE);
    expect(truncated.status).toBe(400);
    // Partial success: the span with a bad trace id is refused, its exception with it.
    const badId = failedSpan(
      thrown(() => parseQuantity("x")),
      { traceId: "00".repeat(16) },
    );
    const good = failedSpan(thrown(() => loadOrder(4)));
    const res = await post(
      app,
      "/v1/traces",
      key,
      JSON.stringify(jsonTraces([badId, good], "strict")),
      JSON_TYPE,
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ partialSuccess: { rejectedSpans: "1" } });
    const { items } = await listOf(owner, "?service=strict");
    expect(items).toMatchObject([{ exceptionType: "OrderNotFound", count: 1 }]);
  });
});

describe("problem status", () => {
  test("resolve with If-Match; a new occurrence regresses it, a late one does not; ignored stays ignored", async ({
    app,
    owner,
    deps,
  }) => {
    const { key } = await createKey(owner);
    await sendJson(app, "traces", key, jsonTraces([failedSpan(thrown(() => loadOrder(5)))], "status"));
    const [{ id } = { id: "" }] = (await listOf(owner, "?service=status")).items;
    const path = `/environments/${owner.environmentId}/problems/${id}`;

    expect((await problem(await owner.api.patch(path, { status: "resolved" }))).code).toBe(
      "precondition_required",
    );
    const noKey = await owner.api.patch(path, { status: "resolved" }, { revision: 1, idempotencyKey: false });
    expect((await problem(noKey)).code).toBe("idempotency_key_required");
    const regressed = await owner.api.patch(path, { status: "regressed" }, { revision: 1 });
    expect(regressed.status).toBe(400);
    expect((await problem(regressed)).code).toBe("invalid_request");

    const resolved = await owner.api.patch(
      path,
      { status: "resolved" },
      { revision: 1, idempotencyKey: "resolve-1" },
    );
    expect(resolved.status).toBe(200);
    expect(resolved.headers.get("etag")).toBe('"2"');
    const body = (await resolved.json()) as Problem;
    expect(body).toMatchObject({ status: "resolved", revision: 2 });
    expect(body.resolvedAt).not.toBeNull();
    const replay = await owner.api.patch(
      path,
      { status: "resolved" },
      { revision: 1, idempotencyKey: "resolve-1" },
    );
    expect(replay.headers.get("idempotency-replayed")).toBe("true");
    expect(await replay.json()).toEqual(body);

    const stale = await owner.api.patch(path, { status: "ignored" }, { revision: 1 });
    expect(stale.status).toBe(412);
    expect(await problem(stale)).toMatchObject({ code: "revision_conflict", currentRevision: 2 });
    // The status it already has: nothing changes.
    expect(await (await owner.api.patch(path, { status: "resolved" }, { revision: 2 })).json()).toMatchObject(
      {
        revision: 2,
      },
    );

    // An occurrence from before the resolution (late data) only counts.
    const late = failedSpan(thrown(() => loadOrder(6)));
    (late.events as { timeUnixNano: string }[])[0] = {
      ...(late.events as Record<string, unknown>[])[0],
      timeUnixNano: nanosAgo(60_000),
    } as { timeUnixNano: string };
    await sendJson(app, "traces", key, jsonTraces([late], "status"));
    expect((await detail(owner, id)).problem).toMatchObject({ status: "resolved", count: 2, revision: 2 });

    await sendJson(app, "traces", key, jsonTraces([failedSpan(thrown(() => loadOrder(7)))], "status"));
    const again = await detail(owner, id);
    expect(again.problem).toMatchObject({ status: "regressed", count: 3, revision: 3 });
    expect(again.etag).toBe('"3"');
    expect(Date.parse(again.problem.statusChangedAt ?? "")).toBeGreaterThan(
      Date.parse(body.statusChangedAt ?? ""),
    );

    const ignored = await owner.api.patch(path, { status: "ignored" }, { revision: 3 });
    expect(await ignored.json()).toMatchObject({ status: "ignored", revision: 4, resolvedAt: null });
    await sendJson(app, "traces", key, jsonTraces([failedSpan(thrown(() => loadOrder(8)))], "status"));
    expect((await detail(owner, id)).problem).toMatchObject({ status: "ignored", count: 4, revision: 4 });
    expect((await listOf(owner, "?status=ignored")).items.map((p) => p.id)).toEqual([id]);
    expect((await listOf(owner, "?status=open")).items.map((p) => p.id)).not.toContain(id);

    const audit = await deps.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.organizationId, owner.organizationId), eq(auditLog.targetId, id)));
    expect(audit.map((a) => a.details)).toEqual([
      expect.objectContaining({ from: "open", to: "resolved", revision: 2 }),
      expect.objectContaining({ from: "regressed", to: "ignored", revision: 4 }),
    ]);
  });

  test("changing a status needs problems:manage and owner/admin; other organisations see 404", async ({
    app,
    owner,
    stranger,
    deps,
  }) => {
    const { key } = await createKey(owner);
    await sendJson(app, "traces", key, jsonTraces([failedSpan(thrown(() => loadOrder(9)))], "access"));
    const [{ id } = { id: "" }] = (await listOf(owner)).items;
    const path = `/environments/${owner.environmentId}/problems/${id}`;

    const reader = client(app, await keyWith(owner, ["telemetry:read"]));
    expect((await reader.get(path)).status).toBe(200);
    const denied = await reader.patch(path, { status: "resolved" }, { revision: 1 });
    expect(denied.status).toBe(403);
    expect(await problem(denied)).toMatchObject({ requiredPermission: "problems:manage" });

    const other = await newTenant(deps, app);
    await deps.db
      .insert(memberships)
      .values({ organizationId: owner.organizationId, userId: other.userId, role: "member" });
    const secret = generateApiKeySecret();
    await deps.db.insert(apiKeys).values({
      id: "key_problems_member",
      organizationId: owner.organizationId,
      userId: other.userId,
      name: "member",
      prefix: secret.prefix,
      secretHash: secret.hash,
      permissions: [...permissions],
    });
    const member = client(app, secret.secret);
    expect((await member.get(path)).status).toBe(200);
    expect((await member.patch(path, { status: "resolved" }, { revision: 1 })).status).toBe(403);

    for (const res of [
      await stranger.api.get(path),
      await stranger.api.get(`/environments/${owner.environmentId}/problems`),
      await stranger.api.patch(path, { status: "resolved" }, { revision: 1 }),
      await stranger.api.get(`/environments/${stranger.environmentId}/problems/${id}`),
      await stranger.api.patch(
        `/environments/${stranger.environmentId}/problems/${id}`,
        { status: "resolved" },
        { revision: 1 },
      ),
    ]) {
      expect(res.status).toBe(404);
      expect((await problem(res)).code).toBe("not_found");
    }
    expect((await detail(owner, id)).problem.status).toBe("open");
  });
});

describe("problem lists and retention", () => {
  test("most recently seen first, filtered by service, keyset pages; bad cursors are 400", async ({
    app,
    owner,
  }) => {
    const { key } = await createKey(owner);
    const errors = [() => loadOrder(1), () => parseQuantity("a")];
    for (const [i, service] of ["a", "b", "c"].entries()) {
      const error = thrown(errors[i % 2] ?? (() => loadOrder(0)));
      const span = failedSpan(error);
      (span.events as Record<string, unknown>[])[0] = {
        ...(span.events as Record<string, unknown>[])[0],
        timeUnixNano: nanosAgo((3 - i) * 60_000),
      };
      await sendJson(app, "traces", key, jsonTraces([span], `list-${service}`));
    }
    const walk: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await listOf(owner, `?pageSize=2${cursor ? `&cursor=${cursor}` : ""}`);
      walk.push(...page.items.map((p) => p.service));
      cursor = page.nextCursor;
    } while (cursor);
    expect(walk).toEqual(["list-c", "list-b", "list-a"]);
    expect((await listOf(owner, "?service=list-b")).items.map((p) => p.service)).toEqual(["list-b"]);
    const bad = await owner.api.get(`/environments/${owner.environmentId}/problems?cursor=WyJ4Il0`);
    expect(bad.status).toBe(400);
    expect((await owner.api.get(`/environments/${owner.environmentId}/problems/prb_nope`)).status).toBe(404);
  });

  test("retention deletes problems not seen within it, unless a remediation refers to them", async ({
    app,
    owner,
    deps,
  }) => {
    const { key } = await createKey(owner);
    await sendJson(app, "traces", key, jsonTraces([failedSpan(thrown(() => loadOrder(1)))], "keep"));
    await sendJson(app, "traces", key, jsonTraces([failedSpan(thrown(() => parseQuantity("q")))], "keep"));
    const [kept, swept] = (await listOf(owner, "?service=keep")).items;
    await deps.db.insert(remediations).values({
      id: "rem_keep",
      organizationId: owner.organizationId,
      environmentId: owner.environmentId,
      problemId: kept?.id ?? "",
      status: "awaiting-review",
      requestedBy: owner.userId,
      budgets: DEFAULT_REMEDIATION_BUDGETS,
      createdAt: new Date(),
      updatedAt: new Date(),
    });
    const shown = (await listOf(owner, "?service=keep")).items.find((p) => p.id === kept?.id);
    expect(shown).toMatchObject({ remediationId: "rem_keep", remediationState: "awaiting-review" });
    const result = await sweepTelemetry(deps.db, new Date(Date.now() + 8 * 86_400_000), 7);
    expect(result.problems).toBeGreaterThanOrEqual(1);
    const left = (await listOf(owner, "?service=keep")).items.map((p) => p.id);
    expect(left).toEqual([kept?.id]);
    expect(left).not.toContain(swept?.id);
  });
});
