// Entry point of a conversion worker thread (conversion-pool.ts): converts trace export bodies,
// one at a time, and posts back the result with the COPY bytes transferred, not copied.
import { parentPort } from "node:worker_threads";
import { convertTraces, type TraceConversion } from "./convert-traces.ts";
import { describeError, type WorkerReply } from "./worker-messages.ts";

const port = parentPort;
if (!port) throw new Error("conversion-worker.ts runs only as a worker thread");

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
