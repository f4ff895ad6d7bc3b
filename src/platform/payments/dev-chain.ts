import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { gunzipSync } from "node:zlib";
import type { Address, Hex } from "viem";
import { DEMO_PAYER_FUNDS, DEV_CHAIN_ID, type DevAccount, TOKEN_ADDRESS } from "./dev-chain-constants.ts";
import { type ContractArtifact, installedDevChainDir, loadTestUsdc, testUsdcFileName } from "./test-usdc.ts";

export type DevChain = {
  rpcUrl: string;
  chainId: number;
  /** CAIP-2, as x402 names networks. */
  network: `eip155:${number}`;
  usdcAddress: Address;
  /** Account #1, holding DEMO_PAYER_FUNDS test USDC. */
  payer: DevAccount;
  /** Account #0: deployer, minter, and the key the in-process facilitator settles with. */
  facilitator: DevAccount;
  stop(): Promise<void>;
};

const START_TIMEOUT_MS = 20_000;

/**
 * Accounts #0 and #1, as anvil documents them for DEV_MNEMONIC (dev-chain.test.ts derives them
 * again): a start uses only these, and deriving HD keys in JavaScript took ~0.14 s of its CPU.
 * Other accounts: `deriveDevAccount` (dev-chain-deploy.ts).
 */
const WELL_KNOWN: readonly DevAccount[] = [
  {
    address: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
    privateKey: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  },
  {
    address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    privateKey: "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  },
];

/** Account #0 or #1 of DEV_MNEMONIC (m/44'/60'/0'/0/index), funded with 10,000 ETH by anvil. */
export function devAccount(index: 0 | 1): DevAccount {
  const account = WELL_KNOWN[index];
  if (!account) throw new Error(`dev account #${index} is not a well-known one: derive it`);
  return account;
}

/**
 * Starts anvil (the binary shipped inside `@foundry-rs/anvil`'s platform package) on
 * 127.0.0.1:`port` — 0 picks a free port — with TestUSDC deployed from account #0 and account #1
 * funded. The first start deploys and mints, then saves the chain's state in `cacheDir`; later
 * starts load that state (`--load-state`) and send nothing, so every start begins from the same
 * fresh chain. Without one in `cacheDir`, the state saved at install (`installedDevChainDir`) is
 * loaded: a first start deploys nothing. The chain is killed by `stop()` and, failing that, when
 * this process exits.
 */
export async function startDevChain(options: {
  port: number;
  cacheDir: string;
  /** Where the install's artifacts are: `installedDevChainDir` unless a test says otherwise. */
  installedDir?: string;
}): Promise<DevChain> {
  const installedDir = options.installedDir ?? installedDevChainDir;
  const artifact = loadTestUsdc(options.cacheDir, installedDir);
  const saved = [options.cacheDir, installedDir]
    // `cacheDir` first: a state it holds loaded before, and one that failed to load was replaced there.
    .map((dir) => savedStateFile(dir, artifact.sourceHash))
    .find((file) => existsSync(file));
  if (saved) {
    try {
      return await launch(options, artifact, saved);
    } catch (error) {
      // A state this anvil cannot read: deploy again (and save over it). A port in use fails
      // the same way below, with its own message.
      if (!(error instanceof AnvilExited)) throw error;
    }
  }
  return launch(options, artifact, undefined);
}

/**
 * Makes the dev chain's artifacts in `dir` (the token compiled, the chain deployed and its state
 * saved) unless it holds ones anvil loads, and removes the ones it holds for other versions. Run
 * at install. True when it made them.
 */
export async function prepareDevChain(dir = installedDevChainDir): Promise<boolean> {
  const artifact = loadTestUsdc(dir, dir);
  const state = savedStateFile(dir, artifact.sourceHash);
  const before = statSync(state, { throwIfNoEntry: false })?.ino;
  // A start loads the state when anvil can and otherwise deploys and saves a new one (a new file):
  // a state anvil cannot load is not kept to cost every new data directory a failed load.
  await (await startDevChain({ port: 0, cacheDir: dir, installedDir: dir })).stop();
  const current = new Set([basename(state), testUsdcFileName(artifact.sourceHash)]);
  for (const file of readdirSync(dir)) {
    if (ARTIFACT_NAME.test(file) && !current.has(file)) rmSync(join(dir, file), { force: true });
  }
  return statSync(state).ino !== before;
}

/** The names this module and test-usdc.ts give their artifacts. */
const ARTIFACT_NAME = /^(TestUSDC|dev-chain)-[0-9a-f]{16}\.json$/;

async function launch(
  options: { port: number; cacheDir: string },
  artifact: ContractArtifact,
  savedState: string | undefined,
): Promise<DevChain> {
  const [file, args] = diesWithUs(anvilBinary(), [
    ...["--host", "127.0.0.1", "--port", String(options.port), "--chain-id", String(DEV_CHAIN_ID)],
    ...(savedState ? ["--load-state", savedState] : []),
  ]);
  const child = spawn(file, args, { stdio: ["ignore", "pipe", "pipe"] });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const stop = async () => {
    process.off("exit", killOnExit);
    await terminate(child);
  };
  try {
    const facilitator = devAccount(0);
    const payer = devAccount(1);
    const port = await listeningPort(child, options.port);
    const rpcUrl = `http://127.0.0.1:${port}`;
    // Only a start that deploys needs viem (its clients and ABI encoding): loaded then.
    const usdcAddress = savedState
      ? TOKEN_ADDRESS
      : await (await import("./dev-chain-deploy.ts")).deployToken({
          rpcUrl,
          artifact,
          facilitator,
          payer,
          save: (dumped) => saveState(savedStateFile(options.cacheDir, artifact.sourceHash), dumped),
        });
    return {
      rpcUrl,
      chainId: DEV_CHAIN_ID,
      network: `eip155:${DEV_CHAIN_ID}`,
      usdcAddress,
      payer,
      facilitator,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Where the state after deployment and mint is kept: named by what it depends on (the token's
 * source and compiler, anvil's version, the chain id and the payer's funds), so a change to any
 * of them deploys afresh.
 */
function savedStateFile(cacheDir: string, tokenSourceHash: string): string {
  const key = createHash("sha256")
    .update(JSON.stringify([tokenSourceHash, anvilVersion(), DEV_CHAIN_ID, DEMO_PAYER_FUNDS.toString()]))
    .digest("hex");
  return join(cacheDir, `dev-chain-${key.slice(0, 16)}.json`);
}

/** anvil_dumpState answers gzip-compressed JSON, hex-encoded; `--load-state` reads the JSON. */
function saveState(file: string, dumped: Hex): void {
  mkdirSync(dirname(file), { recursive: true });
  // Write then rename: a concurrent start sees no file or the whole state.
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, gunzipSync(Buffer.from(dumped.slice(2), "hex")));
  renameSync(temporary, file);
}

/** The platform package of `@foundry-rs/anvil` for this machine. */
function anvilPackage(): string {
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  return `@foundry-rs/anvil-${process.platform}-${arch}`;
}

/**
 * The command that runs `binary` so that the kernel kills it when this process dies, however it
 * dies: a SIGKILL or a crash runs no exit handler, and an anvil left behind would hold the dev
 * chain's port so that the next `patchbay serve` could not start. On Linux that is util-linux's
 * `setpriv --pdeathsig KILL`, which sets the signal and then execs `binary` in its own place (no
 * wrapper process stays between us and anvil). Elsewhere, or without setpriv, `binary` itself.
 */
function diesWithUs(binary: string, args: string[]): [string, string[]] {
  const setpriv =
    process.platform === "linux"
      ? ["/usr/bin/setpriv", "/bin/setpriv"].find((path) => existsSync(path))
      : undefined;
  return setpriv ? [setpriv, ["--pdeathsig", "KILL", "--", binary, ...args]] : [binary, args];
}

/** The platform package's binary: no wrapper process between us and anvil, so a kill reaches it. */
export function anvilBinary(): string {
  const name = process.platform === "win32" ? "anvil.exe" : "anvil";
  const require = createRequire(import.meta.url);
  try {
    return require.resolve(`${anvilPackage()}/bin/${name}`);
  } catch {
    throw new Error(
      `anvil has no build for ${process.platform}-${process.arch}; set PATCHBAY_DEV_CHAIN=off (paid routes then answer 503) or PATCHBAY_X402_FACILITATOR_URL`,
    );
  }
}

const anvilVersion = (): string =>
  (createRequire(import.meta.url)(`${anvilPackage()}/package.json`) as { version: string }).version;

/** anvil ended before it listened, for a reason other than its port being taken. */
class AnvilExited extends Error {}

/** Resolves with the port once anvil prints "Listening on"; rejects with its own words if it dies. */
function listeningPort(child: ChildProcess, requested: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(
      () => fail(new Error(`anvil did not start within ${START_TIMEOUT_MS} ms`)),
      START_TIMEOUT_MS,
    );
    const fail = (error: Error) => {
      clearTimeout(timer);
      reject(error);
    };
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      const match = /Listening on [^\s:]+:(\d+)/.exec(stdout);
      if (match?.[1]) {
        clearTimeout(timer);
        // Keep draining: anvil logs every call, and a full pipe would stall it.
        child.stdout?.removeAllListeners("data").resume();
        resolve(Number(match[1]));
      }
    });
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-2_000);
    });
    child.once("error", (error) => fail(new Error(`anvil could not be started: ${error.message}`)));
    child.once("exit", (code) => {
      const inUse = /address already in use|in use/i.test(stderr);
      fail(
        inUse
          ? new Error(
              `port ${requested} is in use (by another dev chain? one left behind by a killed patchbay?): stop it, set PATCHBAY_DEV_CHAIN_PORT to a free port, or PATCHBAY_DEV_CHAIN=off`,
            )
          : new AnvilExited(
              `anvil exited (${code ?? "signal"}) before listening: ${stderr.trim() || "no output"}`,
            ),
      );
    });
  });
}

async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 3_000);
  await exited;
  clearTimeout(timer);
}
