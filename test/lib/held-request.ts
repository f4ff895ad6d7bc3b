import { connect } from "node:net";

/**
 * A request body the test hands over when it chooses: the request stays in flight, its handler
 * waiting on the body, until `release`. `reading` resolves once the server has started to read
 * it — so once the request is past every middleware that refuses without reading (load shedding,
 * authentication).
 */
export function heldBody(text: string): {
  body: ReadableStream<Uint8Array>;
  reading: Promise<void>;
  release(): void;
} {
  let started = () => {};
  const reading = new Promise<void>((resolve) => {
    started = resolve;
  });
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        started();
        await released;
        controller.enqueue(new TextEncoder().encode(text));
        controller.close();
      },
    },
    // No read ahead: the first pull is the server asking for the body.
    { highWaterMark: 0 },
  );
  return { body, reading, release };
}

/** `init` for a request whose body is streamed (fetch needs `duplex` for that). */
export const streamed = (init: RequestInit & { body: ReadableStream<Uint8Array> }): RequestInit =>
  ({ ...init, duplex: "half" }) as RequestInit;

export type RawAnswer = {
  status: number;
  /** Lower-cased names. */
  headers: Record<string, string>;
  body: string;
  /** How the server ended the connection after answering: a FIN, or a reset. */
  closed: "end" | "reset";
};

/**
 * Writes `request` on a fresh connection to 127.0.0.1:`port` — without `Connection: close`, so
 * as a client that would reuse the connection — reads one response, then waits for the server
 * to end the connection. Rejects if the connection is still open `openAfterAnswerMs` after the
 * complete answer (the server meant to keep it), or if it ends before a complete answer.
 */
export function exchangeUntilClosed(
  port: number,
  request: string | Uint8Array,
  openAfterAnswerMs = 5_000,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(request));
    let received = Buffer.alloc(0);
    let answer: Omit<RawAnswer, "closed"> | undefined;
    let deadline: NodeJS.Timeout | undefined;
    const finish = (closed: RawAnswer["closed"]) => {
      clearTimeout(deadline);
      if (answer) resolve({ ...answer, closed });
      else reject(new Error(`connection ${closed} before a complete answer: ${received.toString("latin1")}`));
      socket.destroy();
    };
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (answer) return;
      const end = received.indexOf("\r\n\r\n");
      if (end < 0) return;
      const [statusLine = "", ...lines] = received.subarray(0, end).toString("latin1").split("\r\n");
      const headers = Object.fromEntries(
        lines.map((line) => {
          const colon = line.indexOf(":");
          return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
        }),
      );
      const length = Number(headers["content-length"] ?? 0);
      if (received.length < end + 4 + length) return;
      answer = {
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0),
        headers,
        body: received.subarray(end + 4, end + 4 + length).toString("utf8"),
      };
      deadline = setTimeout(() => {
        reject(new Error(`the server kept the connection open after answering ${answer?.status}`));
        socket.destroy();
      }, openAfterAnswerMs);
    });
    socket.on("end", () => finish("end"));
    socket.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ECONNRESET" || error.code === "EPIPE") finish("reset");
      else reject(error);
    });
  });
}
