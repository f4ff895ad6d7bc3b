import protobuf from "protobufjs";
import { chunkMessages, otlpMessages } from "../otlp-schema.ts";
import type { Int64, Resource, Scope, Span } from "../otlp-types.ts";
import type { SpanKeyFields } from "../span-records.ts";
import { messageChecker } from "./check-message.ts";

/**
 * What ingest needs of a span before it stores the span's bytes: the fields `checkSpan` reads,
 * whether it has events, and where its message lies in the body (`decodeSpan` decodes it whole).
 */
export type WireSpan = SpanKeyFields & {
  hasEvents: boolean;
  /** `[start, end)` of its `Span` message in the body. */
  start: number;
  end: number;
};

/** An export request with its resources and scopes decoded and its spans scanned. */
export type ScannedTraces = {
  body: Buffer;
  resourceSpans: { resource?: Resource; scopeSpans: { scope?: Scope; spans: WireSpan[] }[] }[];
};

/** The types the scan needs, set up with the schema on first use (otlp-schema.ts). */
function setUpTypes() {
  const request = otlpMessages.traces.request;
  return {
    resource: request.lookupType("opentelemetry.proto.resource.v1.Resource"),
    scope: request.lookupType("opentelemetry.proto.common.v1.InstrumentationScope"),
    span: chunkMessages.span,
    checkRequest: messageChecker(request),
  };
}

let scanTypes: ReturnType<typeof setUpTypes> | undefined;
const types = () => {
  scanTypes ??= setUpTypes();
  return scanTypes;
};

/** A body the decoder would refuse; anything else thrown while scanning is a fault here. */
export class RefusedBody extends Error {
  constructor(reason: unknown) {
    super(reason instanceof Error ? reason.message : String(reason), { cause: reason });
  }
}

/**
 * A protobuf ExportTraceServiceRequest → its spans' fields and byte ranges, with `Type.decode`'s
 * verdict (check-message.ts) and values: a field given twice keeps its last value, a sub-message
 * given twice is merged, a field of an unexpected wire type is skipped. Resources and scopes (a
 * few per request) are decoded whole; spans are not.
 */
export function scanTraces(bytes: Uint8Array): ScannedTraces {
  const body = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  try {
    types().checkRequest(body);
  } catch (error) {
    throw new RefusedBody(error);
  }
  // The body is sound from here on: the walk below only finds its way.
  const reader = protobuf.Reader.create(body);
  const resourceSpans: ScannedTraces["resourceSpans"] = [];
  forEachField(reader, reader.len, (id, end) => {
    if (id === 1) resourceSpans.push(scanResourceSpans(reader, end));
  });
  return { body, resourceSpans };
}

/** A span's whole message, decoded (spans with events, and those stored as their record). */
export const decodeSpan = (scanned: ScannedTraces, span: WireSpan): Span =>
  types().span.decode(scanned.body.subarray(span.start, span.end)) as unknown as Span;

/**
 * Calls `visit(fieldNumber, end)` for each length-delimited field up to `end`, the reader at its
 * value (what `visit` leaves unread is skipped). Other wire types are skipped: none is read here.
 */
function forEachField(reader: protobuf.Reader, end: number, visit: (id: number, end: number) => void) {
  while (reader.pos < end) {
    const tag = reader.uint32();
    if ((tag & 7) !== 2) {
      reader.skipType(tag & 7);
      continue;
    }
    const valueEnd = reader.uint32() + reader.pos;
    visit(tag >>> 3, valueEnd);
    reader.pos = valueEnd;
  }
}

function scanResourceSpans(reader: protobuf.Reader, end: number) {
  const start = reader.pos;
  const resource = occurrences<Resource>(types().resource, 1);
  const scopeSpans: ScannedTraces["resourceSpans"][number]["scopeSpans"] = [];
  forEachField(reader, end, (id, fieldEnd) => {
    if (id === 1) resource.add(reader.pos, fieldEnd);
    else if (id === 2) scopeSpans.push(scanScopeSpans(reader, fieldEnd));
  });
  return { resource: resource.decode(reader, start, end), scopeSpans };
}

function scanScopeSpans(reader: protobuf.Reader, end: number) {
  const start = reader.pos;
  const scope = occurrences<Scope>(types().scope, 1);
  const spans: WireSpan[] = [];
  forEachField(reader, end, (id, fieldEnd) => {
    if (id === 1) scope.add(reader.pos, fieldEnd);
    else if (id === 2) spans.push(scanSpan(reader, fieldEnd));
  });
  return { scope: scope.decode(reader, start, end), spans };
}

/**
 * The occurrences of one sub-message field (a resource, a scope), merged as the decoder merges
 * them. Only the first range is kept: a field given many times (8 MiB of empty resources) costs
 * no object per occurrence; a second walk gathers their bytes into one buffer.
 */
function occurrences<T>(type: protobuf.Type, field: number) {
  let count = 0;
  let total = 0;
  let first: [number, number] = [0, 0];
  return {
    add(start: number, end: number) {
      if (count++ === 0) first = [start, end];
      total += end - start;
    },
    /** Decoded from the message's field occurrences; `[start, end)` is the enclosing message. */
    decode(reader: protobuf.Reader, start: number, end: number): T | undefined {
      if (count === 0) return undefined;
      const buf = reader.buf as Buffer;
      if (count === 1) return type.decode(buf.subarray(first[0], first[1])) as unknown as T;
      const merged = Buffer.allocUnsafe(total);
      let at = 0;
      const saved = reader.pos;
      reader.pos = start;
      forEachField(reader, end, (id, fieldEnd) => {
        if (id === field) at += buf.copy(merged, at, reader.pos, fieldEnd);
      });
      reader.pos = saved;
      return type.decode(merged) as unknown as T;
    },
  };
}

/** Span fields read here → the wire type the decoder reads them with (any other: unknown). */
const SPAN_FIELDS: Record<number, number> = {
  1: 2, // trace_id
  2: 2, // span_id
  4: 2, // parent_span_id
  6: 0, // kind
  7: 1, // start_time_unix_nano
  8: 1, // end_time_unix_nano
  11: 2, // events
  15: 2, // status
};

/** One span's fields as the decoder reads them: the last occurrence wins, a default is absent. */
function scanSpan(reader: protobuf.Reader, end: number): WireSpan {
  const span: WireSpan = { hasEvents: false, start: reader.pos, end };
  while (reader.pos < end) {
    const tag = reader.uint32();
    const id = tag >>> 3;
    if (SPAN_FIELDS[id] !== (tag & 7)) {
      reader.skipType(tag & 7);
      continue;
    }
    switch (id) {
      case 1:
        span.traceId = nonEmpty(reader.bytes());
        break;
      case 2:
        span.spanId = nonEmpty(reader.bytes());
        break;
      case 4:
        span.parentSpanId = nonEmpty(reader.bytes());
        break;
      case 6:
        span.kind = reader.int32() || undefined;
        break;
      case 7:
        span.startTimeUnixNano = fixed64(reader);
        break;
      case 8:
        span.endTimeUnixNano = fixed64(reader);
        break;
      case 11:
        span.hasEvents = true;
        reader.skipType(2);
        break;
      default:
        span.status = scanStatus(reader, span.status);
    }
  }
  return span;
}

/** Status.code: field 3, a varint. */
const STATUS_CODE_TAG = 3 << 3;

/** Status { message = 2; code = 3 }: only the code is needed; merged like the decoder merges. */
function scanStatus(reader: protobuf.Reader, previous: WireSpan["status"]): WireSpan["status"] {
  const status = previous ?? {};
  const end = reader.uint32() + reader.pos;
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag === STATUS_CODE_TAG) {
      const code = reader.int32();
      if (code) status.code = code;
      else delete status.code;
    } else reader.skipType(tag & 7);
  }
  return status;
}

const nonEmpty = (bytes: Uint8Array): Uint8Array | undefined => (bytes.length > 0 ? bytes : undefined);

/**
 * A fixed64 as the decoder's `Long` shape (halves signed, as long.js keeps them); zero is absent.
 * One object, where `reader.fixed64()` would make two per timestamp.
 */
function fixed64(reader: protobuf.Reader): Int64 | undefined {
  const buf = reader.buf as Buffer;
  const low = buf.readInt32LE(reader.pos);
  const high = buf.readInt32LE(reader.pos + 4);
  reader.pos += 8;
  return low === 0 && high === 0 ? undefined : { low, high, unsigned: true };
}
