import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { anvilBinary } from "../../../src/platform/payments/dev-chain.ts";
import { DEV_CHAIN_ID } from "../../../src/platform/payments/dev-chain-constants.ts";
import { anvilChildOf, exited } from "../../lib/processes.ts";

/**
 * The dev chain of a spawned `patchbay serve` (the anvil child it started on
 * `PATCHBAY_DEV_CHAIN_PORT`), under the fault suite's control: frozen and thawed with
 * SIGSTOP/SIGCONT, or killed with SIGKILL and brought back on the same port with the same state.
 *
 * anvil keeps its chain in memory and patchbay starts it without `--state`, so the state is taken
 * over RPC (`anvil_dumpState`) just before the kill and handed to the new anvil as `--load-state`.
 * Mining is switched off first, so no block is mined between the snapshot and the kill: nothing
 * a client was told happened is missing after the restart. Transactions accepted in that moment
 * wait unmined in the pool, which a killed node loses — as a crashed node loses its mempool.
 */
export type DevChainControl = {
  rpcUrl: string;
  /** The anvil now serving the chain. */
  readonly pid: number;
  /** SIGSTOP: the process stays, its port accepts connections, nothing answers. */
  freeze(): void;
  /** SIGCONT. */
  thaw(): void;
  /** Stops mining, saves the state, SIGKILLs anvil; resolves once it is gone. */
  kill(): Promise<void>;
  /** anvil again on the same port from the state `kill` saved; resolves once it answers. */
  restart(): Promise<void>;
  /** Kills an anvil this control started (patchbay stops its own). */
  close(): Promise<void>;
};

/** Finds the anvil `serverPid` started (Linux: its child in /proc whose command is anvil). */
export function devChainOf(serverPid: number, port: number): DevChainControl {
  let pid = anvilChildOf(serverPid);
  let restarted: ChildProcess | undefined;
  const rpcUrl = `http://127.0.0.1:${port}`;
  let stateDir: string | undefined;

  return {
    rpcUrl,
    get pid() {
      return pid;
    },
    freeze: () => process.kill(pid, "SIGSTOP"),
    thaw: () => process.kill(pid, "SIGCONT"),
    async kill() {
      await rpc(rpcUrl, "evm_setAutomine", [false]);
      const dump = await rpc(rpcUrl, "anvil_dumpState", []);
      if (typeof dump !== "string") throw new Error("anvil_dumpState returned no state");
      process.kill(pid, "SIGKILL");
      await gone(pid);
      // The dump is gzipped JSON, hex-encoded; --load-state reads the JSON.
      stateDir = await mkdtemp(join(tmpdir(), "patchbay-faults-chain-"));
      await writeFile(join(stateDir, "state.json"), gunzipSync(Buffer.from(dump.slice(2), "hex")));
    },
    async restart() {
      if (!stateDir) throw new Error("restart() needs a kill() first");
      const child = spawn(
        anvilBinary(),
        [
          "--host",
          "127.0.0.1",
          "--port",
          String(port),
          "--chain-id",
          String(DEV_CHAIN_ID),
          "--load-state",
          join(stateDir, "state.json"),
        ],
        { stdio: ["ignore", "ignore", "pipe"] },
      );
      if (child.pid === undefined) throw new Error("anvil could not be started again");
      restarted = child;
      pid = child.pid;
      let stderr = "";
      child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
        stderr = (stderr + chunk).slice(-2_000);
      });
      const deadline = Date.now() + 20_000;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`anvil exited on restart: ${stderr}`);
        const answered = await rpc(rpcUrl, "eth_blockNumber", []).then(
          () => true,
          () => false,
        );
        if (answered) return;
        if (Date.now() > deadline) throw new Error(`anvil did not answer after its restart: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async close() {
      if (restarted && restarted.exitCode === null && restarted.signalCode === null) {
        const exited = new Promise((resolve) => restarted?.once("exit", resolve));
        restarted.kill("SIGKILL");
        await exited;
      }
      if (stateDir) await rm(stateDir, { recursive: true, force: true });
    },
  };
}

async function gone(pid: number): Promise<void> {
  while (!exited(pid)) await new Promise((resolve) => setTimeout(resolve, 20));
}

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(5_000),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message?: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message ?? "error"}`);
  return body.result;
}
