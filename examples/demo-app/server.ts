/**
 * The demo shop: a small node:http service instrumented with the OpenTelemetry Node SDK
 * (telemetry.ts). Routes:
 *
 *   GET /orders/{id}      → the order; for any id but ord_1 and ord_2 it fails (OrderNotFoundError)
 *   GET /checkout?qty=N   → a price; a qty that is not a positive whole number fails (TypeError)
 *   GET /healthz          → ok
 *
 * A failure is recorded on the request's server span as an exception event (that is what patchbay
 * groups into problems) and answered 500. Every request also writes a log record, correlated
 * with its trace. Prints `listening on http://HOST:PORT` once ready (PORT=0 picks a free port).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { SpanStatusCode, trace } from "@opentelemetry/api";
import { logs, SeverityNumber } from "@opentelemetry/api-logs";
import { findOrder, parseQuantity } from "./orders.ts";

const logger = logs.getLogger("demo-shop");

/** The answer for a request: [status, body]; a failing route throws. */
function route(req: IncomingMessage): [number, unknown] {
  const url = new URL(req.url ?? "/", "http://demo");
  const order = /^\/orders\/([^/]+)$/.exec(url.pathname);
  if (order?.[1]) return [200, findOrder(decodeURIComponent(order[1]))];
  if (url.pathname === "/checkout") {
    const quantity = parseQuantity(url.searchParams.get("qty") ?? "");
    return [200, { quantity, totalCents: quantity * 1_250 }];
  }
  if (url.pathname === "/healthz") return [200, { status: "ok" }];
  return [404, { error: "no such route" }];
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

const server = createServer((req, res) => {
  try {
    const [status, body] = route(req);
    json(res, status, body);
    logger.emit({
      severityNumber: SeverityNumber.INFO,
      severityText: "INFO",
      body: `${req.method} ${req.url} → ${res.statusCode}`,
      attributes: { "http.route": req.url ?? "" },
    });
  } catch (error) {
    const failure = error instanceof Error ? error : new Error(String(error));
    const span = trace.getActiveSpan();
    span?.recordException(failure);
    span?.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
    // Emitted inside the request's span, so it carries the span's trace and span id: patchbay
    // counts it as evidence on the exception's problem, not as a failure of its own.
    logger.emit({
      severityNumber: SeverityNumber.ERROR,
      severityText: "ERROR",
      body: `${req.method} ${req.url} failed: ${failure.name}: ${failure.message}`,
    });
    json(res, 500, { error: failure.message });
  }
});

server.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : process.env.PORT;
  console.log(`listening on http://${process.env.HOST ?? "127.0.0.1"}:${port}`);
});
