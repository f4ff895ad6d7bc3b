import { describe, expect, test } from "../../../../test/fixtures.ts";
import { binaryCopyWriter, field, rowStart } from "./copy-binary.ts";
import { telemetryDatabase } from "./sql-runner.ts";

type Row = {
  text: string;
  maybe: string | null;
  small: number;
  big: number;
  micros: number;
  uuid: string;
  resource: string;
  json: unknown;
  count: number;
};

const rows: Row[] = [
  {
    text: "plain",
    maybe: null,
    small: 0,
    big: 0,
    micros: Date.parse("2026-11-22T10:00:00.123Z") * 1000 + 456,
    uuid: "6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f",
    resource: "0",
    json: {},
    count: 0,
  },
  {
    // Characters the text format escapes, and multi-byte UTF-8 (3- and 4-byte sequences).
    text: "tab\there\nnew line \\ back — Grüße 🚀 \r",
    maybe: "ünïcödé",
    small: -32768,
    big: 2 ** 53 - 1,
    micros: 1, // 1970: before PostgreSQL's epoch, a negative count
    uuid: "00000000-0000-0000-0000-000000000001",
    resource: "-9223372036854775808",
    json: { "http.route": "/a\tb", nested: [1, "x\n", { deep: null }], emoji: "🚀" },
    count: -2_147_483_648,
  },
  {
    text: "x".repeat(300_000), // larger than the writer's first allocation: it must grow
    maybe: "",
    small: 32767,
    big: -(2 ** 53) + 1,
    micros: Date.parse("2262-01-01T00:00:00Z") * 1000,
    uuid: "ffffffff-ffff-ffff-ffff-ffffffffffff",
    resource: "9223372036854775807",
    json: [{ name: "exception", attributes: { "exception.stacktrace": "at f (a.js:1:2)\n".repeat(500) } }],
    count: 2_147_483_647,
  },
];

function encode(input: Row[]): Buffer {
  const out = binaryCopyWriter(64);
  for (const r of input) {
    out.push(
      rowStart(10) +
        field.text(r.text) +
        field.nullableText(r.maybe) +
        field.int16(r.small) +
        field.int64(r.big) +
        field.timestamp(r.micros) +
        field.uuid(r.uuid) +
        field.int64Decimal(r.resource) +
        field.text(JSON.stringify(r.json)) +
        field.int32(r.count),
    );
    // The same text again, written straight as UTF-8 (long values: trace chunks).
    out.pushText(r.text);
  }
  return out.done();
}

describe("binary COPY", () => {
  test("every value round-trips through the database exactly", async ({ deps }) => {
    const back = await telemetryDatabase(deps.database).transaction(async (run) => {
      await run.query(
        `create temp table copy_binary_check (
           text text not null, maybe text, small smallint, big bigint, at timestamptz(6),
           uuid uuid, resource bigint, json json, count integer, direct text not null
         ) on commit drop`,
        [],
      );
      await run.copyIn(
        "copy_binary_check (text, maybe, small, big, at, uuid, resource, json, count, direct)",
        encode(rows),
        "binary",
      );
      return run.query(
        `select text, maybe, small, big::text as big, uuid::text as uuid, resource::text as resource,
                json::text as json, count, direct,
                ((extract(epoch from at) * 1000000)::bigint)::text as micros
           from copy_binary_check`,
        [],
      );
    });
    expect(back).toHaveLength(rows.length);
    back.forEach((got, i) => {
      const want = rows[i] as Row;
      expect(got.text).toBe(want.text);
      expect(got.maybe).toBe(want.maybe);
      expect(got.small).toBe(want.small);
      expect(got.big).toBe(String(want.big));
      expect(got.micros).toBe(String(want.micros));
      expect(got.uuid).toBe(want.uuid);
      expect(got.resource).toBe(want.resource);
      expect(JSON.parse(String(got.json))).toEqual(want.json);
      expect(got.count).toBe(want.count);
      expect(got.direct).toBe(want.text);
    });
  });

  test("a malformed uuid is refused, not turned into another one", () => {
    expect(() => field.uuid("6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4ezz")).toThrow(/not a uuid/);
    expect(() => field.uuid("6f1c2d3e")).toThrow(/not a uuid/);
  });
});
