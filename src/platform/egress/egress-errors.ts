import { AppError } from "../../errors.ts";

type Phase = "connect" | "headers" | "body";

const TIMEOUTS: Record<string, Phase> = {
  UND_ERR_CONNECT_TIMEOUT: "connect",
  UND_ERR_HEADERS_TIMEOUT: "headers",
  UND_ERR_BODY_TIMEOUT: "body",
};

const DNS_CODES = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_NODATA", "EAI_NONAME", "EAI_FAIL"]);

function* causes(error: unknown): Generator<unknown> {
  let current = error;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    yield current;
    current = current instanceof Error ? current.cause : undefined;
  }
}

const codeOf = (error: unknown): string | undefined => {
  if (typeof error !== "object" || error === null || !("code" in error)) return undefined;
  return typeof error.code === "string" ? error.code : undefined;
};

function reasonOf(code: string): string {
  if (DNS_CODES.has(code)) return "dns";
  if (code === "ECONNREFUSED") return "refused";
  if (
    code.startsWith("ERR_TLS") ||
    code.includes("CERT") ||
    code.startsWith("UNABLE_TO_") ||
    code.includes("SSL")
  ) {
    return "tls";
  }
  return "network";
}

/**
 * Maps a transport failure to an AppError without leaking the request: messages name only
 * the host, never the path, headers or the underlying error text.
 * - `remote_timeout` { phase: connect | headers | body }: "connect" means nothing was sent;
 *   otherwise the remote may have acted on the request (DESIGN §6: ambiguous, never retried).
 * - `remote_unreachable` { reason: dns | refused | tls | network }.
 * An AppError raised inside the transport (the lookup hook's refusal) comes back as is;
 * errors that are not transport failures (a bad argument) are returned unchanged.
 */
export function toAppError(error: unknown, host: string): unknown {
  const chain = [...causes(error)];
  const appError = chain.find((item) => item instanceof AppError);
  if (appError) return appError;
  for (const item of chain) {
    const code = codeOf(item);
    const timeoutPhase = code ? TIMEOUTS[code] : undefined;
    if (timeoutPhase) {
      return new AppError("remote_timeout", `${host} did not answer in time (${timeoutPhase})`, {
        phase: timeoutPhase,
      });
    }
  }
  const code = chain.map(codeOf).find((item) => item !== undefined);
  if (code) return unreachable(host, reasonOf(code));
  // undici reports network failures as TypeError("fetch failed" | "terminated") with a cause.
  if (error instanceof TypeError && error.cause !== undefined) return unreachable(host, "network");
  return error;
}

const unreachable = (host: string, reason: string) =>
  new AppError("remote_unreachable", `${host} is unreachable (${reason})`, { reason });

/** Told of every decoded body chunk; an AppError returned ends that body with it. */
export type ByteCounter = (bytes: number) => AppError | undefined;

/**
 * Passes the body through, counting decoded bytes (so a compression bomb counts in full),
 * and errors the stream once the cap is passed: `egress_blocked` / `response_too_large`.
 * `count`, when given, sees every chunk too (the caller's own, tighter budget), so a response
 * is wrapped once however many limits apply to it.
 */
export function capBody(
  body: AsyncIterable<Uint8Array>,
  maxBytes: number,
  host: string,
  count?: ByteCounter,
  /** The caller's signal: once it aborted, a failed read is the caller's abort, as with fetch. */
  signal?: AbortSignal,
): ReadableStream<Uint8Array> {
  const reader = body[Symbol.asyncIterator]();
  // Ends (cancels) the upstream body; failures there change nothing for the reader.
  const stop = () => {
    void reader.return?.().catch(() => {});
  };
  let seen = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: IteratorResult<Uint8Array>;
      try {
        chunk = await reader.next();
      } catch (error) {
        controller.error(signal?.aborted ? signal.reason : toAppError(error, host));
        return;
      }
      if (chunk.done) {
        controller.close();
        return;
      }
      seen += chunk.value.byteLength;
      const refusal =
        seen > maxBytes
          ? new AppError("egress_blocked", `${host} answered with more than ${maxBytes} bytes`, {
              rule: "response_too_large",
            })
          : count?.(chunk.value.byteLength);
      if (refusal) {
        controller.error(refusal);
        stop();
        return;
      }
      controller.enqueue(chunk.value);
    },
    cancel() {
      stop();
    },
  });
}
