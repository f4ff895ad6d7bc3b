// Entry point of a conversion worker thread (conversion-pool.ts): converts trace export bodies,
// one at a time, and posts back the result with the COPY bytes transferred, not copied.
import { getPriority, setPriority } from "node:os";
import { parentPort } from "node:worker_threads";
import { describeError, type WorkerReply } from "./conversion-pool.ts";
import { convertTraces, type TraceConversion } from "./convert-traces.ts";

const port = parentPort;
if (!port) throw new Error("conversion-worker.ts runs only as a worker thread");

// Conversion is bulk work; the serving thread is not. Ten steps below the serving thread's
// priority (relative: a process started under `nice` keeps the order), so HTTP answers, admission
// and database writes do not wait behind a burst of exports (bench:ingest: +6.5 % spans/s,
// docs/performance.md). On Linux this sets the calling thread only; elsewhere it would set the
// whole process, so it is skipped.
if (process.platform === "linux") {
  try {
    setPriority(Math.min(19, getPriority() + 10));
  } catch {
    // Not allowed here (some sandboxes): the thread keeps the process's priority.
  }
}

port.on("message", ({ id, input }: { id: number; input: TraceConversion }) => {
  let reply: WorkerReply;
  try {
    reply = { id, ok: true, value: convertTraces(input) };
  } catch (error) {
    port.postMessage({ id, ok: false, error: describeError(error) } satisfies WorkerReply);
    return;
  }
  // The COPY buffers are never pooled (copy-binary.ts), so their memory moves to the writing thread.
  const { chunks, entries } = reply.value.rows;
  port.postMessage(reply, [chunks.buffer as ArrayBuffer, entries.buffer as ArrayBuffer]);
});
