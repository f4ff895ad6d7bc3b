/**
 * Preloaded into each server bench:soak runs (`node --import ./bench/lib/report-memory.ts
 * bin/patchbay.js serve`, spawned with an IPC channel): once a second it sends the main thread's
 * V8 heap figures to the parent, so the product needs no endpoint that exposes them.
 *
 * It must never change how the server lives or dies: the timer is unref'd, it adds no `message`
 * or `disconnect` listener (either would ref the IPC channel and keep the process alive), and a
 * send that fails is dropped (an unhandled IPC error would crash the server).
 */
import { isMainThread } from "node:worker_threads";

/** What the preload sends; bytes, from `process.memoryUsage()`. */
export type MemoryReport = {
  kind: "memory";
  /** `Date.now()` in the server when it was taken. */
  at: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
};

const REPORT_EVERY_MS = 1_000;

// Worker threads inherit `--import` but not the channel; their heaps show in RSS only.
if (isMainThread && typeof process.send === "function") {
  const timer = setInterval(() => {
    if (!process.connected) {
      clearInterval(timer);
      return;
    }
    const { heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
    const report: MemoryReport = {
      kind: "memory",
      at: Date.now(),
      heapUsed,
      heapTotal,
      external,
      arrayBuffers,
    };
    process.send?.(report, undefined, undefined, () => {});
  }, REPORT_EVERY_MS);
  timer.unref();
}
