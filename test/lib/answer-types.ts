// Test support: "a client generated from docs/openapi.json type-checks against real answers".
// openapi-typescript (what such clients are generated with, e.g. for openapi-fetch) turns the
// document into types; each recorded answer becomes an object literal assigned to its
// operation's response type, and the TypeScript compiler must accept every one. Object literals
// get excess-property checks, so a field the API sends but the document lacks is an error too.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ts from "typescript";
import type { Answer, OpenApiDocument } from "./contract-client.ts";

/** The generator, pinned in devDependencies. */
export const OPENAPI_TYPESCRIPT = "openapi-typescript@7.13.0";

type Generator = {
  default(schema: unknown): Promise<ts.Node[]>;
  astToString(ast: ts.Node[]): string;
};

/** The installed generator, or undefined when the package is absent. */
export async function loadOpenapiTypescript(): Promise<Generator | undefined> {
  const name = "openapi-typescript";
  try {
    createRequire(import.meta.url).resolve(name);
  } catch {
    return undefined;
  }
  // Found, so a failure to load it is a real one. A variable specifier: the package is not a
  // dependency (nor known to the type checker) until it is added to devDependencies.
  return (await import(name)) as Generator;
}

/** The compiler's complaints about assigning each answer to its generated type (none: it fits). */
export async function typeCheckAnswers(
  generator: Generator,
  doc: OpenApiDocument,
  answers: Answer[],
): Promise<string[]> {
  const types = generator.astToString(await generator.default(doc));
  const lines = answers.map(
    (a, i) =>
      `export const answer${i}: operations[${JSON.stringify(a.operationId)}]["responses"][${a.status}]["content"][${JSON.stringify(a.mediaType)}] = ${JSON.stringify(a.body)};`,
  );
  const dir = mkdtempSync(join(tmpdir(), "patchbay-answers-"));
  try {
    const file = join(dir, "answers.ts");
    writeFileSync(file, `${types}\n${lines.join("\n")}\n`);
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2023,
      module: ts.ModuleKind.ESNext,
      types: [],
      skipLibCheck: true,
      lib: ["lib.es2023.d.ts"],
    });
    return ts.getPreEmitDiagnostics(program).map((d) => {
      const text = ts.flattenDiagnosticMessageText(d.messageText, "\n");
      if (!d.file || d.start === undefined) return text;
      const { line } = d.file.getLineAndCharacterOfPosition(d.start);
      const source = d.file.text.split("\n")[line] ?? "";
      return `${text}\n  at: ${source.slice(0, 300)}`;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
