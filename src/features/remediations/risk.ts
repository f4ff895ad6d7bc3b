import type { ChangedFile } from "../../platform/db/schema/remediations.ts";

/** Past these a change waits for a human before it is validated and proposed. */
export const MAX_FILES_WITHOUT_APPROVAL = 10;
export const MAX_CHANGED_LINES_WITHOUT_APPROVAL = 400;

const sensitive: [RegExp, string][] = [
  [/(^|\/)\.github\//, "changes CI or repository automation (.github/)"],
  [/(^|\/)(\.gitlab-ci\.yml|Jenkinsfile|\.circleci\/)/, "changes CI configuration"],
  [
    /(^|\/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock|go\.sum|poetry\.lock)$/,
    "changes a lockfile (dependencies)",
  ],
  [/(^|\/)(migrations?|migrate)\//, "changes database migrations"],
  [/(^|\/)(Dockerfile|docker-compose\.ya?ml)$|\.tf$/, "changes infrastructure definitions"],
  [/(^|\/)\.env(\.|$)|(^|\/)(secrets?|credentials?)(\.|\/|$)/i, "touches secrets or environment files"],
  [/(^|\/)(\.npmrc|\.gitattributes|\.gitmodules)$/, "changes repository or registry configuration"],
];

const isTestFile = (path: string) =>
  /(^|\/)(test|tests|__tests__|spec)\/|\.(test|spec)\.[cm]?[jt]sx?$/.test(path);

/**
 * Whether a change is destructive or high-risk and must wait for a human (issue 9's human
 * boundary): deleting files, editing existing tests (an agent could make a suite pass by
 * weakening it), CI, lockfiles, migrations, infrastructure, secrets, or a large change.
 */
export function assessRisk(
  files: ChangedFile[],
  diff: string,
  existedInBase: (path: string) => boolean,
): { high: boolean; reasons: string[] } {
  const reasons = new Set<string>();
  for (const file of files) {
    if (file.content === null) reasons.add(`deletes ${file.path}`);
    if (isTestFile(file.path) && existedInBase(file.path))
      reasons.add(`edits the existing test ${file.path}`);
    for (const [pattern, why] of sensitive) if (pattern.test(file.path)) reasons.add(`${why}: ${file.path}`);
  }
  if (files.length > MAX_FILES_WITHOUT_APPROVAL) {
    reasons.add(`changes ${files.length} files (more than ${MAX_FILES_WITHOUT_APPROVAL})`);
  }
  const changedLines = diff
    .split("\n")
    .filter(
      (l) => (l.startsWith("+") || l.startsWith("-")) && !l.startsWith("+++") && !l.startsWith("---"),
    ).length;
  if (changedLines > MAX_CHANGED_LINES_WITHOUT_APPROVAL) {
    reasons.add(`changes ${changedLines} lines (more than ${MAX_CHANGED_LINES_WITHOUT_APPROVAL})`);
  }
  return { high: reasons.size > 0, reasons: [...reasons] };
}
