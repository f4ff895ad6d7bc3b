import { createHash } from "node:crypto";
import type { Hono } from "hono";
import { appCss } from "./assets/app-css.ts";
import { appJs } from "./assets/app-js.ts";
import type { WebEnv } from "./env.ts";

const files = {
  "app.css": { body: appCss, type: "text/css; charset=utf-8" },
  "app.js": { body: appJs, type: "text/javascript; charset=utf-8" },
} as const;

type AssetName = keyof typeof files;

// The content hash is in the path, so the files can be cached forever and still never go stale.
const hashed = Object.fromEntries(
  Object.entries(files).map(([name, f]) => {
    const hash = createHash("sha256").update(f.body).digest("hex").slice(0, 12);
    const dot = name.lastIndexOf(".");
    return [name, `/assets/${name.slice(0, dot)}.${hash}${name.slice(dot)}`];
  }),
) as Record<AssetName, string>;

export const assetPath = (name: AssetName): string => hashed[name];

/** Serves the stylesheet and the script from memory (same origin, so the CSP can say 'self'). */
export function registerAssets(app: Hono<WebEnv>): void {
  for (const [name, file] of Object.entries(files)) {
    app.get(hashed[name as AssetName], (c) =>
      c.body(file.body, 200, {
        "content-type": file.type,
        "cache-control": "public, max-age=31536000, immutable",
        "x-content-type-options": "nosniff",
      }),
    );
  }
}
