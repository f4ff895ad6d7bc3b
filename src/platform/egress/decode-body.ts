import type { Readable } from "node:stream";
import { pipeline } from "node:stream";
import zlib from "node:zlib";

/** As fetch: more codings than this in one answer is refused (resource exhaustion). */
const MAX_CODINGS = 5;

const zlibFlush = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
const brotliFlush = {
  flush: zlib.constants.BROTLI_OPERATION_FLUSH,
  finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
};
const decoders = new Map<string, () => NodeJS.ReadWriteStream>([
  ["gzip", () => zlib.createGunzip(zlibFlush)],
  ["x-gzip", () => zlib.createGunzip(zlibFlush)],
  ["deflate", () => zlib.createInflate(zlibFlush)],
  ["br", () => zlib.createBrotliDecompress(brotliFlush)],
]);
if (typeof zlib.createZstdDecompress === "function") decoders.set("zstd", () => zlib.createZstdDecompress());

/**
 * The body decoded as fetch decodes it: the `Content-Encoding` codings undone in reverse order
 * (gzip, x-gzip, deflate, br, zstd); an unknown coding leaves the body as it came. patchbay
 * asks for no encoding, but a server may compress anyway, and the size cap counts decoded
 * bytes, so a compression bomb counts in full.
 */
export function decodeBody(body: Readable, contentEncoding: string | undefined): AsyncIterable<Uint8Array> {
  const codings = contentEncoding ? contentEncoding.toLowerCase().split(",") : [];
  if (codings.length === 0) return body;
  if (codings.length > MAX_CODINGS) {
    body.destroy(new Error(`too many content-encodings in response: ${codings.length}`));
    return body;
  }
  const stages: NodeJS.ReadWriteStream[] = [];
  for (const coding of codings.map((c) => c.trim()).reverse()) {
    const decoder = decoders.get(coding);
    if (!decoder) return body;
    stages.push(decoder());
  }
  // pipeline destroys every stage on error; the last one reports it to the reader.
  return pipeline([body, ...stages], () => {}) as unknown as AsyncIterable<Uint8Array>;
}
