import { isUtf8 } from "node:buffer";
import protobuf from "protobufjs";

/**
 * Checks that bytes decode as a message of `type`, accepted or refused exactly as protobufjs's
 * generated decoder would, without building the message: ingest only stores most of a request's
 * bytes, and building every attribute as objects and strings was half of a span's conversion.
 *
 * The walk mirrors protobufjs's decoder (protobufjs/src/decoder.js) field kind by field kind,
 * reading through protobufjs's own `Reader` methods, so truncation, bad varints, wrong wire types,
 * groups, field number 0 and the recursion limit behave as in `Type.decode`; strings are checked
 * for UTF-8 as proto3 requires (wire/scan-traces.test.ts holds both to one verdict). Schema
 * features OTLP traces do not use (maps, packed scalars, closed enums, groups as fields) are
 * refused when the checker is made, so a schema change cannot silently check less.
 */
export function messageChecker(type: protobuf.Type): (body: Uint8Array) => void {
  // Editions features (proto3's UTF-8 verification among them) are known once the root is resolved.
  type.root.resolveAll();
  const plan = planOf(type);
  return (body) => walk(protobuf.Reader.create(body), plan, undefined, 0);
}

/** How a field is read (plain numbers: type stripping has no enums). */
const Kind = {
  Unknown: 0,
  Message: 1,
  Utf8: 2,
  Bytes: 3,
  Varint32: 4,
  Bool: 5,
  Varint64: 6,
  Fixed32: 7,
  Fixed64: 8,
} as const;
type Kind = (typeof Kind)[keyof typeof Kind];

type Plan = {
  /** By field number: how to read it (0: unknown, skipped). */
  kinds: Uint8Array;
  /** By field number: the wire type the decoder expects; any other makes it an unknown field. */
  wireTypes: Uint8Array;
  nested: (Plan | undefined)[];
  /** A message without fields: protobufjs skips with the whole tag as field number. */
  empty: boolean;
};

const plans = new Map<protobuf.Type, Plan>();

/** Keeps the by-number tables small; OTLP's field numbers stay below 20. */
const MAX_FIELD_NUMBER = 255;

function planOf(type: protobuf.Type): Plan {
  const known = plans.get(type);
  if (known) return known;
  const fields = type.fieldsArray.map((f) => f.resolve());
  const size = Math.max(0, ...fields.map((f) => f.id)) + 1;
  if (size > MAX_FIELD_NUMBER + 1)
    throw new Error(`${type.fullName}: field numbers above ${MAX_FIELD_NUMBER}`);
  const plan: Plan = {
    kinds: new Uint8Array(size),
    wireTypes: new Uint8Array(size),
    nested: [],
    empty: fields.length === 0,
  };
  // Registered before the fields are planned: message types nest recursively (AnyValue).
  plans.set(type, plan);
  try {
    for (const field of fields) {
      plan.kinds[field.id] = kindOf(type, field);
      plan.wireTypes[field.id] = wireTypeOf(field);
      if (field.resolvedType instanceof protobuf.Type) plan.nested[field.id] = planOf(field.resolvedType);
    }
  } catch (error) {
    // A half-made plan would check less, silently, the next time the type is asked for.
    plans.delete(type);
    throw error;
  }
  return plan;
}

/** How each scalar type is read, by the reader method the generated decoder calls. */
const SCALAR_KINDS: Record<string, Kind> = {
  bytes: Kind.Bytes,
  int32: Kind.Varint32,
  uint32: Kind.Varint32,
  sint32: Kind.Varint32,
  bool: Kind.Bool,
  int64: Kind.Varint64,
  uint64: Kind.Varint64,
  sint64: Kind.Varint64,
  fixed32: Kind.Fixed32,
  sfixed32: Kind.Fixed32,
  float: Kind.Fixed32,
  fixed64: Kind.Fixed64,
  sfixed64: Kind.Fixed64,
  double: Kind.Fixed64,
};

function kindOf(type: protobuf.Type, field: protobuf.Field): Kind {
  const where = `${type.fullName}.${field.name}`;
  if (field.map || field.delimited) throw new Error(`${where}: maps and groups are not supported`);
  if (field.resolvedType instanceof protobuf.Type) return Kind.Message;
  if (field.resolvedType instanceof protobuf.Enum) {
    // A closed enum's decoder keeps unknown values aside instead of reading them as numbers.
    if (features(field.resolvedType).enum_type === "CLOSED") throw new Error(`${where}: closed enum`);
    if (field.repeated) throw new Error(`${where}: repeated enums are packable`);
    return Kind.Varint32;
  }
  // The decoder reads packable repeated scalars either packed or not: not needed for OTLP traces.
  if (field.repeated && field.type !== "string" && field.type !== "bytes") {
    throw new Error(`${where}: repeated scalars are not supported`);
  }
  if (field.type === "string") {
    const validation = features(field).utf8_validation;
    if (validation === undefined) throw new Error(`${where}: features not resolved`);
    return validation === "VERIFY" ? Kind.Utf8 : Kind.Bytes;
  }
  const kind = SCALAR_KINDS[field.type];
  if (kind === undefined) throw new Error(`${where}: type ${field.type} is not supported`);
  return kind;
}

/** The wire type the generated decoder expects: protobufjs's own table, 2 for messages. */
function wireTypeOf(field: protobuf.Field): number {
  if (field.resolvedType instanceof protobuf.Type) return 2;
  const type = field.resolvedType instanceof protobuf.Enum ? "int32" : field.type;
  return protobuf.types.basic[type as keyof typeof protobuf.types.basic];
}

/** protobufjs's resolved editions features (not in its type declarations). */
const features = (of: protobuf.ReflectionObject) =>
  (of as unknown as { _features: { utf8_validation?: string; enum_type?: string } })._features;

/** One message: `length` undefined for the outermost, which runs to the end of the body. */
function walk(reader: protobuf.Reader, plan: Plan, length: number | undefined, depth: number): void {
  if (depth > protobuf.Reader.recursionLimit) throw new Error("max depth exceeded");
  let end = reader.len;
  const outerLen = reader.len;
  if (length !== undefined) {
    end = reader.pos + length;
    if (end > reader.len) throw new RangeError("index out of range");
    reader.len = end;
  }
  const { kinds, wireTypes, nested } = plan;
  while (reader.pos < end) {
    const tag = reader.tag();
    const wireType = tag & 7;
    const id = tag >>> 3;
    // A message without fields plans every number as unknown.
    const kind = id < kinds.length ? kinds[id] : Kind.Unknown;
    if (kind === Kind.Unknown || wireTypes[id] !== wireType) {
      reader.skipType(wireType, depth, plan.empty ? tag : id);
      continue;
    }
    switch (kind) {
      case Kind.Message:
        walk(reader, nested[id] as Plan, reader.size(), depth + 1);
        break;
      case Kind.Utf8:
      case Kind.Bytes: {
        const size = reader.size();
        const start = reader.pos;
        reader.skip(size);
        if (kind === Kind.Utf8 && !isUtf8Range(reader.buf, start, start + size)) {
          throw new Error(`invalid UTF-8 in a string at offset ${start}`);
        }
        break;
      }
      case Kind.Varint32:
        reader.uint32();
        break;
      case Kind.Bool:
        reader.bool();
        break;
      case Kind.Varint64:
        reader.uint64();
        break;
      case Kind.Fixed32:
        reader.skip(4);
        break;
      default:
        reader.skip(8);
    }
  }
  if (length !== undefined) {
    if (reader.pos !== end) throw new RangeError("index out of range");
    reader.len = outerLen;
  }
}

/** ASCII in a loop (most OTLP text); from the first other byte on, the native check. */
function isUtf8Range(buf: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    if ((buf[i] as number) >= 0x80) return isUtf8(buf.subarray(i, end));
  }
  return true;
}
