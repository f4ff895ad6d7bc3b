// Helpers for the telemetry tests (not a test file itself).
import { randomBytes } from "node:crypto";
import { asc, eq, sum } from "drizzle-orm";
import { otlpMessages, rpcMessages, type Signal } from "../../src/features/telemetry/otlp-schema.ts";
import { type ChunkSpan, chunkSpans } from "../../src/features/telemetry/storage/chunk-codec.ts";
import type { SpanRecord } from "../../src/features/telemetry/telemetry-records.ts";
import type { Db } from "../../src/platform/db/client.ts";
import { telemetryTraceChunks } from "../../src/platform/db/schema/telemetry.ts";
import type { Tenant } from "../fixtures.ts";

/** Creates a publishable key for the tenant's environment through the REST API. */
export async function createKey(tenant: Tenant, name = "test"): Promise<{ id: string; key: string }> {
  const res = await tenant.api.post(`/environments/${tenant.environmentId}/publishable-keys`, { name });
  if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { publishableKey: { id: string }; key: string };
  return { id: body.publishableKey.id, key: body.key };
}

export const hexId = (bytes: 8 | 16): string => randomBytes(bytes).toString("hex");

const nowNanos = () => BigInt(Date.now()) * 1_000_000n;

/** One span in OTLP/JSON shape (hex ids, int64 as strings). */
export function jsonSpan(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const start = nowNanos() - 5_000_000n;
  return {
    traceId: hexId(16),
    spanId: hexId(8),
    name: "GET /things",
    kind: 2,
    startTimeUnixNano: start.toString(),
    endTimeUnixNano: (start + 1_500_000n).toString(),
    attributes: [{ key: "http.route", value: { stringValue: "/things" } }],
    status: { code: 0 },
    ...overrides,
  };
}

/** An OTLP resource naming its service. */
export const resource = (service: string) => ({
  attributes: [{ key: "service.name", value: { stringValue: service } }],
});

export const jsonTraces = (spans: Record<string, unknown>[], service = "checkout") => ({
  resourceSpans: [
    {
      resource: resource(service),
      scopeSpans: [{ scope: { name: "test" }, spans }],
    },
  ],
});

/** One span as protobufjs input (bytes ids, int64 as strings). */
export function protoSpan(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const start = nowNanos() - 5_000_000n;
  return {
    traceId: randomBytes(16),
    spanId: randomBytes(8),
    name: "GET /things",
    kind: 2,
    startTimeUnixNano: start.toString(),
    endTimeUnixNano: (start + 1_500_000n).toString(),
    ...overrides,
  };
}

/** Encodes a request given in protobufjs object form (bytes as Buffers, enums as numbers). */
export const encodeRequest = (signal: Signal, request: Record<string, unknown>): Uint8Array<ArrayBuffer> => {
  const type = otlpMessages[signal].request;
  return new Uint8Array(type.encode(type.fromObject(request)).finish());
};

/** A protobuf trace export request carrying `spans` (protobufjs input) for service "svc". */
export const protoTraces = (spans: Record<string, unknown>[]): Uint8Array<ArrayBuffer> =>
  encodeRequest("traces", { resourceSpans: [{ resource: resource("svc"), scopeSpans: [{ spans }] }] });

export const decodeResponse = (signal: Signal, body: ArrayBuffer) =>
  otlpMessages[signal].response.toObject(otlpMessages[signal].response.decode(new Uint8Array(body)), {
    longs: Number,
  });

export const decodeStatus = (body: ArrayBuffer) =>
  rpcMessages.status.toObject(rpcMessages.status.decode(new Uint8Array(body))) as {
    code?: number;
    message?: string;
  };

/** A span record as the store takes it: a root span of a new trace, starting now, unless overridden. */
export function spanRecord(overrides: Partial<SpanRecord> = {}): SpanRecord {
  const now = Date.now() * 1000;
  return {
    traceId: hexId(16),
    spanId: hexId(8),
    parentSpanId: null,
    serviceName: "svc",
    name: "op",
    kind: 1,
    startMicros: now,
    endMicros: now,
    durationNs: 0,
    statusCode: 0,
    statusMessage: null,
    scopeName: null,
    attributes: {},
    resourceAttributes: {},
    events: [],
    links: [],
    ...overrides,
  };
}

/** How many spans the environment has stored. */
export const spansOf = async (db: Db, environmentId: string) =>
  Number(
    (
      await db
        .select({ n: sum(telemetryTraceChunks.spanCount) })
        .from(telemetryTraceChunks)
        .where(eq(telemetryTraceChunks.environmentId, environmentId))
    )[0]?.n ?? 0,
  );

export type StoredSpanRow = ChunkSpan & { organizationId: string; environmentId: string; traceId: string };

/** Every span the environment has stored, as kept in its trace chunks, chunk by chunk. */
export async function storedSpans(db: Db, environmentId: string): Promise<StoredSpanRow[]> {
  const chunks = await db
    .select()
    .from(telemetryTraceChunks)
    .where(eq(telemetryTraceChunks.environmentId, environmentId))
    .orderBy(asc(telemetryTraceChunks.startTime));
  return chunks.flatMap((c) =>
    chunkSpans(c).map((span) => ({
      organizationId: c.organizationId,
      environmentId: c.environmentId,
      traceId: c.traceId,
      ...span,
    })),
  );
}

/** POSTs an OTLP body to the in-process app. */
export function post(
  app: { request(path: string, init: RequestInit): Response | Promise<Response> },
  path: string,
  key: string | undefined,
  body: BodyInit,
  headers: Record<string, string>,
): Promise<Response> {
  const auth: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  return Promise.resolve(app.request(path, { method: "POST", headers: { ...auth, ...headers }, body }));
}

export const JSON_TYPE = { "content-type": "application/json" };
export const PROTO_TYPE = { "content-type": "application/x-protobuf" };

/** Unix nanoseconds `ms` milliseconds ago, as OTLP/JSON writes int64 (a decimal string). */
export const nanosAgo = (ms: number): string => (BigInt(Date.now() - ms) * 1_000_000n).toString();

/** One log record in OTLP/JSON shape. */
export function jsonLog(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { timeUnixNano: nanosAgo(1_000), severityNumber: 9, severityText: "INFO", ...overrides };
}

export const jsonLogs = (records: Record<string, unknown>[], service = "checkout") => ({
  resourceLogs: [
    { resource: resource(service), scopeLogs: [{ scope: { name: "test" }, logRecords: records }] },
  ],
});

/** An OTLP/JSON attribute list from a plain object of strings and numbers. */
export const jsonAttributes = (values: Record<string, string | number>) =>
  Object.entries(values).map(([key, value]) => ({
    key,
    value: typeof value === "number" ? { intValue: String(value) } : { stringValue: value },
  }));

/** Sends OTLP/JSON traces or logs in-process and insists on a full success. */
export async function sendJson(
  app: { request(path: string, init: RequestInit): Response | Promise<Response> },
  signal: "traces" | "logs",
  key: string,
  body: unknown,
): Promise<void> {
  const res = await post(app, `/v1/${signal}`, key, JSON.stringify(body), JSON_TYPE);
  const text = await res.text();
  if (res.status !== 200 || (text !== "{}" && text !== "")) {
    throw new Error(`OTLP ${signal} export failed: ${res.status} ${text}`);
  }
}

/** An API key of the tenant's owner with only `permissions`. */
export async function keyWith(tenant: Tenant, permissions: string[]): Promise<string> {
  const res = await tenant.api.post("/api-keys", { name: "limited", permissions });
  if (res.status !== 201) throw new Error(`api key creation failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { secret: string }).secret;
}
