/**
 * OpenTelemetry for the demo shop, loaded before the app (`node --import ./telemetry.ts`), so the
 * HTTP instrumentation is in place before `node:http` serves anything. Everything is configured by
 * the standard environment variables — nothing here is specific to patchbay:
 *
 *   OTEL_SERVICE_NAME=demo-shop
 *   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:8787
 *   OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer pk_…"
 *
 * Traces and logs go out as OTLP/HTTP protobuf in batches; SIGTERM and SIGINT flush them first.
 */
import { register } from "node:module";
import { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { BatchLogRecordProcessor } from "@opentelemetry/sdk-logs";
import { NodeSDK } from "@opentelemetry/sdk-node";

// The app is an ES module: instrumentations patch ES imports (node:http included) through this
// loader hook, which must be registered before the app's modules load.
register("@opentelemetry/instrumentation/hook.mjs", import.meta.url);

const sdk = new NodeSDK({
  traceExporter: new OTLPTraceExporter(),
  logRecordProcessors: [new BatchLogRecordProcessor({ exporter: new OTLPLogExporter() })],
  instrumentations: [new HttpInstrumentation()],
});
sdk.start();

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    sdk
      .shutdown()
      .catch((error: unknown) => console.error("telemetry shutdown failed", error))
      .finally(() => process.exit(0));
  });
}
