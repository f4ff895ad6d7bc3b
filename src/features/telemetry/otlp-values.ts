import type { JsonObject, JsonValue } from "../../platform/db/schema/telemetry.ts";
import type { OtlpLimits } from "./limits.ts";
import { cleanText, finiteOrNull, has, int64ToJson } from "./otlp-scalars.ts";
import type { AnyValue, KeyValue } from "./otlp-types.ts";

/** Stack traces may be long; every other attribute value is held to the ordinary limit. */
const longValueKeys = new Set(["exception.stacktrace"]);

/** What one attribute map may still spend: characters and values, nested ones included. */
type Budget = { chars: number; nodes: number };

const newBudget = (limits: OtlpLimits): Budget => ({ chars: limits.maxMapChars, nodes: limits.maxMapNodes });

/**
 * OTLP key/value list → one JSON object, bounded: at most `maxAttributes` keys, long values cut,
 * nesting and array lengths capped, and a budget over the whole map. A key such as `__proto__`
 * is stored as data (defined, not assigned), never as the object's prototype.
 */
export function attributesToJson(list: KeyValue[] | undefined, limits: OtlpLimits): JsonObject {
  return keyValuesToJson(list, limits, newBudget(limits), 0);
}

/** One AnyValue (a log body, say) → JSON with the long-value limit. */
export function anyValueToJson(value: AnyValue | null | undefined, limits: OtlpLimits): JsonValue {
  return convert(value, limits, newBudget(limits), 0, limits.maxLongValueChars);
}

function keyValuesToJson(
  list: KeyValue[] | undefined,
  limits: OtlpLimits,
  budget: Budget,
  depth: number,
): JsonObject {
  const out: JsonObject = {};
  let keys = 0;
  for (const kv of list ?? []) {
    if (keys >= limits.maxAttributes || budget.nodes <= 0 || budget.chars <= 0) break;
    const key = cleanText(kv.key ?? "", limits.maxKeyChars);
    if (key === "") continue;
    if (!has(out, key)) keys++;
    budget.nodes--;
    budget.chars -= key.length;
    const max = longValueKeys.has(key) ? limits.maxLongValueChars : limits.maxValueChars;
    const value = convert(kv.value, limits, budget, depth, max);
    // Plain assignment is several times faster; only `__proto__` would mean something else.
    if (key === "__proto__") {
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    } else out[key] = value;
  }
  return out;
}

function convert(
  value: AnyValue | null | undefined,
  limits: OtlpLimits,
  budget: Budget,
  depth: number,
  maxChars: number,
): JsonValue {
  if (!value) return null;
  if (has(value, "stringValue")) return text(value.stringValue ?? "", maxChars, budget);
  if (has(value, "boolValue")) return value.boolValue === true;
  if (has(value, "intValue")) return int64ToJson(value.intValue, false);
  if (has(value, "doubleValue")) {
    const double = value.doubleValue ?? 0;
    return finiteOrNull(double) ?? String(double);
  }
  if (has(value, "bytesValue") && value.bytesValue) {
    const bytes = value.bytesValue;
    return text(
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64"),
      maxChars,
      budget,
    );
  }
  if (value.arrayValue || value.kvlistValue) {
    if (depth >= limits.maxValueDepth) return "[nested too deep]";
    if (value.kvlistValue) return keyValuesToJson(value.kvlistValue.values, limits, budget, depth + 1);
    const items: JsonValue[] = [];
    for (const item of value.arrayValue?.values ?? []) {
      if (items.length >= limits.maxArrayItems || budget.nodes <= 0 || budget.chars <= 0) break;
      budget.nodes--;
      items.push(convert(item, limits, budget, depth + 1, limits.maxValueChars));
    }
    return items;
  }
  return null;
}

function text(value: string, maxChars: number, budget: Budget): string {
  const cleaned = cleanText(value, Math.max(1, Math.min(maxChars, budget.chars)));
  budget.chars -= cleaned.length;
  return cleaned;
}

/** `service.name` from resource attributes; the specification's fallback when it is missing. */
export function serviceNameOf(resource: JsonObject, limits: OtlpLimits): string {
  const name = resource["service.name"];
  return typeof name === "string" && name !== ""
    ? cleanText(name, limits.maxServiceNameChars)
    : "unknown_service";
}
