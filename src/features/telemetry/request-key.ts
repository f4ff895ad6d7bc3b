import { createHash } from "node:crypto";
import type { OtlpFormat } from "./decode-export.ts";
import type { Signal } from "./otlp-schema.ts";

/**
 * The identity of a log or metric export request, for recognising an exporter's retry: a hash of
 * the decompressed body (an exporter re-sends the same serialised request; its compression may
 * differ), its signal and format. 128 bits of SHA-256 in hex.
 */
export const requestKey = (signal: Signal, format: OtlpFormat, body: Uint8Array): string =>
  createHash("sha256").update(`${signal}/${format}/`).update(body).digest("hex").slice(0, 32);
