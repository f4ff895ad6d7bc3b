import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Abi, Hex } from "viem";

/**
 * The dev chain's artifacts made at install (scripts/build.ts): the compiled token and the chain's
 * saved state. Read when a data directory's own cache holds neither, never written at run time: a
 * first start then neither compiles the token (~1.6 s of solc-js on the main thread) nor deploys it.
 */
export const installedDevChainDir = fileURLToPath(new URL("../../../dist/dev-chain", import.meta.url));

/** The dev chain's EIP-3009 stablecoin, compiled from the repo's own Solidity source. */
export type ContractArtifact = { abi: Abi; bytecode: Hex; compiler: string; sourceHash: string };

const sourceUrl = new URL("../../../contracts/TestUSDC.sol", import.meta.url);
const SOURCE_NAME = "TestUSDC.sol";
const CONTRACT = "TestUSDC";

type SolcOutput = {
  errors?: Array<{ severity: string; formattedMessage: string }>;
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
};
type Solc = { compile(input: string): string };

/**
 * Compiles `contracts/TestUSDC.sol` with solc-js (seconds) into `cacheDir`, or reads the artifact
 * made at install (`installedDir`) or cached in `cacheDir`, under a hash of the source, the
 * compiler version and the settings.
 */
export function loadTestUsdc(cacheDir: string, installedDir = installedDevChainDir): ContractArtifact {
  const source = readFileSync(sourceUrl, "utf8");
  const input = JSON.stringify({
    language: "Solidity",
    sources: { [SOURCE_NAME]: { content: source } },
    settings: {
      // Cancun: accepted by anvil and every current EVM chain; pinned so a solc upgrade that
      // moves the default target cannot produce bytecode an older node rejects.
      evmVersion: "cancun",
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { [SOURCE_NAME]: { [CONTRACT]: ["abi", "evm.bytecode.object"] } },
    },
  });
  const require = createRequire(import.meta.url);
  // The npm version pins the compiler build exactly; reading it does not load the compiler.
  const compiler = `solc-js ${(require("solc/package.json") as { version: string }).version}`;
  const key = createHash("sha256").update(compiler).update("\0").update(input).digest("hex");
  const name = testUsdcFileName(key);
  const file = join(cacheDir, name);
  const cached = readCached(file, key) ?? readCached(join(installedDir, name), key);
  if (cached) return cached;

  // solc-js is CommonJS around ~9 MB of WebAssembly: loaded only on a cache miss.
  const solc = require("solc") as Solc;
  const output = JSON.parse(solc.compile(input)) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) {
    throw new Error(`TestUSDC.sol does not compile:\n${errors.map((e) => e.formattedMessage).join("\n")}`);
  }
  const contract = output.contracts?.[SOURCE_NAME]?.[CONTRACT];
  if (!contract) throw new Error("solc produced no TestUSDC contract");
  const artifact: ContractArtifact = {
    abi: contract.abi,
    bytecode: `0x${contract.evm.bytecode.object}`,
    compiler,
    sourceHash: key,
  };
  mkdirSync(cacheDir, { recursive: true });
  // Write then rename: a concurrent reader sees nothing or the whole artifact.
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(artifact));
  renameSync(temporary, file);
  return artifact;
}

/** The file an artifact is kept in, by its `sourceHash`. */
export const testUsdcFileName = (sourceHash: string): string => `TestUSDC-${sourceHash.slice(0, 16)}.json`;

function readCached(file: string, key: string): ContractArtifact | undefined {
  try {
    const artifact = JSON.parse(readFileSync(file, "utf8")) as ContractArtifact;
    return artifact.sourceHash === key && artifact.bytecode.startsWith("0x") ? artifact : undefined;
  } catch {
    return undefined;
  }
}
