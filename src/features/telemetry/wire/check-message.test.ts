import protobuf from "protobufjs";
import { expect, test } from "vitest";
import { messageChecker } from "./check-message.ts";

// The checker mirrors the decoder for the field kinds OTLP traces use (scan-traces.test.ts); for
// any other it must refuse to be made rather than check a message less strictly than the decoder.
test("schema features the checker does not mirror are refused when it is made", () => {
  const typeOf = (fields: string) =>
    protobuf.parse(`syntax = "proto3"; enum E { A = 0; } message M { ${fields} }`).root.lookupType("M");
  const withMap = typeOf("map<string, string> m = 1;");
  expect(() => messageChecker(withMap)).toThrow(/maps/);
  // Asked again, it refuses again: no half-made plan was kept.
  expect(() => messageChecker(withMap)).toThrow(/maps/);
  expect(() => messageChecker(typeOf("repeated int32 packed = 1;"))).toThrow(/repeated scalars/);
  expect(() => messageChecker(typeOf("repeated E e = 1;"))).toThrow(/repeated enums/);
  expect(() => messageChecker(typeOf("string s = 300;"))).toThrow(/field numbers/);
  const check = messageChecker(typeOf("string s = 1; repeated string r = 2; E e = 3; sfixed64 f = 4;"));
  expect(() => check(new Uint8Array([0x0a, 0x01, 0x41]))).not.toThrow();
  expect(() => check(new Uint8Array([0x0a, 0x01, 0xff]))).toThrow(/UTF-8/);
});
