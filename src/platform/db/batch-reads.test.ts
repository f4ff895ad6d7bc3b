import { describe, expect, test } from "vitest";
import { batchReader } from "./batch-reads.ts";

type Calls = { many: string[][]; one: string[] };

/** A reader over a fixed map; keys in `failing` fail on their own, and any batch holding one fails. */
function fixture(values: Record<string, number>, failing: string[] = []) {
  const calls: Calls = { many: [], one: [] };
  const reader = batchReader<string, number>({
    id: (key) => key,
    async readMany(keys) {
      calls.many.push([...keys]);
      if (keys.some((k) => failing.includes(k))) throw new Error("batch failed");
      return keys.flatMap((k) => (k in values ? [[k, values[k] as number] as const] : []));
    },
    async readOne(key) {
      calls.one.push(key);
      if (failing.includes(key)) throw new Error(`bad key ${key}`);
      return values[key];
    },
  });
  return { reader, calls };
}

describe("batchReader", () => {
  test("the loads of one turn go out as one read, and each caller gets its own key's value", async () => {
    const { reader, calls } = fixture({ a: 1, b: 2, c: 3 });
    const results = await Promise.all(["a", "b", "missing", "c"].map((k) => reader.load(k)));
    expect(results).toEqual([1, 2, undefined, 3]);
    expect(calls.many).toEqual([["a", "b", "missing", "c"]]);
    expect(calls.one).toEqual([]);
  });

  test("equal keys in one turn are read once and answered alike", async () => {
    const { reader, calls } = fixture({ a: 1, b: 2 });
    expect(await Promise.all(["a", "b", "a"].map((k) => reader.load(k)))).toEqual([1, 2, 1]);
    expect(calls.many).toEqual([["a", "b"]]);
  });

  test("a lone key takes the single read; later turns make batches of their own", async () => {
    const { reader, calls } = fixture({ a: 1, b: 2 });
    expect(await reader.load("a")).toBe(1);
    expect(await Promise.all([reader.load("a"), reader.load("b")])).toEqual([1, 2]);
    expect(calls.one).toEqual(["a"]);
    expect(calls.many).toEqual([["a", "b"]]);
  });

  test("a failing batch is read again key by key: one key's error reaches only its caller", async () => {
    const { reader, calls } = fixture({ a: 1, c: 3 }, ["bad"]);
    const results = await Promise.allSettled(["a", "bad", "c", "missing"].map((k) => reader.load(k)));
    expect(results).toEqual([
      { status: "fulfilled", value: 1 },
      { status: "rejected", reason: new Error("bad key bad") },
      { status: "fulfilled", value: 3 },
      { status: "fulfilled", value: undefined },
    ]);
    expect(calls.many).toHaveLength(1);
    expect(calls.one.sort()).toEqual(["a", "bad", "c", "missing"]);
  });

  test("a turn with more keys than one batch takes is split", async () => {
    const values = Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`k${i}`, i]));
    const { reader, calls } = fixture(values);
    const results = await Promise.all(Object.keys(values).map((k) => reader.load(k)));
    expect(results).toEqual(Object.values(values));
    expect(calls.many.map((keys) => keys.length)).toEqual([256, 256, 88]);
  });
});
