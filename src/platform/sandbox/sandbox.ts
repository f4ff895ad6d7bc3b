import type { ChangedFile } from "../db/schema/remediations.ts";

/** Caps for one command. Defaults in `DEFAULT_LIMITS`. */
export type RunLimits = {
  /** Wall-clock time; past it the whole process tree is killed. */
  timeoutMs: number;
  /** CPU seconds (RLIMIT_CPU for the command and its children). */
  cpuSeconds: number;
  /** Output (stdout and stderr together) past which the command is killed. */
  maxOutputBytes: number;
  /** How much of the end of the output is kept for the result. */
  tailBytes: number;
};

export const DEFAULT_LIMITS: RunLimits = {
  timeoutMs: 5 * 60 * 1000,
  cpuSeconds: 5 * 60,
  maxOutputBytes: 16 * 1024 * 1024,
  tailBytes: 16 * 1024,
};

export type RunResult = {
  /** null when the command was killed (timeout, output cap) or died of a signal. */
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** Killed because it printed more than `maxOutputBytes`. */
  outputCapped: boolean;
  /** The last `tailBytes` of stdout and stderr, interleaved as written. */
  outputTail: string;
  outputBytes: number;
  durationMs: number;
};

export type FileEntry = { path: string; type: "file" | "dir" };
export type SearchHit = { path: string; line: number; text: string };

/**
 * An isolated working copy of one repository at one base commit. Every path is relative to the
 * repository root and may not leave it (no absolute paths, no `..`, no symlink escapes, nothing
 * under `.git`). The proposed change is what was written through `writeFile`, compared with the
 * base — never whatever a test run left behind (build output, caches).
 */
export interface Workspace {
  listFiles(dir?: string): Promise<FileEntry[]>;
  readFile(path: string): Promise<string>;
  writeFile(path: string, content: string): Promise<void>;
  searchFiles(query: string): Promise<SearchHit[]>;
  /** Runs `sh -c command` at the repository root inside the sandbox. */
  run(command: string, limits?: Partial<RunLimits>): Promise<RunResult>;
  /** The files written that now differ from the base, their unified diff, and which are new. */
  proposedChange(): Promise<{ files: ChangedFile[]; diff: string; created: string[] }>;
  dispose(): Promise<void>;
}

/**
 * Where repository code runs. Local implementations (bubblewrap, the process fallback) keep the
 * working copy on this machine; a remote sandbox service implements the same two calls and
 * keeps it on its own (the archive is uploaded once, files and commands travel as requests).
 */
export interface Sandbox {
  readonly kind: string;
  /** What isolation this sandbox gives, in one sentence, for logs and docs. */
  readonly isolation: string;
  /** A workspace holding the files of a tar archive (plain or gzip) of the base commit. */
  createWorkspace(source: { archive: Buffer; stripComponents?: number }): Promise<Workspace>;
}
