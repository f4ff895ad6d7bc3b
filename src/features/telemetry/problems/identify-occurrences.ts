import type { ExceptionOccurrence } from "./exception-occurrences.ts";
import { identifyProblem } from "./fingerprint.ts";
import type { ProblemOccurrence } from "./group-occurrences.ts";

/**
 * Each exception with the problem it belongs to. Kept apart from group-occurrences.ts (and its
 * database schema import) because it runs on the conversion threads, which load only what they use.
 */
export const identifyOccurrences = (found: ExceptionOccurrence[]): ProblemOccurrence[] =>
  found.map((occurrence) => ({ ...occurrence, ...identifyProblem(occurrence) }));
