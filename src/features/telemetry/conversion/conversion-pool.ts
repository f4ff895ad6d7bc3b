import { Worker } from "node:worker_threads";
import { AppError, type ErrorCode, type ErrorDetails, isAppError } from "../../../errors.ts";
import type { Logger } from "../../../platform/logging/logger.ts";
import { type ConvertedTraces, convertTraces, type TraceConversion } from "./convert-traces.ts";

export type ConversionPool = ReturnType<typeof createConversionPool>;

type Task = { resolve(value: ConvertedTraces): void; reject(error: Error): void };
type Slot = { worker: Worker; tasks: Map<number, Task> };

const workerUrl = new URL("./conversion-worker.ts", import.meta.url);

/** Seconds an exporter should wait when a conversion thread died under its request. */
const WORKER_LOST_RETRY_AFTER_SECONDS = 5;

/**
 * The CPU-bound part of trace ingest (convert-traces.ts) on a few worker threads, so the thread
 * that serves HTTP and drives the database does not also decode: the request body's memory is
 * moved to a worker, the encoded COPY bytes are moved back. Threads start on first use and are
 * unref'd while idle (an idle pool never keeps a process alive). The queue is bounded twice:
 * every conversion belongs to a request the write queue admitted, and the pool refuses beyond
 * `maxPending` anyway. A thread that dies fails its conversions with a retryable 503 and is
 * replaced on the next request.
 */
export function createConversionPool(options: {
  /** Worker threads; 0 converts on the calling thread. */
  threads: number;
  /** Conversions queued or running at once, over all threads; more are refused (503). */
  maxPending: number;
  logger: Pick<Logger, "error">;
  /** The worker's entry module; tests substitute one that misbehaves. */
  entry?: URL;
}) {
  const slots: Slot[] = [];
  let nextId = 1;
  let pending = 0;
  let closed = options.threads <= 0;

  const settle = (slot: Slot, id: number): Task | undefined => {
    const task = slot.tasks.get(id);
    if (!task) return undefined;
    slot.tasks.delete(id);
    pending--;
    if (slot.tasks.size === 0) slot.worker.unref();
    return task;
  };

  const start = (): Slot => {
    const worker = new Worker(options.entry ?? workerUrl, { name: "patchbay-telemetry-conversion" });
    worker.unref();
    const slot: Slot = { worker, tasks: new Map() };
    worker.on("message", (reply: WorkerReply) => {
      const task = settle(slot, reply.id);
      if (!task) return;
      if (reply.ok) task.resolve(reviveConverted(reply.value));
      else task.reject(reviveError(reply.error));
    });
    const lost = (err: unknown) => {
      const index = slots.indexOf(slot);
      if (index < 0) return;
      slots.splice(index, 1);
      if (err !== undefined) options.logger.error({ err }, "telemetry conversion worker failed");
      for (const id of [...slot.tasks.keys()]) {
        settle(slot, id)?.reject(
          new AppError("service_unavailable", "Telemetry conversion failed; retry later.", {
            retryAfterSeconds: WORKER_LOST_RETRY_AFTER_SECONDS,
          }),
        );
      }
    };
    worker.on("error", lost);
    worker.on("exit", (code) => lost(closed ? undefined : new Error(`exited with code ${code}`)));
    slots.push(slot);
    return slot;
  };

  /** The least busy thread, starting threads up to `threads`. */
  const pick = (): Slot => {
    while (slots.length < options.threads) start();
    let best = slots[0] as Slot;
    for (const slot of slots) if (slot.tasks.size < best.tasks.size) best = slot;
    return best;
  };

  return {
    /** Decodes and encodes one trace export body; `input.body` may be moved to the worker. */
    async convertTraces(input: TraceConversion): Promise<ConvertedTraces> {
      if (closed) return convertTraces(input);
      if (pending >= options.maxPending) {
        throw new AppError("service_unavailable", "Telemetry ingest is saturated; retry shortly.", {
          retryAfterSeconds: 1,
        });
      }
      const slot = pick();
      const id = nextId++;
      const body = movable(input.body);
      return new Promise<ConvertedTraces>((resolve, reject) => {
        // Posted first: if it throws, nothing is left registered. The reply comes later anyway.
        slot.worker.postMessage({ id, input: { ...input, body } }, [body.buffer as ArrayBuffer]);
        slot.tasks.set(id, { resolve, reject });
        pending++;
        // Referenced while it has work: a caller awaiting it keeps the process alive.
        if (slot.tasks.size === 1) slot.worker.ref();
      });
    },
    get pending() {
      return pending;
    },
    /** Worker threads running now (they start on first use). */
    get threads() {
      return slots.length;
    },
    /** Terminates the threads (their conversions fail with 503); later conversions run inline. */
    async close() {
      closed = true;
      await Promise.all([...slots].map((slot) => slot.worker.terminate()));
    },
  };
}

/**
 * The body as a view that owns all of its memory, so that memory can be transferred: bodies read
 * in one piece usually are; a slice of a larger buffer (Node's pool, a socket read) is copied,
 * since moving it would detach memory that something else may still use.
 */
function movable(body: Uint8Array): Uint8Array {
  const whole =
    body.buffer instanceof ArrayBuffer && body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
  return whole ? body : new Uint8Array(body);
}

/** An error as it crosses the thread boundary: an AppError keeps its code, anything else is a bug. */
type WorkerError =
  | { app: true; code: ErrorCode; message: string; details: ErrorDetails | undefined }
  | { app: false; message: string; stack: string | undefined };

export type WorkerReply =
  | { id: number; ok: true; value: ConvertedTraces }
  | { id: number; ok: false; error: WorkerError };

export const describeError = (error: unknown): WorkerError =>
  isAppError(error)
    ? { app: true, code: error.code, message: error.message, details: error.details }
    : error instanceof Error
      ? { app: false, message: error.message, stack: error.stack }
      : { app: false, message: String(error), stack: undefined };

function reviveError(error: WorkerError): Error {
  if (error.app) return new AppError(error.code, error.message, error.details);
  const revived = new Error(`conversion worker: ${error.message}`);
  if (error.stack) revived.stack = error.stack;
  return revived;
}

/**
 * A result as it arrives from a worker: structured cloning turns the COPY Buffers into plain
 * Uint8Arrays over the transferred memory; the writer wants Buffer views of the same bytes.
 */
function reviveConverted(value: ConvertedTraces): ConvertedTraces {
  const asBuffer = (data: Uint8Array) => Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return {
    ...value,
    rows: { ...value.rows, chunks: asBuffer(value.rows.chunks), entries: asBuffer(value.rows.entries) },
  };
}
