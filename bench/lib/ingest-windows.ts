/**
 * bench:ingest's measured windows: one phase's window (warm-up, then counting), and a phase's
 * windows combined into its figure. See bench/ingest.ts.
 */
import { performance } from "node:perf_hooks";
import { machineCpuSeconds, postgresCpuSeconds, processCpuSeconds } from "./processes.ts";

export type Phase = {
  target: "pglite" | "postgres";
  phase: "decode-only" | "scan-only" | "full ingest";
  spans: number;
  seconds: number;
  spansPerSecond: number;
  peakRssMiB: number;
  peakHeapMiB: number;
  /** % of one core over the window; `main` is the bench process's main (serving) thread alone. */
  cpu: { bench: number | null; main: number | null; db: number | null; other: number | null };
};

/** Warm-up of every window after a phase's first: enough to refill the request pipeline. */
export const REWARM_SECONDS = 0.5;

/** A phase's windows as one: spans and seconds summed, CPU weighted by time, memory at its peak. */
export function combine(windows: Phase[]): Phase {
  const [first] = windows;
  if (!first) throw new Error("combine: no windows");
  const spans = windows.reduce((sum, w) => sum + w.spans, 0);
  const seconds = windows.reduce((sum, w) => sum + w.seconds, 0);
  const cpu = (key: keyof Phase["cpu"]) =>
    windows.some((w) => w.cpu[key] === null)
      ? null
      : windows.reduce((sum, w) => sum + (w.cpu[key] ?? 0) * w.seconds, 0) / seconds;
  return {
    target: first.target,
    phase: first.phase,
    spans,
    seconds,
    spansPerSecond: spans / seconds,
    peakRssMiB: Math.max(...windows.map((w) => w.peakRssMiB)),
    peakHeapMiB: Math.max(...windows.map((w) => w.peakHeapMiB)),
    cpu: { bench: cpu("bench"), main: cpu("main"), db: cpu("db"), other: cpu("other") },
  };
}

/**
 * Runs `work` for warm-up + window and samples memory. Counts only what completes inside the
 * window, and its CPU only up to the window's end: what is still in flight at the deadline drains
 * at falling concurrency, which says nothing about the rate.
 */
export async function measure(
  target: Phase["target"],
  phase: Phase["phase"],
  warmupSeconds: number,
  windowSeconds: number,
  work: (deadline: number, count: (spans: number) => void) => Promise<void>,
): Promise<Phase> {
  // The phases take turns on this thread: without a collection first, one phase's garbage would
  // count in the next one's peak heap and RSS (the bench's engine process runs with --expose-gc).
  (globalThis as { gc?: () => void }).gc?.();
  let spans = 0;
  let counting = false;
  let peakRss = 0;
  let peakHeap = 0;
  const sample = () => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  };
  const sampler = setInterval(sample, 25);
  const start = performance.now();
  const measureFrom = start + warmupSeconds * 1000;
  const deadline = measureFrom + windowSeconds * 1000;
  // The window opens at the first count after the warm-up (not on a timer: PGlite runs on this
  // thread and can hold it for a while).
  let cpu0: ReturnType<typeof cpuNow> | undefined;
  let cpu1: ReturnType<typeof cpuNow> | undefined;
  let opened = 0;
  const closer = setTimeout(() => {
    cpu1 ??= cpuNow();
  }, deadline - start);
  await work(deadline, (n) => {
    const now = performance.now();
    if (!counting && now >= measureFrom) {
      counting = true;
      opened = now;
      cpu0 = cpuNow();
      return;
    }
    if (counting && now < deadline) spans += n;
  });
  // The timer may fire late when the thread is busy (PGlite runs on it): its CPU reading is then
  // taken at the end at the latest. The counted window itself ends at the deadline.
  clearTimeout(closer);
  cpu1 ??= cpuNow();
  clearInterval(sampler);
  sample();
  const seconds = (deadline - opened) / 1000;
  const percent = (a: number | null | undefined, b: number | null | undefined) =>
    a === null || a === undefined || b === null || b === undefined ? null : ((b - a) / seconds) * 100;
  const bench = percent(cpu0?.bench, cpu1?.bench);
  const main = percent(cpu0?.main, cpu1?.main);
  const db = target === "postgres" ? percent(cpu0?.db, cpu1?.db) : null;
  const machine = percent(cpu0?.machine, cpu1?.machine);
  return {
    target,
    phase,
    spans,
    seconds,
    spansPerSecond: spans / seconds,
    peakRssMiB: peakRss / 2 ** 20,
    peakHeapMiB: peakHeap / 2 ** 20,
    cpu: {
      bench,
      main,
      db,
      other: machine === null || bench === null ? null : Math.max(0, machine - bench - (db ?? 0)),
    },
  };
}

function cpuNow() {
  return {
    bench: processCpuSeconds(process.pid),
    main: threadCpuSeconds(),
    db: postgresCpuSeconds(),
    machine: machineCpuSeconds()?.busy ?? null,
  };
}

/** CPU seconds of this thread (the main thread: HTTP, admission, the database writes). */
function threadCpuSeconds(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1e6;
}
