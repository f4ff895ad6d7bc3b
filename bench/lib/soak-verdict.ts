/**
 * bench:soak's verdict: does a memory series level off or keep climbing?
 *
 * A series climbs when both hold:
 *   1. its level in the last third of the run exceeds a baseline from before by more than the
 *      threshold, and
 *   2. it is still rising at the end: its level in the last sixth exceeds that in the fifth sixth
 *      by more than half the threshold (half the time, so the same rate as 1).
 * A leak grows steadily and passes both. A one-off step — V8 enlarging its heap to the load, a
 * cache filling — passes only the first.
 *
 * Levels are robust statistics of all samples in a window (one a second), never single samples:
 * a shared machine stalls the servers now and then, and one outlier must not decide.
 */

import { median, quantile } from "./stats.ts";

export type Point = { t: number; value: number };

export type Rule = {
  /** A window's level: its median, or its 10th percentile ("low", see HEAP_RULE). */
  level: "median" | "low";
  /**
   * What the last third is compared with: the level of the middle third (the first third is
   * start-up: JIT, pools, caches), or the highest sample of the first two thirds ("peak").
   */
  baseline: "middle third" | "peak";
  /** The threshold is the larger of `relative` × the baseline and `floorBytes`. */
  relative: number;
  floorBytes: number;
};

const MiB = 2 ** 20;

/**
 * RSS: the whole process — the main heap, the conversion threads' heaps, malloc arenas,
 * ArrayBuffers from OTLP bodies. It does not settle: V8 grows its heap to the load and, every few
 * minutes, a major collection shrinks it again, so RSS moves between ≈ 255 and ≈ 405 MiB under
 * bench:soak's load on the 2-core machine, and the regrowth after a shrink takes minutes. Against
 * the middle third, a shrink there and the regrowth after it read as a climb (+25 MiB in a
 * leak-free run whose peaks fell from 405 to 366 and 360 MiB). So the baseline is the highest RSS
 * of the first two thirds: memory that stays in the range it already reached has levelled off;
 * a leak eventually settles above every earlier peak. In 10 minutes that catches only gross
 * growth (15–20 MiB/min, added to recorded runs); slower native leaks need `--minutes 60` or
 * more. 5 % of a ≈ 400 MiB peak is ≈ 20 MiB; 16 MiB is the floor for smaller processes.
 */
export const RSS_RULE: Rule = { level: "median", baseline: "peak", relative: 0.05, floorBytes: 16 * MiB };

/**
 * Heap used (main thread): a sawtooth between ≈ 60 MiB after a collection and ≈ 110 MiB before
 * one. How long it spends high drifts with the collector's pacing (the median moved 69 → 86 MiB
 * over six minutes while the lows stayed at 58–61), so the level is the 10th percentile: what the
 * heap falls back to, i.e. what it retains — what a leak of objects raises. The lows still follow
 * the major-collection cycle (old-generation garbage builds up for minutes: 59–87 MiB across
 * 30-second windows), and between the thirds of leak-free runs they moved by up to 2.6 MiB, and
 * by 4.1 MiB between the last two sixths. 5 % of them is ≈ 3 MiB; the floor of 8 MiB keeps a
 * margin of about twice that noise and still catches leaks of about 3 MiB/min in 10 minutes.
 */
export const HEAP_RULE: Rule = {
  level: "low",
  baseline: "middle third",
  relative: 0.05,
  floorBytes: 8 * MiB,
};

export type Trend = {
  baseline: number;
  last: number;
  /** Last third against the baseline. */
  growth: number;
  /** Last sixth against the fifth sixth: whether it is still rising at the end. */
  stillRising: number;
  threshold: number;
  climbs: boolean;
};

/** Fewer samples than this in a sixth of the run, and there is no verdict (the run was too short). */
const MIN_SAMPLES = 5;

/** Judges `points` over `[0, durationSeconds]`; null with too few samples. */
export function trend(points: Point[], durationSeconds: number, rule: Rule): Trend | null {
  const sixth = durationSeconds / 6;
  const window = (from: number, to: number) =>
    points.filter((p) => p.t >= from * sixth && (to >= 6 || p.t < to * sixth)).map((p) => p.value);
  const fifthSixth = window(4, 5);
  const lastSixth = window(5, 6);
  if ([fifthSixth, lastSixth, window(2, 3), window(3, 4)].some((w) => w.length < MIN_SAMPLES)) return null;
  const level = rule.level === "median" ? median : (values: number[]) => quantile(values, 0.1);
  const baseline = rule.baseline === "peak" ? Math.max(...window(0, 4)) : level(window(2, 4));
  const last = level([...fifthSixth, ...lastSixth]);
  const stillRising = level(lastSixth) - level(fifthSixth);
  const threshold = Math.max(rule.relative * baseline, rule.floorBytes);
  return {
    baseline,
    last,
    growth: last - baseline,
    stillRising,
    threshold,
    climbs: last - baseline > threshold && stillRising > threshold / 2,
  };
}

/** The point closest to time `t`. */
export function pointAt(points: Point[], t: number): Point | undefined {
  let best: Point | undefined;
  for (const p of points) if (!best || Math.abs(p.t - t) < Math.abs(best.t - t)) best = p;
  return best;
}
