import { gunzip } from "node:zlib";
import { AppError } from "../../errors.ts";
import type { OtlpLimits } from "./limits.ts";

const tooLarge = (limit: number, what: string) =>
  new AppError("payload_too_large", `The ${what} exceeds ${limit} bytes; send smaller batches.`, { limit });

/**
 * Reads an OTLP request body within the limits: at most `maxCompressedBytes` as received when
 * gzip-encoded, at most `maxDecodedBytes` after decompression (or as received, uncompressed).
 * The stream is read chunk by chunk and abandoned as soon as a limit is passed, and inflation
 * stops at `maxDecodedBytes` of output (zlib's `maxOutputLength`), so a decompression bomb costs
 * at most the limit in memory, never its inflated size.
 */
export async function readOtlpBody(request: Request, limits: OtlpLimits): Promise<Uint8Array> {
  const encoding = (request.headers.get("content-encoding") ?? "identity").trim().toLowerCase();
  const gzip = encoding === "gzip" || encoding === "x-gzip";
  if (!gzip && encoding !== "identity" && encoding !== "") {
    throw new AppError("unsupported_media_type", "Content-Encoding must be gzip or absent.", { encoding });
  }
  const wireLimit = gzip ? limits.maxCompressedBytes : limits.maxDecodedBytes;
  const what = gzip ? "compressed body" : "body";
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (declared > wireLimit) throw tooLarge(wireLimit, what);
  const wire = await readAtMost(request, wireLimit, what);
  return gzip ? inflate(wire, limits.maxDecodedBytes) : wire;
}

async function readAtMost(request: Request, limit: number, what: string): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    // A failed read is the client's doing (it hung up, or sent a broken chunked body).
    const { done, value } = await reader.read().catch(() => {
      throw new AppError("invalid_request", "The request body could not be read.");
    });
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit, what);
    }
    chunks.push(value);
  }
  return chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks, size);
}

function inflate(compressed: Uint8Array, limit: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    gunzip(compressed, { maxOutputLength: limit }, (error, result) => {
      if (!error) resolve(result);
      else if ((error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") {
        reject(tooLarge(limit, "decompressed body"));
      } else reject(new AppError("invalid_request", "The body is not valid gzip data."));
    });
  });
}
