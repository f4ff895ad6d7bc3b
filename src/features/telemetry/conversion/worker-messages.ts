import { AppError, type ErrorCode, type ErrorDetails, isAppError } from "../../../errors.ts";
import type { ConvertedTraces } from "./convert-traces.ts";

/** An error as it crosses the thread boundary: an AppError keeps its code, anything else is a bug. */
export type WorkerError =
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

export function reviveError(error: WorkerError): Error {
  if (error.app) return new AppError(error.code, error.message, error.details);
  const revived = new Error(`conversion worker: ${error.message}`);
  if (error.stack) revived.stack = error.stack;
  return revived;
}

/**
 * A result as it arrives from a worker: structured cloning turns the COPY Buffers into plain
 * Uint8Arrays over the transferred memory; the writer wants Buffer views of the same bytes.
 */
export function reviveConverted(value: ConvertedTraces): ConvertedTraces {
  const asBuffer = (data: Uint8Array) => Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return {
    ...value,
    rows: { ...value.rows, chunks: asBuffer(value.rows.chunks), entries: asBuffer(value.rows.entries) },
  };
}
