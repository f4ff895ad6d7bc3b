import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

/** The repository's `bin/patchbay.js`, run with the Node that runs the tests (Node 24 via npx/npm). */
const bin = fileURLToPath(new URL("../../bin/patchbay.js", import.meta.url));
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/** Keep at most this much of a child's output for error messages and assertions. */
const OUTPUT_LIMIT = 1024 * 1024;

export type ServerEnv = Record<string, string | undefined>;

export type ExitStatus = { code: number | null; signal: NodeJS.Signals | null };

export type SpawnServerOptions = {
  /**
   * patchbay's configuration (DATABASE_URL, PATCHBAY_KEK, NODE_ENV, …). The child gets only
   * this plus PATH/HOME/TMPDIR from the test process — never the runner's own NODE_ENV or
   * DATABASE_URL. PORT defaults to a free loopback port.
   */
  env: ServerEnv;
  /** How long to wait for `/readyz` to answer 200 (default 30 s). */
  readyTimeoutMs?: number;
  /** How long `stop()` waits after SIGTERM before SIGKILL (default 15 s: the service drains up to 10 s). */
  stopTimeoutMs?: number;
  /**
   * What Node runs instead of `bin/patchbay.js serve`: an instance put together by a test (e.g.
   * with a scripted model) that serves the same HTTP API and answers `/readyz` the same way.
   */
  args?: string[];
};

export type SpawnedServer = {
  /** e.g. http://127.0.0.1:40123 (no trailing slash). */
  baseUrl: string;
  port: number;
  pid: number;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Settles when the process exits. */
  exited: Promise<ExitStatus>;
  /** SIGTERM, then wait for the exit; SIGKILL after `stopTimeoutMs`. Safe to call more than once. */
  stop(): Promise<ExitStatus>;
};

/** Starts `patchbay serve` as a child process and resolves once `/readyz` answers 200. */
export async function spawnServer(options: SpawnServerOptions): Promise<SpawnedServer> {
  const port = options.env.PORT ? Number(options.env.PORT) : await freePort();
  const child = spawn(process.execPath, options.args ?? [bin, "serve"], {
    cwd: repoRoot,
    env: childEnv({ ...options.env, PORT: String(port) }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = captureOutput(child);
  const exited = exitOf(child);
  const pid = child.pid;
  if (pid === undefined) {
    const status = await exited;
    throw new Error(`patchbay serve did not start (${describeExit(status)}):\n${output()}`);
  }

  const host = options.env.HOST;
  const connectHost =
    !host || host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  const baseUrl = `http://${connectHost}:${port}`;
  const stopTimeoutMs = options.stopTimeoutMs ?? 15_000;

  let stopping: Promise<ExitStatus> | undefined;
  const server: SpawnedServer = {
    baseUrl,
    port,
    pid,
    output,
    exited,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), stopTimeoutMs);
        try {
          return await exited;
        } finally {
          clearTimeout(timer);
        }
      })();
      return stopping;
    },
  };

  try {
    await waitUntilReady(baseUrl, exited, options.readyTimeoutMs ?? 30_000);
  } catch (error) {
    await server.stop();
    throw new Error(
      `${error instanceof Error ? error.message : String(error)}\n--- patchbay output ---\n${output()}`,
    );
  }
  return server;
}

/** Runs a one-shot `patchbay …` command (e.g. `admin bootstrap --json`) and returns its stdout. */
export function runPatchbay(args: string[], env: ServerEnv, timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { cwd: repoRoot, env: childEnv(env), timeout: timeoutMs, maxBuffer: OUTPUT_LIMIT },
      (error, stdout, stderr) => {
        if (error)
          reject(new Error(`patchbay ${args.join(" ")} failed: ${error.message}\n${stdout}${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

/** A port that was free a moment ago (the kernel picks it; the tiny reuse race is acceptable in tests). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => (port ? resolve(port) : reject(new Error("could not pick a free port"))));
    });
  });
}

function childEnv(env: ServerEnv): NodeJS.ProcessEnv {
  // Spawned servers run side by side: none starts the dev chain (it would claim port 8545)
  // unless a test asks for it.
  const out: NodeJS.ProcessEnv = { PATCHBAY_DEV_CHAIN: "off" };
  for (const name of ["PATH", "HOME", "TMPDIR"]) {
    const value = process.env[name];
    if (value !== undefined) out[name] = value;
  }
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined) out[name] = value;
  }
  return out;
}

function captureOutput(child: ChildProcess): () => string {
  const chunks: string[] = [];
  let size = 0;
  const collect = (chunk: Buffer) => {
    if (size >= OUTPUT_LIMIT) return;
    const text = chunk.toString("utf8");
    chunks.push(text);
    size += text.length;
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  return () => chunks.join("");
}

function exitOf(child: ChildProcess): Promise<ExitStatus> {
  return new Promise((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
    // A spawn failure (e.g. ENOENT) emits "error" and may never emit "exit".
    child.once("error", () => resolve({ code: child.exitCode, signal: child.signalCode }));
  });
}

async function waitUntilReady(
  baseUrl: string,
  exited: Promise<ExitStatus>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exit: ExitStatus | undefined;
  void exited.then((status) => {
    exit = status;
  });
  let last = "no answer yet";
  while (Date.now() < deadline) {
    if (exit) throw new Error(`patchbay serve exited before it was ready (${describeExit(exit)})`);
    try {
      const res = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
      last = `HTTP ${res.status}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`patchbay serve was not ready at ${baseUrl}/readyz within ${timeoutMs} ms (last: ${last})`);
}

function describeExit(status: ExitStatus): string {
  return status.signal ? `signal ${status.signal}` : `exit code ${status.code}`;
}
