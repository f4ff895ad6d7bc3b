// Entry point of a conversion worker thread (conversion-pool.ts): converts trace export bodies,
// one at a time, and posts back the result with the COPY bytes transferred, not copied.
import { constants, setPriority } from "node:os";
import { parentPort } from "node:worker_threads";
import { convertTraces, type TraceConversion } from "./convert-traces.ts";
import { describeError, type WorkerReply } from "./worker-messages.ts";

const port = parentPort;
if (!port) throw new Error("conversion-worker.ts runs only as a worker thread");

// Conversion is bulk work; the serving thread and the database connections it waits on are not.
// A lower priority (nice 10) lets them run as soon as they wake, so API requests are not queued
// behind a burst of exports, and a batch's COPY and commit are not either: bench:ingest stored
// ~6 % more spans/s this way (docs/performance.md, step 15), the machine idling less. On Linux
// this sets only the calling thread; elsewhere it would set the whole process, so it is skipped.
if (process.platform === "linux") {
  try {
    setPriority(constants.priority.PRIORITY_BELOW_NORMAL);
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
