// A small instrumented application for browser tests: the OpenTelemetry SDK's own OTLP exporters
// send a checkout service's traces (one failing with a real exception) and logs, and a second,
// healthy service, to a patchbay.
import { context, type Span, SpanStatusCode, trace } from "@opentelemetry/api";
import { SeverityNumber } from "@opentelemetry/api-logs";
import { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { LoggerProvider, SimpleLogRecordProcessor } from "@opentelemetry/sdk-logs";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";

class StockError extends Error {
  override name = "StockError";
}

/** A real exception with a real stack, as an instrumented application records it. */
function reserveStock(sku: number): never {
  throw new StockError(`no stock left for sku ${sku}`);
}

/** The settings a person copies from the keys page: endpoint and Authorization header. */
export function readSnippet(snippet: string): { endpoint: string; authorization: string } {
  const endpoint = /OTEL_EXPORTER_OTLP_ENDPOINT=(\S+)/.exec(snippet)?.[1] ?? "";
  const authorization =
    /OTEL_EXPORTER_OTLP_HEADERS="authorization=(Bearer pk_[A-Za-z0-9]+)"/.exec(snippet)?.[1] ?? "";
  return { endpoint, authorization };
}

/**
 * A checkout application instrumented with the SDK: a server span with a cart lookup, a stock
 * reservation that throws (recorded as an exception event) with a database query under it, and
 * log records in the request's context. A second service answers a few requests.
 */
export async function runApplication(endpoint: string, authorization: string): Promise<string> {
  const headers = { authorization };
  const tracerProvider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "checkout", "service.version": "1.4.2" }),
    spanProcessors: [
      new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces`, headers })),
    ],
  });
  const loggerProvider = new LoggerProvider({
    resource: resourceFromAttributes({ "service.name": "checkout" }),
    processors: [
      new SimpleLogRecordProcessor({
        exporter: new OTLPLogExporter({ url: `${endpoint}/v1/logs`, headers }),
      }),
    ],
  });
  const tracer = tracerProvider.getTracer("checkout", "1.4.2");
  const logger = loggerProvider.getLogger("checkout");
  const t0 = Date.now() - 5_000;
  const at = (ms: number) => new Date(t0 + ms);
  const inside = (span: Span) => trace.setSpan(context.active(), span);

  const root = tracer.startSpan("POST /checkout", {
    kind: 1,
    startTime: at(0),
    attributes: {
      "http.request.method": "POST",
      "http.route": "/checkout",
      "http.response.status_code": 500,
    },
  });
  logger.emit({
    severityNumber: SeverityNumber.INFO,
    severityText: "INFO",
    body: "checkout started for cart 7",
    context: inside(root),
    timestamp: at(1),
  });
  const cart = tracer.startSpan("load cart", { kind: 2, startTime: at(4) }, inside(root));
  cart.setAttribute("db.system", "postgresql");
  cart.end(at(22));
  const reserve = tracer.startSpan("reserve stock", { startTime: at(26) }, inside(root));
  const query = tracer.startSpan(
    "SELECT stock",
    { kind: 2, startTime: at(30), attributes: { "db.query.text": "select qty from stock where sku = $1" } },
    inside(reserve),
  );
  query.end(at(71));
  try {
    reserveStock(41);
  } catch (error) {
    reserve.recordException(error as Error, at(78));
    reserve.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
  }
  logger.emit({
    severityNumber: SeverityNumber.WARN,
    severityText: "WARN",
    body: "reserving stock failed; answering 500",
    attributes: { "cart.id": 7, sku: 41 },
    context: inside(reserve),
    timestamp: at(80),
  });
  reserve.end(at(82));
  root.setStatus({ code: SpanStatusCode.ERROR });
  root.end(at(96));

  for (let i = 0; i < 3; i++) {
    const span = tracer.startSpan("GET /health", { kind: 1, startTime: at(200 + i * 100) });
    span.end(at(203 + i * 100 + i));
  }
  // Another service of the application, healthy.
  const billingProvider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "billing" }),
    spanProcessors: [
      new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces`, headers })),
    ],
  });
  const billing = billingProvider.getTracer("billing");
  for (let i = 0; i < 6; i++) {
    billing.startSpan("POST /invoices", { kind: 1, startTime: at(300 + i * 50) }).end(at(318 + i * 53));
  }
  await billingProvider.shutdown();
  await tracerProvider.forceFlush();
  await loggerProvider.forceFlush();
  await tracerProvider.shutdown();
  await loggerProvider.shutdown();
  return root.spanContext().traceId;
}
