import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/env.ts";
import { registerApprove } from "./approve.ts";
import { registerCreate } from "./create.ts";
import { registerCredential } from "./credential.ts";
import { registerDelete } from "./delete.ts";
import { registerDeletionPreview } from "./deletion-preview.ts";
import { registerDiscover } from "./discover.ts";
import { registerEnablement } from "./enablement.ts";
import { registerGet } from "./get.ts";
import { registerList } from "./list.ts";
import { registerUpdate } from "./update.ts";

export function registerConnectionRoutes(app: OpenAPIHono<AppEnv>): void {
  registerList(app);
  registerCreate(app);
  registerGet(app);
  registerUpdate(app);
  registerDelete(app);
  registerDiscover(app);
  registerApprove(app);
  registerEnablement(app);
  registerCredential(app);
  registerDeletionPreview(app);
}
