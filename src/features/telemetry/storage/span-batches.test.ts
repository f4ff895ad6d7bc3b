import { eq } from "drizzle-orm";
import { describe as plainDescribe, expect as plainExpect, test as plainTest } from "vitest";
import { describe, expect, test } from "../../../../test/fixtures.ts";
import {
  createKey,
  JSON_TYPE,
  jsonSpan,
  jsonTraces,
  nanosAgo,
  post,
  spansOf,
} from "../../../../test/lib/telemetry.ts";
import { problems } from "../../../platform/db/schema/problems.ts";
import { batchWrites } from "./span-batches.ts";

const tick = () => new Promise((resolve) => setImmediate(resolve));

plainDescribe("batchWrites", () => {
  const harness = (failBatches = false) => {
    const batches: string[][] = [];
    const singles: string[] = [];
    const release: (() => void)[] = [];
    const batcher = batchWrites<string>({
      maxBatch: 3,
      maxFlushing: 1,
      async writeBatch(batch) {
        batches.push(batch);
        await new Promise<void>((resolve) => release.push(resolve));
        if (failBatches) throw new Error("duplicate key");
      },
      async single(write) {
        singles.push(write);
        await new Promise<void>((resolve) => release.push(resolve));
        if (write.startsWith("bad")) throw new Error(`${write} failed`);
      },
    });
    const drain = async () => {
      for (let i = 0; i < 20; i++) {
        await tick();
        release.splice(0).forEach((r) => {
          r();
        });
      }
    };
    return { batcher, batches, singles, drain };
  };

  plainTest("a lone write goes at once; writes arriving meanwhile share the next transactions", async () => {
    const { batcher, batches, singles, drain } = harness();
    const first = batcher.write("a");
    await tick();
    plainExpect(singles).toEqual(["a"]);
    const rest = ["b", "c", "d", "e", "f"].map((w) => batcher.write(w));
    await drain();
    await Promise.all([first, ...rest]);
    plainExpect(batches).toEqual([
      ["b", "c", "d"],
      ["e", "f"],
    ]);
  });

  plainTest("a failed batch is written again write by write, each with its own outcome", async () => {
    const { batcher, batches, singles, drain } = harness(true);
    const first = batcher.write("a");
    const rest = ["b", "bad-c", "d"].map((w) =>
      batcher.write(w).then(
        () => "ok",
        (e: Error) => e.message,
      ),
    );
    await drain();
    await first;
    plainExpect(await Promise.all(rest)).toEqual(["ok", "bad-c failed", "ok"]);
    plainExpect(batches).toEqual([["b", "bad-c", "d"]]);
    plainExpect(singles).toEqual(["a", "b", "bad-c", "d"]);
  });
});

describe("span writes of concurrent requests", () => {
  test("committed together: every span stored once, every exception counted once, retries included", async ({
    app,
    owner,
    stranger,
    deps,
  }) => {
    const [ownerKey, strangerKey] = await Promise.all([createKey(owner), createKey(stranger)]);
    const failing = (n: number) =>
      jsonSpan({
        status: { code: 2 },
        events: [
          {
            name: "exception",
            timeUnixNano: nanosAgo(1),
            attributes: [
              { key: "exception.type", value: { stringValue: "BatchError" } },
              { key: "exception.message", value: { stringValue: `order ${n} failed` } },
            ],
          },
        ],
      });
    // 24 requests: within the 32 admitted at once (more would be answered 503, by design).
    const bodies = Array.from({ length: 6 }, (_, n) =>
      JSON.stringify(jsonTraces([failing(n), jsonSpan(), jsonSpan()], "batched")),
    );
    // Each body twice (the second an exporter's retry), both tenants, all at once.
    const sends = [...bodies, ...bodies].flatMap((body) => [
      post(app, "/v1/traces", ownerKey.key, body, JSON_TYPE),
      post(app, "/v1/traces", strangerKey.key, body, JSON_TYPE),
    ]);
    const statuses = (await Promise.all(sends)).map((res) => res.status);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);

    for (const tenant of [owner, stranger]) {
      expect(await spansOf(deps.db, tenant.environmentId)).toBe(18);
      const rows = await deps.db
        .select()
        .from(problems)
        .where(eq(problems.environmentId, tenant.environmentId));
      expect(rows.map((p) => [p.exceptionType, Number(p.count)])).toEqual([["BatchError", 6]]);
    }
  });
});
