import protobuf from "protobufjs";

/** ExportTraceServiceRequest.resource_spans, ResourceSpans.scope_spans, ScopeSpans.spans. */
const PATH = [1, 2, 2] as const;
const LENGTH_DELIMITED = 2;

/**
 * Where each span's message lies in an encoded ExportTraceServiceRequest: `[start, end)` byte
 * offsets, two numbers per span, in the order protobufjs's decoder yields the spans (wire order).
 * Run only on a body that decoded, so the wire format is known to be sound. Like the decoder, a
 * field of the path with another wire type is an unknown field and skipped. Lets ingest store a
 * span's bytes as they came instead of re-encoding it (storage/stored-spans.ts); costs ~0.03 µs
 * per span, against ~2 µs for decoding.
 */
export function spanRanges(body: Uint8Array): number[] {
  const ranges: number[] = [];
  const reader = protobuf.Reader.create(body);
  const walk = (end: number, depth: number) => {
    while (reader.pos < end) {
      const tag = reader.uint32();
      const wireType = tag & 7;
      if (tag >>> 3 !== PATH[depth] || wireType !== LENGTH_DELIMITED) {
        reader.skipType(wireType, depth, tag >>> 3);
        continue;
      }
      const length = reader.uint32();
      const start = reader.pos;
      if (depth === PATH.length - 1) {
        ranges.push(start, start + length);
        reader.pos = start + length;
      } else walk(start + length, depth + 1);
    }
  };
  walk(body.length, 0);
  return ranges;
}
