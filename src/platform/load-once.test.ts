import { describe, expect, test } from "vitest";
import { loadOnce } from "./load-once.ts";

describe("loadOnce", () => {
  test("loads on the first call only, shares the result, and starts nothing when asked what started", async () => {
    let loads = 0;
    const get = loadOnce(async () => ++loads);
    expect(get.started()).toBeUndefined();
    expect(loads).toBe(0);
    const [a, b] = await Promise.all([get(), get()]);
    expect([a, b, loads]).toEqual([1, 1, 1]);
    expect(await get.started()).toBe(1);
  });

  test("a failed load is run again by the next call, and is no longer reported as started", async () => {
    let attempt = 0;
    const get = loadOnce(async () => {
      attempt++;
      if (attempt === 1) throw new Error("first load fails");
      return "loaded";
    });
    await expect(get()).rejects.toThrow("first load fails");
    expect(get.started()).toBeUndefined();
    expect(await get()).toBe("loaded");
    expect(attempt).toBe(2);
  });
});
