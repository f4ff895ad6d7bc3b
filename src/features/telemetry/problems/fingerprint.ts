import { createHash } from "node:crypto";
import type { ExceptionOccurrence } from "./exception-occurrences.ts";
import { legacyMaskMessage } from "./legacy-fingerprint.ts";
import { maskMessage } from "./mask-message.ts";
import { normalizeFrame, parseStack, type StackFrame } from "./stack-frames.ts";

/** How many in-app frames, from the top, identify where an error happens. */
const FRAMES_IN_FINGERPRINT = 3;
const MAX_TITLE_CHARS = 200;

type ExceptionFacts = { service: string; type: string; message: string; stacktrace?: string | null };

export type ProblemIdentity = {
  /** `sha256:` + hex over (service, type, top in-app frames) or (service, type, masked message). */
  fingerprint: string;
  /** `Type: masked message`, stable across occurrences of the same problem. */
  title: string;
  /** Where it happens: the top in-app frame (`function (file)`), else the service. */
  culprit: string;
  /**
   * The fingerprint the first message masks gave it, when they differ (legacy-fingerprint.ts):
   * a problem stored under it is moved to `fingerprint` rather than split from it.
   */
  legacyFingerprint?: string;
};

/**
 * Groups exceptions (DESIGN §8): fingerprint = service + exception type + the normalised top
 * in-app frames, skipping dependency and runtime frames. Without in-app frames, the message with
 * ids, values and numbers masked (mask-message.ts) takes the frames' place, so "order 41 failed"
 * and "order 42 failed" are one problem.
 */
export function identifyProblem(facts: ExceptionFacts): ProblemIdentity {
  const frames = parseStack(facts.stacktrace ?? "").filter((frame) => frame.inApp);
  const top = frames.slice(0, FRAMES_IN_FINGERPRINT).map(normalizeFrame);
  const masked = maskMessage(facts.message);
  const fingerprint = fingerprintOf(facts, top.length > 0 ? ["frames", ...top] : ["message", masked]);
  const title = masked ? `${facts.type}: ${masked}` : facts.type;
  const identity = {
    fingerprint,
    title: cut(title),
    culprit: cut(frames[0] ? culprit(frames[0]) : facts.service),
  };
  if (top.length > 0) return identity;
  const legacy = legacyMaskMessage(facts.message);
  return legacy === masked
    ? identity
    : { ...identity, legacyFingerprint: fingerprintOf(facts, ["message", legacy]) };
}

const fingerprintOf = (facts: ExceptionFacts, basis: string[]): string =>
  `sha256:${createHash("sha256")
    .update(JSON.stringify([facts.service, facts.type, ...basis]))
    .digest("hex")}`;

/** An exception with the problem it belongs to. */
export type ProblemOccurrence = ExceptionOccurrence & ProblemIdentity;

/**
 * Each exception with the problem it belongs to. Apart from group-occurrences.ts (and its
 * database schema import) because it runs on the conversion threads, which load only what they use.
 */
export const identifyOccurrences = (found: ExceptionOccurrence[]): ProblemOccurrence[] =>
  found.map((occurrence) => ({ ...occurrence, ...identifyProblem(occurrence) }));

/** Titles and culprits name a problem in lists: bounded whatever the stack or message held. */
const cut = (text: string): string =>
  text.length > MAX_TITLE_CHARS ? `${text.slice(0, MAX_TITLE_CHARS - 1)}…` : text;

const culprit = (frame: StackFrame): string => {
  const file = frame.file
    .replace(/^file:\/\//, "")
    .split(/[/\\]/)
    .slice(-2)
    .join("/");
  return frame.function ? `${frame.function} (${file})` : file;
};
