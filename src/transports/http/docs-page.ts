import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Hono } from "hono";
import type { AppEnv } from "./env.ts";

const assetDir = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
const assets: Record<string, { file: string; type: string }> = {
  "swagger-ui.css": { file: "swagger-ui.css", type: "text/css; charset=utf-8" },
  "swagger-ui-bundle.js": { file: "swagger-ui-bundle.js", type: "text/javascript; charset=utf-8" },
};

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>patchbay API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/api/v1/docs/assets/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/api/v1/docs/assets/swagger-ui-bundle.js"></script>
<script src="/api/v1/docs/assets/init.js"></script></body></html>`;

const init = `window.ui = SwaggerUIBundle({ url: "/api/v1/openapi.json", dom_id: "#ui", deepLinking: true });`;

/** The API reference at /api/v1/docs, served from the installed swagger-ui-dist: no CDN. */
export function docsPage(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const cache = new Map<string, string>();
  app.get("/", (c) => c.html(page));
  app.get("/assets/init.js", (c) => c.body(init, 200, { "content-type": "text/javascript; charset=utf-8" }));
  app.get("/assets/:name", (c) => {
    const asset = assets[c.req.param("name")];
    if (!asset) return c.notFound();
    let body = cache.get(asset.file);
    if (body === undefined) {
      body = readFileSync(join(assetDir, asset.file), "utf8");
      cache.set(asset.file, body);
    }
    return c.body(body, 200, { "content-type": asset.type, "cache-control": "public, max-age=3600" });
  });
  return app;
}
