// Writes docs/openapi.json from the route schemas. CI's drift test compares the two.
import { writeFileSync } from "node:fs";
import { createApiRoutes } from "../src/app.ts";
import { buildOpenApiDocument } from "../src/transports/http/openapi-document.ts";
import { version } from "../src/version.ts";

const file = new URL("../docs/openapi.json", import.meta.url);
writeFileSync(file, `${JSON.stringify(buildOpenApiDocument(createApiRoutes(), version), null, 2)}\n`);
process.stdout.write(`wrote ${file.pathname}\n`);
