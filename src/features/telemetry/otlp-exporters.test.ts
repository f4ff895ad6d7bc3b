import { context, SpanStatusCode, trace } from "@opentelemetry/api";
import { SeverityNumber } from "@opentelemetry/api-logs";
import type { ExportResult } from "@opentelemetry/core";
import { OTLPLogExporter as HttpLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { OTLPLogExporter as ProtoLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { OTLPTraceExporter as HttpTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from "@opentelemetry/sdk-logs";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { and, asc, eq } from "drizzle-orm";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { listen } from "../../../test/http.ts";
import { createKey, storedSpans } from "../../../test/lib/telemetry.ts";
import { telemetryLogs, telemetryResources } from "../../platform/db/schema/telemetry.ts";

type ExporterConfig = NonNullable<ConstructorParameters<typeof ProtoTraceExporter>[0]>;
const gzip = "gzip" as ExporterConfig["compression"];

/** Records spans with the real SDK: a server span, a child that throws, recorded as an exception. */
function recordCheckoutTrace(service: string) {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": service, "deployment.environment": "test" }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  const tracer = provider.getTracer("checkout-tests", "1.0.0");
  const root = tracer.startSpan("POST /checkout", { kind: 1, attributes: { "http.route": "/checkout" } });
  const child = tracer.startSpan("charge card", {}, trace.setSpan(context.active(), root));
  child.recordException(new TypeError("card declined: 4242"));
  child.setStatus({ code: SpanStatusCode.ERROR, message: "card declined" });
  child.end();
  root.end();
  return { spans: memory.getFinishedSpans(), root, child };
}

async function recordLogs(service: string, traceContext: ReturnType<typeof recordCheckoutTrace>) {
  const memory = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ "service.name": service }),
    processors: [new SimpleLogRecordProcessor({ exporter: memory })],
  });
  const logger = provider.getLogger("checkout-logs");
  logger.emit({ severityNumber: SeverityNumber.INFO, severityText: "INFO", body: "checkout started" });
  logger.emit({
    severityNumber: SeverityNumber.ERROR,
    severityText: "ERROR",
    body: "card declined",
    attributes: { "order.id": 42 },
    context: trace.setSpan(context.active(), traceContext.child),
  });
  await provider.forceFlush();
  return memory.getFinishedLogRecords();
}

const exported = (
  exporter: { export(items: never[], done: (r: ExportResult) => void): void },
  items: unknown[],
) => new Promise<ExportResult>((resolve) => exporter.export(items as never[], resolve));

describe("OTLP ingest with the OpenTelemetry SDK exporters", () => {
  let server: { url: string; close(): Promise<void> };
  test.beforeAll(async ({ app }) => {
    server = await listen(app);
  });
  test.afterAll(async () => server.close());

  test.for([
    { name: "protobuf", Exporter: ProtoTraceExporter, compression: undefined },
    { name: "protobuf + gzip", Exporter: ProtoTraceExporter, compression: gzip },
    { name: "JSON", Exporter: HttpTraceExporter, compression: undefined },
    { name: "JSON + gzip", Exporter: HttpTraceExporter, compression: gzip },
  ])("traces over $name are stored span by span", async ({ Exporter, compression }, { owner, deps }) => {
    const { key } = await createKey(owner);
    const service = `checkout-${Math.random().toString(36).slice(2)}`;
    const recorded = recordCheckoutTrace(service);
    const exporter = new Exporter({
      url: `${server.url}/v1/traces`,
      headers: { authorization: `Bearer ${key}` },
      compression,
    });
    const result = await exported(exporter, recorded.spans);
    expect(result.error?.message).toBeUndefined();
    expect(result.code).toBe(0);
    await exporter.shutdown();

    const rows = (await storedSpans(deps.db, owner.environmentId)).filter((r) => r.serviceName === service);
    expect(rows).toHaveLength(2);
    const checkout = rows.find((r) => r.name === "POST /checkout");
    const charge = rows.find((r) => r.name === "charge card");
    const rootContext = recorded.root.spanContext();
    expect(checkout).toMatchObject({
      organizationId: owner.organizationId,
      environmentId: owner.environmentId,
      traceId: rootContext.traceId,
      spanId: rootContext.spanId,
      parentSpanId: null,
      name: "POST /checkout",
      kind: 2,
      statusCode: 0,
      scopeName: "checkout-tests",
      attributes: { "http.route": "/checkout" },
    });
    // The resource is stored once and referred to by id (telemetry_resources).
    const [resource] = await deps.db
      .select()
      .from(telemetryResources)
      .where(
        and(
          eq(telemetryResources.environmentId, owner.environmentId),
          eq(telemetryResources.resourceId, BigInt(checkout?.resourceId ?? 0)),
        ),
      );
    expect(resource).toMatchObject({
      organizationId: owner.organizationId,
      serviceName: service,
      attributes: { "service.name": service, "deployment.environment": "test" },
    });
    expect(charge?.resourceId).toBe(checkout?.resourceId);
    expect(charge).toMatchObject({
      traceId: rootContext.traceId,
      parentSpanId: rootContext.spanId,
      statusCode: 2,
      statusMessage: "card declined",
    });
    expect(charge?.events[0]).toMatchObject({
      name: "exception",
      attributes: { "exception.type": "TypeError", "exception.message": "card declined: 4242" },
    });
    expect(String(charge?.events[0]?.attributes["exception.stacktrace"])).toContain(
      "TypeError: card declined",
    );
    expect(checkout?.durationNs).toBeGreaterThanOrEqual(0);
    expect(checkout?.endMicros ?? 0).toBeGreaterThanOrEqual(checkout?.startMicros ?? 1);
  });

  test.for([
    { name: "protobuf", Exporter: ProtoLogExporter, compression: undefined },
    { name: "JSON + gzip", Exporter: HttpLogExporter, compression: gzip },
  ])(
    "logs over $name are stored with their trace context",
    async ({ Exporter, compression }, { owner, deps }) => {
      const { key } = await createKey(owner);
      const service = `logs-${Math.random().toString(36).slice(2)}`;
      const traced = recordCheckoutTrace(service);
      const records = await recordLogs(service, traced);
      expect(records).toHaveLength(2);
      const exporter = new Exporter({
        url: `${server.url}/v1/logs`,
        headers: { "x-patchbay-key": key },
        compression,
      });
      const result = await exported(exporter, records);
      expect(result.error?.message).toBeUndefined();
      expect(result.code).toBe(0);
      await exporter.shutdown();

      const rows = await deps.db
        .select()
        .from(telemetryLogs)
        .where(eq(telemetryLogs.serviceName, service))
        .orderBy(asc(telemetryLogs.severityNumber));
      expect(rows).toHaveLength(2);
      expect(rows[0]).toMatchObject({
        severityNumber: 9,
        severityText: "INFO",
        body: "checkout started",
        traceId: null,
      });
      expect(rows[1]).toMatchObject({
        environmentId: owner.environmentId,
        severityNumber: 17,
        severityText: "ERROR",
        body: "card declined",
        traceId: traced.child.spanContext().traceId,
        spanId: traced.child.spanContext().spanId,
        scopeName: "checkout-logs",
        attributes: { "order.id": 42 },
      });
    },
  );

  test("a revoked key stops the exporter (401, not retried)", async ({ owner }) => {
    const { id, key } = await createKey(owner);
    expect(
      (await owner.api.delete(`/environments/${owner.environmentId}/publishable-keys/${id}`)).status,
    ).toBe(204);
    const exporter = new ProtoTraceExporter({
      url: `${server.url}/v1/traces`,
      headers: { authorization: `Bearer ${key}` },
    });
    const result = await exported(exporter, recordCheckoutTrace("revoked").spans);
    expect(result.code).toBe(1);
    expect(String(result.error?.message)).toMatch(/401|Unauthorized/i);
    await exporter.shutdown();
  });
});
