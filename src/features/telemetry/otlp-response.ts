import protojson from "protobufjs/ext/protojson.js";
import type { OtlpFormat } from "./decode-export.ts";
import { otlpMessages, type Signal, statusMessage } from "./otlp-schema.ts";

const contentTypes: Record<OtlpFormat, string> = {
  protobuf: "application/x-protobuf",
  json: "application/json",
};

/** gRPC status codes for the `google.rpc.Status` body, by HTTP status. */
const grpcCodes: Record<number, number> = {
  400: 3, // INVALID_ARGUMENT
  401: 16, // UNAUTHENTICATED
  403: 7, // PERMISSION_DENIED
  404: 5, // NOT_FOUND
  405: 12, // UNIMPLEMENTED
  413: 3, // INVALID_ARGUMENT: the same request will never fit
  415: 3,
  429: 8, // RESOURCE_EXHAUSTED
  500: 13, // INTERNAL
  503: 14, // UNAVAILABLE
};

function encode(
  type: (typeof otlpMessages)[Signal]["response"],
  format: OtlpFormat,
  fields: Record<string, unknown>,
): Uint8Array<ArrayBuffer> | string {
  const message = type.fromObject(fields);
  if (format === "json") return JSON.stringify(protojson.toJson(type, message));
  return new Uint8Array(type.encode(message).finish());
}

/**
 * The success answer, in the request's format. `partialSuccess` is set only when something was
 * rejected: the specification asks that a full success leave it unset.
 */
export function exportResponse(
  signal: Signal,
  format: OtlpFormat,
  rejected: { count: number; message: string },
): Response {
  const { response, rejectedField } = otlpMessages[signal];
  const fields =
    rejected.count > 0
      ? { partialSuccess: { [rejectedField]: rejected.count, errorMessage: rejected.message } }
      : {};
  return new Response(encode(response, format, fields), {
    status: 200,
    headers: { "content-type": contentTypes[format] },
  });
}

/** An error answer: a `google.rpc.Status` in the request's format (JSON when it had none we speak). */
export function statusResponse(
  format: OtlpFormat,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  const body = encode(statusMessage, format, { code: grpcCodes[status] ?? 2, message });
  return new Response(body, { status, headers: { "content-type": contentTypes[format], ...headers } });
}
