// Entry point of a conversion worker thread (conversion-pool.ts): converts trace export bodies,
// one at a time, and posts back the result with the COPY bytes transferred, not copied.
import { getPriority, setPriority } from "node:os";
import { parentPort } from "node:worker_threads";
import { describeError, type WorkerReply } from "./conversion-pool.ts";
import { convertTraces, type TraceConversion } from "./convert-traces.ts";

const port = parentPort;
if (!port) throw new Error("conversion-worker.ts runs only as a worker thread");

// Conversion is bulk work; the serving thread is not. Ten steps below the serving thread's
// priority (relative, so a process already started under `nice` keeps the order), so HTTP
// answers, admission and the database writes run as soon as they are ready instead of waiting
// behind a burst of exports. The order holds among patchbay's own threads only: with the
// kernel's autogroups (and in any container or host of its own) PostgreSQL's processes are
// scheduled apart. bench:ingest: +6.5 % spans/s, mean of seven pairs (5 of 7; within this host's
// noise; docs/performance.md, "bench:ingest"). On Linux this sets the calling thread only; elsewhere
// it would set the whole process, so it is skipped.
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
