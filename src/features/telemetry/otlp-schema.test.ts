import { describe, expect, test } from "vitest";
import { otlpMessages } from "./otlp-schema.ts";

const anyValue = otlpMessages.traces.request.root.lookupType("opentelemetry.proto.common.v1.AnyValue");

describe("OTLP schema decoding", () => {
  test("a oneof keeps only the member read last, as protobuf requires", () => {
    // AnyValue: string_value = "a" (field 1), then int_value = 5 (field 3), then bool_value (2).
    const stringThenInt = anyValue.decode(Uint8Array.from([0x0a, 0x01, 0x61, 0x18, 0x05]));
    expect(Object.keys(stringThenInt)).toEqual(["intValue"]);
    expect(Number((stringThenInt as unknown as { intValue: number }).intValue)).toBe(5);
    const intThenBool = anyValue.decode(Uint8Array.from([0x18, 0x05, 0x10, 0x01]));
    expect(Object.keys(intThenBool)).toEqual(["boolValue"]);
    expect((intThenBool as unknown as { value: string }).value).toBe("boolValue");
    const stringOnly = anyValue.decode(Uint8Array.from([0x0a, 0x01, 0x61]));
    expect(stringOnly.toJSON()).toEqual({ stringValue: "a" });
  });
});
