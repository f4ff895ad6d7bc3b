import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { version } from "../../version.ts";

/** A fetch request as undici's `request()` takes it: method, flat header list, body. */
export type WireRequest = {
  method: string;
  headers: string[];
  body: string | Uint8Array | Readable | null;
};

const USER_AGENT = `patchbay/${version}`;

/**
 * Reads a fetch call's method, headers and body the way fetch would (a `Request` carries its
 * own; `init` overrides), for undici's lower-level `request()`, which takes no Request object
 * and adds no default headers. Strings, bytes and streams pass through; any other body kind
 * (Blob, FormData, URLSearchParams) is serialised by the platform's own Request, which also
 * supplies its content type.
 */
export async function wireRequest(
  request: Request | undefined,
  init: RequestInit | undefined,
): Promise<WireRequest> {
  const method = (request?.method ?? init?.method ?? "GET").toUpperCase();
  const headers = new Headers(request ? request.headers : init?.headers);
  let body: WireRequest["body"] = null;
  const raw = request ? request.body : init?.body;
  if (typeof raw === "string" || raw instanceof Uint8Array) body = raw;
  else if (raw instanceof ArrayBuffer) body = new Uint8Array(raw);
  else if (ArrayBuffer.isView(raw)) body = new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength);
  else if (raw instanceof ReadableStream) body = Readable.fromWeb(raw as WebReadableStream<Uint8Array>);
  else if (raw !== null && raw !== undefined) {
    const serialised = new Request("https://body.invalid/", { method: "POST", body: raw });
    body = new Uint8Array(await serialised.arrayBuffer());
    const type = serialised.headers.get("content-type");
    if (type && !headers.has("content-type")) headers.set("content-type", type);
  }
  // What fetch sends by default, minus Accept-Encoding: patchbay asks for uncompressed answers.
  if (!headers.has("accept")) headers.set("accept", "*/*");
  if (!headers.has("user-agent")) headers.set("user-agent", USER_AGENT);
  const flat: string[] = [];
  headers.forEach((value, name) => {
    flat.push(name, value);
  });
  return { method, headers: flat, body };
}
