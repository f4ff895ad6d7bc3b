import type { ServerResponse } from "node:http";
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { describe, expect, type Tenant, test } from "../../../test/fixtures.ts";
import { client } from "../../../test/http.ts";
import { startHttpsServer, type TestServer } from "../../../test/lib/egress-servers.ts";
import {
  createKey,
  jsonAttributes,
  jsonSpan,
  jsonTraces,
  nanosAgo,
  sendJson,
} from "../../../test/lib/telemetry.ts";
import { eventually } from "../../../test/lib/wait.ts";
import { createApp } from "../../app.ts";
import type { Deps } from "../../deps.ts";
import { webhookEndpoints } from "../../platform/db/schema/webhooks.ts";
import { strictEgressPolicy } from "../../platform/egress/address-policy.ts";
import { registerWebhookWorker, retryDelayMs, type WebhookSettings } from "./deliver.ts";
import { emitWebhookEvent } from "./emit.ts";
import type { WebhookDelivery, WebhookEndpoint } from "./schemas.ts";

const settings: WebhookSettings = {
  maxAttempts: 3,
  baseDelayMs: 1_000,
  maxDelayMs: 10_000,
  disableAfterFailedDeliveries: 2,
  disableAfterMs: 0,
  timeoutMs: 5_000,
  dispatchIntervalMs: 200,
};

/** One worker and dispatcher per file, on the file's queue (the fixtures start none). */
const workers = new WeakMap<Deps, Promise<() => void>>();
function ensureWorker(deps: Deps) {
  let started = workers.get(deps);
  if (!started) {
    started = registerWebhookWorker(deps, settings);
    workers.set(deps, started);
  }
  return started;
}

async function json<T>(res: Response | Promise<Response>, status: number): Promise<T> {
  const r = await res;
  const text = await r.text();
  expect(r.status, text).toBe(status);
  return JSON.parse(text) as T;
}

async function problem(res: Response | Promise<Response>, status: number): Promise<{ code: string }> {
  return json<{ code: string }>(res, status);
}

type Answer = (res: ServerResponse, n: number) => void;

/** A real HTTPS receiver on loopback (the test CA), reachable through the file's egress. */
async function receiver(
  egressPolicy: { allowPorts: number[] },
  testCa: Parameters<typeof startHttpsServer>[0],
  answer: Answer = (res) => res.writeHead(204).end(),
) {
  const times: number[] = [];
  const server = await startHttpsServer(testCa, (_req, res) => {
    times.push(Date.now());
    answer(res, times.length);
  });
  egressPolicy.allowPorts.push(server.port);
  return { server, times, url: `${server.origin}/hooks` };
}

const base = (t: Tenant) => `/organizations/${t.organizationId}/webhook-endpoints`;

async function createEndpoint(t: Tenant, url: string, eventTypes: string[]) {
  return json<{ endpoint: WebhookEndpoint; secret: string }>(t.api.post(base(t), { url, eventTypes }), 201);
}

function problemEvent(t: Tenant, title = "TypeError: x is undefined") {
  return {
    organizationId: t.organizationId,
    type: "problem.new" as const,
    at: new Date(),
    data: {
      organizationId: t.organizationId,
      environmentId: t.environmentId,
      problemId: "prb_test",
      title,
      service: "checkout",
      firstSeen: new Date().toISOString(),
      count: 1,
    },
  };
}

async function deliveries(t: Tenant, endpointId: string, query = "") {
  return (
    await json<{ items: WebhookDelivery[] }>(t.api.get(`${base(t)}/${endpointId}/deliveries${query}`), 200)
  ).items;
}

function verify(secret: string, received: TestServer["received"][number]) {
  return new Webhook(secret).verify(received.body, {
    "webhook-id": String(received.headers["webhook-id"]),
    "webhook-timestamp": String(received.headers["webhook-timestamp"]),
    "webhook-signature": String(received.headers["webhook-signature"]),
  });
}

describe("webhook endpoints", () => {
  test("CRUD: the secret is shown once, never listed, read or logged; owners and admins only", async ({
    owner,
    app,
    logs,
    egressPolicy,
    testCa,
  }) => {
    const { url, server } = await receiver(egressPolicy, testCa);
    const created = await createEndpoint(owner, url, ["problem.new", "problem.new", "remediation.failed"]);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.endpoint).toMatchObject({
      url,
      eventTypes: ["problem.new", "remediation.failed"],
      enabled: true,
      disabledReason: null,
      revision: 1,
    });
    const id = created.endpoint.id;
    const listText = await (await owner.api.get(base(owner))).text();
    const getText = await (await owner.api.get(`${base(owner)}/${id}`)).text();
    for (const text of [listText, getText]) {
      expect(text).toContain(id);
      expect(text).not.toContain(created.secret);
      expect(text).not.toContain(created.secret.slice(6, 20));
      expect(text.toLowerCase()).not.toContain('secret"');
    }
    const updated = await json<WebhookEndpoint>(
      owner.api.patch(`${base(owner)}/${id}`, {
        eventTypes: ["connection.credential_rejected"],
        enabled: false,
      }),
      200,
    );
    expect(updated).toMatchObject({
      eventTypes: ["connection.credential_rejected"],
      enabled: false,
      disabledReason: "manual",
      revision: 2,
    });
    const rotated = await json<{ endpoint: WebhookEndpoint; secret: string }>(
      owner.api.post(`${base(owner)}/${id}/secret-rotations`),
      200,
    );
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    expect(rotated.endpoint.secretRotatedAt).not.toBeNull();
    expect((await json<{ items: WebhookEndpoint[] }>(owner.api.get(base(owner)), 200)).items).toHaveLength(1);

    // A key without the webhook permissions is refused.
    const narrow = await json<{ secret: string }>(
      owner.api.post("/api-keys", { name: "narrow", permissions: ["environments:read"] }),
      201,
    );
    expect((await problem(client(app, narrow.secret).get(base(owner)), 403)).code).toBe("forbidden");

    const res = await owner.api.delete(`${base(owner)}/${id}`);
    expect(res.status).toBe(204);
    expect((await problem(owner.api.get(`${base(owner)}/${id}`), 404)).code).toBe("not_found");
    expect(logs.text()).not.toContain(created.secret);
    expect(logs.text()).not.toContain(rotated.secret);
    expect(server.received).toHaveLength(0);

    // The audit trail keeps the receiver's origin, never its path (which may carry a secret).
    const trail = await (
      await owner.api.get(`/organizations/${owner.organizationId}/audit-events?target=${id}`)
    ).text();
    expect(trail).toContain(`"endpointOrigin":"${new URL(url).origin}"`);
    expect(trail).toContain("webhook_endpoint.deleted");
    expect(trail).not.toContain("/hooks");
  });

  test("bad input: non-HTTPS or private URLs under the production policy, unknown event types, unknown fields", async ({
    owner,
    deps,
  }) => {
    const cases: [unknown, string][] = [
      [{ url: "http://hooks.example.com/x", eventTypes: ["problem.new"] }, "invalid_webhook_url"],
      [{ url: "https://hooks.example.com/x?token=1", eventTypes: ["problem.new"] }, "invalid_webhook_url"],
      [{ url: "https://hooks.example.com/x", eventTypes: ["problem.exploded"] }, "unknown_event_type"],
      [{ url: "https://hooks.example.com/x", eventTypes: [] }, "invalid_request"],
      [
        { url: "https://hooks.example.com/x", eventTypes: ["problem.new"], secret: "whsec_mine" },
        "invalid_request",
      ],
    ];
    for (const [body, code] of cases) {
      expect((await problem(owner.api.post(base(owner), body), 400)).code, JSON.stringify(body)).toBe(code);
    }
    const unknown = await json<{ code: string; unknown: string[] }>(
      owner.api.post(base(owner), {
        url: "https://hooks.example.com/x",
        eventTypes: ["nope", "problem.new"],
      }),
      400,
    );
    expect(unknown.unknown).toEqual(["nope"]);
    // Production: no development override, so loopback and other private targets are refused.
    const production: Deps = {
      ...deps,
      config: { ...deps.config, nodeEnv: "production", egress: strictEgressPolicy() },
    };
    const prodApi = client(createApp(production), owner.apiKey);
    for (const url of [
      "https://127.0.0.1:8443/hooks",
      "https://10.0.0.8/hooks",
      "http://hooks.example.com/",
    ]) {
      const refused = await json<{ code: string; rule: string }>(
        prodApi.post(base(owner), { url, eventTypes: ["problem.new"] }),
        400,
      );
      expect(refused.code, url).toBe("invalid_webhook_url");
    }
  });

  test("tenancy: another organisation cannot list, read, change, rotate, redeliver or see deliveries", async ({
    owner,
    stranger,
    egressPolicy,
    testCa,
  }) => {
    const { url } = await receiver(egressPolicy, testCa);
    const { endpoint } = await createEndpoint(owner, url, ["problem.new"]);
    const ownerPath = `${base(owner)}/${endpoint.id}`;
    const strangerPath = `${base(stranger)}/${endpoint.id}`;
    const attempts: [string, Promise<Response>][] = [
      ["list owner's org", stranger.api.get(base(owner))],
      ["create in owner's org", stranger.api.post(base(owner), { url, eventTypes: ["problem.new"] })],
      ["get via owner's org", stranger.api.get(ownerPath)],
      ["get via own org", stranger.api.get(strangerPath)],
      ["patch", stranger.api.patch(strangerPath, { enabled: false })],
      ["rotate", stranger.api.post(`${strangerPath}/secret-rotations`)],
      ["rotate via owner's org", stranger.api.post(`${ownerPath}/secret-rotations`)],
      ["deliveries", stranger.api.get(`${strangerPath}/deliveries`)],
      ["redeliver", stranger.api.post(`${strangerPath}/deliveries/whd_x/redeliveries`)],
      ["delete", stranger.api.delete(strangerPath)],
    ];
    for (const [what, pending] of attempts) {
      expect((await problem(pending, 404)).code, what).toBe("not_found");
    }
    expect((await json<{ items: unknown[] }>(stranger.api.get(base(stranger)), 200)).items).toEqual([]);
    const still = await json<WebhookEndpoint>(owner.api.get(ownerPath), 200);
    expect(still).toMatchObject({ enabled: true, revision: 1, secretRotatedAt: null });
  });
});

describe("webhook delivery", () => {
  test("a signed event reaches a real HTTPS receiver and verifies with the standardwebhooks library; redelivery keeps its webhook-id", async ({
    deps,
    owner,
    stranger,
    egressPolicy,
    testCa,
  }) => {
    await ensureWorker(deps);
    const { url, server } = await receiver(egressPolicy, testCa, (res) =>
      res.writeHead(200, { "content-type": "text/plain" }).end("thanks"),
    );
    const { endpoint, secret } = await createEndpoint(owner, url, ["problem.new"]);
    await emitWebhookEvent(deps.db, problemEvent(owner));
    // Another organisation's event, and a type this endpoint did not subscribe to, never arrive.
    await emitWebhookEvent(deps.db, problemEvent(stranger));
    await emitWebhookEvent(deps.db, { ...problemEvent(owner), type: "remediation.failed" });

    const [done] = await eventually(
      async () => {
        const items = await deliveries(owner, endpoint.id, "?status=succeeded");
        return items.length === 1 ? items : undefined;
      },
      15_000,
      "the delivery to succeed",
    );
    expect(server.received).toHaveLength(1);
    const received = server.received[0];
    if (!received || !done) throw new Error("nothing received");
    expect(received.method).toBe("POST");
    expect(received.headers["content-type"]).toBe("application/json");
    const body = verify(secret, received) as { type: string; data: { title: string } };
    expect(body).toMatchObject({ type: "problem.new", data: { title: "TypeError: x is undefined" } });
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString("base64")}`).verify(received.body, {
        "webhook-id": String(received.headers["webhook-id"]),
        "webhook-timestamp": String(received.headers["webhook-timestamp"]),
        "webhook-signature": String(received.headers["webhook-signature"]),
      }),
    ).toThrow();
    expect(received.headers["webhook-id"]).toBe(done.messageId);
    expect(done).toMatchObject({ status: "succeeded", attempts: 1, eventType: "problem.new" });
    expect(done.lastAttempts).toEqual([
      expect.objectContaining({
        attempt: 1,
        responseStatus: 200,
        responseBodyExcerpt: "thanks",
        succeeded: true,
      }),
    ]);
    expect(await deliveries(owner, endpoint.id)).toHaveLength(1);

    // Redelivery: a new delivery, the same message id, a fresh signature.
    const again = await json<WebhookDelivery>(
      owner.api.post(`${base(owner)}/${endpoint.id}/deliveries/${done.id}/redeliveries`),
      201,
    );
    expect(again).toMatchObject({ messageId: done.messageId, redeliveryOf: done.id, status: "pending" });
    await eventually(async () => (server.received.length === 2 ? true : undefined), 15_000, "the redelivery");
    const second = server.received[1];
    if (!second) throw new Error("no redelivery");
    expect(second.headers["webhook-id"]).toBe(done.messageId);
    verify(secret, second);

    // After a rotation only the new secret verifies.
    const rotated = await json<{ secret: string }>(
      owner.api.post(`${base(owner)}/${endpoint.id}/secret-rotations`),
      200,
    );
    await emitWebhookEvent(deps.db, problemEvent(owner, "RangeError"));
    await eventually(
      async () => (server.received.length === 3 ? true : undefined),
      15_000,
      "the third event",
    );
    const third = server.received[2];
    if (!third) throw new Error("no third event");
    expect(verify(rotated.secret, third)).toMatchObject({ data: { title: "RangeError" } });
    expect(() => verify(secret, third)).toThrow();
  }, 60_000);

  test("a failing receiver is retried with growing delays until it answers; the log keeps every answer", async ({
    deps,
    owner,
    egressPolicy,
    testCa,
  }) => {
    await ensureWorker(deps);
    const { url, times } = await receiver(egressPolicy, testCa, (res, n) =>
      n < 3 ? res.writeHead(500).end(`boom ${n} ${"x".repeat(4000)}`) : res.writeHead(200).end("ok"),
    );
    const { endpoint } = await createEndpoint(owner, url, ["problem.new"]);
    await emitWebhookEvent(deps.db, problemEvent(owner));
    const [done] = await eventually(
      async () => {
        const items = await deliveries(owner, endpoint.id, "?status=succeeded");
        return items.length === 1 ? items : undefined;
      },
      20_000,
      "the delivery to succeed on its third attempt",
    );
    expect(times).toHaveLength(3);
    const [t1 = 0, t2 = 0, t3 = 0] = times;
    expect(t2 - t1).toBeGreaterThanOrEqual(retryDelayMs(settings, 1));
    expect(t3 - t2).toBeGreaterThanOrEqual(retryDelayMs(settings, 2));
    expect(t3 - t2).toBeGreaterThan(t2 - t1);
    expect(done?.attempts).toBe(3);
    expect(done?.lastAttempts.map((a) => [a.attempt, a.responseStatus, a.errorCode, a.succeeded])).toEqual([
      [3, 200, null, true],
      [2, 500, "http_status", false],
      [1, 500, "http_status", false],
    ]);
    const excerpt = done?.lastAttempts[1]?.responseBodyExcerpt ?? "";
    expect(excerpt.startsWith("boom 2 ")).toBe(true);
    expect(excerpt.length).toBeLessThanOrEqual(1024);
    const after = await json<WebhookEndpoint>(owner.api.get(`${base(owner)}/${endpoint.id}`), 200);
    expect(after).toMatchObject({ enabled: true, failedDeliveriesInRow: 0 });
    expect(after.lastSuccessAt).not.toBeNull();
  }, 60_000);

  test("persistent failure disables the endpoint; a disabled endpoint gets nothing and refuses redelivery until enabled", async ({
    deps,
    owner,
    egressPolicy,
    testCa,
  }) => {
    await ensureWorker(deps);
    const { url, server } = await receiver(egressPolicy, testCa, (res) => res.writeHead(503).end("down"));
    const { endpoint } = await createEndpoint(owner, url, ["problem.new"]);
    await emitWebhookEvent(deps.db, problemEvent(owner, "one"));
    await emitWebhookEvent(deps.db, problemEvent(owner, "two"));
    const disabled = await eventually(
      async () => {
        const e = await json<WebhookEndpoint>(owner.api.get(`${base(owner)}/${endpoint.id}`), 200);
        return e.enabled ? undefined : e;
      },
      30_000,
      "the endpoint to be disabled",
    );
    expect(disabled).toMatchObject({ disabledReason: "failing", failedDeliveriesInRow: 2 });
    const failed = await deliveries(owner, endpoint.id, "?status=failed");
    expect(failed).toHaveLength(2);
    for (const d of failed) expect(d.attempts).toBe(settings.maxAttempts);
    expect(server.received).toHaveLength(2 * settings.maxAttempts);

    // Disabled: new events are not even queued for it.
    await emitWebhookEvent(deps.db, problemEvent(owner, "three"));
    expect(await deliveries(owner, endpoint.id)).toHaveLength(2);
    const first = failed[0];
    if (!first) throw new Error("no delivery");
    const redeliver = `${base(owner)}/${endpoint.id}/deliveries/${first.id}/redeliveries`;
    expect((await problem(owner.api.post(redeliver), 409)).code).toBe("webhook_endpoint_disabled");
    const enabled = await json<WebhookEndpoint>(
      owner.api.patch(`${base(owner)}/${endpoint.id}`, { enabled: true }),
      200,
    );
    expect(enabled).toMatchObject({ enabled: true, disabledReason: null, failedDeliveriesInRow: 0 });
    await json(owner.api.post(redeliver), 201);
  }, 90_000);

  test("without the development override a private receiver is never dialled; the refusal is in the log and not retried", async ({
    deps,
    owner,
    egressPolicy,
    testCa,
  }) => {
    await ensureWorker(deps);
    const { url, server } = await receiver(egressPolicy, testCa);
    const { endpoint } = await createEndpoint(owner, url, ["problem.new"]);
    const saved = [...egressPolicy.allowCidrs];
    egressPolicy.allowCidrs.length = 0;
    try {
      await emitWebhookEvent(deps.db, problemEvent(owner));
      const [failed] = await eventually(
        async () => {
          const items = await deliveries(owner, endpoint.id, "?status=failed");
          return items.length === 1 ? items : undefined;
        },
        15_000,
        "the delivery to fail",
      );
      expect(failed?.attempts).toBe(1);
      expect(failed?.lastAttempts).toEqual([
        expect.objectContaining({
          attempt: 1,
          responseStatus: null,
          errorCode: "egress_blocked",
          succeeded: false,
        }),
      ]);
    } finally {
      egressPolicy.allowCidrs.push(...saved);
    }
    expect(server.received).toHaveLength(0);
    const [row] = await deps.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id));
    expect(row?.failedDeliveriesInRow).toBe(1);
  }, 60_000);

  test("problems: a new fingerprint sends problem.new, a resolved problem seen again sends problem.regressed, once each", async ({
    deps,
    app,
    owner,
    egressPolicy,
    testCa,
  }) => {
    await ensureWorker(deps);
    const { url, server } = await receiver(egressPolicy, testCa);
    const { secret, endpoint } = await createEndpoint(owner, url, ["problem.new", "problem.regressed"]);
    const { key } = await createKey(owner);
    const failing = (at: string) =>
      jsonSpan({
        status: { code: 2, message: "boom" },
        events: [
          {
            name: "exception",
            timeUnixNano: at,
            attributes: jsonAttributes({
              "exception.type": "OrderNotFound",
              "exception.message": "order 5 does not exist",
              "exception.stacktrace":
                "OrderNotFound: order 5 does not exist\n    at loadOrder (orders.ts:3:9)",
            }),
          },
        ],
      });
    await sendJson(app, "traces", key, jsonTraces([failing(nanosAgo(2))], "orders"));
    await sendJson(app, "traces", key, jsonTraces([failing(nanosAgo(1))], "orders"));
    await eventually(async () => (server.received.length >= 1 ? true : undefined), 15_000, "problem.new");
    const first = verify(secret, server.received[0] as TestServer["received"][number]) as {
      type: string;
      data: { problemId: string; service: string };
    };
    expect(first).toMatchObject({ type: "problem.new", data: { service: "orders" } });
    const path = `/environments/${owner.environmentId}/problems/${first.data.problemId}`;
    await json(owner.api.patch(path, { status: "resolved" }, { revision: 1 }), 200);
    await sendJson(app, "traces", key, jsonTraces([failing(nanosAgo(-1_000))], "orders"));
    await sendJson(app, "traces", key, jsonTraces([failing(nanosAgo(-2_000))], "orders"));
    await eventually(
      async () => (server.received.length >= 2 ? true : undefined),
      15_000,
      "problem.regressed",
    );
    const second = verify(secret, server.received[1] as TestServer["received"][number]);
    expect(second).toMatchObject({ type: "problem.regressed", data: { problemId: first.data.problemId } });
    // More occurrences of an open or regressed problem emit nothing: two events in the outbox.
    expect(await deliveries(owner, endpoint.id)).toHaveLength(2);
  }, 60_000);
});
