import { describe, expect, test } from "vitest";
import { GcraQuota } from "./gcra.ts";

/** Tries one request at `now`; the partition's state afterwards. */
function attempt(quota: GcraQuota, partition: string, now: number) {
  const ahead = quota.ahead(partition, now);
  if (!quota.fits(ahead)) return { allowed: false, remaining: 0, waitMs: quota.msUntilNext(ahead) };
  const after = quota.take(partition, now, ahead);
  return { allowed: true, remaining: quota.remaining(after), waitMs: quota.msUntilNext(after) };
}

describe("GCRA quota", () => {
  test("a full allowance is a burst of `limit`; the next waits one interval", () => {
    const quota = new GcraQuota(10, 60_000);
    const results = Array.from({ length: 12 }, () => attempt(quota, "k", 1_000));
    expect(results.filter((r) => r.allowed)).toHaveLength(10);
    expect(results.map((r) => r.remaining).slice(0, 10)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    expect(results[10]).toEqual({ allowed: false, remaining: 0, waitMs: 6_000 });
  });

  test("capacity returns one request per interval, not all at once at a window's edge", () => {
    const quota = new GcraQuota(10, 60_000);
    for (let i = 0; i < 10; i++) attempt(quota, "k", 0);
    expect(attempt(quota, "k", 5_999).allowed).toBe(false);
    expect(attempt(quota, "k", 6_000)).toMatchObject({ allowed: true, remaining: 0 });
    expect(attempt(quota, "k", 6_001).allowed).toBe(false);
    // A minute after the burst the allowance is whole again, but only just used once more.
    expect(attempt(quota, "k", 66_000)).toMatchObject({ allowed: true, remaining: 9 });
  });

  test("partitions do not share an allowance", () => {
    const quota = new GcraQuota(2, 60_000);
    expect(
      [attempt(quota, "a", 0), attempt(quota, "a", 0), attempt(quota, "a", 0)].map((r) => r.allowed),
    ).toEqual([true, true, false]);
    expect(attempt(quota, "b", 0).allowed).toBe(true);
  });

  test("limits that do not divide the window still allow exactly `limit` at once", () => {
    for (const limit of [7, 3, 600, 999, 6001]) {
      const quota = new GcraQuota(limit, 60_000);
      let allowed = 0;
      for (let i = 0; i <= limit; i++) if (attempt(quota, "k", 12_345.678).allowed) allowed++;
      expect(allowed, String(limit)).toBe(limit);
    }
  });

  test("idle partitions are dropped: memory holds only those active within the last window", () => {
    const quota = new GcraQuota(5, 60_000);
    for (let i = 0; i < 1_000; i++) attempt(quota, `p${i}`, 0);
    expect(quota.size).toBe(1_000);
    // One window later every partition has its whole allowance again; the next spend sweeps.
    attempt(quota, "fresh", 60_000);
    expect(quota.size).toBe(1);
    expect(attempt(quota, "p1", 60_001)).toMatchObject({ allowed: true, remaining: 4 });
  });
});
