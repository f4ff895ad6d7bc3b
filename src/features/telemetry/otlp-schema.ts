import { join } from "node:path";
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";

/** The OTLP message schema declared in the repository (proto/, see proto/README.md). */
const protoDir = fileURLToPath(new URL("../../../proto/", import.meta.url));

// protobufjs gives each message with a oneof (AnyValue's `value`: every attribute value) a setter
// that the decoder calls once per member it reads, and that `delete`s each other member name
// from the message — absent or not. Those deletes were ~15 % of decoding an SDK-shaped trace
// export. This setter deletes only the members actually present: the same result (the last
// member read wins), without the runtime calls. It must be in place before any type is set up.
protobuf.util.oneOfSetter = (fieldNames: string[]) =>
  function setOneOf(this: Record<string, unknown>, name: string | undefined) {
    for (const field of fieldNames) if (field !== name && Object.hasOwn(this, field)) delete this[field];
  };

export const signals = ["traces", "logs", "metrics"] as const;
export type Signal = (typeof signals)[number];

/**
 * The schema, parsed from proto/ on first use rather than when the module loads: parsing the
 * .proto files takes ~40 ms that a start which receives no telemetry need not spend.
 */
function parseSchema() {
  const root = new protobuf.Root();
  // google/protobuf/* come bundled with protobufjs; everything else from proto/.
  root.resolvePath = (_origin, target) =>
    target.startsWith("google/protobuf/") ? target : join(protoDir, target);
  root.loadSync([
    "opentelemetry/proto/collector/trace/v1/trace_service.proto",
    "opentelemetry/proto/collector/logs/v1/logs_service.proto",
    "opentelemetry/proto/collector/metrics/v1/metrics_service.proto",
    "google/rpc/status.proto",
    "patchbay/storage/v1/trace_chunk.proto",
  ]);
  root.resolveAll();
  /** One signal's export request and response, and the response's partial-success counter. */
  const exportMessages = <R extends string>(pkg: string, name: string, rejectedField: R) => ({
    request: root.lookupType(`opentelemetry.proto.collector.${pkg}.v1.Export${name}ServiceRequest`),
    response: root.lookupType(`opentelemetry.proto.collector.${pkg}.v1.Export${name}ServiceResponse`),
    rejectedField,
  });
  return {
    otlp: {
      traces: exportMessages("trace", "Trace", "rejectedSpans"),
      logs: exportMessages("logs", "Logs", "rejectedLogRecords"),
      metrics: exportMessages("metrics", "Metrics", "rejectedDataPoints"),
    },
    status: root.lookupType("google.rpc.Status"),
    chunk: {
      chunk: root.lookupType("patchbay.storage.v1.TraceChunk"),
      group: root.lookupType("patchbay.storage.v1.SpanGroup"),
      span: root.lookupType("opentelemetry.proto.trace.v1.Span"),
    },
  };
}

let parsed: ReturnType<typeof parseSchema> | undefined;
const schema = () => {
  parsed ??= parseSchema();
  return parsed;
};

/** Each signal's export request and response (parsed on first use). */
export const otlpMessages = {
  get traces() {
    return schema().otlp.traces;
  },
  get logs() {
    return schema().otlp.logs;
  },
  get metrics() {
    return schema().otlp.metrics;
  },
};

/** `google.rpc.Status` (`.status`): the body of every OTLP/HTTP error answer. */
export const rpcMessages = {
  get status() {
    return schema().status;
  },
};

/** patchbay's stored trace chunk (storage/chunk-codec.ts) and the OTLP span it holds. */
export const chunkMessages = {
  get chunk() {
    return schema().chunk.chunk;
  },
  get group() {
    return schema().chunk.group;
  },
  get span() {
    return schema().chunk.span;
  },
};
